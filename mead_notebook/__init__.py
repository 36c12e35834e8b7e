"""Watch and steer an LLM agent from a notebook."""

from __future__ import annotations

from importlib import import_module
from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

from .calls import Call
from .interaction import (
    Allow,
    Choice,
    Deny,
    Interaction,
    Option,
    Picked,
    Request,
    Unanswered,
    Update,
    valid,
)
from .model import Message, Model, ModelError, ScriptedModel, ToolCall, ToolSpec
from .router import CallRecord, Router, Turn, TurnError, TurnResult
from .tools import Tool, ToolArgumentError, ToolSource, tool

if TYPE_CHECKING:
    from .magic import load_ipython_extension, use
    from .mcp_server import MCPServer
    from .providers import AnthropicModel, OpenAIModel
    from .widget import NotebookInteraction

try:
    __version__ = _metadata.version("mead-notebook")  # from js/package.json, at build time
except _metadata.PackageNotFoundError:  # a checkout on the path, not installed
    __version__ = "unknown"

__all__ = [
    "Allow",
    "AnthropicModel",
    "Call",
    "CallRecord",
    "Choice",
    "Deny",
    "Interaction",
    "MCPServer",
    "Message",
    "Model",
    "ModelError",
    "NotebookInteraction",
    "OpenAIModel",
    "Option",
    "Picked",
    "Request",
    "Router",
    "ScriptedModel",
    "Tool",
    "ToolArgumentError",
    "ToolCall",
    "ToolSource",
    "ToolSpec",
    "Turn",
    "TurnError",
    "TurnResult",
    "Unanswered",
    "Update",
    "load_ipython_extension",
    "tool",
    "use",
    "valid",
]

_LAZY = {
    "NotebookInteraction": ".widget",
    "OpenAIModel": ".providers",
    "AnthropicModel": ".providers",
    "MCPServer": ".mcp_server",
    "use": ".magic",
    "load_ipython_extension": ".magic",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
