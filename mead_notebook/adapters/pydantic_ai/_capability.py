"""The pydantic-ai capability that reports a run's tool calls through the contract."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability, WrapRunHandler, WrapToolExecuteHandler
from pydantic_ai.exceptions import (
    ApprovalRequired,
    CallDeferred,
    ModelRetry,
    SkipToolExecution,
    ToolFailed,
    ToolFailedError,
    ToolRetryError,
)
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolReturn,
    ToolReturnPart,
)
from pydantic_ai.tools import (
    DeferredToolRequests,
    DeferredToolResults,
    ToolApproved,
    ToolDefinition,
    ToolDenied,
)

from mead_notebook.interaction import Outcome
from mead_notebook.tools.preview import Preview, previewer
from mead_notebook.turn import CallRecord

from ..base import (
    ASK_USER_MARK,
    AgentTurn,
    CallCancelled,
    declared_kind,
    question_from,
    required,
    result_text,
)
from ..base.own_tools import check, ending, own_tool, shown, watching

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["SERVER", "MeadCapability"]

SERVER = "pydantic-ai"
"""What a card names as the calls' server."""
_REFUSED: dict[str, Outcome] = {"unknown_tool": "unknown"}
_FAILURES = (ToolFailed, ModelRetry, ToolFailedError, ToolRetryError)
"""What a tool raises to fail or retry: the call fails with its message."""
_SIGNALS = (*_FAILURES, CallDeferred, ApprovalRequired, SkipToolExecution)


@dataclass
class MeadCapability(AbstractCapability[Any]):
    """Every tool call of a run goes through ``interaction``, in the contract's order.

    A call is asked with ``request_permission`` (the interaction's policy decides
    what reaches the person); a denied call does not run and the model gets a
    denied tool result carrying the message. A call allowed with edited arguments
    runs with exactly them once the tool's own validator accepts them; if it does
    not, the call fails ``invalid_arguments`` and the model gets the framework's
    validation error. Calls the framework refuses
    (unknown tool, invalid arguments) are reported ``failed`` without asking.
    Approvals the framework asks for (``requires_approval``, ``ApprovalRequired``)
    go to ``request_permission``, questions (``CallDeferred(kind='question')``
    whose arguments offer options) to ``ask_choice``. A card's Cancel cancels the
    call's task (a sync function finishes in its worker thread, its result dropped).
    """

    interaction: Any
    _: KW_ONLY
    session: AgentTurn | None = field(default=None, repr=False)
    """The session of ``run``/``arun``/``start``; a run of your own gets one of its own."""
    _arguments: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        required(self.interaction)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    async def for_run(self, ctx: RunContext[Any]) -> MeadCapability:
        return MeadCapability(self.interaction, session=self.session)

    # -- the run ------------------------------------------------------------------------

    async def wrap_run(self, ctx: RunContext[Any], *, handler: WrapRunHandler) -> Any:
        if self.session is not None:
            return await handler()
        self.session = AgentTurn(self.interaction)
        async with self.session.hosted(ctx.prompt if isinstance(ctx.prompt, str) else ""):
            return await handler()

    async def on_event(self, ctx: RunContext[Any], *, event: AgentStreamEvent) -> None:
        session = self.session
        if session is None:
            return
        try:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                if event.part.content:
                    session.post(session.driver.text, event.part.content)
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                if event.delta.content_delta:
                    session.post(session.driver.text, event.delta.content_delta)
            elif isinstance(event, FunctionToolCallEvent) and event.args_valid is False:
                self._arguments[event.part.tool_call_id] = _arguments_of(event.part)
            elif isinstance(event, FunctionToolResultEvent):
                self._refused(session, event)
        except Exception:
            log.exception("could not report a pydantic-ai event")

    def _refused(self, session: AgentTurn, event: FunctionToolResultEvent) -> None:
        part = event.part
        retry = getattr(part, "retry", None)
        if part.outcome not in ("retried", "failed") or retry is None:
            return
        outcome = _REFUSED.get(str(getattr(retry, "cause", "")), "invalid_arguments")
        text = part.model_response_str(wrap_if_error=False)
        name, tool_call_id = part.tool_name, part.tool_call_id
        arguments = self._arguments.pop(tool_call_id, {})
        session.post(session.refuse, tool_call_id, name, SERVER, arguments, outcome, text)

    # -- one call -----------------------------------------------------------------------

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: WrapToolExecuteHandler,
    ) -> Any:
        session = self.session
        if session is None or (tool_def.metadata or {}).get(ASK_USER_MARK):
            return await handler(args)
        asked = _arguments_of(call)
        said = own_preview(tool_def.metadata, args)
        record, allowed = await session.call(
            session.admit,
            call.tool_call_id,
            call.tool_name,
            SERVER,
            None,
            asked,
            tool_def.parameters_json_schema,
            kind=declared_kind(tool_def.metadata),
            content=said.content if said is not None else None,
            locations=said.locations if said is not None else None,
            preview=previewer(own_tool(dict(tool_def.metadata or {}))),
        )
        if not allowed:
            return ToolDenied(record.error or f"Permission to run {call.tool_name} was denied.")
        edited = record.approved_arguments
        if edited is not None and edited != asked:
            args = await _validated(ctx, session, record, call, edited)
        try:
            with watching() as ran:
                value = await session.execute(record, lambda: handler(args), passthrough=_SIGNALS)
        except CallCancelled as cancelled:
            raise ToolFailed(cancelled.message) from None
        except _FAILURES as exc:
            end = ending(ran)
            if end is not None:
                await session.call(session.fail, record, end.outcome, end.text, content=end.content)
                raise
            await session.call(session.fail, record, "error", f"{call.tool_name} failed: {exc}")
            raise
        except SkipToolExecution as exc:
            await session.call(session.complete, record, result_text(exc.result))
            raise
        end = ending(ran)
        if isinstance(value, ToolDenied):
            await session.call(session.fail, record, "denied", value.message)
        elif end is not None:
            await session.call(session.complete, record, end.text, content=end.content)
        else:
            shown = value.return_value if isinstance(value, ToolReturn) else value
            await session.call(session.complete, record, result_text(shown))
        return value

    # -- what the framework asks the person ---------------------------------------------

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        session = self.session
        if session is None:
            return None
        approvals: dict[str, ToolApproved | ToolDenied] = {}
        for call in requests.approvals:
            tool_def = ctx.tool_manager.get_tool_def(call.tool_name) if ctx.tool_manager else None
            record, allowed = await session.call(
                session.admit,
                call.tool_call_id,
                call.tool_name,
                SERVER,
                None,
                _arguments_of(call),
                tool_def.parameters_json_schema if tool_def is not None else None,
                kind=declared_kind(tool_def.metadata if tool_def is not None else None),
                claim=False,
            )
            # The framework validates edited arguments before the tool runs.
            approvals[call.tool_call_id] = (
                ToolApproved(override_args=record.approved_arguments)
                if allowed
                else ToolDenied(record.error or "The call was denied.")
            )
        answers: dict[str, Any] = {}
        for call in requests.calls:
            if requests.kind(call.tool_call_id) != "question":
                continue
            offered = question_from(call.tool_call_id, _question_of(requests, call))
            if offered is None:
                continue
            settled = await session.call(
                session.ask, offered.choice, call.tool_name, SERVER, call.args_as_dict()
            )
            # The model reads the answer as ask_user gives it (JSON), or why there is none.
            answers[call.tool_call_id] = (
                settled.text if settled.answered else ToolFailed(settled.text)
            )
        if not approvals and not answers:
            return None
        return DeferredToolResults(approvals=dict(approvals), calls=answers)


async def _validated(
    ctx: RunContext[Any],
    session: AgentTurn,
    record: CallRecord,
    call: ToolCallPart,
    edited: dict[str, Any],
) -> dict[str, Any]:
    """``edited`` validated by the tool's own validator, as the model's arguments were.

    Arguments that do not fit end the call ``failed`` (``invalid_arguments``) and
    raise the framework's error, which tells the model; the tool does not run.
    """
    manager = ctx.tool_manager
    if manager is None:
        message = f"The arguments approved for {call.tool_name} cannot be checked here."
        await session.call(session.fail, record, "invalid_arguments", message)
        raise ToolFailed(message)
    try:
        validated = await manager.validate_tool_call(
            replace(call, args=dict(edited)), approved=ctx.tool_call_approved
        )
    except Exception as exc:  # the framework's own limit, e.g. too many retries
        await session.call(
            session.fail, record, "invalid_arguments", f"{type(exc).__name__}: {exc}"
        )
        raise
    if validated.deferral is not None:
        raise validated.deferral
    if validated.args_valid and validated.validated_args is not None:
        return validated.validated_args
    error = validated.validation_error
    await session.call(session.fail, record, "invalid_arguments", _error_text(error))
    if error is None:
        raise ToolFailed(f"The arguments approved for {call.tool_name} do not fit it.")
    raise error


def _error_text(error: Exception | None) -> str:
    """What the model is told of a validation error (the retry or failure part's text)."""
    if isinstance(error, ToolRetryError) and isinstance(error.tool_retry, ToolReturnPart):
        return error.tool_retry.model_response_str(wrap_if_error=False)
    if isinstance(error, ToolFailedError):
        return error.tool_failed.model_response_str(wrap_if_error=False)
    return str(error)


def _arguments_of(part: ToolCallPart) -> Any:
    try:
        return part.args_as_dict()
    except Exception:
        return {"arguments": part.args}


def _question_of(requests: DeferredToolRequests, call: ToolCallPart) -> Mapping[str, Any]:
    """What a deferred question offers: its metadata, else the call's arguments."""
    metadata = requests.metadata.get(call.tool_call_id)
    return metadata if isinstance(metadata, Mapping) and metadata else call.args_as_dict()


def own_preview(metadata: Mapping[str, Any] | None, args: dict[str, Any]) -> Preview | None:
    """The card's preview of a call of one of the package's own tools (None: not one)."""
    own = own_tool(dict(metadata or {}))
    if own is None:
        return None
    valid, _ = check(own, args)
    return shown(own, valid) if valid is not None else None
