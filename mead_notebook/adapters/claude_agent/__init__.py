"""Run Claude Code (the Claude Agent SDK) under an interaction (``mead-notebook[claude-agent]``).

::

    from claude_agent_sdk import ClaudeAgentOptions
    from mead_notebook import NotebookInteraction
    from mead_notebook.adapters import claude_agent

    result = claude_agent.run(ClaudeAgentOptions(cwd="repo/"), "Fix the test",
                              interaction=NotebookInteraction())
    result.output   # every message the client received (the last one is its ResultMessage)
    result.text     # the streamed answer; result.thoughts, result.plan
    result.calls    # a CallRecord per tool call

Every call asks through the interaction, those Claude Code's own rules would run
without asking included (a ``PreToolUse`` hook answers ``ask``); the
interaction's policy decides what reaches the person. A denial's message
reaches the model verbatim; edited arguments are the approved input.
``AskUserQuestion`` becomes the widget's questions. Cancel on a card interrupts
the whole turn (Claude Code cannot stop one of its tools alone); a kernel
interrupt interrupts the client and ends the CLI process within
``TEARDOWN_TIMEOUT`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from typing import Any

from ..base import AgentResult, missing_extra

try:
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, HookMatcher, ResultMessage
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(missing_extra("claude_agent", "claude-agent")) from exc

from mead_notebook.turn import Turn

from ..base import Session
from ._gate import Gate, call_soon

__all__ = ["TEARDOWN_TIMEOUT", "AgentResult", "arun", "run", "start"]

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

TEARDOWN_TIMEOUT = 5.0
"""How long an interrupted turn waits for the CLI to stop before it is killed (seconds)."""


def run(
    options: ClaudeAgentOptions | None, prompt: str, *, interaction: object = None
) -> AgentResult:
    """Run one Claude Code turn on ``prompt`` and wait for it.

    A kernel interrupt stops the turn and propagates; a failed run raises
    ``TurnError`` (its ``result`` holds what the run produced).
    """
    return start(options, prompt, interaction=interaction).result()


async def arun(
    options: ClaudeAgentOptions | None, prompt: str, *, interaction: object = None
) -> AgentResult:
    """Run one turn in its own thread and await it (for async cells)."""
    return await start(options, prompt, interaction=interaction)


def start(
    options: ClaudeAgentOptions | None, prompt: str, *, interaction: object = None
) -> Turn[AgentResult]:
    """Start one turn in a thread of its own and return its handle at once."""
    given = options if options is not None else ClaudeAgentOptions()
    if not isinstance(given, ClaudeAgentOptions):
        raise TypeError(f"run, arun and start take ClaudeAgentOptions, not {type(given).__name__}")
    result = AgentResult()
    session = Session(interaction, result)
    client_box: list[ClaudeSDKClient] = []
    pending: set[asyncio.Future[Any]] = set()

    def interrupt() -> None:
        if client_box:
            task = asyncio.ensure_future(client_box[0].interrupt())
            pending.add(task)
            task.add_done_callback(pending.discard)

    cwd = str(given.cwd) if given.cwd is not None else None

    async def main() -> AgentResult:
        gate = Gate(session, cwd, call_soon(asyncio.get_running_loop(), interrupt))
        hooks = dict(given.hooks or {})
        hooks["PreToolUse"] = [*hooks.get("PreToolUse", ()), HookMatcher(hooks=[gate.pre_tool_use])]
        client = ClaudeSDKClient(
            dataclasses.replace(
                given, can_use_tool=gate.can_use_tool, include_partial_messages=True, hooks=hooks
            )
        )
        client_box.append(client)
        messages: list[Any] = []
        result.output = messages
        await client.connect()
        try:
            await client.query(prompt)
            async for message in client.receive_response():
                messages.append(message)
                gate.on(message)
                if isinstance(message, ResultMessage):
                    result.stop_reason = gate.ended(message)
            result.rounds = gate.rounds
            return result
        except BaseException:
            if session.cancelled.is_set():
                result.stop_reason = "interrupted"
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(client.interrupt(), TEARDOWN_TIMEOUT / 2)
                await _teardown(client)
                return result
            raise
        finally:
            await _teardown(client)

    return session.turn(prompt, main)


async def _teardown(client: ClaudeSDKClient) -> None:
    """Disconnect within a bound; a CLI process still alive then is killed."""
    process = getattr(getattr(client, "_transport", None), "_process", None)
    try:
        await asyncio.wait_for(client.disconnect(), TEARDOWN_TIMEOUT)
    except BaseException:
        log.debug("the Claude CLI did not disconnect in time", exc_info=True)
    if process is not None and getattr(process, "returncode", 0) is None:
        with contextlib.suppress(ProcessLookupError, OSError):
            process.kill()
