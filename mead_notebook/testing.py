"""Test doubles for interactions, for your tests and for audit: ``Recording``."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from .calls import Call
from .interaction import (
    AgentInfo,
    Allow,
    Answered,
    Choice,
    Deny,
    HistoryEntry,
    Interaction,
    Picked,
    PlanEntry,
    Request,
    Unanswered,
    Update,
)

__all__ = ["Recorded", "Recording"]


@dataclass(frozen=True)
class Recorded:
    """One callback as ``Recording`` saw it."""

    name: str
    args: tuple[Any, ...]
    result: Any
    thread: str
    thread_id: int


class Recording:
    """Wraps an interaction and records every callback, its answer and its thread.

    For tests and audit; ``inner`` answers (``Recording(AllowAll())``). ``overlapped``
    becomes true if two callbacks ever ran at once.
    Plans and thoughts are recorded too, and passed on only to an inner
    interaction that implements :class:`~mead_notebook.PlanAndThoughts`; so is the
    agent's description, passed on to one that implements :class:`~mead_notebook.AgentDetails`,
    and a resumed session's history, to one that implements
    :class:`~mead_notebook.SessionHistory`.
    """

    def __init__(self, inner: Interaction) -> None:
        self.inner: Interaction = inner
        self.events: list[Recorded] = []
        self.overlapped = False
        self._busy = threading.Lock()

    @property
    def names(self) -> list[str]:
        """The callbacks' names, in order."""
        return [e.name for e in self.events]

    def _record(self, name: str, *args: Any) -> Any:
        if not self._busy.acquire(blocking=False):
            self.overlapped = True
            self._busy.acquire()
        thread = threading.current_thread()
        try:
            inner = getattr(self.inner, name, None)
            result = inner(*args) if inner is not None else None
        except BaseException as exc:
            self.events.append(Recorded(name, args[1:], exc, thread.name, thread.ident or 0))
            raise
        finally:
            self._busy.release()
        self.events.append(Recorded(name, args[1:], result, thread.name, thread.ident or 0))
        return result

    def tool_updated(self, context: Any, update: Update) -> None:
        self._record("tool_updated", context, dict(update))

    def request_permission(self, context: Any, request: Request) -> Allow | Deny:
        result: Allow | Deny = self._record("request_permission", context, dict(request))
        return result

    def register_call(self, context: Any, tool_call_id: str, call: Call) -> None:
        self._record("register_call", context, tool_call_id, call)

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Answered | Unanswered:
        result: Picked | Answered | Unanswered = self._record("ask_choice", context, dict(choice))
        return result

    def text_delta(self, context: Any, text: str) -> None:
        self._record("text_delta", context, text)

    def plan_updated(self, context: Any, entries: list[PlanEntry]) -> None:
        """Recorded; passed on when the inner interaction hears plans."""
        self._record("plan_updated", context, [dict(e) for e in entries])

    def thought_delta(self, context: Any, text: str) -> None:
        """Recorded; passed on when the inner interaction hears thoughts."""
        self._record("thought_delta", context, text)

    def agent_described(self, context: Any, details: AgentInfo) -> None:
        """Recorded; passed on when the inner interaction hears of the agent."""
        self._record("agent_described", context, dict(details))

    def history_replayed(self, context: Any, entries: list[HistoryEntry]) -> None:
        """Recorded; passed on when the inner interaction hears of a session's history."""
        self._record("history_replayed", context, [dict(e) for e in entries])

    def __repr__(self) -> str:
        return f"Recording({self.inner!r}, {len(self.events)} events)"
