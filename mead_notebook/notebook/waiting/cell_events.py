"""The turn widget's messages are not cells: they fire no end-of-cell hooks.

The ``comm`` package runs each comm message's handler between the shell's ``pre_execute``
and ``post_execute`` events, as if it were a cell of its own. For a person's own widget
between cells that is right: a callback that draws gets its figure shown. The turn
widget's messages (answers, pongs, a card's Cancel) arrive while a cell still runs (the
waiting handles them then, and an async cell lets the kernel do it) or while a
background turn's tool runs; ``post_execute`` there runs the end-of-cell hooks early:
matplotlib's inline backend shows every open figure in the cell at hand and closes it,
the cell's own and a running tool's alike. So their handler runs without the two events
(:func:`not_a_cell`); the cell fires both itself, at its start and its end.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final

__all__ = ["CELL_EVENTS", "mid_cell", "not_a_cell"]

CELL_EVENTS: Final = frozenset({"pre_execute", "post_execute"})

_HOOKED: Final = "_mead_mid_cell_hooked"


class _Depth(threading.local):
    depth = 0


_here = _Depth()


def _hook(events: Any) -> None:
    trigger: Callable[..., Any] = events.trigger
    if getattr(trigger, _HOOKED, False):
        return

    def hooked(event: str, *args: Any, **kwargs: Any) -> Any:
        if event in CELL_EVENTS and _here.depth:
            return None
        return trigger(event, *args, **kwargs)

    setattr(hooked, _HOOKED, True)
    events.trigger = hooked


@contextlib.contextmanager
def mid_cell(shell: Any) -> Iterator[None]:
    """While the block runs, this thread fires no ``pre_execute`` or ``post_execute``."""
    events = getattr(shell, "events", None)
    if events is None or not callable(getattr(events, "trigger", None)):
        yield
        return
    _hook(events)
    _here.depth += 1
    try:
        yield
    finally:
        _here.depth -= 1


def not_a_cell(comm: Any) -> None:
    """Make ``comm``'s messages run their handler without the shell's cell events."""
    handle = getattr(comm, "handle_msg", None)
    if handle is None or getattr(handle, _HOOKED, False):
        return

    def handle_msg(msg: Any) -> None:
        with mid_cell(_shell()):
            handle(msg)

    setattr(handle_msg, _HOOKED, True)
    comm.handle_msg = handle_msg


def _shell() -> Any:
    from IPython import get_ipython

    return get_ipython()
