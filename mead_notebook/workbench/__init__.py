"""The notebook's kernel as the agent's workbench: its variables, its code, new cells.

``kernel_tools()`` returns five ordinary ``@tool``s bound to the IPython kernel
they are made in; a router takes them like any other::

    router = Router(model, tools=[*kernel_tools(), read_file])

===================== ======= ==================================================
tool                  kind    does
===================== ======= ==================================================
``run_python(code)``  execute runs ``code`` in the user namespace, as a cell would
``list_variables()``  read    the user's variables: name, type, a one-line summary
``describe_variable`` read    one variable, bounded (DataFrames, arrays, anything)
``notebook_history``  read    the cells this kernel ran (``In``/``Out``), bounded
``propose_cell(code)`` edit   a new cell below the turn's cell, not run
===================== ======= ==================================================

Each call is asked about like any other: the card of ``run_python`` and
``propose_cell`` shows the code before Allow, and once the code ran, what a cell
would show (output, value, figures, tables, traceback). What the code prints and
displays is kept for its card alone (:mod:`.capture`); the card's Cancel, a
kernel interrupt or the time limit stops it (:mod:`.stopping`, which says what
cannot be stopped).
"""

from __future__ import annotations

from typing import Any

from ..errors import NoKernelError
from ..tools import FunctionTool
from . import capture
from .tools import build

__all__ = ["DEFAULT_CAPTURE", "DEFAULT_OUTPUT", "kernel_tools"]

DEFAULT_OUTPUT = 8000
"""How many characters of a run's output the model gets, at most (with a note of the cut)."""
DEFAULT_CAPTURE = 1_000_000
"""How many characters of printed text one run keeps for its card."""


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = None
    shell = get_ipython() if get_ipython is not None else None
    if shell is None or not hasattr(shell, "user_ns"):
        raise NoKernelError(
            "kernel_tools() works inside an IPython kernel (a notebook's); none runs here"
        )
    return shell


def kernel_tools(
    timeout: float = 30.0,
    *,
    max_output: int = DEFAULT_OUTPUT,
    capture_limit: int = DEFAULT_CAPTURE,
) -> list[FunctionTool]:
    """The kernel's tools, bound to the IPython kernel this runs in.

    ``timeout``: seconds each call may run before it is stopped (``run_python``
    ends ``failed`` with outcome ``timeout``). ``max_output``: characters of a
    run's output the model gets. ``capture_limit``: characters of printed text
    one run keeps. Raises :class:`~mead_notebook.errors.NoKernelError` outside a
    kernel.
    """
    shell = _shell()
    capture.install(shell)
    return build(shell, timeout, max_output, capture_limit)
