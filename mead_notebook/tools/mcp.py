"""MCP servers as tool sources: their tools, offered to the model and run by the router.

The MCP SDK is async and the router is not: each open server has a thread of
its own running an asyncio loop, where one task holds the connection and each
tool call runs as a further task while the tool's thread blocks on it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import shlex
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from pathlib import Path
from typing import IO, Any

from ..calls import Call
from ..errors import MCPServerError, MCPToolError, ToolArgumentError
from ..interaction import ToolClass
from .base import Tool

try:
    import httpx2
    import jsonschema
    import mcp_types
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError
except ImportError:  # pragma: no cover - depends on the installed extras
    raise ImportError("MCPServer needs the mcp extra: pip install 'mead-notebook[mcp]'") from None

__all__ = ["MCPServer", "MCPServerError", "MCPTool", "MCPToolError"]

CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
CLOSE_TIMEOUT = 10.0
"""The longest ``close()`` waits for the server to shut down (seconds)."""
STDERR_TAIL = 1500
STDERR_LINES = 8
"""How much of a stdio server's stderr goes into an error message (characters, lines)."""
_MAX_PAGES = 100

Connector = Callable[[AsyncExitStack], Awaitable[AbstractAsyncContextManager[Any]]]
"""Opens an MCP transport, entering what it needs (an HTTP client) onto the stack."""


_TIMEOUTS = (TimeoutError, asyncio.TimeoutError, concurrent.futures.TimeoutError)


class MCPServer:
    """An MCP server whose tools the router offers: ``MCPServer.stdio(...)`` or ``.http(...)``.

    ``open()`` starts (or connects to) the server within ``timeout`` seconds and
    lists its tools; ``close()`` shuts it down. A tool is class ``read`` only
    when the server is ``trusted`` and annotates it ``readOnlyHint: true``
    (annotations are hints from the server); every other tool is ``effect``.
    Each call is bounded by ``call_timeout`` seconds (the router's own tool
    timeout applies too).
    """

    def __init__(
        self,
        name: str,
        transport: Connector,
        *,
        description: str,
        trusted: bool = False,
        timeout: float = 30.0,
        call_timeout: float = 300.0,
        stderr: bool = False,
    ) -> None:
        """Prefer ``MCPServer.stdio`` and ``MCPServer.http``.

        ``transport`` opens the MCP transport, entering what it needs onto the
        given exit stack; ``stderr`` keeps the server's stderr for error messages.
        """
        if not isinstance(name, str) or not name.strip():
            raise ValueError("an MCP server needs a non-empty name")
        if timeout <= 0 or call_timeout <= 0:
            raise ValueError("timeout and call_timeout must be positive (seconds)")
        self.name = name
        self.description = description
        self.trusted = bool(trusted)
        self.timeout = float(timeout)
        self.call_timeout = float(call_timeout)
        self._transport = transport
        self._keep_stderr = stderr
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._session: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._client: Client | None = None
        self._ended: str | None = None
        self._tools: list[MCPTool] = []
        self._stderr: IO[bytes] | None = None

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        name: str,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        trusted: bool = False,
        timeout: float = 30.0,
        call_timeout: float = 300.0,
    ) -> MCPServer:
        """A server run as a subprocess speaking MCP over its stdin and stdout.

        The process gets a minimal environment (``PATH``, ``HOME``, ...) plus ``env``.
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
        server: MCPServer

        async def transport(stack: AsyncExitStack) -> AbstractAsyncContextManager[Any]:
            errlog = server._stderr if server._stderr is not None else sys.stderr
            return stdio_client(params, errlog=errlog)  # type: ignore[arg-type]

        server = cls(
            name,
            transport,
            description=shlex.join([command, *params.args]),
            trusted=trusted,
            timeout=timeout,
            call_timeout=call_timeout,
            stderr=True,
        )
        return server

    @classmethod
    def http(
        cls,
        url: str,
        *,
        name: str,
        headers: Mapping[str, str] | None = None,
        trusted: bool = False,
        timeout: float = 30.0,
        call_timeout: float = 300.0,
    ) -> MCPServer:
        """A server reached over streamable HTTP at ``url`` (e.g. ``http://host:8000/mcp``)."""
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

        return cls(
            name,
            transport,
            description=url,
            trusted=trusted,
            timeout=timeout,
            call_timeout=call_timeout,
        )

    def __repr__(self) -> str:
        state = "open" if self.running else "closed"
        return f"<MCPServer {self.name!r} ({self.description}) {state}>"

    def __enter__(self) -> MCPServer:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        """Whether the server is connected and has not ended."""
        return self._client is not None and self._ended is None

    @property
    def tools(self) -> list[MCPTool]:
        """The tools listed by the last ``open()``."""
        return list(self._tools)

    # -- lifecycle ----------------------------------------------------------------

    def open(self) -> list[Tool]:
        """Start or connect to the server and list its tools; a clear error if it cannot."""
        with self._lock:
            if self.running:
                return list(self._tools)
            self._shutdown()
            if self._keep_stderr and self._stderr is None:
                self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name=f"mcp-{self.name}", daemon=True)
            thread.start()
            self._loop, self._thread, self._ended = loop, thread, None
            started = asyncio.run_coroutine_threadsafe(self._start(), loop)
            try:
                listed = started.result(self.timeout + CLOSE_TIMEOUT)
            except BaseException as exc:
                started.cancel()
                if not isinstance(exc, Exception):
                    self._shutdown()
                    raise
                error = self._start_error(exc)
                self._shutdown()
                raise error from _leaf(exc)
            self._tools = [self._make_tool(t) for t in listed]
            return list(self._tools)

    def close(self) -> None:
        """Shut the server down (bounded by ``CLOSE_TIMEOUT``); safe to call twice."""
        with self._lock:
            self._shutdown()

    def _shutdown(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if not loop.is_closed() and thread.is_alive():
            stopping = asyncio.run_coroutine_threadsafe(self._stop_session(), loop)
            try:
                stopping.result(CLOSE_TIMEOUT)
            except BaseException:
                stopping.cancel()
            loop.call_soon_threadsafe(loop.stop)
            thread.join(CLOSE_TIMEOUT)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = self._session = self._stop = None
        self._client = None
        self._ended = self._ended or "the server was closed"
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def _start(self) -> list[mcp_types.Tool]:
        self._stop = asyncio.Event()
        ready: asyncio.Future[list[mcp_types.Tool]] = asyncio.get_running_loop().create_future()
        self._session = asyncio.create_task(self._hold(ready))
        try:
            return await asyncio.wait_for(asyncio.shield(ready), self.timeout)
        except BaseException:
            self._session.cancel()
            await asyncio.wait({self._session}, timeout=CLOSE_TIMEOUT)
            raise

    async def _hold(self, ready: asyncio.Future[list[mcp_types.Tool]]) -> None:
        """Hold the connection open until ``close()``: one task enters and leaves it."""
        try:
            async with AsyncExitStack() as stack:
                transport = await self._transport(stack)
                client = Client(transport, read_timeout_seconds=self.timeout)
                await stack.enter_async_context(client)
                listed = await self._list_tools(client)
                self._client = client
                if not ready.done():
                    ready.set_result(listed)
                stop = self._stop
                if stop is None:
                    raise MCPServerError(
                        f"{self.name}: the server was started without a stop event"
                    )
                await stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            self._ended = f"the connection ended: {_describe(exc)}"
        finally:
            self._client = None
            self._ended = self._ended or "the connection ended"

    async def _stop_session(self) -> None:
        loop = asyncio.get_running_loop()
        current = asyncio.current_task()
        for task in asyncio.all_tasks(loop):
            if task is not current and task is not self._session:
                task.cancel()
        if self._stop is not None:
            self._stop.set()
        if self._session is not None and not self._session.done():
            done, _ = await asyncio.wait({self._session}, timeout=CLOSE_TIMEOUT - 1.0)
            if not done:
                self._session.cancel()
                await asyncio.wait({self._session}, timeout=1.0)

    @staticmethod
    async def _list_tools(client: Client) -> list[mcp_types.Tool]:
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    def _make_tool(self, listed: mcp_types.Tool) -> MCPTool:
        hints = listed.annotations
        read_only = bool(hints is not None and hints.read_only_hint is True)
        return MCPTool(
            self,
            name=listed.name,
            description=listed.description or "",
            parameters=dict(listed.input_schema or {"type": "object"}),
            tool_class="read" if self.trusted and read_only else "effect",
        )

    def _start_error(self, exc: BaseException) -> MCPServerError:
        leaf = _leaf(exc)
        where = f"MCP server {self.name!r} ({self.description})"
        if isinstance(leaf, FileNotFoundError):
            message = f"could not start {where}: the command was not found"
        elif isinstance(leaf, PermissionError):
            message = f"could not start {where}: the command is not executable"
        elif isinstance(leaf, _TIMEOUTS) or (
            isinstance(leaf, MCPError) and leaf.code == REQUEST_TIMEOUT
        ):
            message = f"{where} did not answer the MCP handshake within {self.timeout:g} s"
        elif isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED:
            message = f"{where} closed the connection during startup (it exited or crashed)"
        elif isinstance(leaf, (asyncio.CancelledError, concurrent.futures.CancelledError)):
            message = f"starting {where} was cancelled"
        else:
            message = f"could not start {where}: {_describe(leaf)}"
        return MCPServerError(message + self._stderr_tail())

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            size = os.fstat(self._stderr.fileno()).st_size
            start = max(0, size - STDERR_TAIL)
            data = os.pread(self._stderr.fileno(), size - start, start)
        except (OSError, ValueError):
            return ""
        lines = data.decode("utf-8", "replace").strip().splitlines()[-STDERR_LINES:]
        text = "\n".join(lines).strip()
        return f"\nits stderr ends with:\n{text}" if text else ""

    # -- calls --------------------------------------------------------------------

    def _call(self, tool: str, arguments: dict[str, Any], call: Call) -> Any:
        loop, client = self._loop, self._client
        if loop is None or client is None or self._ended is not None:
            reason = self._ended or "it is not open"
            raise MCPToolError(f"MCP server {self.name!r} cannot run {tool}: {reason}")

        async def report(progress: float, total: float | None, message: str | None) -> None:
            call.progress(progress / total if total else None, message)

        future = asyncio.run_coroutine_threadsafe(
            client.call_tool(
                tool, arguments, read_timeout_seconds=self.call_timeout, progress_callback=report
            ),
            loop,
        )
        call.on_cancel(lambda: _cancel(future))
        try:
            result = future.result(self.call_timeout + CLOSE_TIMEOUT)
        except concurrent.futures.CancelledError:
            raise MCPToolError(f"the call to {tool} was cancelled") from None
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise MCPToolError(
                f"MCP server {self.name!r} did not answer {tool} within {self.call_timeout:g} s"
            ) from None
        except MCPError as exc:
            raise self._call_error(tool, exc) from exc
        except Exception as exc:
            raise MCPToolError(
                f"MCP server {self.name!r} failed on {tool}: {_describe(_leaf(exc))}"
            ) from exc
        if result.is_error:
            raise MCPToolError(_result_text(result.content) or f"{tool} reported an error")
        if result.structured_content is not None:
            return json.dumps(result.structured_content, ensure_ascii=False, default=str)
        return _result_text(result.content)

    def _call_error(self, tool: str, exc: MCPError) -> MCPToolError:
        if exc.code == CONNECTION_CLOSED:
            self._ended = "the server closed the connection (it exited or crashed)"
            return MCPToolError(
                f"MCP server {self.name!r} closed the connection during {tool} "
                f"(it exited or crashed){self._stderr_tail()}"
            )
        if exc.code == REQUEST_TIMEOUT:
            return MCPToolError(
                f"MCP server {self.name!r} did not answer {tool} within {self.call_timeout:g} s"
            )
        return MCPToolError(f"MCP server {self.name!r} rejected {tool}: {exc.message}")


class MCPTool:
    """One tool of an MCP server; arguments are checked against its JSON schema."""

    def __init__(
        self,
        server: MCPServer,
        *,
        name: str,
        description: str,
        parameters: dict[str, Any],
        tool_class: ToolClass,
    ) -> None:
        self.name = name
        self.description = description
        self.server = server.name
        self.tool_class: ToolClass = tool_class
        self.parameters = parameters
        self._owner = server
        self._schema_problem: str | None = None
        cls = jsonschema.validators.validator_for(
            parameters, default=jsonschema.Draft202012Validator
        )
        try:
            cls.check_schema(parameters)
        except jsonschema.SchemaError as exc:
            self._schema_problem = exc.message
        self._validator = cls(parameters)

    def __repr__(self) -> str:
        return f"<MCP tool {self.name} of {self.server} ({self.tool_class})>"

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Check the arguments against the tool's input schema (``ToolArgumentError`` if not)."""
        if self._schema_problem is not None:
            raise ToolArgumentError(
                f"the server's input schema for {self.name} is invalid: {self._schema_problem}"
            )
        if not isinstance(arguments, dict):
            raise ToolArgumentError(f"arguments must be an object, not {type(arguments).__name__}")
        errors = sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.path))
        if errors:
            raise ToolArgumentError(
                "; ".join(
                    f"{'.'.join(str(p) for p in e.path) or '(arguments)'}: {e.message}"
                    for e in errors
                )
            )
        return dict(arguments)

    def invoke(self, arguments: dict[str, Any], call: Call) -> Any:
        """Run the call on the server and wait for its result (progress goes to ``call``)."""
        return self._owner._call(self.name, arguments, call)


def _result_text(content: Sequence[Any]) -> str:
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


def _cancel(future: concurrent.futures.Future[Any]) -> None:
    future.cancel()


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside nested exception groups."""
    seen = 0
    while seen < 20:
        inner = getattr(exc, "exceptions", None)
        if not inner:
            return exc
        exc = inner[0]
        seen += 1
    return exc


def _describe(exc: BaseException) -> str:
    leaf = _leaf(exc)
    if isinstance(leaf, MCPError):
        return leaf.message
    text = str(leaf).strip()
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__
