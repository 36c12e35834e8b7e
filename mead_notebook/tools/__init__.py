"""Tools the router offers a model: ``@tool`` functions and MCP servers."""

from __future__ import annotations

from ..errors import ToolArgumentError, ToolDefinitionError
from .base import Tool, ToolSource, result_text, spec_of
from .function import FunctionTool, as_tool, split_tools, tool

__all__ = [
    "FunctionTool",
    "Tool",
    "ToolArgumentError",
    "ToolDefinitionError",
    "ToolSource",
    "as_tool",
    "result_text",
    "spec_of",
    "split_tools",
    "tool",
]
