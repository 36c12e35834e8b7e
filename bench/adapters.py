"""Adapter overhead per tool call, side by side with each framework run alone.

The same scripted model drives every run: ``--calls`` tool calls either one per
model reply (``sequential``: the framework's full loop per call) or all in one
reply (``parallel``: the framework runs them concurrently).

- "alone": the framework's own async run on a fresh event loop (``ainvoke``,
  ``agent.run``);
- "streamed": the same run streaming what the adapter streams (LangGraph's
  ``astream`` in messages/updates/values mode with an in-memory checkpointer saved
  on exit, as the adapter's copy of the graph has; pydantic-ai with an event
  stream handler);
- "adapter": ``run(...)`` with ``AllowAll``: every call goes through the
  contract, the run streams in a thread of its own.

The Claude Agent SDK's calls run in its bundled CLI against a fake Anthropic
server on loopback (``tests/servers/anthropic_agent_server.py``), one model
reply per call, on an in-process MCP tool: "alone" is ``ClaudeSDKClient`` with
a ``can_use_tool`` that allows and the ``PreToolUse`` hook that makes every call
ask (as the adapter sets it up), "streamed" the same with partial messages,
"adapter" ``claude_agent.run`` with ``AllowAll``. Its runs are ``--claude-calls``
calls long (a CLI start costs about a second, in every column alike).

Run: .venv/bin/python bench/adapters.py [--calls 1000] [--repeats 3] [--claude-calls 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic_ai import Agent
from pydantic_ai.usage import UsageLimits

from mead_notebook import ToolCall
from mead_notebook.adapters import langchain as mead_langchain
from mead_notebook.adapters import pydantic_ai as mead_pydantic_ai
from mead_notebook.policies import AllowAll


def noop(n: int) -> str:
    """Do nothing."""
    return "ok"


def script(calls: int, shape: str) -> list[list[Any]]:
    if shape == "parallel":
        return [[ToolCall("noop", {"n": i}, f"c{i}") for i in range(calls)], ["done"]]
    return [[ToolCall("noop", {"n": i}, f"c{i}")] for i in range(calls)] + [["done"]]


Runs = tuple[Callable[[], Any], Callable[[], Any], Callable[[], Any]]


def langchain_runs(calls: int, shape: str) -> Runs:
    config: Any = {"recursion_limit": 4 * calls + 10, "configurable": {"thread_id": "bench"}}
    given = {"messages": [{"role": "user", "content": "go"}]}

    def alone() -> Any:
        agent = create_agent(mead_langchain.scripted_model(script(calls, shape)), [tool(noop)])
        return asyncio.run(agent.ainvoke(given, config))

    async def stream() -> None:
        model = mead_langchain.scripted_model(script(calls, shape))
        agent = create_agent(model, [tool(noop)], checkpointer=InMemorySaver())
        modes: Any = ["messages", "updates", "values"]
        async for _ in agent.astream(given, config, stream_mode=modes, durability="exit"):
            pass

    def streamed() -> Any:
        return asyncio.run(stream())

    def adapter() -> Any:
        agent = create_agent(mead_langchain.scripted_model(script(calls, shape)), [tool(noop)])
        result = mead_langchain.run(agent, "go", interaction=AllowAll(), config=config)
        if len(result.calls) != calls or any(c.status != "completed" for c in result.calls):
            raise RuntimeError(f"expected {calls} completed calls: {result}")
        return result

    return alone, streamed, adapter


def pydantic_ai_runs(calls: int, shape: str) -> Runs:
    limits = UsageLimits(request_limit=None, tool_calls_limit=None)

    def agent() -> Agent[None, str]:
        return Agent(mead_pydantic_ai.scripted_model(script(calls, shape)), tools=[noop])

    def alone() -> Any:
        return asyncio.run(agent().run("go", usage_limits=limits))

    async def drain(ctx: Any, events: Any) -> None:
        async for _ in events:
            pass

    def streamed() -> Any:
        return asyncio.run(agent().run("go", usage_limits=limits, event_stream_handler=drain))

    def adapter() -> Any:
        result = mead_pydantic_ai.run(agent(), "go", interaction=AllowAll(), usage_limits=limits)
        if len(result.calls) != calls or any(c.status != "completed" for c in result.calls):
            raise RuntimeError(f"expected {calls} completed calls: {result}")
        return result

    return alone, streamed, adapter


def openai_agents_runs(calls: int, shape: str) -> Runs:
    """The OpenAI Agents SDK: ``Runner.run`` alone, ``Runner.run_streamed`` drained, the adapter."""
    from agents import Agent as OpenAIAgent
    from agents import Runner, function_tool, set_tracing_disabled

    from mead_notebook.adapters import openai_agents

    set_tracing_disabled(True)
    noop_tool = function_tool(noop)

    def agent() -> Any:
        model = openai_agents.scripted_model(script(calls, shape))
        return OpenAIAgent("bench", model=model, tools=[noop_tool])

    def alone() -> Any:
        return asyncio.run(Runner.run(agent(), "go", max_turns=calls + 5))

    async def stream() -> None:
        streamed = Runner.run_streamed(agent(), "go", max_turns=calls + 5)
        async for _ in streamed.stream_events():
            pass

    def streamed() -> Any:
        return asyncio.run(stream())

    def adapter() -> Any:
        result = openai_agents.run(agent(), "go", interaction=AllowAll(), max_turns=calls + 5)
        if len(result.calls) != calls or any(c.status != "completed" for c in result.calls):
            raise RuntimeError(f"expected {calls} completed calls: {result}")
        return result

    return alone, streamed, adapter


def claude_agent_runs(calls: int, shape: str) -> Runs:
    """Claude Code: the SDK's client alone, streamed, and the adapter (see the module docstring)."""
    from claude_agent_sdk import (
        ClaudeSDKClient,
        HookMatcher,
        PermissionResultAllow,
        create_sdk_mcp_server,
    )
    from claude_agent_sdk import tool as claude_tool

    from mead_notebook.adapters import claude_agent

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from servers.anthropic_agent_server import AgentServer, Text, Use

    @claude_tool(
        "noop", "Does nothing.", {"type": "object", "properties": {"n": {"type": "integer"}}}
    )
    async def claude_noop(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": noop(int(arguments.get("n", 0)))}]}

    uses = [Use(f"c{i}", "mcp__bench__noop", {"n": i}) for i in range(calls)]
    turns: list[Any] = [[u] for u in uses] if shape == "sequential" else [uses]
    server = AgentServer([*turns, [Text("done")]]).__enter__()
    home = Path(tempfile.mkdtemp(prefix="mead-bench-"))

    def options(**extra: Any) -> Any:
        return server.options(
            cwd=str(home),
            env={"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")},
            max_turns=calls + 5,
            mcp_servers={"bench": create_sdk_mcp_server("bench", tools=[claude_noop])},
            **extra,
        )

    async def allow(tool: str, given: dict[str, Any], context: Any) -> Any:
        return PermissionResultAllow(updated_input=given)

    async def ask(given: Any, tool_use_id: Any, context: Any) -> Any:
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}

    async def client_run(partial: bool) -> None:
        hooks: Any = {"PreToolUse": [HookMatcher(hooks=[ask])]}
        given = options(can_use_tool=allow, hooks=hooks, include_partial_messages=partial)
        async with ClaudeSDKClient(given) as client:
            await client.query("go")
            async for _ in client.receive_response():
                pass

    def alone() -> Any:
        return asyncio.run(client_run(False))

    def streamed() -> Any:
        return asyncio.run(client_run(True))

    def adapter() -> Any:
        result = claude_agent.run(options(), "go", interaction=AllowAll())
        if len(result.calls) != calls or any(c.status != "completed" for c in result.calls):
            raise RuntimeError(f"expected {calls} completed calls: {result}")
        return result

    return alone, streamed, adapter


def per_call(run: Callable[[], Any], calls: int, repeats: int) -> float:
    """Median seconds per tool call over ``repeats`` runs."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) / calls)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--claude-calls", type=int, default=20)
    args = parser.parse_args()
    print(
        f"{args.calls} tool calls ({args.claude_calls} for claude-agent) x {args.repeats} runs,"
        " median per call in us"
    )
    columns = ("alone", "streamed", "adapter", "- streamed", "/ alone")
    print(f"{'framework':12} {'shape':11}" + "".join(f"{c:>11}" for c in columns))
    frameworks = (
        ("langchain", langchain_runs, args.calls),
        ("pydantic-ai", pydantic_ai_runs, args.calls),
        ("openai-agents", openai_agents_runs, args.calls),
        ("claude-agent", claude_agent_runs, args.claude_calls),
    )
    for name, runs, calls in frameworks:
        for shape in ("sequential", "parallel"):
            for warm in runs(min(calls, 20), shape):
                warm()
            alone, streamed, adapter = (
                per_call(run, calls, args.repeats) * 1e6 for run in runs(calls, shape)
            )
            cells = (alone, streamed, adapter, adapter - streamed)
            row = "".join(f"{c:11.1f}" for c in cells) + f"{adapter / alone:10.2f}x"
            print(f"{name:12} {shape:11}{row}")


if __name__ == "__main__":
    main()
