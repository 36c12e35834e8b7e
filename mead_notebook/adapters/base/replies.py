"""Replies written in advance, shared by the frameworks' scripted models."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from mead_notebook import ModelError, ToolCall

__all__ = ["Reply", "ScriptedReplies"]

Reply = list[str | ToolCall]


class ScriptedReplies:
    """Replies played back one per model request, each once; thread-safe.

    A reply is a list of text fragments (streamed one by one) and ``ToolCall``
    items; a call without an ``id`` gets ``call_<reply>_<position>``.
    """

    def __init__(self, replies: Sequence[Sequence[str | ToolCall]], name: str = "scripted") -> None:
        self.name = name
        self.replies: list[Reply] = []
        for number, reply in enumerate(replies, 1):
            items: Reply = []
            for position, item in enumerate(reply):
                if isinstance(item, ToolCall):
                    item = ToolCall(
                        item.name, item.arguments, item.id or f"call_{number}_{position}"
                    )
                elif not isinstance(item, str):
                    raise TypeError(f"a scripted reply holds str and ToolCall items, not {item!r}")
                items.append(item)
            self.replies.append(items)
        self._used = 0
        self._lock = threading.Lock()

    def next(self) -> Reply:
        """The next reply; ``ModelError`` once every reply was used."""
        with self._lock:
            if self._used >= len(self.replies):
                raise ModelError(
                    self.name, f"the script has no reply left (all {len(self.replies)} were used)"
                )
            self._used += 1
            return self.replies[self._used - 1]

    @property
    def remaining(self) -> int:
        """How many replies are left."""
        return len(self.replies) - self._used
