"""Every tool call a LangGraph ``ToolNode`` runs, through the contract."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import (
    INVALID_TOOL_NAME_ERROR_TEMPLATE,
    ToolCallRequest,
    ToolInvocationError,
    ToolNode,
)
from langgraph.types import Command
from pydantic import BaseModel, ValidationError

from mead_notebook import ask_user
from mead_notebook.interaction import Outcome
from mead_notebook.tools.preview import previewer
from mead_notebook.turn import CallRecord

from ..base import ASK_USER_MARK, AgentTurn, CallCancelled, declared_kind, result_text
from ..base.own_tools import Ran, check, ending, own_tool, shown, watching

__all__ = ["SERVER", "ToolGate", "gated_tool_node", "parameters_of"]

SERVER = "langchain"
"""What a card names as the calls' server."""

Result = ToolMessage | Command[Any]
Execute = Callable[[ToolCallRequest], Result]
AsyncExecute = Callable[[ToolCallRequest], Awaitable[Result]]
_SIGNALS = (GraphBubbleUp,)
"""What a tool raises to steer the graph (an interrupt): not a failure of the call."""


class ToolGate:
    """Asks the session's interaction around each tool call, before the call runs.

    ``session_of()`` gives the session of the run in progress (``None``: pass the
    call through). A call allowed with edited arguments runs with exactly them, as
    the same tool call, once the ToolNode's validation accepts them. The async path
    runs the call as a task that the card's Cancel cancels; the sync path cannot
    stop a call, and its cards say so. Both ask and settle the same way
    (:func:`_admit`, :func:`_settle`).
    """

    def __init__(self, session_of: Callable[[], AgentTurn | None]) -> None:
        self.session_of = session_of

    async def awrap(self, request: ToolCallRequest, execute: AsyncExecute) -> Result:
        session = self.session_of()
        if session is None:
            return await execute(request)
        admitted = await session.call(_admit, session, request)
        if isinstance(admitted, ToolMessage):
            return admitted
        record, request = admitted
        with watching() as ran:
            try:
                out = await session.execute(record, lambda: execute(request), passthrough=_SIGNALS)
            except CallCancelled as cancelled:
                return _message(request, cancelled.message, error=True)
        await session.call(_settle, session, record, out, ran)
        return out

    def wrap(self, request: ToolCallRequest, execute: Execute) -> Result:
        session = self.session_of()
        if session is None:
            return execute(request)
        admitted = session.call_now(_admit, session, request)
        if isinstance(admitted, ToolMessage):
            return admitted
        record, request = admitted
        with watching() as ran:
            out = session.execute_blocking(record, lambda: execute(request), passthrough=_SIGNALS)
        session.call_now(_settle, session, record, out, ran)
        return out


def gated_tool_node(node: ToolNode, gate: ToolGate) -> ToolNode:
    """A copy of ``node`` whose calls go through ``gate``, then through ``node``'s own wrappers.

    Raises ``TypeError`` when this langgraph keeps a ToolNode's wrappers where
    this function does not look for them.
    """
    try:
        wrap, awrap = node._wrap_tool_call, node._awrap_tool_call
        handle_errors, messages_key = node._handle_tool_errors, node._messages_key
    except AttributeError as exc:
        raise TypeError(
            "this version of langgraph's ToolNode cannot be wrapped; add "
            "mead_notebook.adapters.langchain.middleware(interaction) to the agent instead"
        ) from exc

    async def outer_async(request: ToolCallRequest, execute: AsyncExecute) -> Result:
        loop = asyncio.get_running_loop()

        async def inner(req: ToolCallRequest) -> Result:
            if awrap is not None:
                return await awrap(req, execute)
            if wrap is not None:

                async def run(r: ToolCallRequest) -> Result:
                    return await execute(r)

                def run_on_loop(r: ToolCallRequest) -> Result:
                    return asyncio.run_coroutine_threadsafe(run(r), loop).result()

                return await asyncio.to_thread(wrap, req, run_on_loop)
            return await execute(req)

        return await gate.awrap(request, inner)

    def outer_sync(request: ToolCallRequest, execute: Execute) -> Result:
        def inner(req: ToolCallRequest) -> Result:
            return wrap(req, execute) if wrap is not None else execute(req)

        return gate.wrap(request, inner)

    return ToolNode(
        list(node.tools_by_name.values()),
        name=node.name or "tools",
        tags=list(node.tags) if node.tags else None,
        handle_tool_errors=handle_errors,
        messages_key=messages_key,
        wrap_tool_call=outer_sync,
        awrap_tool_call=outer_async,
    )


def _admit(
    session: AgentTurn, request: ToolCallRequest
) -> tuple[CallRecord, ToolCallRequest] | ToolMessage:
    """Ask for one call (on the callback thread): the request to run, or the call's answer.

    ``ask_user`` is answered here, through ``ask_choice``.

    The request to run carries the arguments the person approved when they edited
    them. Arguments the ToolNode would refuse, the model's or the edited ones, end
    the call ``failed`` with the ToolNode's own message, and the tool does not run.
    """
    call = request.tool_call
    tool_call_id, name, args = call.get("id") or "", call["name"], call.get("args") or {}
    if _is_ask_user(request.tool):
        text, failed = ask_user.ask(session.driver, tool_call_id, args)
        return _message(request, text, error=failed)
    # A call asked before it reached the ToolNode (a human-in-the-loop review) is checked after.
    checked = session.known(tool_call_id, name, SERVER, args) is None
    refused = _refusal(request) if checked else None
    if refused is None:
        parameters = parameters_of(request.tool)
        metadata = request.tool.metadata if request.tool is not None else None
        own = own_tool(metadata)
        said = shown(own, check(own, args)[0] or {}) if own is not None and checked else None
        record, allowed = session.admit(
            tool_call_id,
            name,
            SERVER,
            None,
            args,
            parameters,
            kind=declared_kind(metadata),
            content=said.content if said is not None else None,
            locations=said.locations if said is not None else None,
            preview=previewer(own) if own is not None else None,
        )
        if not allowed:
            return _message(request, record.error or "The call was denied.", error=True)
        edited = record.approved_arguments
        if edited is not None:
            request = request.override(tool_call={**call, "args": dict(edited)})
        if edited is None and checked:
            return record, request
        refused = _refusal(request)
        if refused is None:
            return record, request
    session.refuse(tool_call_id, name, SERVER, args, *refused)
    return _message(request, refused[1], error=True)


def parameters_of(tool: BaseTool | None) -> dict[str, Any] | None:
    """The JSON schema of ``tool``'s arguments, as the model is shown it (None if unknown)."""
    if tool is None:
        return None
    try:
        parameters = convert_to_openai_tool(tool)["function"]["parameters"]
    except Exception:
        return None
    return parameters if isinstance(parameters, dict) else None


def _is_ask_user(tool: BaseTool | None) -> bool:
    return tool is not None and bool((tool.metadata or {}).get(ASK_USER_MARK))


def _refusal(request: ToolCallRequest) -> tuple[Outcome, str] | None:
    """Why the ToolNode would refuse the call (unknown tool, invalid arguments), in its words."""
    call, tool = request.tool_call, request.tool
    if tool is None:
        known = [t.name for t in getattr(request.runtime, "tools", None) or ()]
        message = INVALID_TOOL_NAME_ERROR_TEMPLATE.format(
            requested_tool=call["name"], available_tools=", ".join(known)
        )
        return "unknown", message
    own = own_tool(tool.metadata)
    if own is not None:
        problem = check(own, call.get("args") or {})[1]
        return None if problem is None else ("invalid_arguments", problem)
    schema = tool.tool_call_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        try:
            schema.model_validate(call.get("args") or {})
        except ValidationError as exc:
            error = ToolInvocationError(call["name"], exc, call.get("args") or {}, exc.errors())
            return "invalid_arguments", error.message
    return None


def _message(request: ToolCallRequest, content: str, *, error: bool) -> ToolMessage:
    call = request.tool_call
    return ToolMessage(
        content=content,
        name=call["name"],
        tool_call_id=call.get("id") or "",
        status="error" if error else "success",
    )


def _settle(session: AgentTurn, record: CallRecord, out: Result, ran: Ran) -> None:
    """``completed`` or ``failed`` from what the ToolNode returned (on the callback thread).

    An own tool's end (its content, a failure's outcome) is what its run left in ``ran``.
    """
    end = ending(ran)
    if end is not None and end.status == "completed":
        session.complete(record, end.text, content=end.content)
        return
    if end is not None:
        session.fail(record, end.outcome, end.text, content=end.content)
        return
    message = out if isinstance(out, ToolMessage) else _message_in(out, record.source_id)
    if message is None:
        session.complete(record, result_text(getattr(out, "update", None)))
    elif message.status == "error":
        session.fail(record, "error", result_text(message.content))
    else:
        session.complete(record, result_text(message.content))


def _message_in(command: Any, tool_call_id: str) -> ToolMessage | None:
    update = getattr(command, "update", None)
    messages = update.get("messages") if isinstance(update, dict) else None
    for message in messages or ():
        if isinstance(message, ToolMessage) and message.tool_call_id == tool_call_id:
            return message
    return None
