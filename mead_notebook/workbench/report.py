"""What a run of code becomes: content blocks for the card, bounded text for the model.

The card shows what a cell would (the code, what it printed, its value, its
figures and tables, its traceback); the model gets the same as text, each output
and the whole bounded, with a note of what was cut. An image reaches the model
as a line saying it was shown to the person (a framework that takes images finds
them in :attr:`~mead_notebook.tools.ToolOutput.images`).
"""

from __future__ import annotations

import base64
import re
from typing import Any, Final

from ..interaction import (
    CodeBlock,
    ContentBlock,
    HtmlBlock,
    ImageBlock,
    ImageType,
    OutputBlock,
    TextBlock,
)
from .capture import Output, Rich, Stream
from .execute import Ran

__all__ = ["ANSI", "cut", "plain", "run_content", "run_text"]

ANSI: Final = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
"""Terminal colour and cursor sequences (tracebacks and progress bars carry them)."""
_IMAGES: Final[tuple[ImageType, ...]] = ("image/png", "image/jpeg", "image/gif")
_CUT: Final = "[… {n:,} characters cut …]"
_MORE: Final = "[{n} more outputs not shown]"
_MIN_ITEM: Final = 200
"""Below this many characters left, the remaining outputs are only counted."""


def plain(text: str) -> str:
    """``text`` without terminal escape sequences."""
    return ANSI.sub("", text)


def cut(text: str, limit: int, *, keep_end: bool = False) -> str:
    """``text`` in at most about ``limit`` characters: its start and end, the middle said cut.

    ``keep_end``: keep more of the end (a traceback's last lines say the most).
    """
    if len(text) <= limit:
        return text
    note_room = len(_CUT.format(n=len(text))) + 2
    room = max(limit - note_room, 0)
    head = room // 3 if keep_end else room * 2 // 3
    tail = room - head
    removed = len(text) - head - tail
    end = text[len(text) - tail :] if tail else ""
    return f"{text[:head]}\n{_CUT.format(n=removed)}\n{end}"


def _text_of(rich: Rich) -> str:
    value = rich.data.get("text/plain", "")
    return plain(value if isinstance(value, str) else str(value))


def _image_data(value: Any) -> str:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def _rich_block(rich: Rich) -> ContentBlock:
    for mime in _IMAGES:
        if mime in rich.data:
            data = _image_data(rich.data[mime])
            return ImageBlock(type="image", mime_type=mime, data=data, alt=_text_of(rich))
    if isinstance(rich.data.get("text/html"), str):
        return HtmlBlock(type="html", html=rich.data["text/html"], text=_text_of(rich))
    if "text/plain" in rich.data:
        return OutputBlock(
            type="output", name="result" if rich.result else "stdout", text=_text_of(rich)
        )
    kinds = ", ".join(sorted(rich.data)) or "nothing"
    return TextBlock(type="text", text=f"An output this card cannot show ({kinds}).")


def run_content(code: str, ran: Ran) -> list[ContentBlock]:
    """The card's content: the code, then every output in order, then the traceback."""
    blocks: list[ContentBlock] = [CodeBlock(type="code", language="python", code=code)]
    for output in ran.outputs:
        if isinstance(output, Stream):
            blocks.append(OutputBlock(type="output", name=output.name, text=plain(output.text)))
        else:
            blocks.append(_rich_block(output))
    if ran.dropped:
        blocks.append(
            TextBlock(type="text", text=f"{ran.dropped:,} more characters printed, not kept.")
        )
    if ran.error is not None:
        blocks.append(OutputBlock(type="output", name="error", text=plain(ran.error)))
    return blocks


def _model_item(output: Output) -> tuple[str, str]:
    """A heading and the text the model gets for one output."""
    if isinstance(output, Stream):
        return output.name, plain(output.text)
    for mime in _IMAGES:
        if mime in output.data:
            return "image", f"[{mime} shown to the person on the card: {_text_of(output)}]"
    heading = "Out" if output.result else "display"
    if "text/plain" in output.data:
        return heading, _text_of(output)
    kinds = ", ".join(sorted(output.data)) or "nothing"
    return heading, f"[an output of type {kinds}, shown to the person]"


def run_text(ran: Ran, limit: int) -> str:
    """What the model gets: each output under a heading, then the traceback; at most about
    ``limit`` characters, every cut said."""
    items = [_model_item(output) for output in ran.outputs]
    if ran.dropped:
        items.append(("note", f"[{ran.dropped:,} more characters printed, not kept]"))
    error = plain(ran.error) if ran.error is not None else None
    reserve = min(len(error), limit // 2) + 40 if error is not None else 0
    left = limit - reserve - len(_MORE) - 10  # room for the note of outputs not shown
    parts: list[str] = []
    for n, (heading, text) in enumerate(items):
        if left < _MIN_ITEM:
            parts.append(_MORE.format(n=len(items) - n))
            break
        shown = f"{heading}:\n{cut(text, left - len(heading) - 2)}"
        parts.append(shown)
        left -= len(shown) + 1
    if error is not None:
        parts.append(f"error ({ran.error_name}):\n{cut(error, reserve - 40, keep_end=True)}")
    return "\n".join(parts) if parts else "(no output)"
