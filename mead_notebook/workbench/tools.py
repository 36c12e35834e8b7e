"""The kernel's tools: ``run_python``, ``list_variables``, ``describe_variable``,
``notebook_history`` and ``propose_cell``, ordinary ``@tool``s bound to one IPython shell.

Each runs in the thread the router gives it, guarded (:mod:`.stopping`): the card's
Cancel, a kernel interrupt (the router cancels running calls) and the tool's own
time limit stop it. ``run_python`` and ``propose_cell`` show their code on the card
before anyone allows them (their preview).
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator
from typing import Any, Final

from pydantic import Field

from ..calls import Call
from ..interaction import CodeBlock, ContentBlock, TextBlock
from ..tools import FunctionTool, ToolFailure, ToolOutput, preview, tool
from .cells import Placement, cells_of
from .execute import run_code
from .history import MAX_CELLS, history
from .report import run_content, run_text
from .stopping import CodeCancelled, CodeTimedOut, Guard, StopCode
from .variables import describe, listing, user_variables

__all__ = ["PLACEMENT_TEXT", "PROPOSE_NOTE", "build"]

PROPOSE_NOTE: Final = (
    "Puts this code in a new cell below the cell that runs this turn, once that cell "
    "ends. The new cell is not run."
)
"""What the card of ``propose_cell`` says under the code before anyone allows it."""
PLACEMENT_TEXT: Final[dict[Placement, str]] = {
    "inserted": (
        "The cell will appear below the cell that runs this turn when that cell ends (not run)."
    ),
    "ended": (
        "Not inserted: the cell that ran this turn has ended, so no cell can be put "
        "below it. Copy the code from this card."
    ),
    "taken": (
        "Not inserted: a cell was proposed in this run of the cell already, and only "
        "one can be. Copy the code from this card."
    ),
}
"""What became of a proposed cell, as its card and the model are told."""


@contextlib.contextmanager
def _stoppable(guard: Guard, call: Call, timeout: float) -> Iterator[None]:
    """Stop ``guard``'s code when ``call`` is cancelled or ``timeout`` seconds pass."""
    call.on_cancel(lambda: guard.stop(CodeCancelled))
    timer = threading.Timer(timeout, guard.stop, args=(CodeTimedOut,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _guarded(call: Call, timeout: float, name: str, work: Any) -> Any:
    """``work()`` in this thread, stoppable; a stop or an error is a :class:`ToolFailure`."""
    guard = Guard()
    with _stoppable(guard, call, timeout):
        try:
            with guard.running():
                return work()
        except StopCode as stop:
            if stop.why == "timeout":
                raise ToolFailure(
                    f"{name} did not finish within {timeout:g} s.", outcome="timeout"
                ) from None
            raise ToolFailure(f"The call to {name} was cancelled.") from None


def _code(code: str) -> CodeBlock:
    return CodeBlock(type="code", language="python", code=code)


def build(shell: Any, timeout: float, max_output: int, capture_limit: int) -> list[FunctionTool]:
    """The five tools, bound to ``shell``."""
    if not (isinstance(timeout, (int, float)) and math.isfinite(timeout) and timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    if max_output < 500:
        raise ValueError("max_output must be at least 500 characters")
    cells = cells_of(shell)

    @tool(kind="execute", preview=lambda code: preview.code(code))
    def run_python(code: str, call: Call) -> ToolOutput:
        """Run Python code in the notebook's live kernel, as a cell would.

        The person's variables are there, and what the code defines stays for the
        next cells. You get what it printed, the value of its last expression and
        its traceback if it raised; figures and tables are shown to the person.
        Each call is shown to the person, who allows it or not, before it runs.
        """
        guard = Guard()
        with _stoppable(guard, call, timeout):
            ran = run_code(shell, code, guard, capture_limit)
        content = run_content(code, ran)
        text = run_text(ran, max_output)
        if ran.stopped == "timeout":
            raise ToolFailure(
                f"run_python did not finish within {timeout:g} s and was stopped. "
                f"What it did until then:\n{text}",
                content=content,
                outcome="timeout",
            )
        if ran.stopped == "cancelled":
            raise ToolFailure("The call to run_python was cancelled.", content=content)
        if ran.error is not None:
            raise ToolFailure(
                f"run_python failed: the code raised {ran.error_name}.\n{text}", content=content
            )
        return ToolOutput(text, content)

    @tool(kind="read")
    def list_variables(call: Call) -> ToolOutput:
        """List the variables in the notebook's kernel: name, type and a one-line summary
        (a shape, a length, a short value). Modules and IPython's own names are left out."""
        text, _ = _guarded(call, timeout, "list_variables", lambda: listing(shell))
        return ToolOutput(text, [TextBlock(type="text", text=text)])

    @tool(kind="read")
    def describe_variable(name: str, call: Call) -> ToolOutput:
        """Describe one variable of the notebook's kernel, bounded: a DataFrame's shape,
        dtypes and first rows, an array's shape, dtype and a few values, anything else's
        type and a shortened repr."""

        def work() -> str:
            found = dict(user_variables(shell))
            if name not in found:
                names = ", ".join(list(found)[:50]) or "none"
                raise ToolFailure(
                    f"There is no variable named {name!r} in the kernel. Variables: {names}."
                )
            return describe(name, found[name])

        text = _guarded(call, timeout, "describe_variable", work)
        return ToolOutput(text, [TextBlock(type="text", text=text)])

    @tool(kind="read")
    def notebook_history(call: Call, last: int = Field(20, ge=1, le=MAX_CELLS)) -> ToolOutput:
        """The last cells this kernel ran: each cell's input (In) and output (Out) by
        execution count, bounded."""
        text, _ = _guarded(call, timeout, "notebook_history", lambda: history(shell, last))
        return ToolOutput(text, [TextBlock(type="text", text=text)])

    @tool(
        kind="edit",
        preview=lambda code: [_code(code), TextBlock(type="text", text=PROPOSE_NOTE)],
    )
    def propose_cell(code: str) -> ToolOutput:
        """Propose a new code cell for the notebook: once allowed, it appears below the
        cell that runs this turn when that cell ends. It is not run."""
        placement = cells.propose(code)
        said = PLACEMENT_TEXT[placement]
        content: list[ContentBlock] = [_code(code), TextBlock(type="text", text=said)]
        return ToolOutput(said, content)

    return [run_python, list_variables, describe_variable, notebook_history, propose_cell]
