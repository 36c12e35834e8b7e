"""What an ACP agent asks the person rather than whether a tool may run: elicitations
(a form, field by field, or a URL to open) and permissions that are questions (a mode
switch, Claude's question tools). No policy or rule answers these: nobody answering
cancels, and nothing is made up.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    CancelElicitationResponse,
    DeclineElicitationResponse,
    DeniedOutcome,
    ElicitationFormRequestMode,
    ElicitationFormSessionMode,
    ElicitationUrlRequestMode,
    ElicitationUrlSessionMode,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from mead_notebook.interaction import Answered, Choice, Option, Picked, Unanswered
from mead_notebook.turn import CallRecord

from . import _elicitation as e
from . import _mapping as m

if TYPE_CHECKING:
    from pydantic import AnyUrl

    from ._client import TurnMapper

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["QUESTION_TOOLS", "Asking", "cancelled", "is_question", "select"]

QUESTION_TOOLS = frozenset({"AskUserQuestion", "EnterPlanMode", "ExitPlanMode"})
"""Tools whose permission is a question to the person (Claude's), whatever their kind."""
_UNANSWERED = "unanswered"


class Asking:
    """One turn's questions to the person, each on a card of its own."""

    def __init__(self, turn: TurnMapper) -> None:
        self.turn = turn
        self.session = turn.session
        self.server = turn.server
        self._questions = itertools.count(1)

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await self.session.call(fn, *args, **kwargs)

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
            return decline()
        schema = mode.requested_schema
        fields = e.fields_of(question_id, message, schema)
        if isinstance(fields, str):
            log.warning("%s asked a form that cannot be asked here (%s); declined", who, fields)
            return decline()
        if not fields:
            return await self._confirm(question_id, who, message)
        content: dict[str, Any] = {}
        for field in fields:
            entries = await self._field(who, field)
            if entries is None or entries is e.DECLINE:
                return decline() if entries is e.DECLINE else cancel()
            if isinstance(entries, dict):
                content.update(entries)
        problem = e.check_form(content, schema)
        if problem is not None:
            log.warning("%s: the answers do not fit its form (%s); cancelled", who, problem)
            return cancel()
        return AcceptElicitationResponse(action="accept", content=content)

    async def _field(self, who: str, field: e.Field) -> dict[str, Any] | e.Special | None:
        """What one field's card puts in the form, a :class:`~._elicitation.Special`, or
        None (cancel)."""
        choice = field.choice
        for _ in range(e.MAX_TRIES):
            if self.session.cancelled.is_set() or self.turn.stopped:
                return None
            entries, problem = await self._call(self._ask_field, who, field, choice)
            if problem is None:
                return cast("dict[str, Any] | e.Special | None", entries)
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

    def _ask_field(
        self, who: str, field: e.Field, choice: Choice
    ) -> tuple[dict[str, Any] | e.Special | None, str | None]:
        """Ask one field (and its "Other") on a card of its own and end the card with what
        came of it."""
        arguments = {"field": field.name, "prompt": choice["prompt"]}
        if field.other is not None:
            arguments["other"] = field.other.name
        record, answer = self._put(choice, who, arguments)
        if isinstance(answer, Unanswered):
            message = f"The user gave no answer ({answer.reason})."
            self.session.fail(record, answer.reason, message)
            return None, _UNANSWERED
        entries, problem = e.entries_of(field, answer)
        if problem is not None:
            self.session.fail(record, "invalid_arguments", f"{problem}; asked again")
            return None, problem
        self.session.complete(record, said(choice, answer))
        return entries, None

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
        record = self.turn.records.get(tool_call_id) if tool_call_id else None
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
            return cancel()
        if picked == "accept":
            return AcceptElicitationResponse(action="accept", content={})
        return decline()

    async def _open_url(self, question_id: str, who: str, message: str, url: AnyUrl) -> Any:
        """A URL the person may agree to open themselves: nothing is opened from here."""
        refused = e.refused_url(url)
        if refused is not None:
            log.warning("%s asked to open %s: %s; declined without asking", who, url, refused)
            return decline()
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
            return cancel()
        if picked == "open":
            return AcceptElicitationResponse(action="accept")
        return decline()

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
        self.session.complete(record, accepted or said(choice, answer))
        return first

    async def choose_option(
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
            await self._call(self.session.driver.complete, record, said(choice, answer))
            return select(answer.option_id)
        if isinstance(answer, Unanswered):
            reason = answer.reason
            await self._call(
                self.session.fail, record, reason, f"The user gave no answer ({reason})."
            )
            return cancelled()
        log.warning("%s: %s takes one of its options, not words; refused", self.server, record.tool)
        await self._call(self.session.fail, record, "denied", "not one of the agent's options")
        return select(m.option_for(options, "reject"))


def is_question(tool_call: ToolCallUpdate, record: CallRecord) -> bool:
    """Whether a permission request asks the person something (a mode switch, a question)
    rather than whether a tool may run."""
    if tool_call.kind == "switch_mode" or record.tool in QUESTION_TOOLS:
        return True
    meta = tool_call.field_meta or {}
    nested = (v.get("toolName") for v in meta.values() if isinstance(v, dict))
    names = [meta.get("toolName"), *nested]
    return any(name in QUESTION_TOOLS for name in names if isinstance(name, str))


def said(choice: Choice, answer: Picked | Answered) -> str:
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


def decline() -> DeclineElicitationResponse:
    return DeclineElicitationResponse(action="decline")


def cancel() -> CancelElicitationResponse:
    return CancelElicitationResponse(action="cancel")


def select(option_id: str | None) -> RequestPermissionResponse:
    """Pick the agent's option ``option_id`` (None: cancel)."""
    if option_id is None:
        return cancelled()
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option_id)
    )


def cancelled() -> RequestPermissionResponse:
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
