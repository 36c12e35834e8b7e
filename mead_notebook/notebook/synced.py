"""``SyncedTurn``: one turn as every view sees it, in synced traits.

The prompt, status, streamed text, the agent's plan and thoughts, and one card
per tool call live in traits (``docs/widget-protocol.md``). While the turn runs,
the growing ``text``, ``thoughts``, ``plan`` and ``calls`` are kept current
quietly and travel as small custom messages; they are
synced in full once, at the turn's end, so a saved notebook's widget state holds
the whole turn and a view that connects late asks for it (``request_state``).
"""

from __future__ import annotations

import threading
from typing import Any, Final, cast

import traitlets

from ..interaction import AgentInfo, HistoryEntry, PlanEntry
from ..turn import TurnResult
from . import cards
from .agent_info import agent_of
from .blocks import plan_of
from .frontend import LoadsFrontend
from .history import history_of
from .protocol import (
    PROTOCOL_VERSION,
    CallMessage,
    Card,
    PlanMessage,
    TextMessage,
    ThoughtMessage,
    clean_text,
)
from .quiet import QuietSync
from .text import TextStream, error_text
from .transcript import TurnState

__all__ = ["SyncedTurn"]

TURN_KEYS: Final = (
    "prompt",
    "status",
    "stop_reason",
    "error",
    "text",
    "thoughts",
    "plan",
    "calls",
    "order",
    "agent",
    "history",
    "history_hidden",
)


class SyncedTurn(QuietSync, LoadsFrontend):
    """The synced state of one turn: its traits, cards and streamed text."""

    prompt = traitlets.Unicode("").tag(sync=True)
    """The turn's prompt."""
    status = traitlets.Unicode("idle").tag(sync=True)
    """``idle``, ``running``, ``done``, ``error`` or ``interrupted``."""
    stop_reason = traitlets.Unicode("").tag(sync=True)
    """Why the turn ended (``end_turn``, ``max_rounds``, ``interrupted``); empty while running."""
    error = traitlets.Unicode("").tag(sync=True)
    """The turn's error message, empty if none."""
    text = traitlets.Unicode("").tag(sync=True)
    """All text streamed so far (Markdown); changes travel as ``text`` messages."""
    thoughts = traitlets.Unicode("").tag(sync=True)
    """The agent's reasoning streamed so far, never part of ``text``; changes travel as
    ``thought`` messages."""
    plan = traitlets.List(traitlets.Dict()).tag(sync=True)
    """The agent's plan: entries with ``content`` and ``status``; changes travel as
    ``plan`` messages."""
    protocol_version = traitlets.Int(PROTOCOL_VERSION).tag(sync=True)
    """The version of ``docs/widget-protocol.md`` this state follows."""
    calls = traitlets.Dict().tag(sync=True)
    """Tool-call cards by ``tool_call_id``; changes travel as ``call`` messages."""
    order = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """The ``tool_call_id`` of every card, in the order the cards appeared."""
    agent = traitlets.Dict().tag(sync=True)
    """Who runs the turn (``AgentInfo``: ``agent``, ``mode``, ``sandbox``, ``settings``,
    ``model``; empty when its source did not say); synced as it changes."""
    history = traitlets.List(traitlets.Dict()).tag(sync=True)
    """The earlier conversation this turn continues (a resumed session's), oldest first:
    ``HistoryItem`` entries, read-only; empty for any other turn. Synced when it arrives."""
    history_hidden = traitlets.Int(0).tag(sync=True)
    """How many earlier entries of that conversation are not in ``history``."""
    keyboard = traitlets.Bool(True).tag(sync=True)
    """Whether a focused question answers keys (Enter, Esc, numbers)."""

    def __init__(self, **kwargs: Any) -> None:
        self._lock = threading.RLock()
        self._text = TextStream(
            self._lock, self._emit_text, self._streaming, emit_thought=self._emit_thought
        )
        super().__init__(**kwargs)

    def _turn_state(self) -> TurnState:
        with self._lock:
            return TurnState(
                prompt=self.prompt,
                status=self.status,
                stop_reason=self.stop_reason,
                error=self.error,
                text=self.text,
                thoughts=self.thoughts,
                plan=cast(list[PlanEntry], list(self.plan)),
                calls=dict(self.calls),
                order=list(self.order),
                agent=agent_of(self.agent),
            )

    def _begin(self, prompt: str) -> None:
        """Clear the last turn and show ``prompt`` running, in every view."""
        with self._lock:
            self._text.reset()
            with self._quiet(*TURN_KEYS):
                self.prompt = clean_text(str(prompt))
                self.status = "running"
                self.stop_reason = ""
                self.error = ""
                self.text = ""
                self.thoughts = ""
                self.plan = []
                self.calls = {}
                self.order = []
                self.agent = {}
                self.history = []
                self.history_hidden = 0
            self.send_state(list(TURN_KEYS))

    def _finish(self, result: TurnResult, error: BaseException | None, interrupted: bool) -> None:
        """Record how the turn ended, end the cards still open, and sync it all once."""
        with self._lock:
            self._text.flush(send=False)
            if not self.text and result.text:
                self._text.put(clean_text(result.text), send=False)
            for tool_call_id in list(self.order):
                ended = cards.end_open(self.calls[tool_call_id])
                if ended is not None:
                    self._put_card(ended, send=False)
            with self._quiet(*TURN_KEYS):
                if interrupted:
                    self.status = self.stop_reason = "interrupted"
                elif error is not None:
                    self.status = self.stop_reason = "error"
                else:
                    self.status = "done"
                    self.stop_reason = result.stop_reason
                self.error = "" if error is None else error_text(error)
            self.send_state(
                ["status", "stop_reason", "error", "text", "thoughts", "plan", "calls", "order"]
            )

    def _handle_msg(self, msg: Any) -> None:
        data = msg.get("content", {}).get("data") if isinstance(msg, dict) else None
        if isinstance(data, dict) and data.get("method") == "request_state":
            with self._lock:
                self._text.flush(send=False)
                self.send_state()
            return
        super()._handle_msg(msg)

    def _card(self, tool_call_id: str) -> Card:
        """The call's card, or a new one placed where the text has reached; lock held."""
        card: Card | None = self.calls.get(tool_call_id)
        if card is None:
            card = cards.new_card(tool_call_id, text_offset=self._text.position())
        return card

    def _put_card(self, card: Card, *, send: bool = True) -> None:
        """Store the card and send it; lock held. Text streamed before it goes first."""
        if send and self._text.due():
            self._text.flush()
        tool_call_id = card["tool_call_id"]
        with self._quiet("calls", "order"):
            if tool_call_id not in self.calls:
                self.order = [*self.order, tool_call_id]
            self.calls = {**self.calls, tool_call_id: card}
        if send:
            self.send(CallMessage(type="call", card=card))

    def _emit_text(self, start: int, delta: str, send: bool) -> None:
        delta = clean_text(delta)
        with self._quiet("text"):
            self.text = self.text + delta
        if send:
            self.send(TextMessage(type="text", start=start, delta=delta))

    def _emit_thought(self, start: int, delta: str, send: bool) -> None:
        delta = clean_text(delta)
        with self._quiet("thoughts"):
            self.thoughts = self.thoughts + delta
        if send:
            self.send(ThoughtMessage(type="thought", start=start, delta=delta))

    def _put_plan(self, entries: list[PlanEntry]) -> None:
        """Store the whole plan and send it to every view (thoughts streamed before go first)."""
        with self._lock:
            plan = plan_of(entries)
            if plan == self.plan:
                return
            if self._text.due():
                self._text.flush()
            with self._quiet("plan"):
                self.plan = cast(list[dict[str, Any]], plan)
            self.send(PlanMessage(type="plan", entries=plan))

    def _put_history(self, entries: list[HistoryEntry]) -> None:
        """Show the earlier conversation this turn continues, in every view."""
        items, hidden = history_of(entries)
        with self._lock, self.hold_sync():
            self.history = cast(list[dict[str, Any]], items)
            self.history_hidden = hidden

    def _put_agent(self, details: AgentInfo) -> None:
        """Show who runs the turn, in every view (its well-formed fields only)."""
        with self._lock:
            described = dict(agent_of(details))
            if described != self.agent:
                self.agent = described

    def _streaming(self) -> bool:
        return self.status == "running" and self.comm is not None
