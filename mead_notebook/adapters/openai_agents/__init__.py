"""Run an OpenAI Agents SDK agent under an interaction (``mead-notebook[openai-agents]``).

::

    from mead_notebook import NotebookInteraction
    from mead_notebook.adapters import openai_agents

    result = openai_agents.run(agent, "Tidy the data folder", interaction=NotebookInteraction())
    result.output   # the SDK's RunResultStreaming (final_output, new_items, last_agent)
    result.text     # the streamed answer
    result.calls    # a CallRecord per tool call

``run`` blocks a sync cell, ``await arun(...)`` an async one, ``start`` returns a
``Turn`` at once; the agent streams (``Runner.run_streamed``) on an event loop of
its own thread, so all three work where ``Runner.run_sync`` fails. MCP servers
not yet connected are connected on that loop for the run, and closed after it.
The run uses a gated copy of the agent (and of the agents it hands off to): every function tool
and MCP tool asks through the interaction inside the run. Tools that declare
``needs_approval`` pause the SDK's run; their approvals are asked through the
interaction too, once per call (with the tool's kind), and the run resumes by
itself. ``kinds`` says what tools do by name (``{"read_file": "read", "rm":
"delete"}``); an MCP tool's annotations say it as far as its server is named in
``trusted`` (``trusted={"files"}``: its ``readOnlyHint`` makes a ``read`` tool;
see :mod:`mead_notebook.tools.trust`). ``ask_user_tool()`` is a tool that puts a
multiple-choice question to the person. Other options go to
``Runner.run_streamed`` (``context``, ``max_turns``, ``run_config``, ``session``...);
unknown tools are returned to the model as errors unless ``run_config`` says
otherwise.

``as_tools(tools)`` gives the package's own tools (``@tool`` functions,
``kernel_tools()``) to an agent as function tools, each with its schema, its
kind and its preview on the card: ``Agent(..., tools=as_tools([...]))``. The
tool's own validation refuses a bad call before anyone is asked (the model is
told why); the card's Cancel stops a running call (the tool's ``Call`` is
cancelled).

A run that reaches ``max_turns`` ends with ``stop_reason`` ``max_rounds`` (no
error; ``output`` holds what the SDK's run produced until then, its
``final_output`` None), one the model refuses to finish with ``refusal``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from ..base import AgentResult, missing_extra

try:
    from agents import (
        Agent,
        FunctionTool,
        MaxTurnsExceeded,
        ModelRefusalError,
        RunConfig,
        Runner,
        function_tool,
    )
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(missing_extra("openai_agents", "openai-agents")) from exc

from mead_notebook import ask_user
from mead_notebook.interaction import ToolKind
from mead_notebook.tools.trust import trusted_servers
from mead_notebook.turn import StopReason, Turn

from ..base import ASK_USER_MARK, AgentTurn, AskUserOption, active_turn, ask_user_arguments
from ._events import Events
from ._gate import Gate
from ._own_tools import as_tools
from ._scripted import scripted_model

__all__ = [
    "CONNECT_TIMEOUT",
    "MAX_RESUMES",
    "AgentResult",
    "arun",
    "as_tools",
    "ask_user_tool",
    "run",
    "scripted_model",
    "start",
]

MAX_RESUMES = 100
"""How many times one run resumes after answered approvals, at most (then ``max_rounds``)."""
CONNECT_TIMEOUT = 30.0
"""How long connecting one MCP server the run connects itself may take (seconds)."""


def run(agent: Agent[Any], input: Any, *, interaction: object, **options: Any) -> AgentResult:
    """Run ``agent`` on ``input`` (a prompt or input items) and wait for it.

    A kernel interrupt cancels the run and propagates; a failed run raises
    ``TurnError`` (its ``result`` holds what the run produced).
    """
    return start(agent, input, interaction=interaction, **options).result()


async def arun(
    agent: Agent[Any], input: Any, *, interaction: object, **options: Any
) -> AgentResult:
    """Run ``agent`` in its own thread and await it (for async cells)."""
    return await start(agent, input, interaction=interaction, **options)


def start(
    agent: Agent[Any],
    input: Any,
    *,
    interaction: object,
    kinds: Mapping[str, ToolKind] | None = None,
    trusted: Iterable[str] = (),
    **options: Any,
) -> Turn[AgentResult]:
    """Start ``agent`` in a thread of its own and return the turn's handle at once."""
    if not isinstance(agent, Agent):
        raise TypeError(f"run, arun and start take an agents.Agent, not {type(agent).__name__}")
    believed = trusted_servers(trusted)
    result = AgentResult()
    session = AgentTurn(interaction, result)
    gate = Gate(session, kinds, believed)
    gated = gate.agent(agent)
    config = options.pop("run_config", None) or RunConfig()
    if config.tool_not_found_behavior == "raise_error":
        config = dataclasses.replace(config, tool_not_found_behavior="return_error_to_model")

    async def main() -> AgentResult:
        async with contextlib.AsyncExitStack() as stack:
            for server in _unconnected(gate):
                await asyncio.wait_for(server.connect(), CONNECT_TIMEOUT)
                stack.push_async_callback(server.cleanup)
            return await play()

    async def play() -> AgentResult:
        events = Events(session, gate)
        given: Any = input
        try:
            for _ in range(MAX_RESUMES + 1):
                streamed = Runner.run_streamed(gated, given, run_config=config, **options)
                stopped = await _stream(streamed, events)
                result.output = streamed
                result.rounds = events.rounds
                if stopped is not None or not streamed.interruptions:
                    result.stop_reason = stopped or "end_turn"
                    return result
                state = streamed.to_state()
                for item in streamed.interruptions:
                    allowed, message = await session.call(events.approval, item)
                    if allowed:
                        state.approve(item)
                    else:
                        state.reject(item, rejection_message=message)
                given = state
            result.stop_reason = "max_rounds"
            return result
        except BaseException:
            if session.cancelled.is_set():
                result.stop_reason = "interrupted"
                return result
            raise

    return session.turn(input if isinstance(input, str) else "", main)


async def _stream(streamed: Any, events: Events) -> StopReason | None:
    """Report the run's events; the stop reason of a run the SDK ended at a limit, or None."""
    try:
        async for event in streamed.stream_events():
            events.on(event)
    except MaxTurnsExceeded:
        return "max_rounds"
    except ModelRefusalError:
        return "refusal"
    except BaseException:
        streamed.cancel()
        raise
    return None


def _unconnected(gate: Gate) -> list[Any]:
    """The MCP servers of the run's agents that nobody has connected yet (each once)."""
    found: dict[int, Any] = {}
    for agent in gate.agents.values():
        for server in agent.mcp_servers:
            if getattr(server, "session", True) is None:
                found.setdefault(id(server), server)
    return list(found.values())


async def _ask_user(
    ctx: ToolContext[Any], prompt: str, options: list[AskUserOption], multiple: bool = False
) -> str:
    """Ask the person a multiple-choice question; the answer comes back as JSON."""
    session = active_turn.get()
    if session is None:
        return "ask_user is answered only under mead_notebook's openai_agents.run/arun/start."
    arguments = ask_user_arguments(prompt, options, multiple)
    content, _ = await session.call(ask_user.ask, session.driver, ctx.tool_call_id, arguments)
    return content


def ask_user_tool() -> FunctionTool:
    """The ``ask_user`` tool: a multiple-choice question the person answers in the widget.

    It asks through ``ask_choice`` itself (no permission first); an unanswered
    question tells the model why.
    """
    tool = function_tool(
        _ask_user,
        name_override=ask_user.ASK_USER,
        description_override=str(ask_user.ASK_USER_SPEC["description"]),
        strict_mode=False,
    )
    setattr(tool, ASK_USER_MARK, True)
    return tool
