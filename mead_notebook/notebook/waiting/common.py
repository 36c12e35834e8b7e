"""What every kernel's waiting shares: the watched widgets, open waits and the main waker."""

from __future__ import annotations

import collections
import contextlib
import contextvars
import logging
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Protocol

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())


class Widget(Protocol):
    """What waiting needs of a widget: its comm and a thread-safe ``deliver``."""

    @property
    def comm(self) -> Any: ...

    def deliver(self, content: dict[str, Any]) -> None: ...


def comm_id_of(widget: Widget) -> str:
    """The id of the widget's open comm (``TypeError`` if it has none)."""
    comm_id = getattr(getattr(widget, "comm", None), "comm_id", None)
    if not isinstance(comm_id, str):
        raise TypeError("the widget has no open comm to wait on")
    return comm_id


def custom_content(data: object) -> dict[str, Any] | None:
    """The content of a widget ``custom`` message, or None for anything else."""
    if not isinstance(data, dict) or data.get("method") != "custom":
        return None
    content = data.get("content")
    return content if isinstance(content, dict) else None


class Target:
    """A watched widget, held weakly when it can be, so that watching never keeps it alive.

    Deliveries run in a copy of the context of the thread that last watched the
    widget, so what the widget sends from another thread carries that cell's parent
    (on ipykernel 7.0 a thread without one cannot publish at all).
    """

    def __init__(self, widget: Widget, gone: Callable[[], None]) -> None:
        self._ref: Callable[[], Widget | None]
        try:
            self._ref = weakref.ref(widget, lambda _: gone())
        except TypeError:
            self._ref = lambda: widget
        self.context = contextvars.copy_context()

    def deliver(self, data: object) -> bool:
        """Hand a ``custom`` message's content to the widget; return whether it was one."""
        content = custom_content(data)
        widget = self._ref()
        if content is None or widget is None:
            return False
        try:
            self.context.copy().run(widget.deliver, content)
        except Exception:
            log.exception("widget.deliver raised")
        return True


class Watched:
    """The widgets whose frontend messages are forwarded now, by comm id."""

    def __init__(self) -> None:
        self._targets: dict[str, Target] = {}
        self._lock = threading.RLock()  # a widget can be collected while it is held
        self._listeners: list[Callable[[], None]] = []

    def add(self, widget: Widget) -> None:
        comm_id = comm_id_of(widget)
        with self._lock:
            target = self._targets.get(comm_id)
            if target is not None:
                target.context = contextvars.copy_context()
                return
            self._targets[comm_id] = Target(widget, lambda: self._drop(comm_id))
        self._changed()

    def remove(self, widget: Widget) -> None:
        comm_id = getattr(getattr(widget, "comm", None), "comm_id", None)
        if isinstance(comm_id, str):
            self._drop(comm_id)

    def has(self, widget: Widget) -> bool:
        comm_id = getattr(getattr(widget, "comm", None), "comm_id", None)
        with self._lock:
            return comm_id in self._targets

    def __contains__(self, comm_id: object) -> bool:
        with self._lock:
            return comm_id in self._targets

    def __len__(self) -> int:
        with self._lock:
            return len(self._targets)

    def deliver(self, comm_id: object, data: object) -> bool:
        """Forward a ``comm_msg``'s data if its comm is watched; return whether it was."""
        with self._lock:
            target = self._targets.get(comm_id) if isinstance(comm_id, str) else None
        return target is not None and target.deliver(data)

    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after each change (from the thread that made it)."""
        with self._lock:
            self._listeners.append(listener)

    def _drop(self, comm_id: str) -> None:
        with self._lock:
            if self._targets.pop(comm_id, None) is None:
                return
        self._changed()

    def _changed(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener()
            except Exception:
                log.exception("a watch listener raised")


class Delivered:
    """The ids of the last messages the shell tap delivered already (bounded)."""

    def __init__(self, keep: int = 256) -> None:
        self._ids: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._keep = keep
        self._lock = threading.Lock()

    def add(self, msg_id: object) -> None:
        if not isinstance(msg_id, str):
            return
        with self._lock:
            self._ids[msg_id] = None
            while len(self._ids) > self._keep:
                self._ids.popitem(last=False)

    def take(self, msg_id: object) -> bool:
        """Whether ``msg_id`` was delivered already (forgotten from now on)."""
        with self._lock:
            return isinstance(msg_id, str) and self._ids.pop(msg_id, False) is None


class Waits:
    """The waits in progress (a question waiting for its answer), in any thread.

    The main thread serves a connecting page only inside :meth:`serving`, and a wait
    ends only outside it: so a turn whose question was answered meanwhile cannot
    start a tool (which may create widgets) while the page is still being served.
    """

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()
        self._serving = threading.RLock()
        self._listeners: list[Callable[[], None]] = []

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        with self._lock:
            self._count += 1
            started = self._count == 1
            listeners = list(self._listeners) if started else []
        for listener in listeners:
            try:
                listener()
            except Exception:
                log.exception("a wait listener raised")
        try:
            yield
        finally:
            with self._serving, self._lock:
                self._count -= 1

    def any(self) -> bool:
        return self._count > 0

    @contextlib.contextmanager
    def serving(self) -> Iterator[bool]:
        """Keep every wait from ending meanwhile; yield whether one is in progress."""
        with self._serving:
            yield self._count > 0

    def on_start(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` whenever a first wait starts; return what unsubscribes it."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe


class Waker:
    """A self-pipe that wakes the main thread's wait (it polls it with the shell socket)."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)

    def fileno(self) -> int:
        return self._read

    def set(self) -> None:
        with contextlib.suppress(BlockingIOError):  # full: it is set already
            os.write(self._write, b"\0")

    def clear(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read, 4096):
                pass


WATCHED = Watched()
WAITS = Waits()
DELIVERED = Delivered()
_waker: Waker | None = None
_waker_lock = threading.Lock()


def waker() -> Waker:
    """The process's main-thread waker, made on first use."""
    global _waker
    with _waker_lock:
        if _waker is None:
            _waker = Waker()
        return _waker
