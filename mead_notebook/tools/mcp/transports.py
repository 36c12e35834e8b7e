"""How an MCP server is reached: a subprocess over stdio, or streamable HTTP."""

from __future__ import annotations

import os
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from typing import IO, Any

import httpx2
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

__all__ = ["Connector", "http_transport", "stdio_transport"]

Connector = Callable[[AsyncExitStack], Awaitable[AbstractAsyncContextManager[Any]]]
"""Opens an MCP transport, entering what it needs (an HTTP client) onto the stack."""


def stdio_transport(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    errlog: Callable[[], IO[Any]],
) -> tuple[Connector, str]:
    """A subprocess speaking MCP over stdin and stdout, and its description.

    The process gets a minimal environment (``PATH``, ``HOME``, ...) plus ``env``;
    its stderr goes to ``errlog()`` (looked up when it starts).
    """
    if not isinstance(command, str) or not command.strip():
        raise ValueError("command must be a non-empty program name or path")
    if isinstance(args, str):
        raise TypeError("args must be a sequence of strings, not one string")
    params = StdioServerParameters(
        command=command,
        args=[str(a) for a in args],
        env=dict(env) if env else None,
        cwd=Path(cwd) if cwd is not None else None,
    )

    async def transport(stack: AsyncExitStack) -> AbstractAsyncContextManager[Any]:
        return stdio_client(params, errlog=errlog())  # type: ignore[arg-type]

    return transport, shlex.join([command, *params.args])


def http_transport(
    url: str, headers: Mapping[str, str] | None, timeout: float, call_timeout: float
) -> Connector:
    """A server reached over streamable HTTP at ``url``."""
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(f"url must be an http:// or https:// URL, not {url!r}")
    fixed_headers = dict(headers or {})

    async def transport(stack: AsyncExitStack) -> AbstractAsyncContextManager[Any]:
        client = httpx2.AsyncClient(
            headers=fixed_headers,
            timeout=httpx2.Timeout(timeout, read=max(call_timeout, 300.0)),
        )
        await stack.enter_async_context(client)
        return streamable_http_client(url, http_client=client)

    return transport
