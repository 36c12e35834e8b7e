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

``session(options)`` keeps one Claude Code process and one conversation across
cells: ``chat.run(prompt, interaction=...)`` (``arun``, ``start``) is one turn of
it, asked as ``run`` asks; ``chat.id`` is Claude Code's id of the conversation,
and ``session(options, resume=chat.id)`` in another kernel continues it, or fails
saying why (``SessionError``): a new conversation never takes its place.
``sessions(options)`` lists the earlier conversations in ``options.cwd``.

Every call asks through the interaction, those Claude Code's own rules would run
without asking included (a ``PreToolUse`` hook answers ``ask``); the
interaction's policy decides what reaches the person. The tools of in-process
MCP servers (``create_sdk_mcp_server``) are checked against their schemas
before anyone is asked and again after an edit, and their annotations give
their kinds as far as the server is trusted: ``readOnlyHint`` makes a ``read``
tool only on a server named in ``trusted`` (``trusted={"files"}``),
``destructiveHint`` a ``delete`` tool on any (:mod:`mead_notebook.tools.trust`).
A denial's message reaches the model verbatim; edited arguments are the
approved input.
``AskUserQuestion`` becomes the widget's questions; ``ask_user_server()`` adds
the ``ask_user`` tool (give it in ``mcp_servers``). ``kinds`` says what tools do
by name, where Claude Code's own names do not (``{"mcp__files__rm": "delete"}``).
Cancel on a card interrupts
the whole turn (Claude Code cannot stop one of its tools alone); a kernel
interrupt interrupts the client and ends the CLI process within
``TEARDOWN_TIMEOUT`` seconds.

``as_server(tools)`` serves the package's own tools (``kernel_tools()``, ``@tool``
functions) to Claude Code as an in-process MCP server:
``ClaudeAgentOptions(mcp_servers={"mead": as_server(tools)})``. Their kinds are
theirs (no ``trusted`` needed), their previews are on the card, their own
validation refuses a bad call before anyone is asked; a tool runs only for the
one call its card allowed, with that card's Cancel.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from ..base import AgentResult, missing_extra

try:
    from claude_agent_sdk import (
        ClaudeAgentOptions,
        ClaudeSDKClient,
        McpSdkServerConfig,
        ResultMessage,
        create_sdk_mcp_server,
        tool,
    )
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(missing_extra("claude_agent", "claude-agent")) from exc

from mead_notebook import ask_user
from mead_notebook.interaction import ToolKind
from mead_notebook.tools.trust import trusted_servers
from mead_notebook.turn import Turn

from ..base import AgentTurn
from ._catalog import sdk_tools
from ._client import TEARDOWN_TIMEOUT, gated_client, teardown
from ._gate import ASK_USER_SERVER, Gate, call_soon
from ._listing import SessionEntry, list_conversations
from ._own_tools import OWN_SERVER, as_server, passes_of
from ._session import STOP_GRACE, Session, SessionError

__all__ = [
    "ASK_USER_SERVER",
    "OWN_SERVER",
    "STOP_GRACE",
    "TEARDOWN_TIMEOUT",
    "AgentResult",
    "Session",
    "SessionEntry",
    "SessionError",
    "arun",
    "as_server",
    "ask_user_server",
    "run",
    "session",
    "sessions",
    "start",
]

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())


def run(
    options: ClaudeAgentOptions | None,
    prompt: str,
    *,
    interaction: object,
    kinds: Mapping[str, ToolKind] | None = None,
    trusted: Iterable[str] = (),
) -> AgentResult:
    """Run one Claude Code turn on ``prompt`` and wait for it.

    A kernel interrupt stops the turn and propagates; a failed run raises
    ``TurnError`` (its ``result`` holds what the run produced).
    """
    return start(options, prompt, interaction=interaction, kinds=kinds, trusted=trusted).result()


async def arun(
    options: ClaudeAgentOptions | None,
    prompt: str,
    *,
    interaction: object,
    kinds: Mapping[str, ToolKind] | None = None,
    trusted: Iterable[str] = (),
) -> AgentResult:
    """Run one turn in its own thread and await it (for async cells)."""
    return await start(options, prompt, interaction=interaction, kinds=kinds, trusted=trusted)


def start(
    options: ClaudeAgentOptions | None,
    prompt: str,
    *,
    interaction: object,
    kinds: Mapping[str, ToolKind] | None = None,
    trusted: Iterable[str] = (),
) -> Turn[AgentResult]:
    """Start one turn in a thread of its own and return its handle at once."""
    given = _options(options)
    believed = trusted_servers(trusted)
    result = AgentResult()
    session = AgentTurn(interaction, result)
    client_box: list[ClaudeSDKClient] = []
    pending: set[asyncio.Future[Any]] = set()

    def interrupt() -> None:
        if client_box:
            task = asyncio.ensure_future(client_box[0].interrupt())
            pending.add(task)
            task.add_done_callback(pending.discard)

    cwd = str(given.cwd) if given.cwd is not None else None

    async def main() -> AgentResult:
        gate = Gate(session, cwd, call_soon(asyncio.get_running_loop(), interrupt), kinds)
        passes_of(session)  # the run's own tools run only on its passes
        gate.sdk_tools = await sdk_tools(given.mcp_servers, believed)
        client = gated_client(given, gate.can_use_tool, gate.pre_tool_use)
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
                await teardown(client)
                return result
            raise
        finally:
            await teardown(client)

    return session.turn(prompt, main)


def session(
    options: ClaudeAgentOptions | None = None,
    *,
    resume: str | None = None,
    kinds: Mapping[str, ToolKind] | None = None,
    trusted: Iterable[str] = (),
) -> Session:
    """One Claude Code process and conversation for several turns (``.run``, ``.arun``,
    ``.start``), each asked as :func:`run` asks; ``close()`` or a ``with`` block ends it.

    ``resume`` is the ``.id`` of an earlier session (another kernel's): its turns
    continue that conversation, or fail saying why (``SessionError``); a new
    conversation never takes its place. The options must leave ``resume``,
    ``continue_conversation``, ``fork_session`` and ``session_id`` unset.
    """
    return Session(_options(options), resume=resume, kinds=kinds, trusted=trusted)


def sessions(options: ClaudeAgentOptions | None = None) -> list[SessionEntry]:
    """Claude Code's earlier conversations in ``options.cwd`` (default: the current
    directory), newest first: each one's ``id`` (for ``session(..., resume=id)``), title and
    time of its last change. Read from this process's Claude config folder
    (``CLAUDE_CONFIG_DIR`` or ``~/.claude``); options whose ``env`` names another raise
    ``ValueError``."""
    return list_conversations(_options(options))


def _options(options: object) -> ClaudeAgentOptions:
    given = options if options is not None else ClaudeAgentOptions()
    if not isinstance(given, ClaudeAgentOptions):
        raise TypeError(f"claude_agent takes ClaudeAgentOptions, not {type(given).__name__}")
    return given


def ask_user_server() -> McpSdkServerConfig:
    """An in-process MCP server with the ``ask_user`` tool, for ``mcp_servers``.

    ``ClaudeAgentOptions(mcp_servers={ASK_USER_SERVER: ask_user_server()})``: the
    question is put to the person when Claude Code asks permission for the call
    (no permission card); the tool then hands the answer to the model.
    """
    spec = ask_user.ASK_USER_SPEC
    schema = {**spec["parameters"], "properties": {**spec["parameters"]["properties"]}}
    schema["properties"]["answer"] = {"type": "string", "description": "Filled in by the user."}

    @tool(ask_user.ASK_USER, spec["description"], schema)
    async def ask(arguments: dict[str, Any]) -> dict[str, Any]:
        answer = arguments.get("answer")
        if not isinstance(answer, str):
            text = "ask_user is answered only under mead_notebook's claude_agent.run/arun/start."
            return {"content": [{"type": "text", "text": text}], "is_error": True}
        return {"content": [{"type": "text", "text": answer}]}

    return create_sdk_mcp_server(ASK_USER_SERVER, tools=[ask])
