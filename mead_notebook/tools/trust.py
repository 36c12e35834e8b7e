"""What an MCP server's word on its tools is worth: the one rule of the router and every adapter.

A tool's annotations (``readOnlyHint``, ``destructiveHint``) are hints its
server gives, and a server may say anything of its tools. So a tool is
``read`` only when its server is one the person trusts and it says
``readOnlyHint: true``; an explicit ``destructiveHint: true`` makes it
``delete`` on any server (it only makes the gate stricter, and it wins over a
contradicting ``readOnlyHint``); every other tool is ``other`` (class
``effect``). The person names the servers they trust: ``MCPServer(trusted=True)``
for the router, ``trusted={"files"}`` (server names) for an adapter's run.

Needs no extra: annotations are read from ``mcp`` types, an agent SDK's copies
of them, or plain dicts alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..interaction import ToolKind

__all__ = ["kind_from_hints", "trusted_servers"]


def kind_from_hints(hints: object, *, trusted: bool) -> ToolKind:
    """A tool's kind from its MCP annotations, believed only as far as its server is ``trusted``."""
    if _hint(hints, "destructive_hint", "destructiveHint") is True:
        return "delete"
    if trusted and _hint(hints, "read_only_hint", "readOnlyHint") is True:
        return "read"
    return "other"


def trusted_servers(names: Iterable[str] | None) -> frozenset[str]:
    """The names of the MCP servers a run trusts (``trusted=`` of an adapter's run).

    A bare string is refused: ``trusted="files"`` would trust servers named
    ``f``, ``i``, ... (write ``trusted={"files"}``).
    """
    if names is None:
        return frozenset()
    if isinstance(names, str | bytes) or not isinstance(names, Iterable):
        raise TypeError(
            f"trusted takes MCP server names, e.g. {{'files'}}, not {type(names).__name__}"
        )
    found = frozenset(names)
    wrong = [n for n in found if not isinstance(n, str)]
    if wrong:
        raise TypeError(f"trusted takes MCP server names (strings), not {wrong[0]!r}")
    return found


def _hint(hints: object, name: str, alias: str) -> Any:
    if hints is None:
        return None
    if isinstance(hints, Mapping):
        return hints.get(alias, hints.get(name))
    return getattr(hints, name, getattr(hints, alias, None))
