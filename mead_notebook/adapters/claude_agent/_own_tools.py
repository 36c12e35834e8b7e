"""The package's own tools as an in-process MCP server for Claude Code (``as_server``).

The server's tools are the package's: their schemas, and their kinds, which the
gate believes (they are the package's own, not a server's word), and their
previews on the card. Each call asks through ``can_use_tool`` like any other;
its Allow is a pass (:mod:`mead_notebook.adapters.base.passes`) for exactly that
one call of that tool with the arguments the card showed, and the tool runs
only on a pass, under ``run``/``arun``/``start`` or in a ``session``'s turn: a
call that reaches the server any other way (another argument, a second call, a
client of your own) is refused and nothing runs. The tool runs with the card's
``Call`` (Cancel stops it, and Claude Code's whole turn); the card shows what it
returned.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from claude_agent_sdk import McpSdkServerConfig, SdkMcpTool, create_sdk_mcp_server
from mcp.types import ToolAnnotations

from mead_notebook.interaction import class_of
from mead_notebook.tools import Tool, ToolOutput

from ..base import AgentTurn, active_turn
from ..base.own_tools import check, ending, invoke, kind_of, own_tools, raised, watching
from ..base.passes import Passes

__all__ = [
    "CANCELLED",
    "NOT_HERE",
    "NO_PASS",
    "OWN_SERVER",
    "STOPPED",
    "OwnServer",
    "as_server",
    "own_server",
    "passes_of",
    "session_turn",
]

OWN_SERVER = "mead"
"""The default name of the server (Claude Code calls its tools ``mcp__mead__<tool>``)."""
NOT_HERE = (
    "This tool runs only under mead_notebook's claude_agent.run/arun/start or a session's "
    "turn; nothing ran."
)
NO_PASS = "{tool} was not allowed for these arguments here; nothing ran."
CANCELLED = "Cancelled: the whole turn was stopped, and the tool with it."
STOPPED = "cancelled: the whole turn was stopped"
"""The step of a call whose card's Cancel stopped the whole turn."""


@dataclass(frozen=True)
class OwnServer:
    """The package tools behind one ``as_server`` server, by name."""

    name: str
    tools: dict[str, Tool]


_servers: weakref.WeakKeyDictionary[Any, OwnServer] = weakref.WeakKeyDictionary()
_passes: weakref.WeakKeyDictionary[AgentTurn, Passes] = weakref.WeakKeyDictionary()

session_turn: contextvars.ContextVar[Callable[[], AgentTurn | None] | None] = (
    contextvars.ContextVar("mead_claude_session_turn", default=None)
)
"""Set where a session's client connects: the turn of that session running now.

One client serves every turn of a session, and its tool calls run in the context
it connected in, so they find their turn here rather than by ``active_turn``.
"""


def as_server(tools: Iterable[object], *, name: str = OWN_SERVER) -> McpSdkServerConfig:
    """The package's own tools (``kernel_tools()``, ``@tool`` functions) as an in-process
    MCP server: ``ClaudeAgentOptions(mcp_servers={"mead": as_server(tools)})``.

    ``name`` must be the key it has in ``mcp_servers``.
    """
    own = own_tools(tools)
    sdk = [
        SdkMcpTool(
            t.name,
            t.description or t.name,
            copy.deepcopy(t.parameters),
            _handler(name, t),
            _annotations(t),
        )
        for t in own
    ]
    config = create_sdk_mcp_server(name, tools=sdk)
    _servers[config["instance"]] = OwnServer(name, {t.name: t for t in own})
    return config


def own_server(config: object) -> OwnServer | None:
    """The package tools of an ``mcp_servers`` entry made by :func:`as_server`, if it is one."""
    if not isinstance(config, Mapping) or config.get("type") != "sdk":
        return None
    try:
        return _servers.get(config.get("instance"))
    except TypeError:  # an instance that cannot be weakly referenced is not ours
        return None


def passes_of(session: AgentTurn) -> Passes:
    """The passes of ``session``'s run (made at its first use)."""
    found = _passes.get(session)
    if found is None:
        found = _passes[session] = Passes()
    return found


def _current() -> AgentTurn | None:
    """The turn a call of the server belongs to: its run's, else its session's running one
    (a session's client connects where ``active_turn`` is None)."""
    found = active_turn.get()
    if found is not None:
        return found
    running = session_turn.get()
    return running() if running is not None else None


def _annotations(tool: Tool) -> ToolAnnotations:
    kind = kind_of(tool)
    return ToolAnnotations(
        read_only_hint=class_of(kind) == "read", destructive_hint=kind == "delete"
    )


def _handler(server: str, tool: Tool) -> Any:
    name = f"mcp__{server}__{tool.name}"

    async def handle(arguments: dict[str, Any]) -> dict[str, Any]:
        session = _current()
        passes = _passes.get(session) if session is not None else None
        if session is None or passes is None:
            return _error(NOT_HERE)
        granted = passes.take(name, arguments)
        if granted is None or granted.handle is None:
            return _error(NO_PASS.format(tool=tool.name))
        record = granted.record
        valid, problem = check(tool, arguments)
        if valid is None:
            await session.call(session.fail, record, "invalid_arguments", problem or "invalid")
            return _error(problem or f"Invalid arguments for {tool.name}.")
        handle = granted.handle
        with watching() as ran:
            try:
                value = await invoke(tool, valid, handle)
            except asyncio.CancelledError:
                if handle.cancelled:
                    await session.call(session.fail, record, "cancelled", CANCELLED, step=STOPPED)
                raise
            except Exception:
                failure = raised(tool, ran)
                await session.call(
                    session.fail, record, failure.outcome, failure.text, content=failure.content
                )
                return _error(failure.text)
        if handle.cancelled:
            await session.call(session.fail, record, "cancelled", CANCELLED, step=STOPPED)
            return _error(CANCELLED)
        end = ending(ran)
        text = end.text if end is not None else ""
        content = end.content if end is not None else None
        await session.call(session.complete, record, text, content=content)
        return {"content": _blocks(text, value)}

    return handle


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "is_error": True}


def _blocks(text: str, value: Any) -> list[dict[str, Any]]:
    """What the model gets: the text, and the images of a ``ToolOutput``."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if isinstance(value, ToolOutput):
        blocks += [
            {"type": "image", "data": image["data"], "mimeType": image["mime_type"]}
            for image in value.images
        ]
    return blocks
