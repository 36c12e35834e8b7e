"""Whether anybody can still see a question that waits, and bringing it back to a new view.

A view can go away while a question waits without a word to the kernel: a
reopened VS Code editor is a new webview that knows no widget (the output turns
blank and nothing reaches the kernel), a browser crashes, a tab is closed. While
a question of the widget waits, the kernel pings its views every ``ping_every``
seconds (:class:`Timing`) and every view answers with a pong. A page that is
busy (a big notebook loading, a reconnect storm) can miss a ping or two, so a
view is taken for gone only after ``misses`` pings in a row went unanswered: a
ping still unanswered when the next is due counts as missed, and the next ones
then follow every ``answer_within`` seconds. Anything a view sends (a pong, late
or not, an answer, ``rendered``) says that somebody is there and clears the
count. A view that is disposed says ``gone``: the kernel pings at once (or, while
no question waits, as soon as one does), and that ping alone decides
(``answer_within`` seconds). With no view left the widget is
announced again (``announce``) at once and then every ``announce_every``
seconds, until a view renders it or says anything, so that a view that comes
back gets the question within a few seconds.

The cost while a view is there: one small message each way, and one wake of
the waiting thread, per ``ping_every``. A view that vanishes is noticed
``ping_every + (misses - 1) * answer_within`` seconds after the first ping it
missed (:meth:`Timing.noticed_after`). The timing is one kernel-wide setting
(:func:`set_timing`), read whenever a question starts to wait.
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
    "MISSES",
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
"""How long a ping waits for a pong once one was missed or a view said goodbye (seconds)."""
MISSES: Final = 3
"""How many pings in a row must go unanswered before no view is thought left."""
ANNOUNCE_EVERY: Final = 3.0
"""How often the widget is announced again while no view is left (seconds)."""


@dataclasses.dataclass(frozen=True)
class Timing:
    """How a waiting question checks on its views (see the module's text).

    Seconds, each a positive finite number, ``answer_within`` shorter than
    ``ping_every``; ``misses`` is a whole number of pings, at least 1.
    """

    ping_every: float = PING_EVERY
    answer_within: float = ANSWER_WITHIN
    announce_every: float = ANNOUNCE_EVERY
    misses: int = MISSES

    def __post_init__(self) -> None:
        if isinstance(self.misses, bool) or not isinstance(self.misses, int):
            raise TypeError(f"misses must be a whole number of pings, not {self.misses!r}")
        if self.misses < 1:
            raise ValueError(f"misses must be at least 1, not {self.misses!r}")
        for name in ("ping_every", "answer_within", "announce_every"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a number of seconds, not {value!r}")
            if not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
        if self.answer_within >= self.ping_every:
            raise ValueError(
                f"answer_within ({self.answer_within!r}) must be shorter than "
                f"ping_every ({self.ping_every!r})"
            )

    def noticed_after(self) -> float:
        """Seconds from the first ping a vanished view missed to announcing the widget."""
        return self.ping_every + (self.misses - 1) * self.answer_within


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
        _timing = dataclasses.replace(new if new is not None else old, **changes)  # type: ignore[arg-type]
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
        self._pinged = 0.0
        """When the last ping went out (or the wait started)."""
        self._unanswered = False
        """The last ping has had no answer yet."""
        self._missed = 0
        """Pings in a row that went unanswered."""
        self._leaving = False
        """A view said goodbye: the ping that follows decides alone."""
        self._lost = False
        """No view is left: announce every ``announce_every`` seconds instead of pinging."""
        self._next: float | None = None
        """When :meth:`tick` acts next (None: no question waits)."""
        self._probed: float | None = None
        """When :meth:`probe` last pinged."""
        self.announced = 0
        """How many times the widget was announced again (for tests and benchmarks)."""

    def start(self) -> None:
        """A question waits: ping from ``ping_every`` seconds on, or at once after a goodbye
        that nothing was heard since (a running schedule is kept)."""
        with self._lock:
            if self._next is None:
                if self._fixed is None:
                    self.timing = current_timing()
                now = self._clock()
                self._next = now if self._leaving else now + self.timing.ping_every
                self._pinged = now
                self._unanswered = self._lost = False
                self._missed = 0

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
        """Do what is due: ping, count a missed ping, or announce once no view is left."""
        action: Callable[[], None]
        with self._lock:
            now = self._clock()
            if self._next is None or now < self._next:
                return
            if self._unanswered:
                self._missed += 1
                self._unanswered = False
                if self._leaving or self._missed >= self.timing.misses:
                    self._lost = True
            if self._lost:
                self._next = now + self.timing.announce_every
                self.announced += 1
                action = self._announce
            else:
                follow_up = self._missed > 0 or self._leaving
                action = self._ping_now(now, follow_up)
        self._call(action)

    def _ping_now(self, now: float, follow_up: bool) -> Callable[[], None]:
        self._seq += 1
        self._pinged = now
        self._unanswered = True
        every = self.timing.answer_within if follow_up else self.timing.ping_every
        self._next = now + every
        seq = self._seq
        return lambda: self._ping(seq)

    def probe(self) -> float:
        """No view has said that it rendered the widget while a question waits: ping now,
        at most every ``answer_within`` seconds, so that a view whose ``rendered`` was lost
        (sent before the kernel could hear it) answers. Seconds until the next probe."""
        with self._lock:
            now = self._clock()
            every = self.timing.answer_within
            if self._probed is not None and now - self._probed < every:
                return self._probed + every - now
            self._probed = now
            self._seq += 1
            seq = self._seq
        self._call(lambda: self._ping(seq))
        return every

    def pong(self, seq: int) -> None:
        """A view answered ping ``seq`` (late or not): somebody is there."""
        if 0 < seq <= self._seq:
            self.heard()

    def rendered(self) -> None:
        """A view rendered the widget: somebody is there."""
        self.heard()

    def heard(self) -> None:
        """A view said something: somebody is there; pings go on at their usual pace."""
        with self._lock:
            if self._next is not None and (self._lost or self._missed or self._leaving):
                since = self._clock() if self._lost else self._pinged
                self._next = since + self.timing.ping_every
            self._unanswered = self._lost = self._leaving = False
            self._missed = 0

    def gone(self) -> None:
        """A view was disposed: ping now, in case it was the last one (while no question
        waits: once one does, since the goodbye can reach the kernel first)."""
        with self._lock:
            if self._next is None:
                self._leaving = True
                return
            if self._lost:
                return
            self._leaving = True
            if self._unanswered:  # a ping is out already: it decides, within answer_within
                self._next = min(self._next, self._pinged + self.timing.answer_within)
                action = None
            else:
                action = self._ping_now(self._clock(), True)
        if action is not None:
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
