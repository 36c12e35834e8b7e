"""What a tool may return or raise to say more than text: the card's content beside the model's.

A tool returns a string (or anything JSON can encode) for the model, and the card
shows its short result. A tool whose call did more than a line can say (code that
printed, drew a figure, showed a table) returns :class:`ToolOutput`: ``text`` is
what the model receives, ``content`` what the card shows in place of its preview
(the code, then its outputs). A tool that fails that way raises
:class:`ToolFailure`, whose message the model receives and whose content the
card shows.

A framework that takes images from a tool (an adapter's ``as_tools``) finds them
in :attr:`ToolOutput.images`; every other framework gets ``text``, which says
that an image was shown to the person.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..interaction import ContentBlock, ImageBlock

__all__ = ["ToolFailure", "ToolOutput"]


@dataclass(frozen=True)
class ToolOutput:
    """A tool's result: ``text`` for the model, ``content`` for the card."""

    text: str
    content: list[ContentBlock] = field(default_factory=list)

    @property
    def images(self) -> list[ImageBlock]:
        """The images among :attr:`content`, for a framework whose tools may return images."""
        return [block for block in self.content if block["type"] == "image"]


class ToolFailure(Exception):
    """A tool's call failed: ``message`` is what the model is told, ``content`` what the card shows.

    ``outcome`` is ``error`` (the work raised) or ``timeout`` (it ran past the
    tool's own time limit).
    """

    def __init__(
        self,
        message: str,
        *,
        content: list[ContentBlock] | None = None,
        outcome: Literal["error", "timeout"] = "error",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.content: list[ContentBlock] = list(content or [])
        self.outcome: Literal["error", "timeout"] = outcome
