"""Running code in the kernel's user namespace as a cell would, in the calling thread.

The code goes through IPython's input transformers (magics, ``!`` commands), runs
in the user namespace (what it defines stays), and the value of a last
expression is formatted by IPython's display formatter (``text/plain``,
``text/html``, ``image/png``...). Top-level ``await`` runs on an event loop of
the calling thread. What it prints and displays is captured for this run alone
(:mod:`.capture`), so is every matplotlib figure it leaves open, which is then
closed (an inline backend would otherwise draw it in the cell that runs the
turn). Unlike a cell it leaves ``In``, ``Out`` and ``_`` alone.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import inspect
import io
import itertools
import linecache
import logging
import sys
import traceback
from dataclasses import dataclass, field
from types import CodeType, TracebackType
from typing import Any, Literal

from .capture import Capture, Output, Rich, capturing
from .stopping import Guard, StopCode

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["Ran", "run_code"]

_numbers = itertools.count(1)


@dataclass
class Ran:
    """What running the code did: its outputs (the last expression's value among them), the
    traceback of what it raised, and whether it was stopped."""

    outputs: list[Output] = field(default_factory=list)
    error: str | None = None
    """The traceback, when the code raised (its frames only)."""
    error_name: str | None = None
    stopped: Literal["cancelled", "timeout"] | None = None
    dropped: int = 0
    """Characters of printed text past the capture's limit, not kept."""


def run_code(shell: Any, code: str, guard: Guard, limit: int) -> Ran:
    """Run ``code`` in ``shell``'s user namespace under ``guard``; never raises for the code."""
    ran = Ran()
    filename = f"<run_python-{next(_numbers)}>"
    figures = _open_figures()
    with capturing(shell, limit) as capture:
        try:
            with guard.running():
                _execute(shell, code, filename, capture)
        except StopCode as stop:
            ran.stopped = stop.why
        except BaseException as exc:
            ran.error = _traceback_of(exc, filename)
            ran.error_name = type(exc).__name__
        try:
            _collect_figures(shell, figures, capture)
        except Exception:
            log.exception("the figures run_python drew could not be collected")
    ran.outputs = capture.outputs
    ran.dropped = capture.dropped
    return ran


def _execute(shell: Any, code: str, filename: str, capture: Capture) -> None:
    source = shell.transform_cell(code) if hasattr(shell, "transform_cell") else code
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    flags = (
        int(getattr(getattr(shell, "compile", None), "flags", 0)) | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    )
    tree = ast.parse(source, filename, "exec")
    last: ast.Expression | None = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body[-1].value)
        tree.body.pop()
    namespace = shell.user_ns
    if tree.body:
        _run(compile(tree, filename, "exec", flags=flags, dont_inherit=True), shell, namespace)
    if last is not None:
        value = _run(
            compile(last, filename, "eval", flags=flags, dont_inherit=True), shell, namespace
        )
        if value is not None:
            data, metadata = shell.display_formatter.format(value)
            capture.outputs.append(Rich(dict(data), dict(metadata or {}), result=True))


def _run(code: CodeType, shell: Any, namespace: dict[str, Any]) -> Any:
    globals_ = getattr(shell, "user_global_ns", namespace)
    if code.co_flags & inspect.CO_COROUTINE:
        return asyncio.run(eval(code, globals_, namespace))
    return eval(code, globals_, namespace)


def _traceback_of(exc: BaseException, filename: str) -> str:
    """The traceback from the code's first frame on (the tool's own frames left out)."""
    tb: TracebackType | None = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if tb is None and not isinstance(exc, SyntaxError):
        return "".join(traceback.format_exception_only(type(exc), exc))
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _pyplot() -> Any:
    return sys.modules.get("matplotlib.pyplot")


def _open_figures() -> set[int]:
    plt = _pyplot()
    return set(plt.get_fignums()) if plt is not None else set()


def _collect_figures(shell: Any, before: set[int], capture: Capture) -> None:
    """Every figure the code left open, as an image output; then closed."""
    plt = _pyplot()
    if plt is None:
        return
    from matplotlib._pylab_helpers import Gcf

    for number in plt.get_fignums():
        manager = Gcf.get_fig_manager(number)
        if number in before or manager is None:
            continue
        figure = manager.canvas.figure
        try:
            data, metadata = shell.display_formatter.format(figure)
            if not any(key.startswith("image/") for key in data):
                data = {**data, "image/png": _png(figure)}
            capture.outputs.append(Rich(dict(data), dict(metadata or {})))
        finally:
            plt.close(figure)


def _png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")
