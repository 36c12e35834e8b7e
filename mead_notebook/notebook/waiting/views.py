"""Whether anybody can still see a question that waits, and bringing it back to a new view.

A view can go away while a question waits without a word to the kernel: a
reopened VS Code editor is a new webview that knows no widget (the output turns
blank and nothing reaches the kernel), a browser crashes, a tab is closed. While
a question of the widget waits, the kernel pings its views every
``ping_every`` seconds (:class:`Timing`) and every view answers with a pong; a
ping with no pong within ``answer_within`` seconds means that no view is left.
A view that is disposed says ``gone``, and the kernel pings at once. With no view
left the widget is announced again (``announce``) at once and then every
``announce_every`` seconds, until a view renders it or answers a ping, so that a
view that comes back gets the question within a few seconds. A view that renders
says so (``rendered``), which ends the announcing at once.

The cost while a view is there: one small message each way per ``ping_every``,
and a wake of the waiting thread when each ping's ``answer_within`` ends.
The timing is one kernel-wide setting (:func:`set_timing`), read whenever a
question starts to wait.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any, Final

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = [
    "ANNOUNCE_EVERY",
    "ANSWER_WITHIN",
    "PING_EVERY",
    "REOPENS",
    "Presence",
    "Reopens",
    "Timing",
    "current_timing",
    "set_timing",
]

PING_EVERY: Final = 3.0
"""How often a waiting question asks its views whether they are there (seconds)."""
ANSWER_WITHIN: Final = 1.5
"""How long a ping waits for a pong before no view is thought left (seconds)."""
ANNOUNCE_EVERY: Final = 3.0
"""How often the widget is announced again while no view is left (seconds)."""


@dataclasses.dataclass(frozen=True)
class Timing:
    """How a waiting question checks on its views, in seconds (see the module's text).

    ``answer_within`` must be shorter than ``ping_every``; every value is a
    positive finite number.
    """

    ping_every: float = PING_EVERY
    answer_within: float = ANSWER_WITHIN
    announce_every: float = ANNOUNCE_EVERY

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{field.name} must be a number of seconds, not {value!r}")
            if not math.isfinite(value) or value <= 0:
                raise ValueError(
                    f"{field.name} must be a positive number of seconds, not {value!r}"
                )
        if self.answer_within >= self.ping_every:
            raise ValueError(
                f"answer_within ({self.answer_within!r}) must be shorter than "
                f"ping_every ({self.ping_every!r})"
            )


_timing = Timing()
_timing_lock = threading.Lock()


def current_timing() -> Timing:
    """The kernel-wide timing of the checks on views."""
    with _timing_lock:
        return _timing


def set_timing(new: Timing | None = None, /, **changes: float) -> Timing:
    """Set the kernel-wide timing (``new``, or the current one with ``changes``); return
    the one it replaces. A question that waits already keeps its timing until it ends.

    ``set_timing(ping_every=0.5, answer_within=0.2)`` checks faster (tests);
    ``set_timing(Timing())`` restores the defaults.
    """
    global _timing
    with _timing_lock:
        old = _timing
        _timing = dataclasses.replace(new if new is not None else old, **changes)
        return old


class Presence:
    """The pings of one widget while its questions wait; safe from any thread.

    ``ping(seq)`` sends a ping to every view; ``announce()`` shows the widget again
    (for a view that knows nothing of it); ``wake()`` wakes the waiting threads so
    that they call :meth:`tick` now. ``timing`` fixes the timing (None: the
    kernel-wide :func:`current_timing` at each :meth:`start`).
    """

    def __init__(
        self,
        ping: Callable[[int], None],
        announce: Callable[[], None],
        wake: Callable[[], None],
        *,
        timing: Timing | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fixed = timing
        self.timing = timing if timing is not None else current_timing()
        self._ping = ping
        self._announce = announce
        self._wake = wake
        self._clock = clock
        self._lock = threading.Lock()
        self._seq = 0
        self._sent: float | None = None
        """When the last ping went out, while it has no pong (None: answered)."""
        self._lost = False
        """No view is left: announce every ``announce_every`` seconds instead of pinging."""
        self._next: float | None = None
        """When :meth:`tick` acts next (None: no question waits)."""
        self.announced = 0
        """How many times the widget was announced again (for tests and benchmarks)."""

    def start(self) -> None:
        """A question waits: ping from ``ping_every`` seconds on (a running schedule is kept)."""
        with self._lock:
            if self._next is None:
                if self._fixed is None:
                    self.timing = current_timing()
                self._next = self._clock() + self.timing.ping_every
                self._sent = None
                self._lost = False

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
            if self._lost or self._sent is not None:
                self._lost, self._sent = True, None
                self._next = now + self.timing.announce_every
                self.announced += 1
                action = self._announce
            else:
                action = self._ping_now(now)
        self._call(action)

    def _ping_now(self, now: float) -> Callable[[], None]:
        self._seq += 1
        self._sent = now
        self._next = now + self.timing.answer_within
        seq = self._seq
        return lambda: self._ping(seq)

    def pong(self, seq: int) -> None:
        """A view answered ping ``seq``: somebody is there (late or not)."""
        with self._lock:
            if seq != self._seq or (self._sent is None and not self._lost):
                return
            if self._next is not None:
                since = self._sent if self._sent is not None else self._clock()
                self._next = since + self.timing.ping_every
            self._sent = None
            self._lost = False

    def rendered(self) -> None:
        """A view rendered the widget: somebody is there."""
        with self._lock:
            if self._next is not None and (self._lost or self._sent is not None):
                self._next = self._clock() + self.timing.ping_every
            self._sent = None
            self._lost = False

    def gone(self) -> None:
        """A view was disposed: ping now, in case it was the last one."""
        with self._lock:
            if self._next is None or self._lost or self._sent is not None:
                return
            action = self._ping_now(self._clock())
        self._call(action)
        self._wake()

    @staticmethod
    def _call(action: Callable[[], None]) -> None:
        try:
            action()
        except Exception:
            log.exception("could not reach the widget's views")


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
