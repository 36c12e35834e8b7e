"""MCP servers as tool sources: their tools, offered to the model and run by the router.

Needs the ``mcp`` extra (``pip install 'mead-notebook[mcp]'``).
"""

from __future__ import annotations

try:
    import httpx2  # noqa: F401
    import mcp  # noqa: F401
    import mcp_types  # noqa: F401
except ImportError:  # pragma: no cover - depends on the installed extras
    raise ImportError("MCPServer needs the mcp extra: pip install 'mead-notebook[mcp]'") from None

from ...errors import MCPServerError, MCPToolError
from .server import MCPServer
from .tool import MCPTool

__all__ = ["MCPServer", "MCPServerError", "MCPTool", "MCPToolError"]
