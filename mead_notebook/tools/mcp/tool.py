"""``MCPTool``: one tool of an MCP server, its arguments checked against its JSON schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...calls import Call
from ...errors import ToolArgumentError
from ...interaction import ToolClass, ToolKind, class_of
from ...schema import check

if TYPE_CHECKING:
    from .server import MCPServer

__all__ = ["MCPTool"]


class MCPTool:
    """One tool of an MCP server; arguments are checked against its JSON schema."""

    def __init__(
        self,
        server: MCPServer,
        *,
        name: str,
        description: str,
        parameters: dict[str, Any],
        kind: ToolKind,
    ) -> None:
        self.name = name
        self.description = description
        self.server = server.name
        self.kind: ToolKind = kind
        self.tool_class: ToolClass = class_of(kind)
        self.parameters = parameters
        self._owner = server

    def __repr__(self) -> str:
        return f"<MCP tool {self.name} of {self.server} ({self.tool_class})>"

    def preview(self, arguments: dict[str, Any]) -> None:
        """An MCP call shows its arguments only: nothing here knows what it will do."""
        return

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Check the arguments against the tool's input schema (``ToolArgumentError`` if not)."""
        problem = check(arguments, self.parameters)
        if problem is not None:
            raise ToolArgumentError(problem)
        return dict(arguments)

    def invoke(self, arguments: dict[str, Any], call: Call) -> Any:
        """Run the call on the server and wait for its result (progress goes to ``call``)."""
        return self._owner._call(self.name, arguments, call)
