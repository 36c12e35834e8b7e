"""Holding SIGINT while the main thread does something that must not stop half-way.

Used while a turn's thread starts and while a thread waits for the turn
(:class:`~mead_notebook.turn.Turn`), by the
notebook's main-thread pump while it reads the shell stream or dispatches a comm
message, and by the widget while it records the end of a turn. Off the main
thread it does nothing: SIGINT is only ever delivered to the main thread.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


class Interrupts:
    """A SIGINT handler that notes the interrupt instead of raising it at once.

    ipykernel's own handler would raise ``KeyboardInterrupt`` anywhere: half-way
    through flushing the shell stream (which then never sends again), inside a comm
    handler the pump dispatched (where the kernel swallows it), or half-way through
    recording a turn's end. This one only notes it, and raises it inside a handler
    (``raising``) so that a stuck handler still stops; :func:`held` raises it again
    afterwards.
    """

    def __init__(self) -> None:
        self.caught = False
        self.raising = False

    def __call__(self, signum: int, frame: object) -> None:
        self.caught = True
        if self.raising:
            raise KeyboardInterrupt

    def handler_starts(self) -> None:
        self.raising = True

    def handler_ends(self) -> None:
        self.raising = False


@contextlib.contextmanager
def held() -> Iterator[Interrupts]:
    """Install :class:`Interrupts`; afterwards deliver a caught SIGINT to the old handler."""
    interrupts = Interrupts()
    try:
        previous = signal.signal(signal.SIGINT, interrupts)
    except ValueError:  # not the main thread: SIGINT never lands here
        yield interrupts
        return
    try:
        yield interrupts
    finally:
        # signal.signal runs a pending handler first: ours must not raise then, or the
        # old handler would not be put back.
        interrupts.raising = False
        # None: a handler not set from Python, which cannot be put back.
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
        if interrupts.caught:
            signal.raise_signal(signal.SIGINT)
