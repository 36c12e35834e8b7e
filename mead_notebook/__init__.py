"""Watch and steer an LLM agent from a notebook."""

from __future__ import annotations

from importlib import import_module
from importlib import metadata as _metadata
from typing import TYPE_CHECKING, Any

from .calls import Call
from .driver import TurnDriver
from .errors import (
    MeadError,
    ModelError,
    NoKernelError,
    ToolArgumentError,
    ToolDefinitionError,
    TurnError,
    UnsupportedKernelError,
)
from .interaction import (
    AgentDetails,
    AgentInfo,
    Allow,
    Answered,
    Choice,
    Deny,
    HistoryEntry,
    Interaction,
    Option,
    Outcome,
    Picked,
    PlanAndThoughts,
    PlanEntry,
    Policy,
    Request,
    SessionHistory,
    ToolKind,
    TurnHooks,
    Unanswered,
    Update,
    valid,
)
from .model import Message, Model, ScriptedModel, Thought, ToolCall, ToolSpec
from .router import Router
from .tools import Tool, ToolSource, tool
from .turn import CallRecord, Turn, TurnResult

if TYPE_CHECKING:
    from .magic import load_ipython_extension, use
    from .notebook import NotebookInteraction
    from .providers import AnthropicModel, OpenAIModel
    from .tools.mcp import MCPServer
    from .workbench import kernel_tools

try:
    __version__ = _metadata.version("mead-notebook")  # from js/package.json, at build time
except _metadata.PackageNotFoundError:  # a checkout on the path, not installed
    __version__ = "unknown"

__all__ = [
    "AgentDetails",
    "AgentInfo",
    "Allow",
    "Answered",
    "AnthropicModel",
    "Call",
    "CallRecord",
    "Choice",
    "Deny",
    "HistoryEntry",
    "Interaction",
    "MCPServer",
    "MeadError",
    "Message",
    "Model",
    "ModelError",
    "NoKernelError",
    "NotebookInteraction",
    "OpenAIModel",
    "Option",
    "Outcome",
    "Picked",
    "PlanAndThoughts",
    "PlanEntry",
    "Policy",
    "Request",
    "Router",
    "ScriptedModel",
    "SessionHistory",
    "Thought",
    "Tool",
    "ToolArgumentError",
    "ToolCall",
    "ToolDefinitionError",
    "ToolKind",
    "ToolSource",
    "ToolSpec",
    "Turn",
    "TurnDriver",
    "TurnError",
    "TurnHooks",
    "TurnResult",
    "Unanswered",
    "UnsupportedKernelError",
    "Update",
    "kernel_tools",
    "load_ipython_extension",
    "tool",
    "use",
    "valid",
]

_LAZY = {
    "NotebookInteraction": ".notebook",
    "OpenAIModel": ".providers",
    "AnthropicModel": ".providers",
    "MCPServer": ".tools.mcp",
    "kernel_tools": ".workbench",
    "use": ".magic",
    "load_ipython_extension": ".magic",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
