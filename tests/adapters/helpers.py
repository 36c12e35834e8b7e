"""Interactions that stand in for a person, and readers of what they were told."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from mead_notebook import Allow, Answered, Call, Choice, Deny, Picked, Request, Unanswered
from mead_notebook.policies import PolicyInteraction, Recording

STEPS = {
    "request_permission": "ask",
    "register_call": "register",
    "ask_choice": "choice",
}

ALLOWED = ["pending", "ask", "register", "in_progress", "completed"]
DENIED = ["pending", "ask", "failed"]
REFUSED = ["pending", "failed"]
ANSWERED = ["pending", "choice", "completed"]


class Person(PolicyInteraction):
    """Decides by tool name (``deny`` maps a tool to its Deny message) and picks options.

    ``edit`` maps a tool to the arguments to allow it with instead of the model's.
    ``pick`` maps a question's prompt to the option id to answer, or to the
    answer itself (``Picked`` with more options, ``Answered``); unlisted: no
    answer. It also records the turn's hooks (and each turn's result in
    ``results``), and can cancel each running call ``cancel_after`` seconds after
    it starts.
    """

    def __init__(
        self,
        deny: Mapping[str, str] | None = None,
        pick: Mapping[str, str | Picked | Answered] | None = None,
        cancel_after: float | None = None,
        edit: Mapping[str, dict[str, Any]] | None = None,
    ) -> None:
        self.deny = dict(deny or {})
        self.pick = dict(pick or {})
        self.edit = dict(edit or {})
        self.cancel_after = cancel_after
        self.hooks: list[tuple[str, Any]] = []
        self.results: list[Any] = []

    def decide(self, request: Request) -> Allow | Deny:
        if request["tool"] in self.deny:
            return Deny("rejected", self.deny[request["tool"]])
        if request["tool"] in self.edit:
            return Allow(arguments=dict(self.edit[request["tool"]]))
        return Allow()

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Answered | Unanswered:
        picked = self.pick.get(choice["prompt"])
        if picked is None:
            return Unanswered("no_answer")
        return Picked(picked) if isinstance(picked, str) else picked

    def register_call(self, context: Any, tool_call_id: str, call: Call) -> None:
        if self.cancel_after is not None:
            threading.Timer(self.cancel_after, call.cancel).start()

    def turn_started(self, context: Any, prompt: str) -> None:
        self.hooks.append(("turn_started", prompt))

    def turn_ended(self, context: Any, result: Any, error: BaseException | None) -> None:
        self.hooks.append(("turn_ended", (result.stop_reason, error)))
        self.results.append(result)

    def interrupt(self, context: Any) -> None:
        self.hooks.append(("interrupt", None))

    def idle(self, context: Any) -> None:
        return None

    async def serve(self, context: Any, done: Callable[[], bool]) -> None:
        return None


class Waiting(Person):
    """Asks like a person who never answers: a question stays open until ``interrupt``."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = threading.Event()
        self._closed = threading.Event()

    def request_permission(self, context: Any, request: Request) -> Allow | Deny:
        self.asked.set()
        if self._closed.wait(30):
            return Deny("interrupted", "the turn was interrupted")
        return Deny("expired")

    def interrupt(self, context: Any) -> None:
        super().interrupt(context)
        self._closed.set()


def recorded(person: Person | None = None) -> tuple[Recording, Person]:
    """A Recording around ``person`` (hooks pass through to it)."""
    person = person or Person()
    rec = _HookedRecording(person)
    return rec, person


class _HookedRecording(Recording):
    def __init__(self, inner: Person) -> None:
        super().__init__(inner)
        self.person = inner

    def turn_started(self, context: Any, prompt: str) -> None:
        self.person.turn_started(context, prompt)

    def turn_ended(self, context: Any, result: Any, error: BaseException | None) -> None:
        self.person.turn_ended(context, result, error)

    def interrupt(self, context: Any) -> None:
        self.person.interrupt(context)

    def idle(self, context: Any) -> None:
        return None

    async def serve(self, context: Any, done: Callable[[], bool]) -> None:
        return None


def steps(rec: Recording) -> dict[str, list[str]]:
    """Each call's callbacks in order: its updates' statuses, ``ask``, ``register``, ``choice``."""
    found: dict[str, list[str]] = {}
    for event in rec.events:
        if event.name == "tool_updated":
            update = event.args[0]
            found.setdefault(update["tool_call_id"], []).append(update["status"])
        elif event.name in ("request_permission", "ask_choice"):
            found.setdefault(event.args[0]["tool_call_id"], []).append(STEPS[event.name])
        elif event.name == "register_call":
            found.setdefault(event.args[0], []).append("register")
    return found


def asked(rec: Recording) -> list[dict[str, Any]]:
    """Every permission request, in order."""
    return [e.args[0] for e in rec.events if e.name == "request_permission"]


def running(rec: Recording) -> dict[str, dict[str, Any]]:
    """The first ``in_progress`` update of each call that ran."""
    found: dict[str, dict[str, Any]] = {}
    for e in rec.events:
        if e.name == "tool_updated" and e.args[0]["status"] == "in_progress":
            found.setdefault(e.args[0]["tool_call_id"], e.args[0])
    return found


def texts(rec: Recording) -> list[str]:
    return [e.args[0] for e in rec.events if e.name == "text_delta"]


def finals(rec: Recording) -> dict[str, dict[str, Any]]:
    """The final update of each call."""
    return {
        e.args[0]["tool_call_id"]: e.args[0]
        for e in rec.events
        if e.name == "tool_updated" and e.args[0]["status"] in ("completed", "failed")
    }


def one_at_a_time(rec: Recording) -> None:
    """Every callback ran alone, on the session's callback thread."""
    assert not rec.overlapped
    threads = {e.thread for e in rec.events}
    assert threads
    assert all(t.startswith("mead-callbacks") for t in threads), threads
