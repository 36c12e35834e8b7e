"""The cells this kernel ran: ``In`` and ``Out`` by execution count, bounded."""

from __future__ import annotations

from typing import Any, Final

from .report import cut
from .variables import bounded_repr

__all__ = ["MAX_CELL", "MAX_CELLS", "MAX_OUT", "history"]

MAX_CELLS: Final = 100
"""Most cells given back, whatever ``last`` asks."""
MAX_CELL: Final = 2000
"""Longest input of one cell, in characters."""
MAX_OUT: Final = 500
"""Longest output (``Out``) of one cell, in characters."""


def history(shell: Any, last: int) -> tuple[str, int]:
    """The last ``last`` cells (at most :data:`MAX_CELLS`) as text, and how many were given."""
    inputs = shell.user_ns.get("In")
    outputs = shell.user_ns.get("Out")
    cells = [
        (count, source)
        for count, source in enumerate(inputs if isinstance(inputs, list) else [])
        if count > 0 and isinstance(source, str) and source.strip()
    ]
    wanted = max(0, min(last, MAX_CELLS))
    chosen = cells[-wanted:] if wanted else []
    if not chosen:
        return "No cells with history were run in this kernel.", 0
    parts = []
    for count, source in chosen:
        parts.append(f"In [{count}]:\n{cut(source.rstrip(), MAX_CELL)}")
        if isinstance(outputs, dict) and count in outputs:
            parts.append(f"Out[{count}]: {cut(bounded_repr(outputs[count]), MAX_OUT)}")
    skipped = len(cells) - len(chosen)
    if skipped:
        parts.insert(0, f"[{skipped} earlier cells not shown]")
    return "\n".join(parts), len(chosen)
