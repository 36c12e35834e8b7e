"""``MCPServer``: an MCP server as a tool source, its connection held in a thread of its own.

The MCP SDK is async and the router is not: each open server has a thread of
its own running an asyncio loop, where one task holds the connection and each
tool call runs as a further task while the tool's thread blocks on it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from typing import IO, Any

import mcp_types
from mcp import Client
from mcp.shared.exceptions import MCPError

from ...calls import Call
from ...errors import MCPServerError, MCPToolError
from ..base import Tool
from ..trust import kind_from_hints
from .texts import call_error, describe, leaf, result_text, start_error
from .tool import MCPTool
from .transports import Connector, http_transport, stdio_transport

__all__ = ["MCPServer", "kind_from_hints"]

CLOSE_TIMEOUT = 10.0
"""The longest ``close()`` waits for the server to shut down (seconds)."""
_MAX_PAGES = 100


class MCPServer:
    """An MCP server whose tools the router offers: ``MCPServer.stdio(...)`` or ``.http(...)``.

    ``open()`` starts (or connects to) the server within ``timeout`` seconds and
    lists its tools; ``close()`` shuts it down. A tool is class ``read`` only
    when the server is ``trusted`` and annotates it ``readOnlyHint: true``
    (annotations are hints from the server; see :mod:`mead_notebook.tools.trust`);
    every other tool is ``effect``.
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
        server: MCPServer
        transport, description = stdio_transport(
            command, args, env, cwd, lambda: server._stderr or sys.stderr
        )
        server = cls(
            name,
            transport,
            description=description,
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
        transport = http_transport(url, headers, timeout, call_timeout)
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
                error = start_error(self, exc)
                self._shutdown()
                raise error from leaf(exc)
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
            self._ended = f"the connection ended: {describe(exc)}"
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
        return MCPTool(
            self,
            name=listed.name,
            description=listed.description or "",
            parameters=dict(listed.input_schema or {"type": "object"}),
            kind=kind_from_hints(listed.annotations, trusted=self.trusted),
        )

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

        def cancel() -> None:
            future.cancel()

        call.on_cancel(cancel)
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
            raise call_error(self, tool, exc) from exc
        except Exception as exc:
            raise MCPToolError(
                f"MCP server {self.name!r} failed on {tool}: {describe(leaf(exc))}"
            ) from exc
        if result.is_error:
            raise MCPToolError(result_text(result.content) or f"{tool} reported an error")
        if result.structured_content is not None:
            return json.dumps(result.structured_content, ensure_ascii=False, default=str)
        return result_text(result.content)
