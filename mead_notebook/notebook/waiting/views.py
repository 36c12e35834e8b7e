"""Whether anybody can still see a question that waits, and bringing it back to a new view.

A view can go away while a question waits without a word to the kernel: a
reopened VS Code editor is a new webview that knows no widget (the output turns
blank and nothing reaches the kernel), a browser crashes, a tab is closed. While
a question of the widget waits, the kernel pings its views every
:data:`PING_EVERY` seconds and every view answers with a pong; a ping still
unanswered when the next one is due means that no view is left. A view that is
disposed says ``gone``, and the kernel then pings at once and waits only
:data:`ANSWER_WITHIN` seconds for a pong. With no view left the widget is
announced again (``announce``) every :data:`ANNOUNCE_EVERY` seconds, until a view
renders it or answers a ping, so that a view that comes back gets the question
within a few seconds.

The cost while a view is there: one small message each way, and one wake of the
waiting thread, per ``PING_EVERY``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Final

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["ANNOUNCE_EVERY", "ANSWER_WITHIN", "PING_EVERY", "REOPENS", "Presence", "Reopens"]

PING_EVERY: Final = 8.0
"""How often a waiting question asks its views whether they are there (seconds)."""
ANSWER_WITHIN: Final = 2.0
"""How long the ping after a goodbye waits for a pong (seconds)."""
ANNOUNCE_EVERY: Final = 4.0
"""How often the widget is announced again while no view is left (seconds)."""


class Presence:
    """The pings of one widget while its questions wait; safe from any thread.

    ``ping(seq)`` sends a ping to every view; ``announce()`` shows the widget again
    (for a view that knows nothing of it); ``wake()`` wakes the waiting threads so
    that they call :meth:`tick` now.
    """

    def __init__(
        self,
        ping: Callable[[int], None],
        announce: Callable[[], None],
        wake: Callable[[], None],
        *,
        every: float = PING_EVERY,
        within: float = ANSWER_WITHIN,
        again: float = ANNOUNCE_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.every = every
        self.within = within
        self.again = again
        self._ping = ping
        self._announce = announce
        self._wake = wake
        self._clock = clock
        self._lock = threading.Lock()
        self._seq = 0
        self._unanswered = False
        """The last ping has had no pong yet."""
        self._lost = False
        """No view is left: announce every ``again`` seconds instead of pinging."""
        self._next: float | None = None
        """When :meth:`tick` acts next (None: no question waits)."""
        self.announced = 0
        """How many times the widget was announced again (for tests and benchmarks)."""

    def start(self) -> None:
        """A question waits: ping from ``every`` seconds on (a running schedule is kept)."""
        with self._lock:
            if self._next is None:
                self._next = self._clock() + self.every
                self._unanswered = self._lost = False

    def stop(self) -> None:
        """No question waits any more: stop pinging."""
        with self._lock:
            self._next = None

    def due(self) -> float:
        """Seconds until :meth:`tick` has something to do (``inf`` when nothing waits)."""
        with self._lock:
            if self._next is None:
                return float("inf")
            return max(0.0, self._next - self._clock())

    def tick(self) -> None:
        """Do what is due: ping, or announce again when the last ping went unanswered."""
        action: Callable[[], None]
        with self._lock:
            now = self._clock()
            if self._next is None or now < self._next:
                return
            if self._lost or self._unanswered:
                self._lost, self._unanswered = True, False
                self._next = now + self.again
                self.announced += 1
                action = self._announce
            else:
                self._seq += 1
                self._unanswered = True
                self._next = now + self.every
                seq = self._seq
                action = lambda: self._ping(seq)  # noqa: E731
        try:
            action()
        except Exception:
            log.exception("could not reach the widget's views")

    def pong(self, seq: int) -> None:
        """A view answered ping ``seq``: somebody is there."""
        with self._lock:
            if seq == self._seq:
                self._seen()

    def rendered(self) -> None:
        """A view rendered the widget: somebody is there."""
        with self._lock:
            self._seen()

    def _seen(self) -> None:
        if self._next is not None and (self._lost or self._unanswered):
            self._next = self._clock() + self.every
        self._unanswered = self._lost = False

    def gone(self) -> None:
        """A view was disposed: ping now, in case it was the last one, and wait briefly."""
        with self._lock:
            if self._next is None or self._lost:
                return
            self._seq += 1
            seq = self._seq
            self._unanswered = True
            self._next = self._clock() + self.within
        try:
            self._ping(seq)
        except Exception:
            log.exception("could not reach the widget's views")
        self._wake()


class Reopens:
    """Announcing widgets again: a new comm with the same model id, at most so often each.

    The frontend learns the model again from the new ``comm_open`` (with its whole
    state), under the id that the notebook's outputs already name; a page that had
    the model registers the new one in its place. Safe from any thread that may
    publish to the frontend.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}

    def reopen(self, widget: object, *, at_most_every: float = 0.0) -> bool:
        """Close the widget's comm and open a new one with its id; return whether it was done.

        Nothing is done for a widget without an open comm, or one reopened less than
        ``at_most_every`` seconds ago.
        """
        comm: Any = getattr(widget, "comm", None)
        comm_id = getattr(comm, "comm_id", None)
        if comm is None or not isinstance(comm_id, str):
            return False
        with self._lock:
            now = self._clock()
            last = self._last.get(comm_id)
            if last is not None and now - last < at_most_every:
                return False
            self._last[comm_id] = now
        # Replaced, never closed: a comm_close would make a page that has the model
        # (a JupyterLab tab that is loading) drop its views for good. The old comm
        # must not send one when it is collected either. ipywidgets' Widget.close()
        # would also drop the widget's _repr_mimebundle_. open() reuses the model id
        # the widget remembers, and the kernel's comm manager now routes it to the new comm.
        comm._closed = True
        widget.comm = None  # type: ignore[attr-defined]
        widget.open()  # type: ignore[attr-defined]
        return True


REOPENS = Reopens()
