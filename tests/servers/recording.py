"""An interaction that allows every call and records every callback, for tests."""

from __future__ import annotations

import threading
from typing import Any

from mead_notebook.calls import Call
from mead_notebook.interaction import Allow, Choice, Deny, Request, Unanswered, Update


class RecordingInteraction:
    """Allows (or denies) every call; keeps the updates, requests, calls and text."""

    def __init__(self, *, allow: bool = True) -> None:
        self.allow = allow
        self.updates: list[Update] = []
        self.requests: list[Request] = []
        self.calls: dict[str, Call] = {}
        self.text: list[str] = []
        self.registered = threading.Event()

    def tool_updated(self, context: Any, update: Update) -> None:
        self.updates.append(dict(update))  # type: ignore[arg-type]

    def request_permission(self, context: Any, request: Request) -> Allow | Deny:
        self.requests.append(request)
        return Allow() if self.allow else Deny("rejected")

    def register_call(self, context: Any, tool_call_id: str, call: Call) -> None:
        self.calls[tool_call_id] = call
        self.registered.set()

    def ask_choice(self, context: Any, choice: Choice) -> Unanswered:
        return Unanswered("no_answer")

    def text_delta(self, context: Any, text: str) -> None:
        self.text.append(text)

    def statuses(self, tool_call_id: str) -> list[str]:
        return [u["status"] for u in self.updates if u["tool_call_id"] == tool_call_id]
