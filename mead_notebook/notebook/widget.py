"""``NotebookInteraction``: the widget that shows a turn live and asks the person.

It implements :class:`~mead_notebook.interaction.Interaction`,
:class:`~mead_notebook.interaction.TurnHooks`,
:class:`~mead_notebook.interaction.PlanAndThoughts`,
:class:`~mead_notebook.interaction.AgentDetails` and
:class:`~mead_notebook.interaction.SessionHistory`: each callback becomes a change to
the turn's synced state (:mod:`.synced`), each question waits in
:mod:`.questions`, and each frontend message is parsed (:mod:`.protocol`) and
handed to whatever it answers or cancels.
"""

from __future__ import annotations

import difflib
import logging
import math
import os
import threading
from collections.abc import Callable
from typing import Any, Final, cast

from .. import schema
from ..calls import Call
from ..driver import WITHDRAWN
from ..interaction import (
    AgentInfo,
    Allow,
    Answered,
    Choice,
    Deny,
    HistoryEntry,
    Picked,
    PlanEntry,
    Policy,
    Previewer,
    Request,
    TextBlock,
    Unanswered,
    Update,
)
from ..turn import TurnResult
from . import cards, fallback
from . import waiting as _waiting
from .auditing import Auditor
from .outputs import Outputs
from .protocol import Card, PingMessage, Question, parse
from .questions import REVISED, Questions, QuestionState
from .rules import Rule
from .synced import SyncedTurn
from .text import FLUSH_INTERVAL
from .transcript import summary
from .waiting.views import REOPENS, Presence

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["FLUSH_INTERVAL", "NotebookInteraction"]

FRONTEND_AGAIN_AFTER = 2.0
"""Shortest time between two sends of the shared frontend to pages that lack it (seconds)."""


class NotebookInteraction(SyncedTurn):
    """Shows a turn in the notebook and asks the person about tool calls.

    ``timeout`` bounds every question (``None``: no bound, but only once a view has
    rendered); ``grace`` is how long to wait for a view before deciding that nobody
    is there to answer, in which case ``fallback`` decides permissions (a policy;
    no rule or none given: deny as expired) and choices go unanswered. ``policy``
    settles the requests it has a rule for without asking. ``display=False``
    leaves displaying to you. ``keyboard=False`` turns the keyboard answers off.
    ``audit`` is a path: every request and its outcome is appended there as JSON
    Lines (read it back with :func:`mead_notebook.audit.read`).
    """

    def __init__(
        self,
        *,
        timeout: float | None = 600.0,
        grace: float = 3.0,
        fallback: Policy | None = None,
        policy: Policy | None = None,
        display: bool = True,
        keyboard: bool = True,
        audit: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> None:
        if timeout is not None and (not math.isfinite(timeout) or timeout <= 0):
            raise ValueError(
                f"timeout must be a positive number of seconds or None, not {timeout!r}"
            )
        if not math.isfinite(grace) or grace < 0:
            raise ValueError(f"grace must be a non-negative number of seconds, not {grace!r}")
        _check_keywords(type(self), kwargs)
        for name, value in (("policy", policy), ("fallback", fallback)):
            if value is not None and not callable(getattr(value, "decide", None)):
                raise TypeError(f"{name} needs a decide(request) method: {value!r}")
        self._auto_display = display
        self._auditor: Auditor | None = None
        self._outputs = Outputs()
        self._handles: dict[str, Call] = {}
        self._cancel_requested: set[str] = set()
        self._presence = Presence(self._ping, self._announce, lambda: self._questions.nudge())
        self._questions = Questions(
            show=self._show_question,
            wait=self._wait,
            timeout=timeout,
            grace=grace,
            policy=policy,
            fallback=fallback,
            settled=self._audit_decision,
            presence=self._presence,
            waiting=self._waiting_changed,
            recheck=self._recheck,
        )
        # Before the comm opens: a kernel that dispatches comm messages on another
        # thread (a subshell) may hand over the view's first message at once.
        self.on_msg(self._on_custom_msg)
        super().__init__(keyboard=keyboard, **kwargs)
        if audit is not None:
            self._auditor = Auditor(audit, self.model_id)
        self.add_class(self._outputs.css_class)

    @property
    def timeout(self) -> float | None:
        """Longest wait for an answer, in seconds."""
        return self._questions.timeout

    @property
    def policy(self) -> Policy | None:
        """The policy that settles requests without asking."""
        return self._questions.policy

    @property
    def rules(self) -> list[Rule]:
        """The "Allow always" rules the person made, oldest first."""
        return self._questions.rules

    def forget(self, rule: Rule | str | None = None) -> None:
        """Revoke one rule (a :class:`Rule` or its text, like ``"tool delete_file"``), or all."""
        if isinstance(rule, str):
            found = [r for r in self._questions.rules if str(r) == rule]
            if not found:
                raise ValueError(f"no such rule: {rule!r}; the rules are {self.rules}")
            rule = found[0]
        self._questions.forget(rule)

    # -- what the kernel shows -----------------------------------------------------------

    def __repr__(self) -> str:
        with self._lock:
            shown = list(self.calls.values())
            chars = len(self.text) + self._text.buffered_chars()
            status = self.status
        return summary(status, shown, chars)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        self._questions.view_displayed()
        self._outputs.displayed()
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            data["text/plain"] = repr(self)
        return bundle

    def _widget_data(self) -> dict[str, Any]:
        """The widget output's data (its view and summary), without noting a display."""
        bundle = super()._repr_mimebundle_()
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        return {**data, "text/plain": repr(self)} if isinstance(data, dict) else {}

    # -- TurnHooks --------------------------------------------------------------------------

    def turn_started(self, context: Any, prompt: str) -> None:
        """Reset for a new turn and display the widget if it is not shown yet.

        Raises ``UnsupportedKernelError`` first when this kernel cannot deliver answers
        to the turn's thread, so that the turn does not start.
        """
        _waiting.check()
        self._questions.new_turn()
        with self._lock:
            if self._auditor is not None:
                self._auditor.turn += 1
            self._handles.clear()
            self._cancel_requested.clear()
            self._begin(prompt)
        try:
            _waiting.watch(self)
        except Exception:
            log.exception("cannot watch the widget's frontend messages; questions may fall back")
        if self._auto_display and self._questions.displayed_at is None:
            self._show()
        self._text.start()

    def turn_ended(self, context: Any, result: TurnResult, error: BaseException | None) -> None:
        """Close open questions, record how the turn ended and sync everything once.

        An interrupt meanwhile is raised once the end is recorded, not half-way through.
        """
        with _waiting.interrupts_held():
            try:
                self._end_turn(result, error)
            finally:
                _waiting.unwatch(self)

    def _end_turn(self, result: TurnResult, error: BaseException | None) -> None:
        self._questions.close_all("the turn ended")
        self._text.stop()
        interrupted = (
            self._questions.interrupted
            or result.stop_reason == "interrupted"
            or (error is not None and not isinstance(error, Exception))
        )
        with self._lock:
            self._handles.clear()
            self._finish(result, error, interrupted)
        self._outputs.turn_ended(self._widget_data, self._turn_state)

    def interrupt(self, context: Any) -> None:
        """Close every open question as interrupted, from any thread."""
        self._questions.close_all("the turn was interrupted", interrupted=True)

    def withdraw(self, context: Any, tool_call_id: str) -> None:
        """Close the open question of ``tool_call_id`` alone, from any thread."""
        self._questions.withdraw(tool_call_id, WITHDRAWN)

    def idle(self, context: Any) -> None:
        """Serve the frontend's messages while the turn's thread waits on a tool."""
        if self._outputs.waiting_due() == 0:
            self._outputs.flush_waiting()
        _waiting.poll(self)

    async def serve(self, context: Any, done: Callable[[], bool]) -> None:
        """Keep the frontend's messages flowing while an async cell awaits the turn."""
        await _waiting.serve_while(done, self)

    # -- Interaction ------------------------------------------------------------------------

    def text_delta(self, context: Any, text: str) -> None:
        """Buffer one streamed fragment; it is sent within ``FLUSH_INTERVAL``."""
        self._next_step()
        self._text.append(text)

    # -- PlanAndThoughts --------------------------------------------------------------------

    def thought_delta(self, context: Any, text: str) -> None:
        """Buffer one fragment of the agent's thoughts; sent like text, never part of it."""
        self._next_step()
        self._text.think(text)

    def plan_updated(self, context: Any, entries: list[PlanEntry]) -> None:
        """Show the agent's whole plan, as a checklist above the turn."""
        self._next_step()
        self._put_plan(entries)

    # -- AgentDetails -----------------------------------------------------------------------

    def agent_described(self, context: Any, details: AgentInfo) -> None:
        """Show who runs the turn (its mode, sandbox, settings) in the turn's header."""
        self._put_agent(details)

    # -- SessionHistory ---------------------------------------------------------------------

    def history_replayed(self, context: Any, entries: list[HistoryEntry]) -> None:
        """Show the earlier conversation this turn continues, above it and read-only."""
        self._put_history(entries)

    def tool_updated(self, context: Any, update: Update) -> None:
        """Create or update the call's card from the update alone.

        When what the card shows of the call changes while its question is open
        (an agent's late input), the question moves to its next version in the
        same card message, so no answer made on the older one can count.
        """
        tool_call_id = str(update.get("tool_call_id") or "")
        if not tool_call_id:
            log.warning("tool_updated without a tool_call_id: %r", update)
            return
        with self._questions.held(), self._lock:
            card = self.calls.get(tool_call_id)
            if card is None:
                card = cards.new_card(tool_call_id, text_offset=self._text.position())
            previous = card["decided_by"]
            before = card
            card = cards.updated(card, update)
            if _shown(card) != _shown(before):
                question = self._questions.revise(tool_call_id, card)
                if question is not None:
                    card = cards.with_question(card, question)
            if self._auditor is not None and card["decided_by"] != previous:
                self._auditor.by_agent(card)
            if card["status"] in ("completed", "failed"):
                self._handles.pop(tool_call_id, None)
                if self._auditor is not None:
                    self._auditor.ended(card)
            self._put_card(card)
        if card["status"] != "in_progress":
            self._next_step()  # in_progress: an allowed tool may be about to start

    def register_call(self, context: Any, tool_call_id: str, call: Call) -> None:
        """Keep the running call's handle, so the card's Cancel can reach it."""
        with self._lock:
            self._handles[tool_call_id] = call

    def request_permission(self, context: Any, request: Request) -> Allow | Deny:
        """Ask the policy, then the person; block until answered, expired or interrupted."""
        tool_call_id = str(request.get("tool_call_id") or "")
        with self._lock:
            card = self._card(tool_call_id)
            # What the request does not say (a diff an update showed) stays as the card has it.
            details = cast(Update, {"status": card["status"], **request})
            self._put_card(cards.updated(card, details), send=False)
        schema.warm()  # the person's edited arguments are checked against the tool's schema
        return self._questions.permission(request)

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Answered | Unanswered:
        """Put the question to the person; block until answered, expired or interrupted."""
        return self._questions.choice(choice)

    # -- frontend messages ----------------------------------------------------------------

    def deliver(self, content: object) -> None:
        """Handle one frontend message; safe from any thread, idempotent, never raises."""
        try:
            message = parse(content)
            if isinstance(message, str):
                log.warning("ignored a frontend message (%s): %.200r", message, content)
            elif message["type"] == "rendered":
                self._questions.view_rendered()
                self._presence.rendered()
            elif message["type"] == "answer":
                self._presence.heard()
                self._questions.answer(message)
            elif message["type"] == "cancel":
                self._presence.heard()
                self._cancel(message["tool_call_id"])
            elif message["type"] == "pong":
                # A view answers: it is there, even if its 'rendered' never reached the kernel.
                self._questions.view_rendered()
                self._presence.pong(message["seq"])
            elif message["type"] == "gone":
                # A view says goodbye: there was one, even if its 'rendered' was lost.
                self._questions.view_rendered()
                self._presence.gone()
            else:
                with self._lock:
                    REOPENS.reopen(self._frontend, at_most_every=FRONTEND_AGAIN_AFTER)
        except Exception:
            log.exception("a frontend message could not be handled: %.200r", content)

    def _on_custom_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        self.deliver(content)

    def _cancel(self, tool_call_id: str) -> None:
        with self._lock:
            if tool_call_id in self._cancel_requested:
                log.debug("ignored a second cancel of %s", tool_call_id)
                return
            call = self._handles.get(tool_call_id)
            if call is None:
                log.info("ignored a cancel of %s, which is not running", tool_call_id)
                return
            self._cancel_requested.add(tool_call_id)
        call.cancel()

    # -- questions -------------------------------------------------------------------------

    def _show_question(self, tool_call_id: str, question: Question) -> None:
        with self._lock:
            self._put_card(cards.with_question(self._card(tool_call_id), question))

    def _recheck(self, tool_call_id: str, arguments: dict[str, Any], preview: Previewer) -> bool:
        """Whether the card shows what ``preview`` says a call with ``arguments`` will do;
        when it does not, the card shows that now, as its question's next version."""
        try:
            said = preview(arguments)
            found: dict[str, Any] = {
                "content": list(said.content),
                "locations": list(said.locations),
            }
        except Exception as exc:
            log.warning("the preview of %s's edited arguments raised", tool_call_id, exc_info=True)
            failed = TextBlock(type="text", text=f"The preview failed: {type(exc).__name__}: {exc}")
            found = {"content": [failed], "locations": []}
        with self._questions.held(), self._lock:
            card = self._card(tool_call_id)
            new = cards.updated(card, cast(Update, {**card, **found}))
            if _shown(new) == _shown(card):
                return True
            question = self._questions.revise(tool_call_id, new)
            if question is not None:
                new = cards.with_question(new, question)
            self._put_card(new)
        return False

    def _audit_decision(self, q: QuestionState) -> None:
        if self._auditor is not None:
            with self._lock:
                card = self._card(q.tool_call_id)
            self._auditor.decided(card, q)

    def _waiting_changed(self, questions: list[QuestionState]) -> None:
        """Say what waits in the output a page that cannot draw the widget shows: once a
        question has waited a moment (:meth:`_wait`) or at the turn's next step."""
        with self._lock:
            asked = [(q, self.calls.get(q.tool_call_id)) for q in questions]
            key = self.model_id
        bundle = fallback.bundle(key, fallback.waiting_text(asked))
        self._outputs.waiting(bundle, nothing=not questions)

    def _next_step(self) -> None:
        """The turn moved on: publish what was kept to say about waiting questions."""
        self._outputs.flush_waiting()

    def _ping(self, seq: int) -> None:
        self.send(PingMessage(type="ping", seq=seq))

    def _announce(self) -> None:
        """Show the widget again where no view is left: a new comm under the same id, and
        its output published again in place (a reopened VS Code editor draws it then)."""
        with self._lock:
            self._text.flush(send=False)
            if not REOPENS.reopen(self):
                return
        self._outputs.refresh(self._widget_data())

    def _wait(self, event: threading.Event, timeout: float) -> object:
        due = self._outputs.waiting_due()
        if due is not None and due < timeout:
            if _waiting.wait_for(self, event, due):
                return True
            self._outputs.flush_waiting()
            timeout -= due
        return _waiting.wait_for(self, event, timeout)

    # -- helpers ---------------------------------------------------------------------------

    def _show(self) -> None:
        try:
            from IPython.core.interactiveshell import InteractiveShell

            if InteractiveShell.initialized():
                self._questions.view_displayed()
                self._outputs.show(self._widget_data())
        except Exception:
            log.exception("the widget could not be displayed")


OPTIONS: Final = ("timeout", "grace", "fallback", "policy", "display", "keyboard", "audit")
"""The keywords ``NotebookInteraction`` takes (besides the widget's own traits)."""


def _check_keywords(cls: type[NotebookInteraction], given: dict[str, Any]) -> None:
    """Refuse keywords that are neither an option nor a trait of the widget (a typo like
    ``polcy=`` would otherwise be a traitlets warning nobody sees, and the option ignored)."""
    traits = set(cls.class_trait_names())
    unknown = [name for name in given if name not in traits]
    if not unknown:
        return
    name = unknown[0]
    close = difflib.get_close_matches(name, OPTIONS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise TypeError(
        f"{cls.__name__}() got an unexpected keyword argument {name!r}{hint}; "
        f"it takes {', '.join(OPTIONS)}"
    )


def _shown(card: Card) -> list[Any]:
    """What a card shows of its call that a person's decision is made on."""
    return [card.get(k) for k in REVISED]
