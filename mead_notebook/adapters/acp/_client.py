"""The ACP client side: every message of the agent, reported through one turn's session.

Each incoming message runs in a task of its own on the agent's loop; every call
into the driver goes through the turn's :class:`~mead_notebook.adapters.base.AgentTurn`
(its callback thread, in order, one at a time), so a question a person is
answering never blocks the agent's connection.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from acp.schema import (
    AcceptElicitationResponse,
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    CancelElicitationResponse,
    CurrentModeUpdate,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationFormRequestMode,
    ElicitationFormSessionMode,
    ElicitationUrlRequestMode,
    ElicitationUrlSessionMode,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from mead_notebook import Allow, Call
from mead_notebook.adapters.base import AgentTurn
from mead_notebook.interaction import (
    FINAL_STATUSES,
    AgentInfo,
    Answered,
    Choice,
    DecidedBy,
    Location,
    Option,
    Picked,
    ToolKind,
    Unanswered,
    class_of,
)
from mead_notebook.turn import CallRecord

from . import _elicitation as e
from . import _mapping as m
from ._presets import LATE_INPUT

if TYPE_CHECKING:
    from pydantic import AnyUrl

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
QUESTION_TOOLS = frozenset({"AskUserQuestion", "EnterPlanMode", "ExitPlanMode"})
"""Tools whose permission is a question to the person (Claude's), whatever their kind."""
_UNANSWERED = "unanswered"


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
        self.records: dict[str, CallRecord] = {}
        self.asked: set[str] = set()
        self.running: set[str] = set()
        self._input: dict[str, asyncio.Event] = {}
        self._pending: set[asyncio.Future[None]] = set()
        """Waits for a question that may follow a call reported running."""
        self._questions = itertools.count(1)
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
            return _cancelled()
        if record.tool_call_id in self.asked:
            log.warning("%s asked again about %s; asking again", self.server, record.tool_call_id)
        self.asked.add(record.tool_call_id)
        if _is_question(tool_call, record):
            return await self._choose_option(record, options)
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
                return _select(m.option_for(options, "reject"))
            chosen = m.option_for(options, "allow", self.forward_always)
            if chosen is None:
                await self._call(
                    self.session.fail, record, "error", "the agent offered no allow option"
                )
                return _cancelled()
            self._post(self._run, record)
            return _select(chosen)
        if decision.reason == "rejected":
            return _select(m.option_for(options, "reject"))
        return _cancelled()

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

    # -- questions ----------------------------------------------------------------------

    async def elicit(self, message: str, mode: Any) -> Any:
        """``elicitation/create``: a form, field by field, or a URL to open; never made up.

        Nobody answering (a timeout, a policy, an interrupt) cancels; the person's
        Decline declines; a form or URL that cannot be asked safely is declined.
        """
        question_id = f"question-{next(self._questions)}"
        who = await self._call(self._asker, getattr(mode, "tool_call_id", None))
        if isinstance(mode, (ElicitationUrlSessionMode, ElicitationUrlRequestMode)):
            return await self._open_url(question_id, who, message, mode.url)
        if not isinstance(mode, (ElicitationFormSessionMode, ElicitationFormRequestMode)):
            log.warning("%s asked in a mode this client does not know; declined", self.server)
            return _decline()
        schema = mode.requested_schema
        fields = e.fields_of(question_id, message, schema)
        if isinstance(fields, str):
            log.warning("%s asked a form that cannot be asked here (%s); declined", who, fields)
            return _decline()
        if not fields:
            return await self._confirm(question_id, who, message)
        content: dict[str, Any] = {}
        for field in fields:
            value = await self._field(who, field)
            if value is None or value == e.DECLINE:
                return _decline() if value == e.DECLINE else _cancel()
            if value != e.EMPTY:
                content[field.name] = value
        problem = e.check_form(content, schema)
        if problem is not None:
            log.warning("%s: the answers do not fit its form (%s); cancelled", who, problem)
            return _cancel()
        return AcceptElicitationResponse(action="accept", content=content)

    async def _field(self, who: str, field: e.Field) -> Any:
        """One field's value, a :data:`~._elicitation.Special`, or None (cancel)."""
        choice = field.choice
        for _ in range(e.MAX_TRIES):
            if self.session.cancelled.is_set() or self.stopped:
                return None
            value, problem = await self._call(self._ask_field, who, field, choice)
            if problem is None:
                return value
            if problem == _UNANSWERED:
                return None
            prompt = f"{field.choice['prompt']}\n\nNot sent: {problem}. Answer again."
            choice = Choice(**{**field.choice, "prompt": prompt})
        log.warning(
            "%s: no answer that fits field %r after %d tries; the form was cancelled",
            who,
            field.name,
            e.MAX_TRIES,
        )
        return None

    def _ask_field(self, who: str, field: e.Field, choice: Choice) -> tuple[Any, str | None]:
        """Ask one field on a card of its own and end the card with what came of it."""
        arguments = {"field": field.name, "prompt": choice["prompt"]}
        record, answer = self._put(choice, who, arguments)
        if isinstance(answer, Unanswered):
            message = f"The user gave no answer ({answer.reason})."
            self.session.fail(record, answer.reason, message)
            return None, _UNANSWERED
        value, problem = e.value_of(field, answer)
        if problem is not None:
            self.session.fail(record, "invalid_arguments", f"{problem}; asked again")
            return None, problem
        self.session.complete(record, _said(choice, answer))
        return value, None

    def _put(
        self, choice: Choice, who: str, arguments: dict[str, Any]
    ) -> tuple[CallRecord, Picked | Answered | Unanswered]:
        """A question's card, named for who asks, and the person's answer (callback thread)."""
        record = self.session.begin(
            choice["tool_call_id"], "question", self.server, "read", arguments, title=who
        )
        return record, self.session.driver.choice({**choice, "tool_call_id": record.tool_call_id})

    def _asker(self, tool_call_id: str | None) -> str:
        """Who asks, as a card's title: the agent, and the call it asks for, if known."""
        record = self.records.get(tool_call_id) if tool_call_id else None
        return f"{self.server} asks" + (f" (for {record.title})" if record is not None else "")

    async def _confirm(self, question_id: str, who: str, message: str) -> Any:
        """A form without fields: the person accepts or declines it."""
        choice = Choice(
            tool_call_id=question_id,
            prompt=message,
            options=[Option(id="accept", label="Accept"), Option(id="decline", label="Decline")],
        )
        picked = await self._call(self._ask_once, choice, who, {"prompt": message}, "")
        if picked is None:
            return _cancel()
        if picked == "accept":
            return AcceptElicitationResponse(action="accept", content={})
        return _decline()

    async def _open_url(self, question_id: str, who: str, message: str, url: AnyUrl) -> Any:
        """A URL the person may agree to open themselves: nothing is opened from here."""
        refused = e.refused_url(url)
        if refused is not None:
            log.warning("%s asked to open %s: %s; declined without asking", who, url, refused)
            return _decline()
        choice = Choice(
            tool_call_id=question_id,
            prompt=e.url_prompt(self.server, message, url),
            options=[
                Option(id="open", label=f"I agree: I will open the page on {url.host} myself"),
                Option(id="decline", label="Decline"),
            ],
        )
        arguments = {"message": message, "url": str(url), "host": str(url.host)}
        opened = f"You agreed to open {url} yourself (host {url.host}); nothing was opened here."
        picked = await self._call(self._ask_once, choice, who, arguments, opened)
        if picked is None:
            return _cancel()
        if picked == "open":
            return AcceptElicitationResponse(action="accept")
        return _decline()

    def _ask_once(
        self, choice: Choice, who: str, arguments: dict[str, Any], accepted: str
    ) -> str | None:
        """Ask a question of two options (the first accepts): the option picked, else None.

        The person's own words are not an option: they decline."""
        record, answer = self._put(choice, who, arguments)
        if isinstance(answer, Unanswered):
            self.session.fail(record, answer.reason, f"The user gave no answer ({answer.reason}).")
            return None
        first = choice["options"][0]["id"]
        picked = answer.option_ids if isinstance(answer, Picked) else ()
        if picked != (first,):
            if isinstance(answer, Answered):
                log.warning("%s: an answer in words is not consent; declined", who)
            self.session.complete(record, "Declined.")
            return "decline"
        self.session.complete(record, accepted or _said(choice, answer))
        return first

    async def _choose_option(
        self, record: CallRecord, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """A permission that is a question (a mode switch, a question tool): the person picks
        one of the agent's own options; no policy or rule answers it."""
        choice = Choice(
            tool_call_id=record.tool_call_id,
            prompt=f"{self.server} asks: {record.title}",
            options=[Option(id=o.option_id, label=o.name) for o in options],
        )
        answer = await self._call(self.session.driver.choice, choice)
        if isinstance(answer, Picked) and answer.option_ids in {(o.option_id,) for o in options}:
            await self._call(self.session.driver.complete, record, _said(choice, answer))
            return _select(answer.option_id)
        if isinstance(answer, Unanswered):
            reason = answer.reason
            await self._call(
                self.session.fail, record, reason, f"The user gave no answer ({reason})."
            )
            return _cancelled()
        log.warning("%s: %s takes one of its options, not words; refused", self.server, record.tool)
        await self._call(self.session.fail, record, "denied", "not one of the agent's options")
        return _select(m.option_for(options, "reject"))


class Client:
    """The client the agent talks to; its messages go to the turn running now, if any."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.turn: TurnMapper | None = None

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        turn = self.turn
        if turn is None:
            log.warning("%s asked for permission outside a turn; cancelled", self.name)
            return _cancelled()
        if tool_call.raw_input is not None:
            turn.input_arrived(tool_call.tool_call_id)
        return await turn.permission(tool_call, options)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        turn = self.turn
        if turn is None:
            return
        raw = getattr(update, "raw_input", None)
        if isinstance(update, (ToolCallStart, ToolCallProgress)) and raw:
            turn.input_arrived(update.tool_call_id)
        await turn.update(update)

    async def create_elicitation(self, message: str, mode: Any, **_: Any) -> Any:
        turn = self.turn
        if turn is None:
            return CancelElicitationResponse(action="cancel")
        return await turn.elicit(message, mode)

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


def _is_question(tool_call: ToolCallUpdate, record: CallRecord) -> bool:
    """Whether a permission request asks the person something (a mode switch, a question)
    rather than whether a tool may run."""
    if tool_call.kind == "switch_mode" or record.tool in QUESTION_TOOLS:
        return True
    meta = tool_call.field_meta or {}
    nested = (v.get("toolName") for v in meta.values() if isinstance(v, dict))
    names = [meta.get("toolName"), *nested]
    return any(name in QUESTION_TOOLS for name in names if isinstance(name, str))


def _said(choice: Choice, answer: Picked | Answered) -> str:
    """What a card's answer says: the options picked, or the person's words."""
    if isinstance(answer, Answered):
        return json.dumps({"answer": answer.text}, ensure_ascii=False)
    labels = {o["id"]: o["label"] for o in choice["options"]}
    ids = list(answer.option_ids)
    if choice.get("multiple"):
        picked = {"option_ids": ids, "labels": [labels.get(i, i) for i in ids]}
        return json.dumps(picked, ensure_ascii=False)
    one = {"option_id": ids[0], "label": labels.get(ids[0], ids[0])}
    return json.dumps(one, ensure_ascii=False)


def _decline() -> DeclineElicitationResponse:
    return DeclineElicitationResponse(action="decline")


def _cancel() -> CancelElicitationResponse:
    return CancelElicitationResponse(action="cancel")


def _select(option_id: str | None) -> RequestPermissionResponse:
    if option_id is None:
        return _cancelled()
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option_id)
    )


def _cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


def _refused(method: str) -> Exception:
    from acp import RequestError

    return RequestError.method_not_found(method)
