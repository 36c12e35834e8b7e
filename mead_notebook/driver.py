"""Drive an interaction through the contract, for one turn.

``TurnDriver`` is the one place that calls an interaction: ``Router`` uses it,
and so can anything else that runs an agent's turn (the framework adapters).
It keeps the order of the contract, sends one callback at a time (from
whichever thread), fails closed, and keeps each call's :class:`CallRecord` and
the updates a view receives in agreement: both are written from the same values.

A call's life, as the methods are called::

    record = driver.begin(id, tool, server, tool_class, arguments)   # pending
    driver.describe(record, content=[...])    # more of what it will do, still pending
    decision = driver.permission(record)      # Deny: the call has ended failed
    driver.running(record, call)              # register_call, in_progress (cancellable)
    driver.progress(record, 0.5, "halfway")
    driver.complete(record, "result text")    # or driver.fail(record, "error", "...")

A call that an agent ran under its own rules skips ``permission`` and says so:
``driver.running(record, call, decided_by="agent")``. ``plan`` and ``thought``
reach an interaction that implements :class:`~mead_notebook.PlanAndThoughts`;
``agent`` one that implements :class:`~mead_notebook.AgentDetails`; ``history``
(the earlier conversation a turn continues) one that implements
:class:`~mead_notebook.interaction.SessionHistory`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any, cast

from .calls import Call
from .interaction import (
    FINAL_STATUSES,
    AgentDetails,
    AgentInfo,
    Allow,
    Answered,
    Choice,
    ContentBlock,
    DecidedBy,
    Deny,
    HistoryCall,
    HistoryEntry,
    HistoryMessage,
    Interaction,
    Location,
    Outcome,
    Picked,
    PlanAndThoughts,
    PlanEntry,
    Previewer,
    Request,
    SessionHistory,
    Status,
    TextBlock,
    ToolClass,
    ToolKind,
    TurnHooks,
    Unanswered,
    Update,
    Withdrawal,
    class_of,
    kind_of_class,
    outcome_of,
)
from .interaction import resolve as resolve_interaction
from .turn import CallRecord, TurnResult

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["NOT_CANCELLABLE", "SHORT", "WITHDRAWN", "TurnDriver", "short"]

SHORT = 500
"""Longest ``result``/``error`` string an update carries, in characters."""
NOT_CANCELLABLE = "running (this call cannot be cancelled)"
WITHDRAWN = "the agent stopped waiting for this call (its own timeout or cancel)"
"""Why a question closed alone (:meth:`TurnDriver.withdraw_current`)."""
"""The step of a running call that nothing can stop (``running(..., cancellable=False)``)."""


def short(value: object) -> str | None:
    """``value`` as a string of at most :data:`SHORT` characters (None stays None)."""
    if value is None:
        return None
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


class TurnDriver:
    """Calls one interaction for one turn, in the contract's order, one callback at a time.

    ``interaction`` is an ``Interaction``, an ``(interaction, context)`` pair or
    ``None`` (every call allowed, nothing shown). The turn's text and calls
    accumulate in :attr:`result`.
    """

    def __init__(self, interaction: object = None) -> None:
        pair = resolve_interaction(interaction)
        self.interaction: Interaction | None = pair[0] if pair else None
        self.context: Any = pair[1] if pair else None
        self.hooks: TurnHooks | None = (
            self.interaction if isinstance(self.interaction, TurnHooks) else None
        )
        self.narration: PlanAndThoughts | None = (
            self.interaction if isinstance(self.interaction, PlanAndThoughts) else None
        )
        self.agent_details: AgentDetails | None = (
            self.interaction if isinstance(self.interaction, AgentDetails) else None
        )
        self.session_history: SessionHistory | None = (
            self.interaction if isinstance(self.interaction, SessionHistory) else None
        )
        self._thoughts: list[str] = []
        self.result = TurnResult()
        self._parts: list[str] = []
        self._lock = threading.RLock()
        self._started = False
        self._fixed: set[str] = set()
        self.editable = True
        """False when the source cannot take edited arguments or a denial message."""
        self.agent_servers: set[str] = set()
        """The servers that are coding agents (their calls are everything the agent does)."""
        self._asking_lock = threading.Lock()
        self._asking: str | None = None
        self._withdrawn = False

    # -- the turn ---------------------------------------------------------------------

    def start(self, prompt: str) -> None:
        """``turn_started``; an error from it propagates and refuses the turn."""
        if self.hooks is not None:
            with self._lock:
                self.hooks.turn_started(self.context, prompt)
        self._started = True

    def end(self, error: BaseException | None = None) -> TurnResult:
        """End every call still open as interrupted, then ``turn_ended`` (once)."""
        result = self.result
        result.text = "".join(self._parts)
        result.thoughts = "".join(self._thoughts)
        for record in result.calls:
            if record.status not in FINAL_STATUSES:
                self.fail(record, "interrupted", "the turn was interrupted", step="interrupted")
        if error is not None and not isinstance(error, Exception):
            result.stop_reason = "interrupted"
        if self.hooks is not None and self._started:
            self._started = False
            try:
                with self._lock:
                    self.hooks.turn_ended(self.context, result, error)
            except Exception:
                log.exception("interaction.turn_ended raised")
        return result

    def interrupt(self) -> None:
        """``interrupt``, from any thread, without waiting for a callback to finish."""
        if self.hooks is not None:
            try:
                self.hooks.interrupt(self.context)
            except Exception:
                log.exception("interaction.interrupt raised")

    def withdraw_current(self) -> None:
        """The source stopped waiting for the callback running now (its own timeout or
        cancel of that one call): its question closes alone, now or as soon as it asks.

        From any thread. The caller makes sure the callback running now is the one
        withdrawn (and calls :meth:`callback_ended` after it, under the same lock).
        """
        with self._asking_lock:
            asking = self._asking
            if asking is None:
                self._withdrawn = True
                return
        self._withdraw(asking)

    def callback_ended(self) -> None:
        """The callback running on the turn's callback thread has returned."""
        with self._asking_lock:
            self._asking = None
            self._withdrawn = False

    def _withdraw(self, tool_call_id: str) -> None:
        if isinstance(self.interaction, Withdrawal):
            try:
                self.interaction.withdraw(self.context, tool_call_id)
            except Exception:
                log.exception("interaction.withdraw raised; the turn's questions are closed")
            else:
                return
        self.interrupt()

    def _asks(self, tool_call_id: str) -> bool:
        """Mark ``tool_call_id`` as being asked; False when its question was withdrawn already."""
        with self._asking_lock:
            if self._withdrawn:
                return False
            self._asking = tool_call_id
            return True

    def _asked(self) -> None:
        with self._asking_lock:
            self._asking = None

    def idle(self) -> None:
        """``idle``: let the interaction serve its frontend while a thread waits."""
        if self.hooks is not None:
            try:
                self.hooks.idle(self.context)
            except Exception:
                log.exception("interaction.idle raised")

    def serve(self, done: Callable[[], bool]) -> asyncio.Task[None] | None:
        """Start ``serve`` as a task of the running loop, for an async cell awaiting the turn."""
        if self.hooks is None:
            return None
        return asyncio.ensure_future(self.hooks.serve(self.context, done))

    # -- text -------------------------------------------------------------------------

    def text(self, fragment: str, *, stream: bool = True) -> None:
        """Record one fragment of the answer and, if ``stream``, send it as ``text_delta``."""
        self._parts.append(fragment)
        if stream and self.interaction is not None:
            with self._lock:
                try:
                    self.interaction.text_delta(self.context, fragment)
                except Exception:
                    log.exception("interaction.text_delta raised; the turn goes on")

    @property
    def text_so_far(self) -> str:
        """Everything recorded by :meth:`text` so far."""
        return "".join(self._parts)

    def thought(self, fragment: str) -> None:
        """One fragment of the agent's reasoning, kept apart from the text: ``thought_delta``."""
        if not fragment:
            return
        self._thoughts.append(fragment)
        if self.narration is not None:
            self._call(self.narration.thought_delta, "thought_delta", fragment)

    def plan(self, entries: list[PlanEntry]) -> None:
        """The agent's whole plan, each time it changes: sent as ``plan_updated``."""
        self.result.plan = [PlanEntry(**e) for e in entries]
        if self.narration is not None:
            self._call(self.narration.plan_updated, "plan_updated", list(self.result.plan))

    def agent(self, details: AgentInfo) -> None:
        """Who runs the turn (the whole :class:`AgentInfo`, each time it changes):
        kept in ``result.agent`` and sent as ``agent_described``."""
        self.result.agent = details.copy()
        if self.agent_details is not None:
            self._call(self.agent_details.agent_described, "agent_described", details.copy())

    def history(self, entries: list[HistoryEntry]) -> None:
        """The earlier conversation this turn continues: kept in ``result.history`` and sent
        as ``history_replayed``. A record only: every call in it is made to have ended (one
        left open ends ``failed``, ``interrupted``), none cancellable."""
        kept = [_ended(entry) for entry in entries]
        self.result.history = kept
        if self.session_history is not None:
            self._call(self.session_history.history_replayed, "history_replayed", list(kept))

    # -- one call -----------------------------------------------------------------------

    def begin(
        self,
        tool_call_id: str,
        tool: str,
        server: str,
        tool_class: ToolClass | None,
        arguments: dict[str, Any],
        *,
        kind: ToolKind | None = None,
        title: str | None = None,
        content: list[ContentBlock] | None = None,
        locations: list[Location] | None = None,
        tool_named: bool = True,
    ) -> CallRecord:
        """Record a new call and send its ``pending`` update.

        Each call of a turn has an id of its own: an id the agent gave before is
        suffixed (``record.source_id`` keeps the agent's).

        ``tool_class`` None derives it from ``kind``; ``kind`` None derives it
        from the class (``read``, or ``other``). ``tool_named`` False: the source
        named the call only by its kind (``tool`` is the kind).
        """
        klass: ToolClass = tool_class if tool_class is not None else class_of(kind)
        record = CallRecord(
            self._unused(tool_call_id),
            tool,
            server,
            dict(arguments),
            tool_class=klass,
            kind=kind if kind is not None else kind_of_class(klass),
            title=title or tool,
            content=list(content or []),
            locations=list(locations or []),
            source_id=tool_call_id,
            tool_named=tool_named,
        )
        self.result.calls.append(record)
        details: dict[str, Any] = {
            "tool": tool,
            "server": server,
            "class": klass,
            "arguments": dict(arguments),
            "kind": record.kind,
        }
        if record.content:
            details["content"] = list(record.content)
        if record.locations:
            details["locations"] = list(record.locations)
        self._update(record, "pending", details=details)
        return record

    def _unused(self, tool_call_id: str) -> str:
        """``tool_call_id``, or ``"<id>~N"`` when a call of this turn already has it."""
        taken = {r.tool_call_id for r in self.result.calls}
        unused, n = tool_call_id, 1
        while unused in taken:
            n += 1
            unused = f"{tool_call_id}~{n}"
        return unused

    def describe(
        self,
        record: CallRecord,
        *,
        title: str | None = None,
        arguments: dict[str, Any] | None = None,
        kind: ToolKind | None = None,
        content: list[ContentBlock] | None = None,
        locations: list[Location] | None = None,
    ) -> None:
        """Say more of what a call will do while it is ``pending`` (another ``pending`` update).

        For a source that sends a call's input, diff or command after its first
        sight. ``content`` and ``locations`` replace what was known. Ignored once
        the call runs or has ended.
        """
        if record.status != "pending":
            return
        details: dict[str, Any] = {}
        if title:
            record.title = title
        if arguments is not None:
            record.arguments = dict(arguments)
            details["arguments"] = dict(arguments)
        if kind is not None:
            record.kind = kind
            record.tool_class = class_of(kind)
            details["kind"] = kind
            details["class"] = record.tool_class
        if content is not None:
            record.content = list(content)
            details["content"] = list(content)
        if locations is not None:
            record.locations = list(locations)
            details["locations"] = list(locations)
        self._update(record, "pending", details=details)

    def permission(
        self,
        record: CallRecord,
        parameters: dict[str, Any] | None = None,
        *,
        preview: Previewer | None = None,
    ) -> Allow | Deny:
        """Ask ``request_permission`` (``parameters``: the tool's JSON schema, for edits;
        ``preview``: what the call does with other arguments, for the card of an edit).

        Anything but ``Allow``/``Deny`` denies. On ``Deny`` the call has ended: its
        record and final update say why. On ``Allow`` with edited arguments, the
        record keeps them as ``approved_arguments`` and, given ``preview``, what
        they will do as its content; checking them is the caller's.
        """
        decision = self._ask(record, parameters, preview)
        if isinstance(decision, Deny):
            note = f": {decision.message}" if decision.message else ""
            said = f"Permission to run {record.tool} was denied ({decision.reason}){note}"
            ended = "" if said.endswith((".", "!", "?")) else "."
            self.fail(
                record,
                outcome_of(decision),
                f"{said}{ended} The tool did not run.",
                step=f"denied ({decision.reason}){note}",
            )
        elif decision.arguments is not None and decision.arguments != record.arguments:
            record.approved_arguments = dict(decision.arguments)
            if preview is not None:
                self._show_edit(record, preview)
        return decision

    def _show_edit(self, record: CallRecord, preview: Previewer) -> None:
        """What the approved arguments will do, as the call's content (still ``pending``)."""
        assert record.approved_arguments is not None
        try:
            shown = preview(dict(record.approved_arguments))
            content, locations = list(shown.content), list(shown.locations)
        except Exception as exc:
            log.exception("the preview of %s's approved arguments failed", record.tool)
            content = [TextBlock(type="text", text=f"The preview failed: {type(exc).__name__}")]
            locations = []
        self.describe(record, content=content, locations=locations)

    def running(
        self,
        record: CallRecord,
        call: Call,
        *,
        cancellable: bool = True,
        step: str | None = None,
        decided_by: DecidedBy | None = None,
    ) -> None:
        """``register_call`` then ``in_progress``.

        ``cancellable=False`` says that nothing can stop this call once it runs: the
        update is not cancellable and its step says so (unless ``step`` says more).
        ``decided_by="agent"``: the agent ran the call under its own rules, without
        :meth:`permission`; the update and the record say so.
        """
        self._fixed.discard(record.tool_call_id)
        if not cancellable:
            self._fixed.add(record.tool_call_id)
        self._callback("register_call", record.tool_call_id, call)
        if step is None and not cancellable:
            step = NOT_CANCELLABLE
        details: dict[str, Any] = {}
        if record.approved_arguments is not None:
            details["approved_arguments"] = dict(record.approved_arguments)
        if decided_by is not None:
            record.decided_by = decided_by
            details["decided_by"] = decided_by
        self._update(record, "in_progress", step=step, cancellable=cancellable, details=details)

    def progress(self, record: CallRecord, fraction: float | None, step: str | None) -> None:
        """Another ``in_progress`` update, from the tool's progress report."""
        cancellable = record.tool_call_id not in self._fixed
        if step is None and not cancellable:
            step = NOT_CANCELLABLE
        self._update(record, "in_progress", step=step, progress=fraction, cancellable=cancellable)

    def complete(
        self, record: CallRecord, result: str, *, content: list[ContentBlock] | None = None
    ) -> None:
        """The call ended well: ``completed`` with its result (``content``: what it did)."""
        record.result = result
        record.outcome = None
        details: dict[str, Any] = {"outcome": None, "result": short(result), "error": None}
        if content is not None:
            record.content = list(content)
            details["content"] = list(content)
        self._update(record, "completed", details=details)

    def fail(
        self,
        record: CallRecord,
        outcome: Outcome,
        error: str,
        *,
        step: str | None = None,
        content: list[ContentBlock] | None = None,
    ) -> None:
        """The call ended ``failed`` with ``outcome``; ``error`` is what the model is told."""
        record.outcome = outcome
        record.error = error
        details: dict[str, Any] = {"outcome": outcome, "error": short(error), "result": None}
        if content is not None:
            record.content = list(content)
            details["content"] = list(content)
        self._update(record, "failed", step=step or outcome, details=details)

    def choice(self, choice: Choice) -> Picked | Answered | Unanswered:
        """``ask_choice``; an error or an answer of the wrong type counts as unanswered."""
        if self.interaction is None:
            return Unanswered("no_answer")
        if not self._asks(str(choice.get("tool_call_id", ""))):
            return Unanswered("interrupted")
        with self._lock:
            try:
                answer = self.interaction.ask_choice(self.context, choice)
            except Exception:
                log.exception("ask_choice raised; the question counts as unanswered")
                return Unanswered("no_answer")
            finally:
                self._asked()
        if isinstance(answer, (Picked, Answered, Unanswered)):
            return answer
        log.error("ask_choice returned %r, not Picked, Answered or Unanswered", answer)
        return Unanswered("no_answer")

    # -- helpers --------------------------------------------------------------------------

    def _ask(
        self,
        record: CallRecord,
        parameters: dict[str, Any] | None,
        preview: Previewer | None = None,
    ) -> Allow | Deny:
        if self.interaction is None:
            return Allow()
        request: Request = {
            "tool_call_id": record.tool_call_id,
            "tool": record.tool,
            "server": record.server,
            "class": record.tool_class,
            "arguments": dict(record.arguments),
            "kind": record.kind,
        }
        if parameters is not None:
            request["parameters"] = parameters
        if preview is not None:
            request["preview"] = preview
        if record.title and record.title != record.tool:
            request["title"] = record.title
        if record.content:
            request["content"] = list(record.content)
        if record.locations:
            request["locations"] = list(record.locations)
        if not self.editable:
            request["editable"] = False
        if not record.tool_named:
            request["tool_named"] = False
        if record.server in self.agent_servers:
            request["server_is_agent"] = True
        if not self._asks(record.tool_call_id):
            return Deny("interrupted", WITHDRAWN)
        with self._lock:
            try:
                decision = self.interaction.request_permission(self.context, request)
            except Exception:
                log.exception("request_permission raised; the call is denied")
                return Deny("rejected", "the interaction failed")
            finally:
                self._asked()
        if isinstance(decision, (Allow, Deny)):
            return decision
        log.error("request_permission returned %r, not Allow or Deny; denied", decision)
        return Deny("rejected", "the interaction gave no valid decision")

    def _update(
        self,
        record: CallRecord,
        status: Status,
        *,
        step: str | None = None,
        progress: float | None = None,
        cancellable: bool = False,
        details: dict[str, Any] | None = None,
    ) -> None:
        record.status = status
        fields: dict[str, Any] = {
            "tool_call_id": record.tool_call_id,
            "title": record.title or record.tool,
            "status": status,
            "current_step": step,
            "progress": progress,
            "cancellable": cancellable,
            **(details or {}),
        }
        self._callback("tool_updated", cast(Update, fields))

    def _call(self, fn: Callable[..., Any], name: str, *args: Any) -> None:
        with self._lock:
            try:
                fn(self.context, *args)
            except Exception:
                log.exception("interaction.%s raised; the turn goes on", name)

    def _callback(self, name: str, *args: Any) -> None:
        if self.interaction is None:
            return
        with self._lock:
            try:
                getattr(self.interaction, name)(self.context, *args)
            except Exception:
                log.exception("interaction.%s raised; the turn goes on", name)


REPLAY_OPEN = "the earlier turn ended before this call did"
"""The error of a call an earlier conversation left open (see :meth:`TurnDriver.history`)."""


def _ended(entry: HistoryEntry) -> HistoryEntry:
    """A copy of ``entry``; a call ``completed`` or ``failed``, never cancellable."""
    if entry["type"] != "call":
        return HistoryMessage(type=entry["type"], text=str(entry["text"]))
    update = cast(dict[str, Any], dict(entry["update"]))
    update.update(cancellable=False, progress=None)
    if update.get("status") not in FINAL_STATUSES:
        update.update(status="failed", outcome="interrupted", error=REPLAY_OPEN, result=None)
    return HistoryCall(type="call", update=cast(Update, update))
