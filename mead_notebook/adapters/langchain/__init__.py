"""Run a LangChain / LangGraph agent under an interaction (``mead-notebook[langchain]``).

::

    from mead_notebook import NotebookInteraction
    from mead_notebook.adapters import langchain as mead_langchain

    agent = create_agent(model, tools=[...])      # unchanged
    result = mead_langchain.run(agent, "Tidy up the data folder",
                                interaction=NotebookInteraction())
    result.output   # the graph's final state, as agent.invoke returns it
    result.text     # the streamed answer
    result.calls    # a CallRecord per tool call

``run`` blocks a sync cell, ``await arun(...)`` an async one, ``start`` returns a
``Turn`` at once; the graph streams on an event loop of its own thread. Every
call of the graph's ``ToolNode`` goes through the contract (the agent itself is
left as it was: the run uses a copy). The graph's interrupts that ask the
person (human-in-the-loop reviews, an ``interrupt`` whose value offers options)
are answered through the interaction and the run resumes; without a
checkpointer the copy gets an in-memory one (saved only when the graph stops,
``durability="exit"``, unless you pass ``durability``). ``config``, ``thread_id``,
``context`` and other ``astream`` options pass through. A run that reaches the
graph's ``recursion_limit`` ends with ``stop_reason`` ``max_rounds`` (no error;
``output`` is the last state the graph reached). For a loop of your own, add
``middleware(interaction)`` to ``create_agent(middleware=[...])``.

``as_tools(tools)`` gives the package's own tools (``@tool`` functions,
``kernel_tools()``) to an agent as LangChain tools, each with its schema, its
kind and its preview on the card: ``create_agent(model, tools=as_tools([...]))``.
The tool's own validation refuses a bad call before anyone is asked (the model
is told why); the card's Cancel stops a running call (the tool's ``Call`` is
cancelled).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, cast

from ..base import AgentResult, missing_extra

try:
    from langchain_core.messages import AIMessage, AIMessageChunk
    from langchain_core.runnables import RunnableConfig
    from langchain_core.tools import BaseTool, StructuredTool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.errors import GraphRecursionError
    from langgraph.prebuilt.tool_node import ToolNode
    from langgraph.pregel import Pregel
    from langgraph.types import Command, StreamMode, interrupt
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(missing_extra("langchain", "langchain")) from exc

from mead_notebook import ask_user
from mead_notebook.turn import Turn

from ..base import ASK_USER_MARK, AgentTurn, AskUserOption, ask_user_arguments, result_text
from ..base.replies import Script
from ._gate import ToolGate, gated_tool_node
from ._interrupts import answer_interrupts
from ._middleware import MeadMiddleware
from ._own_tools import as_tools
from ._scripted import ScriptedChatModel

__all__ = [
    "AgentResult",
    "MeadMiddleware",
    "ScriptedChatModel",
    "arun",
    "as_tools",
    "ask_user_tool",
    "middleware",
    "run",
    "scripted_model",
    "start",
]

MAX_RESUMES = 100
"""How many times one run resumes the graph after answered interrupts, at most."""
_MODES: list[StreamMode] = ["messages", "updates", "values"]
Graph = Pregel[Any, Any, Any, Any]


def run(agent: Graph, input: Any, *, interaction: object, **options: Any) -> AgentResult:
    """Run ``agent`` on ``input`` (a prompt, a message list, a state or a ``Command``) and wait.

    A kernel interrupt cancels the run and propagates; a failed run raises
    ``TurnError`` (its ``result`` holds what the run produced).
    """
    return start(agent, input, interaction=interaction, **options).result()


async def arun(agent: Graph, input: Any, *, interaction: object, **options: Any) -> AgentResult:
    """Run ``agent`` in its own thread and await it (for async cells)."""
    return await start(agent, input, interaction=interaction, **options)


def start(agent: Graph, input: Any, *, interaction: object, **options: Any) -> Turn[AgentResult]:
    """Start ``agent`` in a thread of its own and return the turn's handle at once."""
    session = AgentTurn(interaction)
    result = session.result
    gate = ToolGate(lambda: session)
    graph, tool_nodes, tools = _gated(agent, gate)
    if agent.checkpointer is None:
        # The copy's own in-memory checkpointer only needs the state an interrupt leaves.
        options.setdefault("durability", "exit")
    config = _config(options.pop("config", None), options.pop("thread_id", None))

    async def main() -> None:
        given: Any = _input_of(input)
        replies: set[str] = set()
        for _ in range(MAX_RESUMES + 1):
            state, interrupts, limited = await _stream(
                session, graph, given, config, (tool_nodes, replies), options
            )
            result.output = state
            if limited:
                result.stop_reason = "max_rounds"
                return
            if not interrupts:
                result.stop_reason = "end_turn"
                return
            resume = await answer_interrupts(session, interrupts, state, tools)
            if resume is None:
                if isinstance(state, Mapping):
                    result.output = {**state, "__interrupt__": list(interrupts)}
                result.stop_reason = "paused"
                return
            given = Command(resume=resume)
        result.stop_reason = "max_rounds"

    return session.turn(_prompt_of(input), main)


def middleware(interaction: object) -> MeadMiddleware:
    """The ``AgentMiddleware`` that asks ``interaction`` around every tool call (your own loop)."""
    return MeadMiddleware(interaction)


def scripted_model(replies: Script) -> ScriptedChatModel:
    """An offline chat model that plays back ``replies`` (text fragments and ``ToolCall`` items).

    Each reply is used once, in order; or ``replies`` is a function of the
    conversation so far (plain ``Message`` dicts) that returns each reply, so a
    reply can say what happened to the calls before it. Streamed, fragments and
    calls arrive one chunk each, as a provider streams them.
    """
    return ScriptedChatModel(replies=replies if callable(replies) else [list(r) for r in replies])


def _ask_user(prompt: str, options: list[AskUserOption], multiple: bool = False) -> str:
    answer = interrupt(ask_user_arguments(prompt, options, multiple))
    return result_text(answer)


def ask_user_tool() -> BaseTool:
    """The ``ask_user`` tool: a multiple-choice question the person answers in the widget.

    Under ``run``/``arun``/``start`` or ``middleware`` the question goes to
    ``ask_choice``; elsewhere it is a LangGraph ``interrupt`` offering the options.
    """
    return StructuredTool.from_function(
        _ask_user,
        name=ask_user.ASK_USER,
        description=ask_user.ASK_USER_SPEC["description"],
        metadata={ASK_USER_MARK: True},
    )


async def _stream(
    session: AgentTurn,
    graph: Graph,
    given: Any,
    config: RunnableConfig,
    seen: tuple[set[str], set[str]],
    options: dict[str, Any],
) -> tuple[Any, list[Any], bool]:
    """Stream one invocation: text to the interaction; return (state, interrupts, limited).

    ``state`` is the last state, ``limited`` whether the graph stopped at its
    ``recursion_limit``. ``seen`` holds the names of the graph's tool nodes and
    the ids of the model replies counted so far (``rounds``).
    """
    tool_nodes, replies = seen
    state: Any = None
    interrupts: list[Any] = []
    try:
        async for mode, chunk in graph.astream(given, config, stream_mode=_MODES, **options):
            if mode == "messages":
                message, metadata = chunk
                node = metadata.get("langgraph_node") if isinstance(metadata, Mapping) else None
                if isinstance(message, (AIMessageChunk, AIMessage)) and node not in tool_nodes:
                    session.text(str(message.text))
            elif mode == "updates" and isinstance(chunk, Mapping):
                interrupts.extend(chunk.get("__interrupt__") or ())
                for update in chunk.values():
                    for m in update.get("messages") or () if isinstance(update, Mapping) else ():
                        if isinstance(m, AIMessage) and m.id not in replies:
                            replies.add(m.id or str(len(replies)))
                session.result.rounds = len(replies)
            elif mode == "values":
                state = chunk
    except GraphRecursionError:
        return state, interrupts, True
    return state, interrupts, False


def _gated(
    agent: Graph, gate: ToolGate, *, root: bool = True
) -> tuple[Graph, set[str], dict[str, BaseTool]]:
    """A copy of ``agent`` whose ToolNodes, subgraphs' included, ask through ``gate``.

    The root copy gets an in-memory checkpointer when it has none, so that an
    interrupt can be resumed. Returns the copy, the names of its tool nodes and
    their tools by name.
    """
    if not isinstance(agent, Pregel):
        raise TypeError(
            "run, arun and start take a LangGraph graph (create_agent returns one), "
            f"not {type(agent).__name__}"
        )
    nodes = dict(agent.nodes)
    names: set[str] = set()
    tools: dict[str, BaseTool] = {}
    for name, node in agent.nodes.items():
        if isinstance(node.bound, ToolNode):
            nodes[name] = node.copy({"bound": gated_tool_node(node.bound, gate)})
            names.add(name)
            tools.update(node.bound.tools_by_name)
        elif isinstance(node.bound, Pregel):
            inner, inner_names, inner_tools = _gated(node.bound, gate, root=False)
            nodes[name] = node.copy({"bound": inner})
            names |= inner_names
            tools.update(inner_tools)
    update: dict[str, Any] = {"nodes": nodes}
    if root and agent.checkpointer is None:
        update["checkpointer"] = InMemorySaver()
    return agent.copy(update), names, tools


def _config(config: Any, thread_id: Any) -> RunnableConfig:
    merged: dict[str, Any] = dict(config or {})
    configurable = dict(merged.get("configurable") or {})
    if thread_id is not None:
        configurable["thread_id"] = str(thread_id)
    configurable.setdefault("thread_id", f"mead-{uuid.uuid4().hex}")
    merged["configurable"] = configurable
    return cast(RunnableConfig, merged)


def _input_of(value: Any) -> Any:
    if isinstance(value, str):
        return {"messages": [{"role": "user", "content": value}]}
    if isinstance(value, list):
        return {"messages": value}
    return value


def _prompt_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    messages = value if isinstance(value, list) else None
    if isinstance(value, Mapping):
        messages = value.get("messages")
    last = messages[-1] if messages else None
    if isinstance(last, Mapping):
        return str(last.get("content", ""))
    return str(getattr(last, "text", "") or "")
