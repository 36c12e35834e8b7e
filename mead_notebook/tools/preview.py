"""What a call will do, shown before anyone allows it: ``Preview`` and its helpers.

A tool made with ``@tool(preview=fn)`` calls ``fn`` with its validated arguments
before permission is asked; ``fn`` returns a :class:`Preview` (or content blocks,
or a string), which the permission card shows::

    @tool(kind="edit", preview=lambda path, text: preview.file_diff(path, text))
    def write_file(path: str, text: str) -> str: ...

A preview that raises, or takes longer than :data:`PREVIEW_TIMEOUT`, never blocks
or allows the call: the card says the preview failed and the person still decides.
"""

from __future__ import annotations

import contextvars
import logging
import os
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..interaction import (
    CodeBlock,
    ContentBlock,
    DiffBlock,
    Location,
    Previewer,
    TerminalBlock,
    TextBlock,
    ToolKind,
)

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = [
    "MAX_FILE",
    "OUTSIDE_WORKING_FOLDER",
    "PREVIEW_TIMEOUT",
    "Preview",
    "Previewing",
    "code",
    "command",
    "file_diff",
    "normalize",
    "of",
    "previewer",
    "text",
]

PREVIEW_TIMEOUT = 5.0
"""The longest a tool's preview may take before the card says it failed (seconds)."""
MAX_FILE = 1_000_000
"""The largest file a diff preview reads, in bytes."""
OUTSIDE_WORKING_FOLDER = (
    "Not shown: {path} is outside the working folder; its current content was not read."
)
"""What a diff preview says instead of reading a file outside the working folder."""


@dataclass(frozen=True)
class Preview:
    """Content blocks for the permission card, and the files the call touches."""

    content: list[ContentBlock] = field(default_factory=list)
    locations: list[Location] = field(default_factory=list)

    def __add__(self, other: Preview) -> Preview:
        return Preview(self.content + other.content, self.locations + other.locations)


PreviewResult = Preview | ContentBlock | Sequence[ContentBlock] | str | None
"""What a preview function may return."""


@runtime_checkable
class Previewing(Protocol):
    """A tool that says what kind of call it is and what a call will do (optional)."""

    kind: ToolKind

    def preview(self, arguments: dict[str, Any]) -> Preview | None:
        """What a call with these (validated) arguments will do, for its card."""


def text(value: str) -> Preview:
    """A text block."""
    return Preview([TextBlock(type="text", text=value)])


def code(source: str, language: str = "python") -> Preview:
    """A code block: the code a call will run or put in the notebook, shown highlighted."""
    return Preview([CodeBlock(type="code", language=language, code=source)])


def command(cmd: str | Sequence[str], cwd: str | Path | None = None) -> Preview:
    """A terminal block: the command (a string, or argv joined with shell quoting) and its cwd."""
    if not isinstance(cmd, str):
        import shlex

        cmd = shlex.join(str(part) for part in cmd)
    block = TerminalBlock(type="terminal", command=cmd)
    if cwd is not None:
        block["cwd"] = str(cwd)
    return Preview([block])


def file_diff(path: str | Path, new_text: str) -> Preview:
    """A diff of the file at ``path`` (as it is on disk now) against ``new_text``.

    The path is resolved (symlinks followed, relative to the working folder) and
    shown resolved. Only a regular file inside the working folder is read, and at
    most :data:`MAX_FILE` bytes plus one; anything else is said in a text block:
    a file outside the working folder (:data:`OUTSIDE_WORKING_FOLDER`), one that
    is not a regular file, too large or not UTF-8 text. A missing file is a new
    file (``old_text`` None). Only the preview is affected, never the write.
    """
    shown = os.path.realpath(os.fspath(path))
    location = Location(path=shown, line=None)

    def said(note: str) -> Preview:
        return Preview([_text(note)], [location])

    root = os.path.realpath(os.getcwd())
    try:
        inside = os.path.commonpath([root, shown]) == root
    except ValueError:  # another drive
        inside = False
    if not inside:
        return said(OUTSIDE_WORKING_FOLDER.format(path=shown))
    old: str | None = None
    try:
        info = os.stat(shown)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        return said(f"{shown}: cannot be read ({exc.strerror or exc})")
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            return said(f"{shown} is not a regular file: its content was not read.")
        try:
            data = _read_regular(shown, MAX_FILE + 1)
        except OSError as exc:
            return said(f"{shown}: cannot be read ({exc.strerror or exc})")
        if data is None:
            return said(f"{shown} is not a regular file: its content was not read.")
        if len(data) > MAX_FILE:
            return said(f"{shown} is over {MAX_FILE:,} bytes, too large to show a diff.")
        try:
            old = data.decode("utf-8")
        except UnicodeDecodeError:
            return said(f"{shown} is not UTF-8 text: no diff shown.")
    block = DiffBlock(type="diff", path=shown, old_text=old, new_text=new_text)
    return Preview([block], [location])


def _read_regular(path: str, limit: int) -> bytes | None:
    """At most ``limit`` bytes of the regular file at ``path``; None if it is not one now.

    Opened without following a final symlink and without blocking (a FIFO swapped in
    after the check), and checked again on the open file before it is read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    flags |= getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def normalize(value: object) -> Preview:
    """A preview function's return value as a :class:`Preview`; ``TypeError`` if it is none."""
    if value is None:
        return Preview()
    if isinstance(value, Preview):
        return value
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, (list, tuple)):
        blocks = [_block(item) for item in value]
        paths = [b["path"] for b in blocks if b["type"] == "diff"]
        return Preview(blocks, [Location(path=p, line=None) for p in dict.fromkeys(paths)])
    raise TypeError(f"a preview returns a Preview, content blocks or a string, not {value!r}")


def of(tool: object, arguments: dict[str, Any], timeout: float = PREVIEW_TIMEOUT) -> Preview:
    """``tool``'s preview of a call with ``arguments``, bounded; a failure is a text block."""
    if not isinstance(tool, Previewing):
        return Preview()
    box: list[Preview | BaseException] = []

    def work() -> None:
        try:
            box.append(normalize(tool.preview(arguments)))
        except Exception as exc:
            box.append(exc)

    worker = threading.Thread(
        target=contextvars.copy_context().run, args=(work,), name="mead-preview", daemon=True
    )
    worker.start()
    worker.join(timeout)
    if not box:
        return text(f"The preview did not finish within {timeout:g} s.")
    found = box[0]
    if isinstance(found, BaseException):
        log.warning("the preview of %r raised", tool, exc_info=found)
        return text(f"The preview failed: {type(found).__name__}: {found}")
    return found


def previewer(tool: object) -> Previewer | None:
    """What a call of ``tool`` does with other arguments (a person's edit): a ``Request``'s
    ``preview``, which validates them first; None when ``tool`` has no preview."""
    validate = getattr(tool, "validate", None)
    if not isinstance(tool, Previewing) or not callable(validate):
        return None
    name = getattr(tool, "name", "the tool")

    def preview_of(arguments: dict[str, Any]) -> Preview:
        try:
            valid = validate(arguments)
        except Exception as exc:
            return text(f"No preview: these arguments do not fit {name}: {exc}")
        return of(tool, valid)

    return preview_of


def _text(value: str) -> TextBlock:
    return TextBlock(type="text", text=value)


_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "diff": ("path", "new_text"),
    "terminal": ("command",),
    "code": ("code",),
}


def _block(value: object) -> ContentBlock:
    kind = value.get("type") if isinstance(value, dict) else None
    if not isinstance(value, dict) or kind not in _FIELDS:
        raise TypeError(
            f"a content block is a dict of type text, diff, terminal or code, not {value!r}"
        )
    missing = [name for name in _FIELDS[kind] if not isinstance(value.get(name), str)]
    if missing:
        raise TypeError(f"a {kind} block needs {', '.join(missing)} (strings): {value!r}")
    if kind == "diff":
        old = value.get("old_text")
        return DiffBlock(
            type="diff",
            path=value["path"],
            old_text=old if isinstance(old, str) else None,
            new_text=value["new_text"],
        )
    if kind == "terminal":
        block = TerminalBlock(type="terminal", command=value["command"])
        if isinstance(value.get("cwd"), str):
            block["cwd"] = value["cwd"]
        if isinstance(value.get("output"), str):
            block["output"] = value["output"]
        if isinstance(value.get("exit_code"), int):
            block["exit_code"] = value["exit_code"]
        return block
    if kind == "code":
        language = value.get("language")
        return CodeBlock(
            type="code",
            language=language if isinstance(language, str) else "python",
            code=value["code"],
        )
    return TextBlock(type="text", text=value["text"])


PreviewFunction = Callable[..., PreviewResult]
"""A tool's preview: called with the call's arguments as keywords."""
