"""Run a pydantic-ai agent under an interaction (``mead-notebook[pydantic-ai]``).

::

    from mead_notebook import NotebookInteraction
    from mead_notebook.adapters import pydantic_ai as mead_pydantic_ai

    result = mead_pydantic_ai.run(agent, "Tidy up the data folder",
                                  interaction=NotebookInteraction())
    result.output   # pydantic-ai's AgentRunResult (result.output.output, .all_messages())
    result.text     # the streamed answer
    result.calls    # a CallRecord per tool call

``run`` blocks a sync cell, ``await arun(...)`` an async one, ``start`` returns a
``Turn`` at once. The agent runs on an event loop of its own thread, so all three
work in a cell whose loop is already running (where ``agent.run_sync`` fails).
Options go to ``agent.run`` (``deps``, ``message_history``, ``model_settings``,
``usage_limits``, ...). A run that reaches ``usage_limits.request_limit`` ends
with ``stop_reason`` ``max_rounds`` (no error; ``output`` is None, as pydantic-ai
returns no result then); the other limits raise as ever. For a loop of your own,
add ``capability(interaction)`` to the agent's or the run's ``capabilities``.
``ask_user_tool()`` is the multiple-choice question tool.

``as_tools(tools)`` gives the package's own tools (``@tool`` functions,
``kernel_tools()``) to an agent as pydantic-ai tools, each with its schema, its
kind and its preview on the card: ``Agent(model, tools=as_tools([...]))``. The
tool's own validation refuses a bad call before anyone is asked (the model is
told why, as a retry); the card's Cancel stops a running call (the tool's
``Call`` is cancelled).
"""

from __future__ import annotations

from typing import Any

from ..base import AgentResult, missing_extra

try:
    from pydantic_ai import Agent, RunContext, Tool
    from pydantic_ai.exceptions import CallDeferred, ToolFailed, UsageLimitExceeded
    from pydantic_ai.messages import ModelResponse
    from pydantic_ai.usage import RunUsage, UsageLimits
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(missing_extra("pydantic_ai", "pydantic-ai")) from exc

from mead_notebook import ask_user
from mead_notebook.turn import Turn

from ..base import ASK_USER_MARK, AgentTurn, AskUserOption, active_turn, ask_user_arguments
from ._capability import MeadCapability
from ._own_tools import as_tools
from ._scripted import scripted_model

__all__ = [
    "AgentResult",
    "MeadCapability",
    "arun",
    "as_tools",
    "ask_user_tool",
    "capability",
    "run",
    "scripted_model",
    "start",
]


def run(
    agent: Agent[Any, Any], input: Any = None, *, interaction: object, **options: Any
) -> AgentResult:
    """Run ``agent`` on ``input`` (a prompt, or pydantic-ai user content) and wait for it.

    A kernel interrupt cancels the run and propagates; a failed run raises
    ``TurnError`` (its ``result`` holds what the run produced, ``__cause__`` the
    framework's error).
    """
    return start(agent, input, interaction=interaction, **options).result()


async def arun(
    agent: Agent[Any, Any], input: Any = None, *, interaction: object, **options: Any
) -> AgentResult:
    """Run ``agent`` in its own thread and await it (for async cells)."""
    return await start(agent, input, interaction=interaction, **options)


def start(
    agent: Agent[Any, Any], input: Any = None, *, interaction: object, **options: Any
) -> Turn[AgentResult]:
    """Start ``agent`` in a thread of its own and return the turn's handle at once."""
    session = AgentTurn(interaction)
    given = list(options.pop("capabilities", None) or ())
    options["capabilities"] = [*given, MeadCapability(interaction, session=session)]

    async def main() -> None:
        if options.get("usage") is None:
            options["usage"] = RunUsage()
        usage: RunUsage = options["usage"]
        limit = (options.get("usage_limits") or UsageLimits()).request_limit
        try:
            outcome = await agent.run(input, **options)
        except UsageLimitExceeded:
            if limit is None or usage.requests < limit:
                raise
            session.result.stop_reason = "max_rounds"
            return
        session.result.output = outcome
        session.result.rounds = sum(isinstance(m, ModelResponse) for m in outcome.new_messages())

    return session.turn(input if isinstance(input, str) else "", main)


def capability(interaction: object) -> MeadCapability:
    """The capability that asks ``interaction`` around every tool call of a run of your own.

    Each run is one turn of the interaction. In a notebook, await the run in an
    async cell (``await agent.run(...)``); ``agent.run_sync`` cannot run there.
    """
    return MeadCapability(interaction)


async def _ask_user(
    ctx: RunContext[Any], prompt: str, options: list[AskUserOption], multiple: bool = False
) -> str:
    arguments = ask_user_arguments(prompt, options, multiple)
    session = active_turn.get()
    if session is None:
        raise CallDeferred(metadata=arguments, kind="question")
    content, is_error = await session.call(
        ask_user.ask, session.driver, ctx.tool_call_id or "", arguments
    )
    if is_error:
        raise ToolFailed(content)
    return content


def ask_user_tool() -> Tool[Any]:
    """The ``ask_user`` tool: a multiple-choice question the person answers in the widget.

    Under ``run``/``arun``/``start`` or ``capability`` the question goes to
    ``ask_choice``; elsewhere it defers as a pydantic-ai question
    (``CallDeferred(kind='question')``) for your own code to answer.
    """
    return Tool(
        _ask_user,
        takes_ctx=True,
        name=ask_user.ASK_USER,
        description=ask_user.ASK_USER_SPEC["description"],
        metadata={ASK_USER_MARK: True},
    )
