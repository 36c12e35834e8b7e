"""Stopping code that runs in a tool's thread: a cancel, a kernel interrupt or the time limit.

Python has no way to kill a thread, but it can raise an exception in one: CPython's
``PyThreadState_SetAsyncExc`` makes the thread raise it at its next bytecode. A
:class:`Guard` does that, and only while the guarded code runs, so the exception
never lands in the tool's own bookkeeping nor in another thread that later has
the same id. It raises it again every :data:`RETRY_EVERY` seconds, at most
:data:`RETRIES` times, for code that catches it once.

What this cannot stop: a thread inside one long call into C (``time.sleep(600)``,
a big NumPy operation, a blocking socket read) raises only when that call
returns; code that catches ``BaseException`` every time never stops. The call
still ends at once (the router ends a cancelled call without waiting), the
kernel stays usable, and the thread finishes in the background, its output
dropped.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import threading
from collections.abc import Iterator
from typing import Literal

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["RETRIES", "RETRY_EVERY", "CodeCancelled", "CodeTimedOut", "Guard", "StopCode"]

RETRY_EVERY = 0.25
"""Seconds between two attempts to stop code that caught the first one."""
RETRIES = 20
"""Most attempts after the first."""


class StopCode(BaseException):
    """Raised inside running code to stop it; a ``BaseException``, so ``except Exception`` in
    the code does not catch it."""

    why: Literal["cancelled", "timeout"] = "cancelled"


class CodeCancelled(StopCode):
    """The call was cancelled (the card's Cancel, a kernel interrupt, the router's timeout)."""

    why: Literal["cancelled", "timeout"] = "cancelled"


class CodeTimedOut(StopCode):
    """The code ran past the tool's own time limit."""

    why: Literal["cancelled", "timeout"] = "timeout"


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> int:
    """Have thread ``thread_id`` raise ``exc`` at its next bytecode (None: forget a pending
    one); how many threads it reached."""
    return int(
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None
        )
    )


class Guard:
    """Runs code in the current thread so that another thread can stop it (once per guard)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: int | None = None
        self._stop: type[StopCode] | None = None
        self._left = threading.Event()

    @property
    def stopped(self) -> type[StopCode] | None:
        """Why the code was stopped (the first reason given), or None."""
        return self._stop

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Guard the block: :meth:`stop` raises in this thread while it runs, never after."""
        me = threading.get_ident()
        with self._lock:
            if self._stop is not None:
                raise self._stop()
            self._thread = me
        try:
            yield
        finally:
            self._leave(me)

    def _leave(self, me: int) -> None:
        while True:
            try:
                with self._lock:
                    self._thread = None
                    _raise_in(me, None)
                self._left.set()
                return
            except StopCode:  # raised between the block's end and the lock: forget it
                continue

    def stop(self, why: type[StopCode]) -> None:
        """From any thread: stop the guarded code with ``why`` (now or as soon as it starts)."""
        with self._lock:
            if self._stop is None:
                self._stop = why
            thread = self._thread
            if thread is None:
                return
            _raise_in(thread, self._stop)
        threading.Thread(
            target=self._insist, args=(thread,), name="mead-stop-code", daemon=True
        ).start()

    def _insist(self, thread: int) -> None:
        """Raise again in ``thread`` while the guarded code still runs (it caught the last)."""
        for _ in range(RETRIES):
            if self._left.wait(RETRY_EVERY):
                return
            with self._lock:
                if self._thread != thread or self._stop is None:
                    return
                _raise_in(thread, self._stop)
        if not self._left.is_set():
            log.warning("code in thread %s did not stop; it finishes in the background", thread)
