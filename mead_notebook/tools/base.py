"""What a tool is to the router: the ``Tool`` and ``ToolSource`` protocols."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..interaction import ToolClass
from ..model import ToolSpec
from .output import ToolOutput

if TYPE_CHECKING:
    from ..calls import Call

__all__ = ["Tool", "ToolSource", "result_text", "spec_of"]


@runtime_checkable
class Tool(Protocol):
    """A tool the router can offer and run.

    ``invoke`` runs in a thread of its own and blocks until the tool is done; it
    returns the result (a string, or anything JSON can encode) or raises.
    """

    name: str
    description: str
    server: str
    tool_class: ToolClass
    parameters: dict[str, Any]

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments the tool will run with, or :class:`ToolArgumentError` saying why not."""

    def invoke(self, arguments: dict[str, Any], call: Call) -> Any: ...


@runtime_checkable
class ToolSource(Protocol):
    """A group of tools behind a server (MCP): opened before the first turn."""

    name: str

    def open(self) -> list[Tool]:
        """Connect and list the tools (the router does, before its first turn)."""

    def close(self) -> None:
        """Disconnect (``Router.close()`` does, for each source)."""


def result_text(value: Any) -> str:
    """The text a model receives for a tool's return value: a string as it is, else JSON.

    A :class:`~mead_notebook.tools.ToolOutput` is its ``text``. ``None`` is
    ``"null"``, as JSON says it; what JSON cannot encode is its ``repr``.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, ToolOutput):
        return value.text
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def spec_of(t: Tool) -> ToolSpec:
    """What the model is told of ``t``."""
    return ToolSpec(name=t.name, description=t.description, parameters=t.parameters)
