"""Replies written in advance, shared by the frameworks' scripted models."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence

from mead_notebook import ModelError, ToolCall
from mead_notebook.model import Message

__all__ = ["Reply", "Script", "ScriptedReplies"]

Reply = list[str | ToolCall]
Script = (
    Sequence[Sequence[str | ToolCall]] | Callable[[list[Message]], Sequence[str | ToolCall] | str]
)
"""What a scripted model plays: a list of replies, or a function of the conversation so far."""


class ScriptedReplies:
    """Replies played back one per model request; thread-safe.

    ``replies`` is a list of replies, each used once, in order; or a function of
    the conversation so far that returns the next reply, as for ``ScriptedModel``:
    it gets the framework's messages as plain dicts (``role``, ``content``, a tool
    result's ``tool_call_id`` and ``is_error``), so a reply can say what happened
    to the calls before it. A reply is a list of text fragments (streamed one by
    one) and ``ToolCall`` items; a call without an ``id`` gets
    ``call_<reply>_<position>``.
    """

    def __init__(self, replies: Script, name: str = "scripted") -> None:
        self.name = name
        self.play = replies if callable(replies) else None
        self.replies: list[Reply] = (
            [] if callable(replies) else [_reply(r, n) for n, r in enumerate(replies, 1)]
        )
        self._used = 0
        self._lock = threading.Lock()

    def next(self, told: Sequence[Message] = ()) -> Reply:
        """The next reply (``told``: the conversation so far, for a function);
        ``ModelError`` once every reply of a list was used."""
        with self._lock:
            if self.play is None and self._used >= len(self.replies):
                raise ModelError(
                    self.name, f"the script has no reply left (all {len(self.replies)} were used)"
                )
            self._used += 1
            number = self._used
        if self.play is None:
            return self.replies[number - 1]
        return _reply(self.play(list(told)), number)

    @property
    def remaining(self) -> int:
        """How many replies are left (a function never runs out)."""
        return sys.maxsize if self.play is not None else len(self.replies) - self._used


def _reply(reply: Sequence[str | ToolCall] | str, number: int) -> Reply:
    if isinstance(reply, str):
        reply = [reply]
    items: Reply = []
    for position, item in enumerate(reply):
        if isinstance(item, ToolCall):
            item = ToolCall(item.name, item.arguments, item.id or f"call_{number}_{position}")
        elif not isinstance(item, str):
            raise TypeError(f"a scripted reply holds str and ToolCall items, not {item!r}")
        items.append(item)
    return items
