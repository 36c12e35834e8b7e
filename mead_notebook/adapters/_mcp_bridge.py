"""The stdio bridge to the kernel's tool server, for an agent that speaks MCP over stdio only.

The agent starts ``python -m mead_notebook.adapters._mcp_bridge URL`` as an MCP
server (``session/new``'s ``mcpServers``, with the token in the environment
variable :data:`TOKEN_VARIABLE`). The bridge forwards every MCP message from
its stdin to the kernel's server (:mod:`mead_notebook.adapters.acp._tool_server`)
over streamable HTTP with the token, and every answer back to its stdout; it
ends when the agent
closes its stdin or the server goes away. It decides nothing: the gate is the
kernel's. It lives outside the ``acp`` package so that it starts without the ACP SDK.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio
import httpx2
from anyio.abc import TaskGroup
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server

__all__ = ["CALL_TIMEOUT", "HOST", "TOKEN_HEADER", "TOKEN_VARIABLE", "command", "main"]

HOST = "127.0.0.1"
"""The only address the kernel's tool server listens on, and the only one the bridge reaches."""
TOKEN_HEADER = "Authorization"
"""The header that carries ``Bearer <token>`` to the kernel's tool server."""
TOKEN_VARIABLE = "MEAD_TOOL_SERVER_TOKEN"
"""The environment variable that carries the tool server's token to the bridge."""
CALL_TIMEOUT = 3600.0
"""How long the bridge waits for one answer of the kernel (seconds): a call waits for the
person's Allow, and the agent bounds its calls itself."""


def command(url: str) -> list[str]:
    """The command line that starts the bridge to ``url`` with this interpreter."""
    return [sys.executable, "-m", __name__, url]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bridge to ``URL`` (``http://127.0.0.1:PORT/mcp``), the token in its variable."""
    args = list(sys.argv[1:] if argv is None else argv)
    token = os.environ.get(TOKEN_VARIABLE, "")
    if len(args) != 1 or not token:
        sys.stderr.write(f"usage: {TOKEN_VARIABLE}=... python -m {__name__} URL\n")
        return 2
    url = args[0]
    if not url.startswith(f"http://{HOST}:"):
        sys.stderr.write(f"the bridge reaches the kernel on {HOST} only, not {url!r}\n")
        return 2
    anyio.run(_bridge, url, token)
    return 0


async def _bridge(url: str, token: str) -> None:
    timeout = httpx2.Timeout(10.0, read=CALL_TIMEOUT)
    async with (
        httpx2.AsyncClient(headers={TOKEN_HEADER: f"Bearer {token}"}, timeout=timeout) as http,
        stdio_server() as (from_agent, to_agent),
        streamable_http_client(url, http_client=http) as (from_kernel, to_kernel),
        anyio.create_task_group() as group,
    ):
        group.start_soon(_pump, from_agent, to_kernel, group)
        group.start_soon(_pump, from_kernel, to_agent, group)


async def _pump(source: Any, sink: Any, group: TaskGroup) -> None:
    """Forward messages until ``source`` ends, then end the bridge (unreadable ones dropped)."""
    try:
        async for message in source:
            if isinstance(message, Exception):
                sys.stderr.write(f"dropped a message that is not MCP: {message}\n")
                continue
            await sink.send(message)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    group.cancel_scope.cancel()


if __name__ == "__main__":
    sys.exit(main())
