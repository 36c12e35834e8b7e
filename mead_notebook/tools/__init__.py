"""Tools the router offers a model: ``@tool`` functions and MCP servers."""

from __future__ import annotations

from ..errors import ToolArgumentError, ToolDefinitionError
from . import preview
from .base import Tool, ToolSource, result_text, spec_of
from .function import FunctionTool, as_tool, split_tools, tool
from .output import ToolFailure, ToolOutput
from .preview import Preview, Previewing

__all__ = [
    "FunctionTool",
    "Preview",
    "Previewing",
    "Tool",
    "ToolArgumentError",
    "ToolDefinitionError",
    "ToolFailure",
    "ToolOutput",
    "ToolSource",
    "as_tool",
    "preview",
    "result_text",
    "spec_of",
    "split_tools",
    "tool",
]
