"""The scripted agent's MCP side: it calls the tools the client serves it (``{"mcp": {...}}``).

A step ``{"mcp": {...}}`` calls a tool of the MCP server given at ``session/new``
(over HTTP with its headers, or through its stdio command), as an agent does:

- ``tool``, ``arguments``: the call; ``id``: the ACP tool call id of its report;
- ``report``: how the agent reports it over ACP: ``"claude"`` (a ``tool_call``
  named in ``_meta``, its input in a later update, then ``completed``),
  ``"codex"`` (``in_progress`` with ``{server, tool, arguments}``), or none;
- ``ask``: request permission first, with the input (Claude does); a reject
  ends the step, as a refused call does;
- ``call_arguments``: the arguments the MCP call sends instead (the report and
  the request show ``arguments``); ``times``: that many calls at once (0: none);
- ``token``: ``"wrong"`` or ``"none"``: call with a wrong token, or without one.

Each call's end is logged as ``told`` ``{id, text, error}``, each result as
``mcp`` ``{id, text, error, ms}`` (``ms``: the round trip of ``tools/call``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

__all__ = ["McpLink", "call_step"]

CONNECT_TIMEOUT = 30.0


class McpLink:
    """One MCP client connection, held open by a task of its own for the agent's life."""

    def __init__(self, server: Any, headers: dict[str, str] | None = None) -> None:
        self.server = server
        self.headers = headers
        self.client: Any = None
        self._ready = asyncio.Event()
        self._done = asyncio.Event()
        self._error: BaseException | None = None
        self._task = asyncio.ensure_future(self._hold())

    async def _hold(self) -> None:
        from mcp import Client

        try:
            async with Client(_transport(self.server, self.headers)) as client:
                self.client = client
                self._ready.set()
                await self._done.wait()
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    async def connected(self) -> Any:
        await asyncio.wait_for(self._ready.wait(), CONNECT_TIMEOUT)
        if self.client is None:
            raise RuntimeError(f"could not connect: {self._error!r}")
        return self.client

    async def close(self) -> None:
        self._done.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._task, 5)


def _transport(server: Any, headers: dict[str, str] | None) -> Any:
    if getattr(server, "url", None):
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        given = {h.name: h.value for h in server.headers} if headers is None else headers
        http = httpx2.AsyncClient(headers=given, timeout=httpx2.Timeout(10.0, read=600.0))
        return streamable_http_client(server.url, http_client=http)
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {e.name: e.value for e in server.env}
    return stdio_client(StdioServerParameters(command=server.command, args=server.args, env=env))


def _headers(server: Any, token: str | None) -> dict[str, str] | None:
    if token is None:
        return None
    if token == "none":
        return {}
    return {h.name: ("Bearer wrong-token" if token == "wrong" else h.value) for h in server.headers}


async def call_step(agent: Any, session_id: str, spec: dict[str, Any]) -> str | None:
    """Play one ``mcp`` step of the scripted agent (``agent``: its ``_Scripted``)."""
    import acp
    from acp.schema import ToolCallUpdate

    server = agent.mcp_servers[0]
    call_id = str(spec.get("id", "m1"))
    tool = str(spec["tool"])
    arguments = dict(spec.get("arguments", {}))
    report = spec.get("report")
    if report == "claude":
        meta = {"claudeCode": {"toolName": f"mcp__{server.name}__{tool}"}}
        start = acp.start_tool_call(call_id, f"mcp__{server.name}__{tool}", raw_input={})
        start.field_meta = meta
        await agent.send(session_id, start)
        await agent.send(session_id, acp.update_tool_call(call_id, raw_input=arguments))
    elif report == "codex":
        raw = {"server": server.name, "tool": tool, "arguments": arguments}
        title = f"Tool: {server.name}/{tool}"
        await agent.send(
            session_id,
            acp.start_tool_call(call_id, title, status="in_progress", raw_input=raw),
        )
    if spec.get("ask"):
        asked = ToolCallUpdate(tool_call_id=call_id, kind="other", raw_input=arguments)
        response = await agent.conn.request_permission(
            session_id=session_id, tool_call=asked, options=_options()
        )
        option = getattr(response.outcome, "option_id", None)
        agent.log("permission", id=call_id, outcome=response.outcome.outcome, option=option)
        if option not in ("allow", "always"):
            agent.log("told", id=call_id, text="rejected", error=True)
            return "cancelled" if response.outcome.outcome == "cancelled" else None
    given = dict(spec.get("call_arguments", arguments))
    times = int(spec.get("times", 1))
    if times == 0:
        return None
    link = await _link(agent, server, spec.get("token"))
    try:
        results = await asyncio.gather(*(_call(link, tool, given) for _ in range(times)))
    finally:
        if spec.get("token") is not None:
            await link.close()
    for text, error, ms in results:
        agent.log("mcp", id=call_id, text=text, error=error, ms=ms)
        agent.log("told", id=call_id, text=text, error=error)
    text, error, _ = results[-1]
    if report is not None:
        done = [acp.tool_content(acp.text_block(text))]
        status: Any = "failed" if error else "completed"
        await agent.send(session_id, acp.update_tool_call(call_id, status=status, content=done))
    return None


async def _link(agent: Any, server: Any, token: str | None) -> McpLink:
    if token is not None:
        return McpLink(server, _headers(server, token))
    if agent.mcp_link is None:
        agent.mcp_link = McpLink(server)
    link: McpLink = agent.mcp_link
    return link


async def _call(link: McpLink, tool: str, arguments: dict[str, Any]) -> tuple[str, bool, float]:
    started = time.perf_counter()
    try:
        client = await link.connected()
        result = await client.call_tool(tool, arguments)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}", True, _ms(started)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return text, bool(result.is_error), _ms(started)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


def _options() -> list[Any]:
    from acp.schema import PermissionOption

    return [
        PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
        PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
    ]
