"""The schemas and kinds of the in-process MCP tools a Claude Code run is given.

A tool's annotations give its kind only as far as the person trusts its server
(:func:`mead_notebook.tools.trust.kind_from_hints`); the tools of a server made
by ``as_server`` are the package's own, whose kinds are theirs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp import Client

from mead_notebook.interaction import ToolKind
from mead_notebook.tools import Tool
from mead_notebook.tools.trust import kind_from_hints

from ..base.own_tools import kind_of
from ._own_tools import own_server

__all__ = ["LIST_TIMEOUT", "SdkTool", "sdk_tools"]

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

LIST_TIMEOUT = 5.0
"""How long listing one in-process server's tools may take (seconds)."""


@dataclass(frozen=True)
class SdkTool:
    """One tool of an in-process (``type: "sdk"``) MCP server."""

    schema: dict[str, Any]
    kind: ToolKind
    own: Tool | None = None
    """The package's own tool it runs (a server of ``as_server``), whose kind is believed."""


async def _listed(name: str, server: Any, trusted: bool) -> dict[str, SdkTool]:
    async with Client(server) as client:
        listed = await client.list_tools()
    return {
        f"mcp__{name}__{t.name}": SdkTool(
            dict(t.input_schema), kind_from_hints(t.annotations, trusted=trusted)
        )
        for t in listed.tools
    }


async def sdk_tools(servers: object, trusted: frozenset[str] = frozenset()) -> dict[str, SdkTool]:
    """Each in-process server's tools by the name Claude Code calls them (``mcp__server__tool``).

    ``trusted`` names the servers whose ``readOnlyHint`` is believed. Other
    servers run in the CLI, which alone knows their tools (their calls are
    ``other`` unless ``kinds`` says); a server that cannot be listed within
    ``LIST_TIMEOUT`` is left out.
    """
    found: dict[str, SdkTool] = {}
    if not isinstance(servers, Mapping):
        return found
    for name, config in servers.items():
        if not isinstance(config, Mapping) or config.get("type") != "sdk":
            continue
        own = own_server(config)
        if own is not None:
            found |= {
                f"mcp__{name}__{t.name}": SdkTool(dict(t.parameters), kind_of(t), t)
                for t in own.tools.values()
            }
            continue
        try:
            listing = _listed(str(name), config["instance"], str(name) in trusted)
            found |= await asyncio.wait_for(listing, LIST_TIMEOUT)
        except Exception:
            log.warning("could not list the tools of the in-process server %s", name, exc_info=True)
    return found
