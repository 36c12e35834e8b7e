"""What a call will do (content blocks, locations) and an agent's plan, made safe to sync.

A source may send anything: each function keeps only well-formed entries,
bounded in number and size, with every string cleaned (:func:`.protocol.clean_text`).
"""

from __future__ import annotations

import difflib
from typing import Any, Final, Literal, cast

from ..interaction import ContentBlock, DiffBlock, Location, PlanEntry, TerminalBlock, TextBlock
from .protocol import MAX_BLOCK_TEXT, MAX_BLOCKS, MAX_PLAN, clean_text

__all__ = ["DiffRow", "content_of", "locations_of", "plan_of", "unified_diff"]

_PLAN_STATUSES: Final = frozenset({"pending", "in_progress", "completed"})
_PRIORITIES: Final = frozenset({"high", "medium", "low"})


def _text(value: Any, limit: int = MAX_BLOCK_TEXT) -> str | None:
    return clean_text(value, limit) if isinstance(value, str) else None


def _block(value: Any) -> ContentBlock | None:
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind == "text":
        text = _text(value.get("text"))
        return None if text is None else TextBlock(type="text", text=text)
    if kind == "diff":
        path, new = _text(value.get("path"), 4096), _text(value.get("new_text"))
        old = value.get("old_text")
        if path is None or new is None or (old is not None and not isinstance(old, str)):
            return None
        return DiffBlock(type="diff", path=path, old_text=_text(old), new_text=new)
    if kind == "terminal":
        command = _text(value.get("command"))
        if command is None:
            return None
        block = TerminalBlock(type="terminal", command=command)
        block["cwd"] = _text(value.get("cwd"), 4096)
        block["output"] = _text(value.get("output"))
        code = value.get("exit_code")
        block["exit_code"] = code if isinstance(code, int) and not isinstance(code, bool) else None
        return block
    return None


def content_of(value: Any) -> list[ContentBlock]:
    """The well-formed blocks of ``value``, at most :data:`MAX_BLOCKS`; the rest is dropped."""
    if not isinstance(value, (list, tuple)):
        return []
    blocks = (_block(v) for v in value)
    return [b for b in blocks if b is not None][:MAX_BLOCKS]


def locations_of(value: Any) -> list[Location]:
    """The well-formed locations of ``value``: a path, and a 1-based line or None."""
    if not isinstance(value, (list, tuple)):
        return []
    found: list[Location] = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        line = item.get("line")
        ok = isinstance(line, int) and not isinstance(line, bool) and line > 0
        found.append(Location(path=clean_text(item["path"], 4096), line=line if ok else None))
    return found[:MAX_BLOCKS]


def plan_of(value: Any) -> list[PlanEntry]:
    """The well-formed entries of a plan (at most :data:`MAX_PLAN`)."""
    if not isinstance(value, (list, tuple)):
        return []
    entries: list[PlanEntry] = []
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            continue
        status = item.get("status")
        if status not in _PLAN_STATUSES:
            continue
        entry = PlanEntry(
            content=clean_text(item["content"], 2000),
            status=cast(Literal["pending", "in_progress", "completed"], status),
        )
        if item.get("priority") in _PRIORITIES:
            entry["priority"] = item["priority"]
        entries.append(entry)
    return entries[:MAX_PLAN]


DiffRow = tuple[str, int | None, int | None, str]
"""One row of a unified diff: (sign, old line, new line, text)."""


def unified_diff(block: DiffBlock, context: int = 3) -> list[DiffRow]:
    """A diff block as unified-diff rows: (sign, old line, new line, text).

    ``sign`` is ``" "``, ``"-"``, ``"+"`` or ``"@"`` (a hunk header, its text the
    header); line numbers are 1-based, None where a side has no line.
    """
    old = (block["old_text"] or "").splitlines()
    new = block["new_text"].splitlines()
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        header = f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@"
        rows.append(("@", None, None, header))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows.extend((" ", i + 1, j1 + i - i1 + 1, old[i]) for i in range(i1, i2))
                continue
            if tag in ("replace", "delete"):
                rows.extend(("-", i + 1, None, old[i]) for i in range(i1, i2))
            if tag in ("replace", "insert"):
                rows.extend(("+", None, j + 1, new[j]) for j in range(j1, j2))
    return rows


def _range(start: int, end: int) -> str:
    """A hunk's range as unified diffs write it: 1-based start, length (start 0 when empty)."""
    length = end - start
    return f"{start if length == 0 else start + 1},{length}"
