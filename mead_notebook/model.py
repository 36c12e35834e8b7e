"""Models: what the router asks for the next reply, and the offline scripted model."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, runtime_checkable

from .errors import ModelError

__all__ = [
    "Message",
    "Model",
    "ModelError",
    "ScriptedModel",
    "Thought",
    "ToolCall",
    "ToolSpec",
]

Message = dict[str, Any]
"""A conversation message, a plain dict.

``{"role": "user", "content": str}``;
``{"role": "assistant", "content": str, "tool_calls": [{"id", "name", "arguments"}]}``;
``{"role": "tool", "tool_call_id": str, "content": str, "is_error": bool}``.
"""


class ToolSpec(TypedDict):
    """A tool as offered to a model: its name, description and JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """The model asks for a tool; ``id`` is assigned by the router when the model gives none."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class Thought:
    """A fragment of the model's reasoning: shown apart, never part of the answer's text."""

    text: str


ReplyItem = str | ToolCall | Thought


@runtime_checkable
class Model(Protocol):
    """Produces the next reply of a conversation.

    ``reply`` yields text fragments (``str``) as they arrive, ``Thought`` fragments
    of its reasoning when it streams any, and ``ToolCall`` items, complete with
    their arguments. ``streaming`` says whether text fragments come
    as they are produced; a model that does not stream yields its text in one piece
    and the router sends no ``text_delta`` for it. Failures raise ``ModelError``.
    """

    name: str
    streaming: bool

    def reply(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec]
    ) -> Iterable[ReplyItem]: ...


ScriptedReplies = Sequence[Sequence[ReplyItem]] | Callable[[Sequence[Message]], Sequence[ReplyItem]]
"""What a ``ScriptedModel`` plays: a list of replies, or a function of the conversation."""


class ScriptedModel:
    """The offline default model: plays back replies written in advance.

    Give it a list of replies, each a list of text fragments (streamed one by one),
    ``Thought`` fragments and ``ToolCall`` items, or a function of the conversation
    that returns the next reply. Each reply is used once; asking past the end is a ``ModelError``.
    """

    name = "scripted"

    def __init__(self, script: ScriptedReplies, *, streaming: bool = True) -> None:
        if not callable(script):
            script = [list(reply) for reply in script]
            for reply in script:
                for item in reply:
                    if not isinstance(item, (str, ToolCall, Thought)):
                        raise TypeError(
                            f"a scripted reply holds str, Thought and ToolCall items, not {item!r}"
                        )
        self._script = script
        self._used = 0
        self.streaming = streaming
        self._ids = itertools.count(1)

    @property
    def remaining(self) -> int | None:
        """How many replies are left, or ``None`` for a function script."""
        if callable(self._script):
            return None
        return len(self._script) - self._used

    def reply(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Iterator[ReplyItem]:
        if callable(self._script):
            reply = list(self._script(messages))
        else:
            if self._used >= len(self._script):
                raise ModelError(
                    self.name,
                    f"the script has no reply left (all {len(self._script)} were used)",
                )
            reply = list(self._script[self._used])
            self._used += 1
        items: list[ReplyItem] = []
        for item in reply:
            if isinstance(item, ToolCall) and item.id is None:
                item = ToolCall(item.name, item.arguments, f"call_{next(self._ids)}")
            items.append(item)
        if self.streaming:
            yield from items
            return
        thought = "".join(i.text for i in items if isinstance(i, Thought))
        if thought:
            yield Thought(thought)
        text = "".join(i for i in items if isinstance(i, str))
        if text:
            yield text
        yield from (i for i in items if isinstance(i, ToolCall))
