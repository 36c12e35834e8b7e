"""The schemas and kinds of the in-process MCP tools a Claude Code run is given."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp import Client

from mead_notebook.interaction import ToolKind

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


def _kind(annotations: Any) -> ToolKind:
    if getattr(annotations, "read_only_hint", None) is True:
        return "read"
    return "delete" if getattr(annotations, "destructive_hint", None) is True else "other"


async def _listed(name: str, server: Any) -> dict[str, SdkTool]:
    async with Client(server) as client:
        listed = await client.list_tools()
    return {
        f"mcp__{name}__{t.name}": SdkTool(dict(t.input_schema), _kind(t.annotations))
        for t in listed.tools
    }


async def sdk_tools(servers: object) -> dict[str, SdkTool]:
    """Each in-process server's tools by the name Claude Code calls them (``mcp__server__tool``).

    Other servers run in the CLI, which alone knows their tools; a server that
    cannot be listed within ``LIST_TIMEOUT`` is left out.
    """
    found: dict[str, SdkTool] = {}
    if not isinstance(servers, Mapping):
        return found
    for name, config in servers.items():
        if not isinstance(config, Mapping) or config.get("type") != "sdk":
            continue
        try:
            found |= await asyncio.wait_for(_listed(str(name), config["instance"]), LIST_TIMEOUT)
        except Exception:
            log.warning("could not list the tools of the in-process server %s", name, exc_info=True)
    return found
