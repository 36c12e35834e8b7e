"""The text coalescer: streamed fragments leave at most once per ``FLUSH_INTERVAL``.

``append`` is a bare list append (the turn calls it once per fragment); a thread
of its own sends what has gathered, each message the new part only, tagged with
its UTF-16 offset (what JavaScript strings count). The agent's thoughts travel
the same way beside the text (``think``), through the same thread, as a second
channel with its own offset: they never enter the text.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable
from typing import Final

from .protocol import clean_text

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["FLUSH_INTERVAL", "TextStream", "error_text", "utf16_len"]

FLUSH_INTERVAL: Final = 0.03
"""Seconds between two text messages, at most one message per interval."""
IDLE_EXIT: Final = 2.0
"""Seconds without text after which the thread ends once ``still_wanted()`` says so."""
IDLE_WAIT: Final = 1.0
"""Longest sleep of the text thread while no text is buffered (a fragment wakes it at once)."""

Emit = Callable[[int, str, bool], None]
"""``emit(start, delta, send)``: store ``delta`` at UTF-16 offset ``start``; send it if asked."""


class _Channel:
    """One stream of fragments: what is buffered, and the UTF-16 offset sent so far."""

    def __init__(self, emit: Emit) -> None:
        self.emit = emit
        self.pending: list[str] = []
        self.offset = 0

    def reset(self) -> None:
        self.pending.clear()
        self.offset = 0

    def take(self) -> str:
        """Remove and join what is buffered (lock held)."""
        count = len(self.pending)
        if not count:
            return ""
        parts = self.pending[:count]
        del self.pending[:count]
        return "".join(p if isinstance(p, str) else str(p) for p in parts)

    def put(self, delta: str, send: bool) -> None:
        start = self.offset
        self.offset += utf16_len(delta)
        self.emit(start, delta, send)


def error_text(error: BaseException) -> str:
    """How a turn's error reads in the view: its type and message, at most 500 characters."""
    if isinstance(error, KeyboardInterrupt):
        return "interrupted (KeyboardInterrupt)"
    message = str(error)
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return clean_text(text, 500)


def utf16_len(text: str) -> int:
    """The length of ``text`` as JavaScript counts it."""
    return len(text.encode("utf-16-le")) // 2


class TextStream:
    """Buffers streamed fragments and hands them to ``emit`` under ``lock``."""

    def __init__(
        self,
        lock: threading.RLock,
        emit: Emit,
        still_wanted: Callable[[], bool],
        emit_thought: Emit | None = None,
    ) -> None:
        self._lock = lock
        self._still_wanted = still_wanted
        self._text = _Channel(emit)
        self._thoughts = _Channel(emit_thought or (lambda start, delta, send: None))
        self.pending = self._text.pending
        self.next_flush = 0.0
        self._stop: threading.Event | None = None
        self._wake = threading.Event()
        self._sleeping = False

    @property
    def offset(self) -> int:
        """The UTF-16 length of the text handed to ``emit`` so far."""
        return self._text.offset

    def reset(self) -> None:
        """Forget everything for a new turn; lock held."""
        self._text.reset()
        self._thoughts.reset()
        self.next_flush = time.monotonic() + FLUSH_INTERVAL

    def append(self, fragment: str) -> None:
        """Buffer one fragment (lock-free: list.append is atomic, only :meth:`flush` removes).

        Wakes the text thread if it sleeps for want of text.
        """
        self.pending.append(fragment)
        if self._sleeping:
            self._wake.set()

    def think(self, fragment: str) -> None:
        """Buffer one fragment of the agent's thoughts, as :meth:`append` does text."""
        self._thoughts.pending.append(fragment)
        if self._sleeping:
            self._wake.set()

    def position(self) -> int:
        """The UTF-16 length of all text so far, buffered text included."""
        return self.offset + sum(utf16_len(p) for p in list(self.pending))

    def buffered_chars(self) -> int:
        """Characters buffered and not yet flushed."""
        return sum(len(p) for p in list(self.pending))

    def due(self) -> bool:
        """Whether a message may leave now."""
        return time.monotonic() >= self.next_flush

    def flush(self, *, send: bool = True) -> None:
        """Move the buffered thoughts and text to their ``emit`` (sent unless ``send`` is false)."""
        with self._lock:
            thought = self._thoughts.take()
            if thought:
                self._thoughts.put(thought, send)
            delta = self._text.take()
            if delta:
                self._text.put(delta, send)
            if thought or delta:
                # From when the message has left, so that two never fall in one interval.
                self.next_flush = time.monotonic() + FLUSH_INTERVAL

    def put(self, delta: str, *, send: bool) -> None:
        """Hand ``delta`` to ``emit`` at the current offset; lock held."""
        self._text.put(delta, send)
        self.next_flush = time.monotonic() + FLUSH_INTERVAL

    def _buffered(self) -> bool:
        return bool(self._text.pending or self._thoughts.pending)

    def start(self) -> None:
        """Start the text thread unless one is running; each has its own stop event."""
        with self._lock:
            if self._stop is not None:
                return
            stop = self._stop = threading.Event()
        threading.Thread(
            target=contextvars.copy_context().run,
            args=(self._loop, stop),
            name="mead-widget-text",
            daemon=True,
        ).start()

    def stop(self) -> None:
        """Tell the text thread to end, without waiting for it to wake up."""
        with self._lock:
            if self._stop is not None:
                self._stop.set()
                self._stop = None
                self._wake.set()

    def _loop(self, stop: threading.Event) -> None:
        idle_since = time.monotonic()
        try:
            while not stop.is_set():
                now = time.monotonic()
                if not self._buffered():
                    if now - idle_since > IDLE_EXIT and not self._still_wanted():
                        return
                    self._sleep(stop)
                    continue
                idle_since = now
                if now < self.next_flush:
                    stop.wait(self.next_flush - now)
                    continue
                self.flush()
        except Exception:
            log.exception("sending streamed text failed")
        finally:
            with self._lock:
                ended = self._stop is stop
                if ended:
                    self._stop = None
            if ended and self._buffered():
                self.start()

    def _sleep(self, stop: threading.Event) -> None:
        """Wait for text (or the stop) without waking every interval."""
        self._sleeping = True
        try:
            if not self._buffered() and not stop.is_set():
                self._wake.wait(IDLE_WAIT)
        finally:
            self._sleeping = False
            self._wake.clear()
