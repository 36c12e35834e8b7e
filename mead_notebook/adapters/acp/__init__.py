"""Any ACP agent under the widget: Claude Code, Codex, Gemini CLI, OpenCode, Qwen Code, GitHub
Copilot CLI, Cline (``mead-notebook[acp]``).

::

    from mead_notebook import NotebookInteraction
    from mead_notebook.adapters import acp

    agent = acp.agent("claude")  # or "codex", "gemini", "opencode", "qwen", "copilot", "cline"
    result = acp.run(agent, "Make the failing test pass",
                     interaction=NotebookInteraction(), cwd="repo/")
    result.text, result.calls, result.stop_reason

``run`` blocks a cell, ``await arun(...)`` an async one, ``start`` returns a
``Turn`` at once; each starts the agent, runs one turn and ends the agent.
``session(agent, cwd=)`` keeps one agent and one ACP session across cells
(``session.run(prompt, interaction=)`` is one turn; ``session.close()``, or the
interpreter's exit, ends it). ``session.options`` are the agent's config options
(model, mode, reasoning level, ...), ``session.configure(model=..., mode=...)`` sets
them; ``session.commands`` its slash commands; ``session.usage`` and
``result.usage`` its context usage and cost, also on the turn's header.

Every tool call the agent reports is a card that shows its kind, its diff or
command and its files before anyone decides. ACP cannot carry edited arguments
or a denial message, so requests say ``editable: False``. Allow answers the
agent's allow-once option, Deny its reject-once; a question that expired or was
interrupted answers ``cancelled``. A call the agent ran under its own rules says
``decided_by: "agent"``; with ``strict=True`` one that may change something
stops the turn. ACP has no per-call cancel: a card's Cancel cancels the agent's
whole turn (``session/cancel``). A kernel interrupt cancels the turn and kills
the agent's whole process group. The turn's header names the agent, its mode,
its sandbox and the settings it loaded (:class:`~mead_notebook.AgentInfo`).

``tools=kernel_tools()`` (or any of the package's own tools) serves them to
the agent over MCP from inside the kernel, as the server ``mead`` given at
``session/new``: over HTTP on 127.0.0.1 with a random token in a header, or
through a stdio bridge the agent starts when it speaks MCP over stdio only.
The token reaches no prompt, card, transcript or audit; the server closes with
the session (or the kernel). The gate is here: each call that reaches the
server is a card (kind, preview), asked once: on the agent's own permission
request when it asks first (its Allow holds for exactly that one call), else
when the call arrives. A call runs in the kernel; its card's Cancel stops it
alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from mead_notebook.adapters.base import missing_extra

try:
    import acp as _sdk  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(missing_extra("acp", "acp")) from exc

from mead_notebook.turn import Turn

from ._controls import Command, OptionError, OptionValue, SessionOption, Usage
from ._conversation import AcpResult, AgentError, Conversation
from ._presets import (
    PRESETS,
    AgentNotFoundError,
    AgentSpec,
    ProjectSettingsError,
    SandboxError,
    Settings,
    agent,
    scripted_agent,
)
from ._sessions import SessionEntry, list_sessions

__all__ = [
    "PRESETS",
    "AcpResult",
    "AgentError",
    "AgentNotFoundError",
    "AgentSpec",
    "Command",
    "Conversation",
    "OptionError",
    "OptionValue",
    "ProjectSettingsError",
    "SandboxError",
    "SessionEntry",
    "SessionOption",
    "Settings",
    "Usage",
    "agent",
    "arun",
    "run",
    "scripted_agent",
    "session",
    "sessions",
    "start",
]


def run(
    agent: AgentSpec,
    prompt: str,
    *,
    interaction: object,
    cwd: str | os.PathLike[str] | None = None,
    strict: bool = False,
    tools: Iterable[object] | None = None,
) -> AcpResult:
    """Start ``agent`` in ``cwd`` (default: the current directory), run one turn, end it.

    A kernel interrupt stops the agent and propagates; an agent that fails raises
    ``TurnError`` (its ``result`` holds what the turn produced). ``strict``: a call
    that may change something, run by the agent without asking, stops the turn.
    ``tools``: the package's own tools (``kernel_tools()``, ``@tool`` functions),
    served to the agent over MCP from this kernel; each call is a card here.
    """
    return start(
        agent, prompt, interaction=interaction, cwd=cwd, strict=strict, tools=tools
    ).result()


async def arun(
    agent: AgentSpec,
    prompt: str,
    *,
    interaction: object,
    cwd: str | os.PathLike[str] | None = None,
    strict: bool = False,
    tools: Iterable[object] | None = None,
) -> AcpResult:
    """As :func:`run`, awaited (for async cells)."""
    return await start(agent, prompt, interaction=interaction, cwd=cwd, strict=strict, tools=tools)


def start(
    agent: AgentSpec,
    prompt: str,
    *,
    interaction: object,
    cwd: str | os.PathLike[str] | None = None,
    strict: bool = False,
    tools: Iterable[object] | None = None,
) -> Turn[AcpResult]:
    """As :func:`run`, in a thread of its own: returns the turn's handle at once."""
    _check(agent)
    conversation = Conversation(agent, cwd, strict=strict, tools=tools)
    return conversation.start(prompt, interaction=interaction, close_after=True)


def session(
    agent: AgentSpec,
    *,
    cwd: str | os.PathLike[str] | None = None,
    strict: bool = False,
    tools: Iterable[object] | None = None,
    resume: str | None = None,
) -> Conversation:
    """One agent and one ACP session for several turns (``.run``, ``.arun``, ``.start``).

    ``tools`` are served to the agent for as long as the session lives. ``resume`` is the
    ``.id`` of an earlier session (another kernel's): the first turn continues it, or
    fails saying why; it never starts a new session instead.
    """
    _check(agent)
    return Conversation(agent, cwd, strict=strict, tools=tools, resume=resume)


def sessions(agent: AgentSpec, *, cwd: str | os.PathLike[str] | None = None) -> list[SessionEntry]:
    """The agent's earlier sessions in ``cwd`` (``session/list``): each one's ``id`` (for
    ``session(..., resume=id)``), title and time of its last change. The agent runs for the
    question alone; one that does not list its sessions raises :class:`AgentError`."""
    _check(agent)
    return list_sessions(agent, cwd)


def _check(agent: Any) -> None:
    if not isinstance(agent, AgentSpec):
        raise TypeError(f"expected an agent from acp.agent(...), not {type(agent).__name__}")
