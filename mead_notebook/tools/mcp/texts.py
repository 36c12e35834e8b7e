"""What went wrong with an MCP server or call, in words a person can act on."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcp.shared.exceptions import MCPError

from ...errors import MCPServerError, MCPToolError

if TYPE_CHECKING:
    from .server import MCPServer

__all__ = ["call_error", "describe", "leaf", "result_text", "start_error", "stderr_tail"]

CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
STDERR_TAIL = 1500
STDERR_LINES = 8
"""How much of a stdio server's stderr goes into an error message (characters, lines)."""
_TIMEOUTS = (TimeoutError, asyncio.TimeoutError, concurrent.futures.TimeoutError)


def start_error(server: MCPServer, exc: BaseException) -> MCPServerError:
    """The error ``open()`` raises: what went wrong, in words, with the stderr tail."""
    inner = leaf(exc)
    where = f"MCP server {server.name!r} ({server.description})"
    if isinstance(inner, FileNotFoundError):
        message = f"could not start {where}: the command was not found"
    elif isinstance(inner, PermissionError):
        message = f"could not start {where}: the command is not executable"
    elif isinstance(inner, _TIMEOUTS) or (
        isinstance(inner, MCPError) and inner.code == REQUEST_TIMEOUT
    ):
        message = f"{where} did not answer the MCP handshake within {server.timeout:g} s"
    elif isinstance(inner, MCPError) and inner.code == CONNECTION_CLOSED:
        message = f"{where} closed the connection during startup (it exited or crashed)"
    elif isinstance(inner, (asyncio.CancelledError, concurrent.futures.CancelledError)):
        message = f"starting {where} was cancelled"
    else:
        message = f"could not start {where}: {describe(inner)}"
    return MCPServerError(message + stderr_tail(server))


def stderr_tail(server: MCPServer) -> str:
    """The last lines a stdio server wrote to stderr, for an error message."""
    if server._stderr is None:
        return ""
    try:
        size = os.fstat(server._stderr.fileno()).st_size
        start = max(0, size - STDERR_TAIL)
        data = os.pread(server._stderr.fileno(), size - start, start)
    except (OSError, ValueError):
        return ""
    lines = data.decode("utf-8", "replace").strip().splitlines()[-STDERR_LINES:]
    text = "\n".join(lines).strip()
    return f"\nits stderr ends with:\n{text}" if text else ""


def call_error(server: MCPServer, tool: str, exc: MCPError) -> MCPToolError:
    """The error a failed call raises (a closed connection also ends the server)."""
    if exc.code == CONNECTION_CLOSED:
        server._ended = "the server closed the connection (it exited or crashed)"
        return MCPToolError(
            f"MCP server {server.name!r} closed the connection during {tool} "
            f"(it exited or crashed){stderr_tail(server)}"
        )
    if exc.code == REQUEST_TIMEOUT:
        return MCPToolError(
            f"MCP server {server.name!r} did not answer {tool} within {server.call_timeout:g} s"
        )
    return MCPToolError(f"MCP server {server.name!r} rejected {tool}: {exc.message}")


def result_text(content: Sequence[Any]) -> str:
    """An MCP result's content blocks as the text a model receives."""
    parts: list[str] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} {getattr(block, 'mime_type', '')}]".replace(" ]", "]"))
        elif kind == "resource_link":
            parts.append(f"[resource {block.uri}]")
        elif kind == "resource":
            text = getattr(block.resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource {block.resource.uri}]")
        else:
            parts.append(f"[{kind} content]")
    return "\n".join(parts)


def leaf(exc: BaseException) -> BaseException:
    """The first real error inside nested exception groups."""
    seen = 0
    while seen < 20:
        inner = getattr(exc, "exceptions", None)
        if not inner:
            return exc
        exc = inner[0]
        seen += 1
    return exc


def describe(exc: BaseException) -> str:
    inner = leaf(exc)
    if isinstance(inner, MCPError):
        return inner.message
    text = str(inner).strip()
    return f"{type(inner).__name__}: {text}" if text else type(inner).__name__
