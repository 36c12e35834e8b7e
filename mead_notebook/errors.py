"""Every error mead_notebook raises on purpose, under one base.

::

    MeadError
    ├── TurnError (RuntimeError)            a turn could not finish; .result holds what it made
    ├── ModelError (RuntimeError)           a model or provider failed (raised inside a turn,
    │                                       reported as TurnError)
    ├── ToolArgumentError (ValueError)      a model's arguments do not fit the tool's schema
    ├── ToolDefinitionError (TypeError)     a function cannot be made a tool
    ├── MCPServerError (RuntimeError)       an MCP server could not start or answer
    ├── MCPToolError (RuntimeError)         an MCP tool reported an error
    ├── UnsupportedKernelError (RuntimeError)
    │                                       this kernel cannot deliver the widget's answers to a
    │                                       cell that blocks; use ``arun`` or ``start``
    ├── NoKernelError (RuntimeError)        the kernel's tools were asked for outside a kernel
    └── GateError (RuntimeError)            a call was about to run without an Allow (an
                                            adapter's mistake; the call ends ``denied``)

Inside a turn, an error from a tool or a callback never escapes: the call ends
``failed`` with an ``outcome`` (see :data:`mead_notebook.interaction.Outcome`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .turn import TurnResult

__all__ = [
    "GateError",
    "MCPServerError",
    "MCPToolError",
    "MeadError",
    "ModelError",
    "NoKernelError",
    "ToolArgumentError",
    "ToolDefinitionError",
    "TurnError",
    "UnsupportedKernelError",
]


class MeadError(Exception):
    """Base of every error mead_notebook raises on purpose."""


class TurnError(MeadError, RuntimeError):
    """The turn could not finish; ``result`` holds what it had produced until then."""

    def __init__(self, message: str, result: TurnResult) -> None:
        super().__init__(message)
        self.result = result


class ModelError(MeadError, RuntimeError):
    """A model failed to produce a reply; ``provider`` names it."""

    def __init__(self, provider: str, message: str) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider


class ToolArgumentError(MeadError, ValueError):
    """The model's arguments do not match the tool's schema."""


class ToolDefinitionError(MeadError, TypeError):
    """A function cannot be made a tool (for example, an annotation cannot be resolved)."""


class MCPServerError(MeadError, RuntimeError):
    """An MCP server could not be started or stopped answering."""


class MCPToolError(MeadError, RuntimeError):
    """An MCP tool reported an error."""


class UnsupportedKernelError(MeadError, RuntimeError):
    """The running kernel lacks a piece that waiting for the widget in this thread needs."""


class NoKernelError(MeadError, RuntimeError):
    """The kernel's tools (``kernel_tools``) need an IPython kernel, and none runs here."""


class GateError(MeadError, RuntimeError):
    """A call was about to run without an Allow for it; it was stopped and ended ``denied``."""
