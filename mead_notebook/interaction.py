"""The interaction contract: what the router asks around each tool call.

An interaction is any object with the five callbacks of :class:`Interaction`.
The router calls them in a fixed order, in the thread that runs the turn, one
at a time:

1. ``tool_updated`` with status ``pending``;
2. ``request_permission``;
3. on :class:`Allow`: ``register_call``, ``tool_updated`` (``in_progress``,
   cancellable), the tool itself, ``tool_updated`` (``completed``/``failed``);
4. on :class:`Deny`: a final ``tool_updated`` with ``failed``.

``ask_choice`` puts the ``ask_user`` tool's question to the person and
``text_delta`` carries each streamed fragment of the model's answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, runtime_checkable

if TYPE_CHECKING:
    from .calls import Call

__all__ = [
    "Allow",
    "Choice",
    "Decision",
    "Deny",
    "Interaction",
    "Option",
    "Picked",
    "Request",
    "Status",
    "ToolClass",
    "Unanswered",
    "Update",
    "valid",
]

ToolClass = Literal["read", "effect"]
Status = Literal["pending", "in_progress", "completed", "failed"]
FINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed"})

Request = TypedDict(
    "Request",
    {
        "tool_call_id": str,
        "tool": str,
        "server": str,
        "class": ToolClass,
        "arguments": dict[str, Any],
    },
)
"""A permission request for one tool call (``class`` is a keyword, hence this form)."""


class Update(TypedDict):
    """The state of one tool call, sent whenever it changes."""

    tool_call_id: str
    title: str
    status: Status
    current_step: str | None
    progress: float | None
    cancellable: bool


class Option(TypedDict):
    """One answer of a multiple-choice question."""

    id: str
    label: str


class Choice(TypedDict):
    """A multiple-choice question from the ``ask_user`` tool."""

    tool_call_id: str
    prompt: str
    options: list[Option]


@dataclass(frozen=True)
class Allow:
    """Permission granted: the tool runs."""


@dataclass(frozen=True)
class Deny:
    """Permission refused; ``message`` is an optional note passed on to the model."""

    reason: Literal["rejected", "expired"] = "rejected"
    message: str = ""


@dataclass(frozen=True)
class Picked:
    """The option the person picked."""

    option_id: str


@dataclass(frozen=True)
class Unanswered:
    """A question that got no answer."""

    reason: Literal["expired", "no_answer"] = "no_answer"


Decision = Allow | Deny
Answer = Picked | Unanswered

CALLBACKS: tuple[str, ...] = (
    "tool_updated",
    "request_permission",
    "register_call",
    "ask_choice",
    "text_delta",
)


@runtime_checkable
class Interaction(Protocol):
    """What the router asks around each tool call; ``context`` is the turn's own value."""

    def tool_updated(self, context: Any, update: Update) -> None: ...

    def request_permission(self, context: Any, request: Request) -> Allow | Deny: ...

    def register_call(self, context: Any, tool_call_id: str, call: Call) -> None: ...

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Unanswered: ...

    def text_delta(self, context: Any, text: str) -> None: ...


def implements(obj: object) -> bool:
    """Whether ``obj`` has every callback of :class:`Interaction`, each callable."""
    return all(callable(getattr(obj, name, None)) for name in CALLBACKS)


def valid(value: object) -> bool:
    """Whether ``value`` is an ``(interaction, context)`` pair whose interaction is complete."""
    return isinstance(value, tuple) and len(value) == 2 and implements(value[0])


def resolve(value: object) -> tuple[Interaction, Any] | None:
    """Normalise a turn's ``interaction`` option to a pair, or ``None`` for no interaction.

    Raises :class:`TypeError` for anything that is neither a pair nor a bare interaction.
    """
    if value is None:
        return None
    if valid(value):
        pair: tuple[Interaction, Any] = value  # type: ignore[assignment]
        return pair
    if implements(value):
        return value, None  # type: ignore[return-value]
    missing = [name for name in CALLBACKS if not callable(getattr(value, name, None))]
    raise TypeError(
        "interaction must be an Interaction or an (interaction, context) pair; "
        f"{type(value).__name__} lacks {', '.join(missing)}"
    )
