"""Copies of an agent whose function and MCP tools ask the session before they run."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import json
import types
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agents import Agent, FunctionTool, Handoff, RunContextWrapper
from agents.exceptions import ToolTimeoutError
from agents.tool import (
    default_tool_timeout_error_message,
    resolve_function_tool_failure_error_function,
)
from agents.tool_context import ToolContext

from mead_notebook.interaction import ToolKind, class_of
from mead_notebook.schema import check, parse
from mead_notebook.tools.base import result_text as as_text
from mead_notebook.tools.preview import previewer
from mead_notebook.tools.trust import kind_from_hints
from mead_notebook.turn import CallRecord

from ..base import ASK_USER_MARK, AgentTurn, CallCancelled, failure
from ..base.own_tools import check as check_own
from ..base.own_tools import ending, own_tool, watching
from ..base.own_tools import kind_of as own_kind
from ..base.own_tools import shown as own_preview

__all__ = ["Gate", "is_ask_user"]

Invoker = Callable[[ToolContext[Any], str], Awaitable[Any]]


class Gate:
    """Makes gated copies of agents (their tools, MCP tools and handoff targets).

    A gated call is checked against the tool's schema (invalid: ``failed``, the
    model told why, nobody asked), asked through ``session.admit`` (denied: the
    model gets the message), run by ``session.execute`` as a task a card's Cancel
    can cancel (the model is told, the run goes on), and reported ``completed``
    or ``failed``. A tool's kind is ``kinds[name]``, else its MCP annotations as
    far as its server is ``trusted`` (:func:`~mead_notebook.tools.trust.kind_from_hints`).
    """

    def __init__(
        self,
        session: AgentTurn,
        kinds: Mapping[str, ToolKind] | None = None,
        trusted: frozenset[str] = frozenset(),
    ) -> None:
        self.session = session
        self.kinds = dict(kinds or {})
        """What each tool does, by tool name, where its annotations do not say."""
        self.trusted = trusted
        """The MCP servers whose ``readOnlyHint`` is believed, by name."""
        self.agents: dict[int, Agent[Any]] = {}
        self.servers: dict[str, str] = {}
        """Each gated tool's server (its agent's name, or its MCP server's), by tool name."""
        self.schemas: dict[str, dict[str, Any]] = {}
        self.tool_kinds: dict[str, ToolKind] = {}
        """Each gated tool's kind, by tool name."""
        self._errors: dict[str, Exception] = {}

    def agent(self, agent: Agent[Any]) -> Agent[Any]:
        """A gated copy of ``agent`` (the same copy for the same agent, so cycles end)."""
        found = self.agents.get(id(agent))
        if found is not None:
            return found
        gated = agent.clone(tools=[], handoffs=[])
        self.agents[id(agent)] = gated
        gated.tools = [
            self.tool(t, agent.name) if isinstance(t, FunctionTool) and not is_ask_user(t) else t
            for t in agent.tools
        ]
        gated.handoffs = [self._handoff(h) for h in agent.handoffs]
        if agent.mcp_servers:
            original = gated.get_mcp_tools

            async def get_mcp_tools(self_: Agent[Any], ctx: RunContextWrapper[Any]) -> list[Any]:
                tools = await original(ctx)
                return [
                    self.tool(t, _mcp_server_of(t) or agent.name)
                    if isinstance(t, FunctionTool)
                    else t
                    for t in tools
                ]

            gated.get_mcp_tools = types.MethodType(get_mcp_tools, gated)  # type: ignore[method-assign]
        return gated

    def _handoff(self, handoff: Agent[Any] | Handoff[Any, Any]) -> Any:
        if isinstance(handoff, Agent):
            return self.agent(handoff)
        inner = handoff.on_invoke_handoff

        async def on_invoke_handoff(ctx: RunContextWrapper[Any], raw: str) -> Agent[Any]:
            return self.agent(await inner(ctx, raw))

        return dataclasses.replace(handoff, on_invoke_handoff=on_invoke_handoff)

    def tool(self, tool: FunctionTool, server: str) -> FunctionTool:
        """A copy of ``tool`` whose ``on_invoke_tool`` asks first."""
        gated = copy.copy(tool)
        inner = gated.on_invoke_tool
        original = tool
        self.servers[tool.name] = server
        self.schemas[tool.name] = tool.params_json_schema
        self.tool_kinds[tool.name] = self.kind_of_tool(tool)

        async def formatter(ctx: RunContextWrapper[Any], error: Exception) -> Any:
            if isinstance(ctx, ToolContext):
                self._errors[ctx.tool_call_id] = error
            fmt = resolve_function_tool_failure_error_function(original, ctx)
            if fmt is None:
                raise error
            value = fmt(ctx, error)
            return await value if asyncio.iscoroutine(value) else value

        gated._failure_error_function = formatter
        gated._use_default_failure_error_function = False

        async def invoke(ctx: ToolContext[Any], raw: str) -> Any:
            return await self._invoke(tool, server, inner, ctx, raw)

        gated.on_invoke_tool = invoke
        # The tool's own timeout counts its run, not the person's think time: the gate
        # applies it once the call is allowed (see _run), not the SDK around the asking.
        gated.timeout_seconds = None
        return gated

    async def _invoke(
        self, tool: FunctionTool, server: str, inner: Invoker, ctx: ToolContext[Any], raw: str
    ) -> Any:
        session = self.session
        call_id, name, schema = ctx.tool_call_id, tool.name, tool.params_json_schema
        arguments, problem = parse(raw)
        if arguments is not None:
            problem = check(arguments, schema)
        own = own_tool(tool)
        said = None
        if own is not None and arguments is not None and problem is None:
            valid, problem = check_own(own, arguments)
            said = own_preview(own, valid) if valid is not None else None
        if problem is not None:
            message = (
                problem
                if problem.startswith("Invalid arguments")
                else f"Invalid arguments for {name}: {problem}. The tool did not run."
            )
            shown = arguments if arguments is not None else {"arguments": raw}
            await session.call(
                session.refuse, call_id, name, server, shown, "invalid_arguments", message
            )
            return message
        kind = self.kind_of_tool(tool)
        record, allowed = await session.call(
            session.admit,
            call_id,
            name,
            server,
            class_of(kind),
            arguments,
            schema,
            kind=kind,
            content=said.content if said is not None else None,
            locations=said.locations if said is not None else None,
            preview=previewer(own) if own is not None else None,
        )
        if not allowed:
            return record.error or f"Permission to run {name} was denied."
        approved = record.approved_arguments
        if approved is not None:
            problem = check(approved, schema)
            if problem is None and own is not None:
                problem = check_own(own, approved)[1]
            if problem is not None:
                message = f"Invalid approved arguments for {name}: {problem}. The tool did not run."
                await session.call(
                    session.refuse, call_id, name, server, approved, "invalid_arguments", message
                )
                return message
            raw = json.dumps(approved)
        limit = tool.timeout_seconds
        try:
            with watching() as ran:
                value = await session.execute(
                    record,
                    lambda: (
                        inner(ctx, raw)
                        if limit is None
                        else asyncio.wait_for(inner(ctx, raw), limit)
                    ),
                    passthrough=(asyncio.TimeoutError,),
                )
        except CallCancelled as cancelled:
            return cancelled.message
        except asyncio.TimeoutError as exc:
            return await self._timed_out(tool, record, ctx, limit or 0.0, exc)
        error = self._errors.pop(call_id, None)
        end = ending(ran)
        if end is not None and end.status == "completed":
            await session.call(session.complete, record, end.text, content=end.content)
        elif end is not None:
            await session.call(session.fail, record, end.outcome, end.text, content=end.content)
        elif error is not None:
            await session.call(session.fail, record, "error", failure(record, error))
        else:
            await session.call(session.complete, record, as_text(_shown(value)))
        return value

    async def _timed_out(
        self,
        tool: FunctionTool,
        record: CallRecord,
        ctx: ToolContext[Any],
        limit: float,
        exc: BaseException,
    ) -> Any:
        """The call ran past the tool's ``timeout_seconds``: ``timeout``, then the SDK's way
        of telling it (an error result, its formatter, or ``ToolTimeoutError``)."""
        message = default_tool_timeout_error_message(tool_name=tool.name, timeout_seconds=limit)
        await self.session.call(self.session.fail, record, "timeout", message)
        error = ToolTimeoutError(tool_name=tool.name, timeout_seconds=limit)
        if tool.timeout_behavior == "raise_exception":
            raise error from exc
        if tool.timeout_error_function is None:
            return message
        told = tool.timeout_error_function(ctx, error)
        return await told if inspect.isawaitable(told) else told

    def kind_of_tool(self, tool: FunctionTool) -> ToolKind:
        """What ``tool`` does: ``kinds`` by its name, else its own kind (one of the package's
        tools), else its MCP annotations as far as trusted."""
        given = self.kinds.get(tool.name)
        if given is not None:
            return given
        own = own_tool(tool)
        if own is not None:
            return own_kind(own)
        server = _mcp_server_of(tool)
        return kind_from_hints(
            tool.mcp_annotations, trusted=server is not None and server in self.trusted
        )


def _shown(value: Any) -> Any:
    text = getattr(value, "text", None)
    return text if isinstance(text, str) else value


def _mcp_server_of(tool: FunctionTool) -> str | None:
    binding = getattr(tool, "_mcp_tool_binding", None)
    return str(binding[0]) if binding else None


def is_ask_user(tool: FunctionTool) -> bool:
    """Whether ``tool`` is the adapter's ``ask_user`` (it asks itself; no permission first)."""
    return getattr(tool, ASK_USER_MARK, False) is True
