"""The package's own tools (``@tool`` functions, ``kernel_tools()``) in a framework's run.

Each adapter's ``as_tools`` (the Claude Agent SDK's ``as_server``, an ACP
run's ``tools=``) turns a package :class:`~mead_notebook.tools.Tool` into the
framework's tool type and marks it with :data:`OWN_TOOL`; the adapter's gate
reads the mark and asks about the call as the router would: the tool's own
validation first (a call that fails it is refused, the model told why, nobody
asked), then the card with the tool's kind and its preview, then the run,
which the card's Cancel stops (:func:`invoke` cancels the tool's ``Call``).

A tool may return a :class:`~mead_notebook.tools.ToolOutput` (text for the
model, content for the card) or raise a :class:`~mead_notebook.tools.ToolFailure`.
The framework gets the text (or the failure's message, in its own form); the
gate ends the call from what :func:`watching` kept: :func:`ending`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from mead_notebook.calls import Call
from mead_notebook.errors import ToolArgumentError
from mead_notebook.interaction import ContentBlock, ToolKind, kind_of_class
from mead_notebook.tools import Tool, ToolFailure, ToolOutput, ToolSource, as_tool, preview
from mead_notebook.tools.base import result_text
from mead_notebook.tools.preview import Preview

__all__ = [
    "OWN_TOOL",
    "Ending",
    "Ran",
    "check",
    "ending",
    "failed",
    "invoke",
    "invoke_here",
    "kind_of",
    "own_tool",
    "own_tools",
    "raised",
    "shown",
    "watching",
]

OWN_TOOL = "mead_tool"
"""Where a framework's tool keeps the package tool it runs (metadata key or attribute)."""


def own_tools(items: Iterable[object]) -> list[Tool]:
    """``items`` as package tools: a ``Tool`` as it is, a function as ``@tool`` makes it.

    A ``ToolSource`` (an MCP server) is refused: a framework reaches its tools itself.
    Two tools of one name are refused too.
    """
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise TypeError(f"as_tools takes a list of tools, not {type(items).__name__}")
    found: list[Tool] = []
    for item in items:
        if isinstance(item, ToolSource) and not isinstance(item, Tool):
            raise TypeError(
                f"{item!r} is a tool source (an MCP server): give the framework the server "
                "itself, or its tools"
            )
        found.append(as_tool(item))
    names = [t.name for t in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"two tools are named {twice[0]!r}")
    return found


def own_tool(value: object) -> Tool | None:
    """The package tool kept under :data:`OWN_TOOL` in ``value`` (a mapping or an object)."""
    found = value.get(OWN_TOOL) if isinstance(value, dict) else getattr(value, OWN_TOOL, None)
    return found if isinstance(found, Tool) else None


def kind_of(tool: Tool) -> ToolKind:
    """What ``tool`` does: its declared kind, else the kind of its class."""
    if isinstance(tool, preview.Previewing):
        return tool.kind
    return kind_of_class(tool.tool_class)


def check(tool: Tool, arguments: object) -> tuple[dict[str, Any] | None, str | None]:
    """``arguments`` as ``tool`` validates them, or why they do not fit (the model's message)."""
    try:
        if not isinstance(arguments, dict):
            raise ToolArgumentError(f"arguments must be an object, not {type(arguments).__name__}")
        return tool.validate(arguments), None
    except ToolArgumentError as exc:
        return None, f"Invalid arguments for {tool.name}: {exc}. The tool did not run."


def shown(tool: Tool, arguments: dict[str, Any]) -> Preview:
    """What the card shows of a call with these (validated) arguments: ``tool``'s preview."""
    return preview.of(tool, arguments)


async def invoke(
    tool: Tool,
    arguments: dict[str, Any],
    call: Call | str | None = None,
    *,
    context: contextvars.Context | None = None,
) -> Any:
    """Run ``tool`` with (validated) ``arguments`` in a thread of its own and await its value.

    ``call`` is the handle the tool receives (a tool call id: a new handle under
    it). Cancelling the await (the card's Cancel cancels the framework's task)
    cancels the call, so a tool that watches its ``Call`` (``on_cancel``,
    ``cancelled``) stops; one that does not finishes in its thread, its value
    dropped. The thread runs in a copy of ``context`` (default: this task's), so
    that what it prints belongs to the turn's cell.
    """
    handle = call if isinstance(call, Call) else Call(call or tool.name, tool.name)
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    ran = _ran.get()

    def work() -> None:
        try:
            value, error = tool.invoke(arguments, handle), None
        except BaseException as exc:
            value, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(
        target=(context if context is not None else contextvars.copy_context()).copy().run,
        args=(work,),
        name=f"mead-tool-{tool.name}",
        daemon=True,
    ).start()
    try:
        value = await done
    except asyncio.CancelledError:
        handle.cancel()
        raise
    except BaseException as exc:
        if ran is not None:
            ran.error, ran.done, ran.tool = exc, True, tool
        raise
    if ran is not None:
        ran.value, ran.done = value, True
    return value


@dataclass
class Ran:
    """What one run of an own tool left for its gate: its value, or how it failed."""

    value: Any = None
    error: BaseException | None = None
    done: bool = False
    tool: Tool | None = None


_ran: contextvars.ContextVar[Ran | None] = contextvars.ContextVar("mead_own_ran", default=None)


@contextlib.contextmanager
def watching() -> Iterator[Ran]:
    """Keep what the own tool run under this block (in this task or its children) left."""
    ran = Ran()
    token = _ran.set(ran)
    try:
        yield ran
    finally:
        _ran.reset(token)


@dataclass(frozen=True)
class Ending:
    """How the gate ends a call from what its tool left: ``completed`` or ``failed``."""

    status: Literal["completed", "failed"]
    text: str
    """The result, or the error: what the model was told."""
    content: list[ContentBlock] | None = None
    outcome: Literal["error", "timeout"] = "error"


def raised(tool: Tool, ran: Ran) -> Ending:
    """How a call whose tool raised ends: as :func:`invoke` reported it, else ``error``."""
    end = ending(ran)
    return end if end is not None else Ending("failed", f"{tool.name} failed")


def ending(ran: Ran) -> Ending | None:
    """The end :func:`invoke` reported (None: no own tool finished here).

    A ``ToolOutput`` completes with its content; a ``ToolFailure`` fails with its
    outcome and content, any other exception with ``error`` (:func:`failed`).
    """
    if not ran.done:
        return None
    if isinstance(ran.error, ToolFailure):
        failure = ran.error
        return Ending("failed", failure.message, failure.content or None, failure.outcome)
    if ran.error is not None and ran.tool is not None:
        return Ending("failed", failed(ran.tool, ran.error))
    value = ran.value
    content = value.content if isinstance(value, ToolOutput) else None
    return Ending("completed", result_text(value), content or None)


def invoke_here(tool: Tool, arguments: dict[str, Any], call: Call | str | None = None) -> Any:
    """:func:`invoke` in this thread, for a framework's sync path (only the tool can stop it)."""
    handle = call if isinstance(call, Call) else Call(call or tool.name, tool.name)
    ran = _ran.get()
    try:
        value = tool.invoke(arguments, handle)
    except BaseException as exc:
        if ran is not None:
            ran.error, ran.done, ran.tool = exc, True, tool
        raise
    if ran is not None:
        ran.value, ran.done = value, True
    return value


def failed(tool: Tool, exc: BaseException) -> str:
    """What the model is told of a call that raised ``exc`` (a ``ToolFailure``: its message)."""
    if isinstance(exc, ToolFailure):
        return exc.message
    return f"{tool.name} failed: {type(exc).__name__}: {exc}"
