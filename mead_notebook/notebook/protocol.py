"""What the widget and its frontend share: the cards, questions and custom messages.

Mirrored by ``js/src/model.d.ts`` (a test keeps the two in step) and described
in ``docs/widget-protocol.md``. Every message from the frontend goes through
:func:`parse`, which returns a typed message or the reason it was refused;
text from the frontend is made safe to send back (no lone surrogates).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypedDict

from ..interaction import Outcome, Status, ToolClass

__all__ = [
    "ANSWER",
    "CANCEL",
    "RENDERED",
    "Answer",
    "AnswerMessage",
    "CallMessage",
    "CancelMessage",
    "Card",
    "FrontendMessage",
    "Question",
    "RenderedMessage",
    "TextMessage",
    "clean_text",
    "clean_value",
    "parse",
]

RENDERED: Final = "rendered"
ANSWER: Final = "answer"
CANCEL: Final = "cancel"

Decision = Literal["allow", "deny", "picked", "expired", "interrupted", "no_answer"]
"""How a question was settled."""
DecidedBy = Literal["person", "policy", "timeout", "fallback", "kernel"]
"""Who settled it: the person in a view, the ``policy``, the timeout, the
``fallback`` (nobody there), or the kernel (the turn ended or was interrupted)."""
TurnStatus = Literal["idle", "running", "done", "error", "interrupted"]


class Answer(TypedDict):
    """How a question was settled."""

    decision: Decision
    option_id: str | None
    by: DecidedBy
    note: str


class Option(TypedDict):
    """One option of a choice."""

    id: str
    label: str


class Question(TypedDict):
    """The question on a card; ``deadline`` in epoch milliseconds, or None."""

    id: str
    kind: Literal["permission", "choice"]
    prompt: str | None
    options: list[Option] | None
    deadline: int | None
    answer: Answer | None


Card = TypedDict(
    "Card",
    {
        "tool_call_id": str,
        "title": str,
        "tool": str,
        "server": str,
        "class": ToolClass | None,
        "arguments": dict[str, Any],
        "status": Status,
        "outcome": Outcome | None,
        "current_step": str | None,
        "progress": float | None,
        "cancellable": bool,
        "result": str | None,
        "error": str | None,
        "question": Question | None,
    },
)
"""One tool call as a view draws it (``class`` is a keyword, hence this form)."""


class TextMessage(TypedDict):
    """Kernel to frontend: the text from UTF-16 offset ``start`` on is ``delta``."""

    type: Literal["text"]
    start: int
    delta: str


class CallMessage(TypedDict):
    """Kernel to frontend: one whole card."""

    type: Literal["call"]
    card: Card


class RenderedMessage(TypedDict):
    """Frontend to kernel: a view has rendered (someone can answer)."""

    type: Literal["rendered"]


class AnswerMessage(TypedDict):
    """Frontend to kernel: the answer to a question.

    A permission carries ``decision`` (allow or deny) and no option; a choice
    carries ``option_id`` and no decision. ``note`` is the person's reason.
    """

    type: Literal["answer"]
    question_id: str
    decision: Literal["allow", "deny"] | None
    option_id: str | None
    note: str


class CancelMessage(TypedDict):
    """Frontend to kernel: cancel a running call."""

    type: Literal["cancel"]
    tool_call_id: str


FrontendMessage = RenderedMessage | AnswerMessage | CancelMessage

MAX_NOTE = 500
"""Longest note kept from a frontend answer, in characters."""
MAX_ID = 200
"""Longest question or call id accepted from the frontend."""


def clean_text(text: str, limit: int | None = None) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (JSON cannot send them), shortened."""
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def clean_value(value: Any) -> Any:
    """``value`` with :func:`clean_text` applied to every string inside it."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_value(v) for v in value]
    return value


def parse(content: object) -> FrontendMessage | str:
    """The typed message in ``content``, or a string saying why it was refused."""
    if not isinstance(content, Mapping):
        return "not an object"
    kind = content.get("type")
    if kind == RENDERED:
        return RenderedMessage(type="rendered")
    if kind == CANCEL:
        tool_call_id = content.get("tool_call_id")
        if not isinstance(tool_call_id, str) or not _is_id(tool_call_id):
            return "a cancel needs a tool_call_id"
        return CancelMessage(type="cancel", tool_call_id=tool_call_id)
    if kind == ANSWER:
        return _parse_answer(content)
    return f"unknown type {kind!r}"


def _parse_answer(content: Mapping[str, Any]) -> AnswerMessage | str:
    question_id = content.get("question_id")
    if not isinstance(question_id, str) or not _is_id(question_id):
        return "an answer needs a question_id"
    note = content.get("note", "")
    if note is None:
        note = ""
    if not isinstance(note, str):
        return "the note must be a string"
    decision = content.get("decision")
    option_id = content.get("option_id")
    if decision is not None and decision not in ("allow", "deny"):
        return f"unknown decision {decision!r}"
    if option_id is not None and not _is_id(option_id):
        return "option_id must be a short string"
    if (decision is None) == (option_id is None):
        return "an answer carries either a decision or an option_id"
    return AnswerMessage(
        type="answer",
        question_id=question_id,
        decision=decision,
        option_id=option_id,
        note=clean_text(note, MAX_NOTE),
    )


def _is_id(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_ID and clean_text(value) == value
