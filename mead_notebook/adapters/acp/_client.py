"""The ACP client side: every message of the agent, reported through one turn's session.

Each incoming message runs in a task of its own on the agent's loop; every call
into the driver goes through the turn's :class:`~mead_notebook.adapters.base.AgentTurn`
(its callback thread, in order, one at a time), so a question a person is
answering never blocks the agent's connection. While a session loads, the
agent's updates are its replay of the history (:class:`~._replay.Replay`), and
anything it asks then is refused unasked.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    CancelElicitationResponse,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
)

from mead_notebook import Allow, Call
from mead_notebook.adapters.base import AgentTurn
from mead_notebook.interaction import (
    FINAL_STATUSES,
    AgentInfo,
    DecidedBy,
    Location,
    ToolKind,
    class_of,
)
from mead_notebook.turn import CallRecord

from . import _mapping as m
from ._asking import Asking, cancelled, is_question, select
from ._controls import Controls
from ._presets import LATE_INPUT
from ._replay import Replay

if TYPE_CHECKING:
    from ._served import Served

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["LATE_INPUT", "STRICT", "TURN_STOPS", "Client", "TurnMapper"]

TURN_STOPS = "running · ACP has no per-call cancel: Cancel stops the agent's whole turn"
"""The step of a running call: what its card's Cancel does."""
STRICT = (
    "{tool} ran without asking (strict): the agent's own rules ran it before anyone here "
    "was asked, so the agent's turn was stopped"
)
"""What a call that may change something says when it ran unasked under ``strict=True``."""


class TurnMapper:
    """One turn's view of the agent's messages: one record per ACP tool call."""

    def __init__(
        self,
        session: AgentTurn,
        server: str,
        *,
        forward_always: bool,
        cancel_turn: Callable[[], None],
        late_input: float = LATE_INPUT,
        strict: bool = False,
        mode_changed: Callable[[str], AgentInfo] | None = None,
        described: Callable[[], AgentInfo] | None = None,
        served: Served | None = None,
    ) -> None:
        self.session = session
        self.served = served
        """The package's own tools served to the agent, whose calls are gated there."""
        self.server = server
        self.forward_always = forward_always
        self.late_input = late_input
        self.cancel_turn = cancel_turn
        self.strict = strict
        """Stop the turn when the agent runs a call that may change something unasked."""
        self.stopped: str | None = None
        """Why strict stopped the turn, once it has."""
        self.mode_changed = mode_changed
        self.described = described
        """What the header says now, after the session's options or usage changed."""
        self.records: dict[str, CallRecord] = {}
        self.asked: set[str] = set()
        self.running: set[str] = set()
        self._input: dict[str, asyncio.Event] = {}
        self._pending: set[asyncio.Future[None]] = set()
        """Waits for a question that may follow a call reported running."""
        self.asking = Asking(self)
        """The turn's questions that are not permissions (elicitations, mode switches)."""
        session.driver.editable = False
        session.driver.agent_servers.add(server)

    # -- the driver, on the callback thread ---------------------------------------------

    def _post(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> asyncio.Future[Any]:
        return asyncio.wrap_future(self.session.post(fn, *args, **kwargs))

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await self.session.call(fn, *args, **kwargs)

    # -- updates ------------------------------------------------------------------------

    async def update(self, update: Any) -> None:
        """One ``session/update`` of this turn."""
        if isinstance(update, AgentMessageChunk):
            if isinstance(update.content, TextContentBlock):
                await self._call(self.session.driver.text, update.content.text)
        elif isinstance(update, AgentThoughtChunk):
            if isinstance(update.content, TextContentBlock):
                await self._call(self.session.driver.thought, update.content.text)
        elif isinstance(update, AgentPlanUpdate):
            await self._call(self.session.driver.plan, m.plan_of(update.entries))
        elif isinstance(update, (ToolCallStart, ToolCallProgress)):
            early = await self._call(self._tool_call, update)
            if early is not None:
                self._pending.add(asyncio.ensure_future(self._unasked_after(early)))
        elif isinstance(update, CurrentModeUpdate) and self.mode_changed is not None:
            await self._call(self.session.driver.agent, self.mode_changed(update.current_mode_id))
        elif isinstance(update, (ConfigOptionUpdate, UsageUpdate)):
            await self.redescribe()

    async def redescribe(self) -> None:
        """The header again, as the session's options and usage are now."""
        if self.described is not None:
            await self._call(self.session.driver.agent, self.described())

    def _tool_call(self, update: ToolCallStart | ToolCallProgress) -> CallRecord | None:
        """Map one tool call update; returns a call that says it runs before anyone was
        asked, whose question may still follow (see :meth:`_unasked_after`)."""
        record = self._see(update)
        if self.served is not None and self.served.owns(record):
            self.served.reported(self, record, update)
            return None
        status = update.status
        if record.status in FINAL_STATUSES or status is None or status == "pending":
            return None
        if record.tool_call_id not in self.running:
            if status == "in_progress" and record.tool_call_id in self.asked:
                # Its question is open (OpenCode reports a call running while it asks):
                # the answer runs it.
                return None
            asking_may_follow = status == "in_progress" and self.late_input > 0
            if asking_may_follow and record.tool_call_id not in self.asked:
                # Codex 2.x reports a call in progress, then asks about it.
                return record
            self._ran_unasked(record)
            if record.status in FINAL_STATUSES:
                return None
        reported = m.content_of(update.content)
        text = m.result_text(update.raw_output, reported)
        content = m.finished_content(record.content, reported, text, update.raw_output)
        if status == "completed":
            self.session.complete(record, text, content=content)
        elif status == "failed":
            error = text or f"{record.tool} failed"
            self.session.fail(record, "error", error, content=content)
        return None

    def _ran_unasked(self, record: CallRecord) -> None:
        """Running without a question from here: the agent's own rules allowed it (strict:
        one that may change something stops the turn)."""
        if record.tool_call_id in self.running or record.status in FINAL_STATUSES:
            return
        self._run(record, decided_by="agent")
        if self.strict and class_of(record.kind) == "effect":
            self._stop_strict(record)

    def close(self) -> None:
        """The turn is over: stop waiting for questions that may follow (agent's loop)."""
        for waiting in self._pending:
            waiting.cancel()
        self._pending.clear()

    async def _unasked_after(self, record: CallRecord) -> None:
        """A call reported running before any question: it ran on the agent's own rules
        unless the agent asks about it within :attr:`late_input` seconds."""
        await asyncio.sleep(self.late_input)
        if record.tool_call_id not in self.asked:
            await self._call(self._ran_unasked, record)

    def _see(
        self, update: ToolCallStart | ToolCallProgress | ToolCallUpdate, *, asking: bool = False
    ) -> CallRecord:
        """The call's record: begun at first sight (``pending``), described when it says more.

        A call started, or asked about, under the id of one that has ended is a new
        call with a card of its own.
        """
        known = self.records.get(update.tool_call_id)
        if (
            known is not None
            and known.status in FINAL_STATUSES
            and (asking or isinstance(update, ToolCallStart))
        ):
            known = None
        served = self.served.see(self, update, known) if self.served is not None else None
        if served is not None:
            self.records[update.tool_call_id] = served
            return served
        kind: ToolKind | None = m.kind_from_acp(update.kind)
        arguments = m.arguments_of(update.raw_input)
        content = m.content_of(update.content)
        locations: list[Location] | None = m.locations_of(update.locations)
        if content is None and (known is None or not known.content):
            terminal = m.terminal_of(kind or (known.kind if known else None), arguments)
            content = None if terminal is None else [terminal]
        elif content is not None and not any(b["type"] == "terminal" for b in content):
            terminal = m.terminal_of(kind or (known.kind if known else None), arguments)
            content = content if terminal is None else [terminal, *content]
        if known is None:
            record = self.session.begin(
                update.tool_call_id,
                m.tool_name(update.field_meta, update.title, update.kind),
                self.server,
                None,
                arguments or {},
                kind=kind or "other",
                title=update.title,
                content=content,
                locations=locations,
                tool_named=m.named(update.field_meta),
            )
            self.records[update.tool_call_id] = record
            return record
        changed: dict[str, Any] = {
            "title": update.title if update.title and update.title != known.title else None,
            "arguments": arguments if arguments and arguments != known.arguments else None,
            "kind": kind if kind is not None and kind != known.kind else None,
            "content": content if content is not None and content != known.content else None,
            "locations": locations
            if locations is not None and locations != known.locations
            else None,
        }
        # An update that ends the call brings what it produced: never shown as what it
        # will do.
        ending = getattr(update, "status", None) in FINAL_STATUSES
        if (
            known.status == "pending"
            and not ending
            and any(v is not None for v in changed.values())
        ):
            self.session.describe(known, **changed)
        return known

    def _run(self, record: CallRecord, decided_by: DecidedBy | None = None) -> None:
        """``in_progress`` once per call, made up where the agent sends none (callback thread)."""
        if record.tool_call_id in self.running or record.status in FINAL_STATUSES:
            return
        self.running.add(record.tool_call_id)
        call = Call(record.tool_call_id, record.tool)
        call.on_cancel(lambda: self._cancel_call(record))
        self.session.running(record, call, step=TURN_STOPS, decided_by=decided_by)

    def _stop_strict(self, record: CallRecord) -> None:
        """Under ``strict``: the call that ran unasked ends ``interrupted`` saying so, and
        the agent's whole turn is cancelled (once)."""
        message = STRICT.format(tool=record.tool)
        self.session.fail(record, "interrupted", message, step="stopped: ran without asking")
        if self.stopped is None:
            self.stopped = message
            log.warning("%s: %s", self.server, message)
            self.cancel_turn()

    def _cancel_call(self, record: CallRecord) -> None:
        """A card's Cancel: the call ends ``cancelled`` and the whole turn is cancelled."""
        self.session.post(self._cancelled, record)
        self.cancel_turn()

    def _cancelled(self, record: CallRecord) -> None:
        if record.status not in FINAL_STATUSES:
            self.session.fail(
                record,
                "cancelled",
                f"{record.tool} was cancelled; the agent's whole turn was cancelled with it",
                step="cancelled: the agent's whole turn stops",
            )

    # -- permission ---------------------------------------------------------------------

    async def permission(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """``session/request_permission``: Allow or Deny, as one of the agent's options."""
        record: CallRecord = await self._call(partial(self._see, asking=True), tool_call)
        if not record.arguments and self.late_input > 0:
            await self._late_input(record.tool_call_id)
        if record.status in FINAL_STATUSES or self.session.cancelled.is_set() or self.stopped:
            return cancelled()
        if record.tool_call_id in self.asked:
            log.warning("%s asked again about %s; asking again", self.server, record.tool_call_id)
        self.asked.add(record.tool_call_id)
        if is_question(tool_call, record):
            return await self.asking.choose_option(record, options)
        if self.served is not None and self.served.owns(record):
            response: RequestPermissionResponse = await self._call(
                self.served.permission, self, record, options
            )
            return response
        decision = await self._call(self.session.decide, record)
        if isinstance(decision, Allow):
            if decision.arguments is not None and decision.arguments != record.arguments:
                await self._call(
                    self.session.fail,
                    record,
                    "invalid_arguments",
                    "an ACP agent cannot take edited arguments; the call was refused",
                )
                return select(m.option_for(options, "reject"))
            chosen = m.option_for(options, "allow", self.forward_always)
            if chosen is None:
                await self._call(
                    self.session.fail, record, "error", "the agent offered no allow option"
                )
                return cancelled()
            self._post(self._run, record)
            return select(chosen)
        if decision.reason == "rejected":
            return select(m.option_for(options, "reject"))
        return cancelled()

    async def _late_input(self, tool_call_id: str) -> None:
        event = self._input.setdefault(tool_call_id, asyncio.Event())
        try:
            await asyncio.wait_for(event.wait(), self.late_input)
        except asyncio.TimeoutError:
            return
        # The update that brought it is on the callback thread's queue: let it land.
        await self._post(lambda: None)

    def input_arrived(self, tool_call_id: str) -> None:
        """A ``rawInput`` for this call came in (wakes a question waiting for it)."""
        self._input.setdefault(tool_call_id, asyncio.Event()).set()


class Client:
    """The client the agent talks to; its messages go to the turn running now, if any."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.turn: TurnMapper | None = None
        self.controls = Controls()
        """The session's options, commands and usage, kept current in and out of turns."""
        self.replay: Replay | None = None
        """The history the agent replays while a session loads; nothing is asked meanwhile."""

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        if self.replay is not None:
            log.warning(
                "%s asked for permission (%s) while it replayed a session; refused",
                self.name,
                tool_call.tool_call_id,
            )
            return cancelled()
        turn = self.turn
        if turn is None:
            log.warning("%s asked for permission outside a turn; cancelled", self.name)
            return cancelled()
        if tool_call.raw_input is not None:
            turn.input_arrived(tool_call.tool_call_id)
        return await turn.permission(tool_call, options)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.controls.update(update)
        if self.replay is not None:
            self.replay.update(update)
            return
        turn = self.turn
        if turn is None:
            return
        raw = getattr(update, "raw_input", None)
        if isinstance(update, (ToolCallStart, ToolCallProgress)) and raw:
            turn.input_arrived(update.tool_call_id)
        await turn.update(update)

    def partial_usage(self, raw: dict[str, Any]) -> None:
        """A ``usage_update`` the SDK could not read (``used: null``): its known figures kept,
        the turn's header told (agent's loop)."""
        self.controls.partial_usage(raw)
        turn = self.turn
        if turn is not None:
            turn._pending.add(asyncio.ensure_future(turn.redescribe()))

    async def create_elicitation(self, message: str, mode: Any, **_: Any) -> Any:
        turn = self.turn
        if self.replay is not None:
            log.warning("%s asked a question while it replayed a session; cancelled", self.name)
            return CancelElicitationResponse(action="cancel")
        if turn is None:
            return CancelElicitationResponse(action="cancel")
        return await turn.asking.elicit(message, mode)

    async def complete_elicitation(self, elicitation_id: str, **_: Any) -> None:
        return None

    async def write_text_file(self, *args: Any, **kwargs: Any) -> None:
        raise _refused("fs/write_text_file")

    async def read_text_file(self, *args: Any, **kwargs: Any) -> Any:
        raise _refused("fs/read_text_file")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise _refused(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None


def _refused(method: str) -> Exception:
    from acp import RequestError

    return RequestError.method_not_found(method)
