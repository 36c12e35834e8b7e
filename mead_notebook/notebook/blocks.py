"""What a call will do (content blocks, locations) and an agent's plan, made safe to sync.

A source may send anything: each function keeps only well-formed entries,
bounded in number and size, with every string cleaned (:func:`.protocol.clean_text`).
What is left out is counted, never dropped in silence: a block says how many of
its characters are ``cut``, a diff (:mod:`.diffs`) is computed from the whole
texts and says how many changed lines it does not show, and the blocks and
locations past :data:`.protocol.MAX_BLOCKS` are counted.
"""

from __future__ import annotations

from typing import Any, Final, Literal, cast

from ..interaction import Location, PlanEntry
from .diffs import diff_view
from .protocol import (
    MAX_BLOCK_TEXT,
    MAX_BLOCKS,
    MAX_PATH,
    MAX_PLAN,
    CardBlock,
    CardTerminal,
    CardText,
    clean_text,
)

__all__ = ["bounded", "content_of", "locations_of", "plan_of"]

_PLAN_STATUSES: Final = frozenset({"pending", "in_progress", "completed"})
_PRIORITIES: Final = frozenset({"high", "medium", "low"})


def bounded(text: str, limit: int) -> tuple[str, int]:
    """``text`` cleaned and cut to ``limit`` characters, and how many characters were cut."""
    cut = max(0, len(text) - limit)
    return clean_text(text[:limit] if cut else text), cut


def _block(value: Any) -> CardBlock | None:
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind == "text":
        if not isinstance(value.get("text"), str):
            return None
        text, cut = bounded(value["text"], MAX_BLOCK_TEXT)
        return CardText(type="text", text=text, cut=cut)
    if kind == "diff":
        path, new, old = value.get("path"), value.get("new_text"), value.get("old_text")
        if not isinstance(path, str) or not isinstance(new, str):
            return None
        if old is not None and not isinstance(old, str):
            return None
        shown, path_cut = bounded(path, MAX_PATH)
        old = None if old is None else clean_text(old)
        return diff_view(shown, old, clean_text(new), path_cut=path_cut)
    if kind == "terminal":
        if not isinstance(value.get("command"), str):
            return None
        command, cut = bounded(value["command"], MAX_BLOCK_TEXT)
        cwd, cwd_cut = _optional(value.get("cwd"), MAX_PATH)
        output, output_cut = _optional(value.get("output"), MAX_BLOCK_TEXT)
        code = value.get("exit_code")
        return CardTerminal(
            type="terminal",
            command=command,
            cwd=cwd,
            output=output,
            exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            cut=cut + cwd_cut + output_cut,
        )
    return None


def _optional(value: Any, limit: int) -> tuple[str | None, int]:
    return bounded(value, limit) if isinstance(value, str) else (None, 0)


def content_of(value: Any) -> tuple[list[CardBlock], int]:
    """The well-formed blocks of ``value`` (at most :data:`MAX_BLOCKS`), and how many more."""
    if not isinstance(value, (list, tuple)):
        return [], 0
    blocks: list[CardBlock] = []
    hidden = 0
    for item in value:
        if len(blocks) < MAX_BLOCKS:
            block = _block(item)
            if block is not None:
                blocks.append(block)
        elif _block_shape(item):
            hidden += 1
    return blocks, hidden


def _block_shape(value: Any) -> bool:
    """Whether ``value`` looks like a block :func:`_block` keeps (without computing it)."""
    if not isinstance(value, dict):
        return False
    fields = {"text": ("text",), "diff": ("path", "new_text"), "terminal": ("command",)}
    kind = value.get("type")
    needed = fields.get(kind) if isinstance(kind, str) else None
    return needed is not None and all(isinstance(value.get(f), str) for f in needed)


def locations_of(value: Any) -> tuple[list[Location], int]:
    """The well-formed locations of ``value`` (a path, a 1-based line or None), at most
    :data:`MAX_BLOCKS`, and how many more there are (a path too long to show among them)."""
    if not isinstance(value, (list, tuple)):
        return [], 0
    found: list[Location] = []
    hidden = 0
    for item in value:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        path, cut = bounded(item["path"], MAX_PATH)
        if cut or len(found) >= MAX_BLOCKS:
            hidden += 1
            continue
        line = item.get("line")
        ok = isinstance(line, int) and not isinstance(line, bool) and line > 0
        found.append(Location(path=path, line=line if ok else None))
    return found, hidden


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
