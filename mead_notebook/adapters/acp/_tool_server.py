"""The package's own tools, served to an ACP agent over MCP from inside the kernel.

A :class:`ToolServer` is an MCP server (the ``mcp`` SDK's low-level ``Server``
over streamable HTTP, stateless, JSON answers) listening on 127.0.0.1 only, at
a port of its own, on an event loop in a thread of its own. Every HTTP request
must carry the server's token (``Authorization: Bearer <token>``, a random
value made here, compared in constant time); any other request is refused
(401) before MCP reads it. The token goes to the agent in ``session/new`` (or
in the environment of the stdio bridge the agent starts, :mod:`._bridge`) and
nowhere else: not in the prompt, the cards, the transcript or the audit.

What a call does is not decided here: ``tools/call`` goes to ``on_call``
(:mod:`._served`, the gate), which answers with the call's result.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import secrets
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import mcp.types as mt
import uvicorn
from mcp.server.lowlevel import Server
from starlette.types import ASGIApp, Receive, Scope, Send

from mead_notebook.interaction import class_of
from mead_notebook.tools import Tool

from .._mcp_bridge import HOST, TOKEN_HEADER
from ..base.own_tools import kind_of

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["HOST", "PATH", "START_TIMEOUT", "STOP_TIMEOUT", "TOKEN_HEADER", "ToolServer"]

PATH = "/mcp"
START_TIMEOUT = 10.0
"""How long the server may take to start listening (seconds)."""
STOP_TIMEOUT = 3.0
"""How long closing waits for calls still open before the server's thread is left (seconds)."""

OnCall = Callable[[str, dict[str, Any]], Awaitable[mt.CallToolResult]]


class ToolServer:
    """An MCP server on 127.0.0.1 for ``tools``, whose calls go to ``on_call``.

    ``start`` returns once it listens; ``close`` stops it (open calls are
    cancelled). ``url`` and :meth:`headers` are what an agent needs to reach it.
    """

    def __init__(self, name: str, tools: Sequence[Tool], on_call: OnCall) -> None:
        self.name = name
        self.tools = {t.name: t for t in tools}
        self.on_call = on_call
        self._token = secrets.token_urlsafe(32)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        self.refused = 0
        """How many HTTP requests came without the token."""

    def __repr__(self) -> str:
        where = f"{HOST}:{self._port}" if self._port else "not listening"
        return f"<ToolServer {self.name} {where}>"

    @property
    def url(self) -> str:
        if self._port is None:
            raise RuntimeError("the tool server is not listening")
        return f"http://{HOST}:{self._port}{PATH}"

    def headers(self) -> dict[str, str]:
        """The HTTP headers a request must carry (the token)."""
        return {TOKEN_HEADER: f"Bearer {self._token}"}

    def secret(self) -> str:
        """The token itself (for the stdio bridge's environment)."""
        return self._token

    # -- life ------------------------------------------------------------------------------

    def start(self) -> None:
        """Listen on a free port of 127.0.0.1, serving from a thread of its own."""
        if self._thread is not None:
            return
        # uvicorn binds the port itself (port 0: a free one): a socket handed to it
        # costs each request a delayed ACK (about 40 ms).
        server = uvicorn.Server(
            uvicorn.Config(
                _Guard(self._app(), self._token, self._refuse),
                host=HOST,
                port=0,
                log_level="warning",
                access_log=False,
                lifespan="on",
                timeout_graceful_shutdown=1,
            )
        )
        server.install_signal_handlers = lambda: None  # type: ignore[attr-defined]
        self._server = server
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._serve(server, ready))
            except Exception:
                log.exception("the tool server %s stopped", self.name)
            finally:
                ready.set()
                _settle(loop)

        self._thread = threading.Thread(target=serve, name=f"mead-mcp-{self.name}", daemon=True)
        self._thread.start()
        if not ready.wait(START_TIMEOUT) or not server.started:
            self.close()
            raise RuntimeError(f"the tool server {self.name} did not start")

    async def _serve(self, server: uvicorn.Server, ready: threading.Event) -> None:
        task = asyncio.ensure_future(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            self._port = int(server.servers[0].sockets[0].getsockname()[1])
        ready.set()
        await task

    def close(self) -> None:
        """Stop listening and end the server's thread (calls still open are cancelled)."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(STOP_TIMEOUT)
        if thread.is_alive():
            server.force_exit = True
            thread.join(STOP_TIMEOUT)
        self._server = self._thread = None

    @property
    def listening(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- MCP -------------------------------------------------------------------------------

    def _refuse(self) -> None:
        self.refused += 1

    def _app(self) -> ASGIApp:
        tools = self.tools

        async def list_tools(ctx: Any, params: Any) -> mt.ListToolsResult:
            return mt.ListToolsResult(tools=[_listed(t) for t in tools.values()])

        async def call_tool(ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
            arguments = dict(params.arguments or {})
            return await self.on_call(params.name, arguments)

        low = Server(self.name, on_list_tools=list_tools, on_call_tool=call_tool)
        app: ASGIApp = low.streamable_http_app(
            streamable_http_path=PATH, stateless_http=True, json_response=True, host=HOST
        )
        return app


def _listed(tool: Tool) -> mt.Tool:
    """How the agent is told of ``tool``: its schema, and hints from its kind."""
    kind = kind_of(tool)
    reads = class_of(kind) == "read"
    return mt.Tool(
        name=tool.name,
        description=tool.description or None,
        input_schema=dict(tool.parameters),
        annotations=mt.ToolAnnotations(
            read_only_hint=reads, destructive_hint=kind == "delete", open_world_hint=False
        ),
    )


class _Guard:
    """Refuses every HTTP request without the token (401), before the app sees it."""

    def __init__(self, app: ASGIApp, token: str, refused: Callable[[], None]) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.refused = refused

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = b""
        for key, value in scope.get("headers") or ():
            if key.lower() == TOKEN_HEADER.lower().encode():
                given = value
                break
        if not hmac.compare_digest(given, self.expected):
            self.refused()
            body = b'{"error": "unauthorized"}'
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)


def _settle(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what the server left running (its streams' watchers) and close the loop."""
    with contextlib.suppress(Exception):
        left = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in left:
            task.cancel()
        if left:
            loop.run_until_complete(asyncio.wait(left, timeout=STOP_TIMEOUT))
        loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()
