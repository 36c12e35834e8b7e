"""The agent's earlier sessions (``acp.sessions``): what ``resume=`` can continue.

The agent is started in a process of its own for the question alone and ended
after it (``session/list``, page by page).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from dataclasses import dataclass
from typing import Any, cast

import acp
from acp.schema import ClientCapabilities, Implementation

from ._client import Client
from ._conversation import START_TIMEOUT, AgentError
from ._presets import AgentSpec
from ._process import AgentProcess

__all__ = ["MAX_PAGES", "SessionEntry", "list_sessions"]

MAX_PAGES = 50
"""How many pages of ``session/list`` are read at most."""


@dataclass(frozen=True)
class SessionEntry:
    """One earlier session of the agent: its ``id`` (for ``resume=``), its folder, its title
    and when it last changed (ISO 8601), as the agent says (None: it does not say)."""

    id: str
    cwd: str
    title: str | None = None
    updated_at: str | None = None


def list_sessions(
    spec: AgentSpec, cwd: str | os.PathLike[str] | None, timeout: float = START_TIMEOUT
) -> list[SessionEntry]:
    """The sessions ``spec``'s agent lists for ``cwd`` (default: the current directory);
    :class:`AgentError` when it lists none (no ``session/list``) or does not answer within
    ``timeout`` seconds."""
    folder = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
    if not os.path.isdir(folder):
        raise NotADirectoryError(f"cwd {folder!r} is not a directory")
    command = spec.command_in(folder)
    # A loop of its own in a thread of its own: a kernel's main thread runs one already.
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mead-acp-list") as pool:
        asked = pool.submit(asyncio.run, _listed(spec, command, folder, timeout))
        return asked.result()


async def _listed(
    spec: AgentSpec, command: tuple[str, ...], folder: str, timeout: float
) -> list[SessionEntry]:
    process = await AgentProcess.spawn(spec.name, command, spec.environment(), folder)
    try:
        return await asyncio.wait_for(_ask(spec, process, folder), timeout)
    except asyncio.TimeoutError:
        raise AgentError(f"{spec.name} did not list its sessions within {timeout} s") from None
    finally:
        await process.kill()


async def _ask(spec: AgentSpec, process: AgentProcess, folder: str) -> list[SessionEntry]:
    from mead_notebook import __version__

    assert process.proc.stdin is not None
    conn: Any = acp.connect_to_agent(
        cast(Any, Client(spec.name)),
        process.proc.stdin,
        process.stdout,
        use_unstable_protocol=True,
    )
    initialized = await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=ClientCapabilities(terminal=False),
        client_info=Implementation(name="mead-notebook", version=__version__),
    )
    capabilities = initialized.agent_capabilities
    offered = capabilities.session_capabilities if capabilities is not None else None
    if offered is None or offered.list is None:
        raise AgentError(f"{spec.name} does not list its sessions (no session/list)")
    found: list[SessionEntry] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await conn.list_sessions(cwd=folder, cursor=cursor)
        found += [
            SessionEntry(str(s.session_id), s.cwd, s.title, s.updated_at) for s in page.sessions
        ]
        cursor = page.next_cursor
        if not cursor:
            break
    return found
