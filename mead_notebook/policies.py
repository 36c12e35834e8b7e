"""Interactions that stand in for a person.

Each policy answers permission requests by rule (``decide``); a notebook
interaction can also take one as ``policy=`` to settle some requests without
asking, in which case ``decide`` returning ``None`` means "ask the person".
Questions put to a policy go unanswered (``no_answer``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .calls import Call
from .interaction import Allow, Choice, Deny, Interaction, Picked, Request, Unanswered, Update

__all__ = ["AllowAll", "AllowList", "AllowReads", "DenyAll", "Policy", "Recorded", "Recording"]


class Policy:
    """Base of the rule-based interactions: override ``decide``."""

    def decide(self, request: Request) -> Allow | Deny | None:
        """The decision for ``request``, or ``None`` when the rule has none."""
        return None

    def request_permission(self, context: Any, request: Request) -> Allow | Deny:
        decision = self.decide(request)
        return Deny("rejected") if decision is None else decision

    def tool_updated(self, context: Any, update: Update) -> None:
        return None

    def register_call(self, context: Any, tool_call_id: str, call: Call) -> None:
        return None

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Unanswered:
        return Unanswered("no_answer")

    def text_delta(self, context: Any, text: str) -> None:
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class AllowAll(Policy):
    """Allow every call."""

    def decide(self, request: Request) -> Allow:
        return Allow()


class DenyAll(Policy):
    """Deny every call."""

    def decide(self, request: Request) -> Deny:
        return Deny("rejected")


class AllowReads(Policy):
    """Allow calls of class ``read``; anything else has no rule (denied when standing alone)."""

    def decide(self, request: Request) -> Allow | None:
        return Allow() if request["class"] == "read" else None


class AllowList(Policy):
    """Allow the listed tools and every tool of the listed servers; nothing else."""

    def __init__(self, tools: Iterable[str] = (), servers: Iterable[str] = ()) -> None:
        self.tools = frozenset(tools)
        self.servers = frozenset(servers)

    def decide(self, request: Request) -> Allow | None:
        if request["tool"] in self.tools or request["server"] in self.servers:
            return Allow()
        return None

    def __repr__(self) -> str:
        return f"AllowList(tools={sorted(self.tools)}, servers={sorted(self.servers)})"


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

    For tests and audit. ``overlapped`` becomes true if two callbacks ever ran at once.
    """

    def __init__(self, inner: Interaction | None = None) -> None:
        self.inner: Interaction = inner if inner is not None else AllowAll()
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
            result = getattr(self.inner, name)(*args)
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

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Unanswered:
        result: Picked | Unanswered = self._record("ask_choice", context, dict(choice))
        return result

    def text_delta(self, context: Any, text: str) -> None:
        self._record("text_delta", context, text)

    def __repr__(self) -> str:
        return f"Recording({self.inner!r}, {len(self.events)} events)"
