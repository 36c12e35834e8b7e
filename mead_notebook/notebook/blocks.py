"""What a call will do (content blocks, locations) and an agent's plan, made safe to sync.

A source may send anything: each function keeps only well-formed entries,
bounded in number and size, with every string cleaned (:func:`.protocol.clean_text`).
What is left out is counted, never dropped in silence: a block says how many of
its characters are ``cut``, a diff (:mod:`.diffs`) is computed from the whole
texts and says how many changed lines it does not show, and the blocks and
locations past :data:`.protocol.MAX_BLOCKS` are counted.

What running code produced is kept the same way: a rich output's HTML is
sanitised here (:mod:`.sanitize`), an image is kept only when its data is base64
of the type it claims, and both count against one card's :data:`.protocol.MAX_RICH`.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Final, Literal, cast, get_args

from ..interaction import ImageType, Location, OutputName, PlanEntry
from .diffs import diff_view
from .protocol import (
    MAX_BLOCK_TEXT,
    MAX_BLOCKS,
    MAX_HTML,
    MAX_IMAGE,
    MAX_PATH,
    MAX_PLAN,
    MAX_RICH,
    CardBlock,
    CardCode,
    CardHtml,
    CardImage,
    CardOutput,
    CardTerminal,
    CardText,
    clean_text,
)
from .sanitize import clean_html

__all__ = ["PRODUCED", "bounded", "content_of", "locations_of", "plan_of"]

_PLAN_STATUSES: Final = frozenset({"pending", "in_progress", "completed"})
_PRIORITIES: Final = frozenset({"high", "medium", "low"})
_LANGUAGE: Final = re.compile(r"[a-z][a-z0-9+#._-]{0,31}")
_OUTPUT_NAMES: Final = frozenset(get_args(OutputName))
_IMAGE_TYPES: Final = frozenset(get_args(ImageType))
_BASE64: Final = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_MAGIC: Final[dict[str, tuple[bytes, ...]]] = {
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/gif": (b"GIF87a", b"GIF89a"),
}
"""How each image type's data begins: an image block whose data does not is dropped."""
_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "text": ("text",),
    "diff": ("path", "new_text"),
    "terminal": ("command",),
    "code": ("code",),
    "output": ("text",),
    "html": ("html",),
    "image": ("data",),
}
"""The string fields each block type needs."""


class _Budget:
    """What is left of a card's share of rich output (:data:`MAX_RICH`)."""

    def __init__(self) -> None:
        self.left = MAX_RICH

    def take(self, size: int) -> bool:
        """Whether ``size`` more characters fit; they are counted when they do."""
        if size > self.left:
            return False
        self.left -= size
        return True


def bounded(text: str, limit: int) -> tuple[str, int]:
    """``text`` cleaned and cut to ``limit`` characters, and how many characters were cut."""
    cut = max(0, len(text) - limit)
    return clean_text(text[:limit] if cut else text), cut


def _block(value: Any, budget: _Budget) -> CardBlock | None:
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    if kind in ("code", "output", "html", "image"):
        return _run_block(value, budget)
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


def _run_block(value: dict[str, Any], budget: _Budget) -> CardBlock | None:
    """A block of code, or of what running code produced; None when malformed."""
    kind = value["type"]
    if not all(isinstance(value.get(f), str) for f in _FIELDS[kind]):
        return None
    if kind == "code":
        language = value.get("language")
        if not isinstance(language, str) or _LANGUAGE.fullmatch(language) is None:
            language = "text"
        code, cut = bounded(value["code"], MAX_BLOCK_TEXT)
        return CardCode(type="code", language=language, code=code, cut=cut)
    if kind == "output":
        name = value.get("name")
        if name not in _OUTPUT_NAMES:
            return None
        text, cut = bounded(value["text"], MAX_BLOCK_TEXT)
        return CardOutput(type="output", name=cast(OutputName, name), text=text, cut=cut)
    if kind == "html":
        plain, plain_cut = _optional(value.get("text"), MAX_BLOCK_TEXT)
        html = clean_html(clean_text(value["html"]))
        if len(html) > MAX_HTML or not budget.take(len(html)):
            return CardHtml(type="html", html=None, text=plain or "", cut=len(html) + plain_cut)
        return CardHtml(type="html", html=html, text=plain or "", cut=plain_cut)
    return _image(value, budget)


def _image(value: dict[str, Any], budget: _Budget) -> CardImage | None:
    mime = value.get("mime_type")
    if mime not in _IMAGE_TYPES:
        return None
    alt, _ = _optional(value.get("alt"), 500)
    data = "".join(value["data"].split())
    fits = len(data) <= MAX_IMAGE and _is_image(data, str(mime)) and budget.take(len(data))
    return CardImage(
        type="image",
        mime_type=cast(ImageType, mime),
        data=data if fits else "",
        alt=alt or "",
        cut=0 if fits else len(data),
    )


def _is_image(data: str, mime: str) -> bool:
    """Whether ``data`` is base64 of an image of type ``mime`` (by its first bytes)."""
    if len(data) % 4 or _BASE64.fullmatch(data) is None:
        return False
    try:
        head = base64.b64decode(data[:64], validate=True)
    except (binascii.Error, ValueError):
        return False
    return head.startswith(_MAGIC[mime])


def _optional(value: Any, limit: int) -> tuple[str | None, int]:
    return bounded(value, limit) if isinstance(value, str) else (None, 0)


PRODUCED: Final = frozenset({"output", "html", "image"})
"""The block types of what a call produced: shown only once the call has ended."""


def content_of(value: Any, *, ended: bool = True) -> tuple[list[CardBlock], int]:
    """The well-formed blocks of ``value`` (at most :data:`MAX_BLOCKS`), and how many more.

    A call that has not ended (``ended`` False) has produced nothing yet: a block of
    what it produced (:data:`PRODUCED`) cannot be on its card, and is counted as not
    shown (the card is then ``incomplete``), never drawn.
    """
    if not isinstance(value, (list, tuple)):
        return [], 0
    blocks: list[CardBlock] = []
    hidden = 0
    budget = _Budget()
    for item in value:
        if not ended and isinstance(item, dict) and item.get("type") in PRODUCED:
            hidden += 1
        elif len(blocks) < MAX_BLOCKS:
            block = _block(item, budget)
            if block is not None:
                blocks.append(block)
        elif _block_shape(item):
            hidden += 1
    return blocks, hidden


def _block_shape(value: Any) -> bool:
    """Whether ``value`` looks like a block :func:`_block` keeps (without computing it)."""
    if not isinstance(value, dict):
        return False
    kind = value.get("type")
    needed = _FIELDS.get(kind) if isinstance(kind, str) else None
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
