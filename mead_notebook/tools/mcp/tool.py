"""``MCPTool``: one tool of an MCP server, its arguments checked against its JSON schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jsonschema

from ...calls import Call
from ...errors import ToolArgumentError
from ...interaction import ToolClass, ToolKind, class_of

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

    def preview(self, arguments: dict[str, Any]) -> None:
        """An MCP call shows its arguments only: nothing here knows what it will do."""
        return

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
