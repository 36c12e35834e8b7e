"""Blocking a turn until the widget answers, on every supported ipykernel.

While a cell runs, the kernel's main thread is busy and the frontend's comm
messages (a click on Allow, Cancel, an option) wait in the shell channel. This
module makes them reach ``widget.deliver(content)`` anyway. The mechanism
depends on the kernel (see :func:`mechanism`):

``comm-route-hook`` (ipykernel 7.4+)
    The shell channel thread asks each comm where to route a reply
    (``_reply_subshell_for``) before routing it; a hook on the widget's comm sees
    each verified ``comm_msg`` there, on a thread that is never blocked by a cell.
``shell-stream-tap`` (ipykernel 7.0 - 7.3)
    The same idea one step earlier: the receive callback of the shell channel
    thread's stream is wrapped. The tap verifies each message's signature without
    recording it (the kernel records it when it dispatches the message itself).
``main-pump`` (ipykernel 6, waiting on the main thread)
    The kernel reads shell messages on the main thread only, so the waiting main
    thread reads them itself: it dispatches ``comm_*`` messages and a connecting
    frontend's info requests at once and hands every other message back to the
    kernel's queue, in arrival order. An interrupt meanwhile is held while the
    shell stream is mid-way (it would be left unable to send the cell's reply),
    stops a comm handler that is running, and always reaches the waiting cell.
``main-loop`` (ipykernel 6, waiting on another thread)
    Nothing to do while the main thread is free; when it waits too (a later cell
    blocked on the turn) it pumps through :func:`poll` or :func:`serve_while`.
``plain``
    Outside a kernel: a plain ``Event.wait``.

The hooks only peek at a widget's own messages: the kernel still dispatches each
one as usual, so a widget sees an answer twice and must ignore the duplicate.
Hooks on 7.x stay in place for the comm's lifetime (they are cheap and
:func:`poll` relies on them).

A frontend that connects while a cell blocks (a page reload, a second tab) must get
``kernel_info_reply``, ``comm_info_reply`` and the widgets' state (ipywidgets'
control comm, or ``request_state`` per widget) before it can show the question.
ipykernel 6's pump dispatches those at once; on 7.x, while the main shell is busy,
the tap runs the kernel's own handlers for them on the shell channel thread (they
only read state) instead of queueing them behind the cell.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import logging
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Final, Protocol

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = [
    "UnsupportedKernelError",
    "mechanism",
    "poll",
    "serve_while",
    "wait_for",
    "watch",
]

PLAIN: Final = "plain"
MAIN_LOOP: Final = "main-loop"
MAIN_PUMP: Final = "main-pump"
STREAM_TAP: Final = "shell-stream-tap"
ROUTE_HOOK: Final = "comm-route-hook"

SLICE = 0.02
"""Longest sleep between two checks while waiting (seconds)."""
INSTALL_TIMEOUT = 5.0
"""Bound on installing the tap from the shell channel thread (seconds)."""
KICK_INTERVAL_MS = 100
"""How often the shell channel thread re-checks its socket for unread messages (7.0 - 7.3)."""

_COMM_TYPES = frozenset({"comm_open", "comm_msg", "comm_close"})
_INFO_TYPES = frozenset({"kernel_info_request", "comm_info_request"})
"""Requests a connecting frontend sends before it can show a widget."""
_AT_ONCE = _COMM_TYPES | _INFO_TYPES
"""What ipykernel 6's pump dispatches at once instead of leaving it behind the cell."""
_WIDGET_TARGET = "jupyter.widget"
_CONTROL_TARGET = "jupyter.widget.control"
"""ipywidgets' comm for fetching every widget's state at once (what a reload asks first)."""
_INSTEAD = (
    "in this kernel a synchronous cell cannot receive the widget's answers while it "
    "blocks; use `await router.arun(...)` in an async cell, or `router.start(...)` "
    "and let the cell return"
)


class Widget(Protocol):
    """What this module needs of a widget: its comm and a thread-safe ``deliver``."""

    @property
    def comm(self) -> Any: ...

    def deliver(self, content: dict[str, Any]) -> None: ...


class UnsupportedKernelError(RuntimeError):
    """The running kernel lacks a piece a waiting mechanism relies on."""


# -- entry points -----------------------------------------------------------------


def mechanism(thread: threading.Thread | None = None) -> str:
    """The name of the mechanism that waiting in ``thread`` (default: this one) uses."""
    kernel = _kernel()
    if kernel is None:
        return PLAIN
    if _has_shell_channel_thread(kernel):
        return ROUTE_HOOK if _kernel_asks_comms(kernel) else STREAM_TAP
    thread = thread or threading.current_thread()
    return MAIN_PUMP if thread is threading.main_thread() else MAIN_LOOP


def wait_for(widget: Widget, event: threading.Event, timeout: float | None) -> bool:
    """Block until ``event`` is set or ``timeout`` seconds pass; return whether it was set.

    Meanwhile the frontend's custom messages for ``widget`` reach ``widget.deliver``.
    A ``KeyboardInterrupt`` propagates after whatever was changed is restored.
    Raises :class:`UnsupportedKernelError` when this kernel cannot deliver them.
    """
    kind = mechanism()
    if kind == PLAIN:
        return event.wait(timeout)
    kernel = _kernel()
    assert kernel is not None
    if kind in (ROUTE_HOOK, STREAM_TAP):
        _watch(kernel, widget, kind)
    pump = _MainPump.of(kernel) if kind == MAIN_PUMP else None
    deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
    while True:
        if pump is not None:
            pump.pump()
        if event.is_set():
            return True
        if deadline is None:
            step = SLICE
        else:
            step = min(SLICE, deadline - time.monotonic())
            if step <= 0:
                return event.is_set()
        if event.wait(step):
            return True


def watch(widget: Widget) -> None:
    """Start forwarding the widget's frontend messages now, without waiting or pumping.

    Call it as soon as the widget's comm is open (before displaying it): on 7.x a
    message that arrives before the hook is in place (such as ``rendered``) is only
    dispatched once the cell ends. :func:`wait_for` and :func:`poll` call it too.
    """
    kind = mechanism()
    kernel = _kernel()
    if kernel is not None and kind in (ROUTE_HOOK, STREAM_TAP):
        _watch(kernel, widget, kind)


def poll(widget: Widget) -> None:
    """Deliver the widget's pending frontend messages now, without blocking."""
    kind = mechanism()
    kernel = _kernel()
    if kernel is None:
        return
    if kind in (ROUTE_HOOK, STREAM_TAP):
        _watch(kernel, widget, kind)
    elif kind == MAIN_PUMP:
        _MainPump.of(kernel).pump()


async def serve_while(
    done: Callable[[], bool], widget: Widget | None = None, interval: float = SLICE
) -> None:
    """Keep comm messages flowing while an async cell awaits a turn in another thread.

    Returns once ``done()`` is true (or when cancelled). On ipykernel 6 the kernel's
    loop runs this coroutine but holds every shell message until the cell ends, so
    comm messages are dispatched from here; on 7.x the hooks do the work.
    """
    kernel = _kernel()
    interval = max(0.001, interval)
    if widget is not None:
        poll(widget)
    if kernel is None or _has_shell_channel_thread(kernel):
        while not done():
            await asyncio.sleep(interval)
        return
    if threading.current_thread() is not threading.main_thread():
        raise UnsupportedKernelError(
            "serve_while must run on the kernel's main thread (the cell's event loop)"
        )
    pump = _MainPump.of(kernel)
    with pump.diverted():
        while not done():
            await asyncio.sleep(interval)


# -- finding the kernel -----------------------------------------------------------


def _kernel() -> Any | None:
    """The running ipykernel, or None outside one (without importing ipykernel)."""
    module = sys.modules.get("ipykernel.kernelbase")
    if module is None:
        return None
    kernel_class = getattr(module, "Kernel", None)
    if kernel_class is None or not kernel_class.initialized():
        return None
    return kernel_class.instance()


def _has_shell_channel_thread(kernel: Any) -> bool:
    return getattr(kernel, "shell_channel_thread", None) is not None


def _main_busy(kernel: Any) -> bool:
    """Whether the main shell is handling a message (a cell is running) on 7.x."""
    lock = getattr(kernel, "_main_asyncio_lock", None)
    locked = getattr(lock, "locked", None)
    return bool(locked()) if callable(locked) else False


def _kernel_asks_comms(kernel: Any) -> bool:
    """Whether the shell channel thread calls ``comm._reply_subshell_for`` (7.4+)."""
    handler = getattr(type(kernel), "shell_channel_thread_main", None)
    code = getattr(handler, "__code__", None)
    return code is not None and "_reply_subshell_for" in code.co_consts


def _require(obj: Any, name: str, what: str) -> Any:
    value = getattr(obj, name, None)
    if value is None:
        version = _ipykernel_version()
        raise UnsupportedKernelError(
            f"ipykernel {version} has no {what} ({type(obj).__name__}.{name}): {_INSTEAD}"
        )
    return value


def _ipykernel_version() -> str:
    module = sys.modules.get("ipykernel")
    return str(getattr(module, "__version__", "?"))


# -- delivering -------------------------------------------------------------------


def _custom_content(data: object) -> dict[str, Any] | None:
    """The content of a widget ``custom`` message, or None for anything else."""
    if not isinstance(data, dict) or data.get("method") != "custom":
        return None
    content = data.get("content")
    return content if isinstance(content, dict) else None


def _asks_state(data: object) -> bool:
    return isinstance(data, dict) and data.get("method") == "request_state"


class _Target:
    """A widget held weakly when it can be, so a hook never keeps it alive.

    Deliveries run in a copy of the context of the thread that last waited for the
    widget, so what the widget sends from a hook carries that cell's parent (on
    ipykernel 7.0 a thread without it cannot publish at all).
    """

    def __init__(self, widget: Widget) -> None:
        self._ref: Callable[[], Widget | None]
        try:
            self._ref = weakref.ref(widget)
        except TypeError:
            self._ref = lambda: widget
        self.context = contextvars.copy_context()

    def deliver(self, data: object) -> None:
        content = _custom_content(data)
        widget = self._ref()
        if content is None or widget is None:
            return
        try:
            self.context.copy().run(widget.deliver, content)
        except Exception:
            log.exception("widget.deliver raised")


def _watch(kernel: Any, widget: Widget, kind: str) -> None:
    """Make sure a hook forwards this widget's messages (idempotent)."""
    comm = getattr(widget, "comm", None)
    comm_id = getattr(comm, "comm_id", None)
    if comm is None or not isinstance(comm_id, str):
        raise TypeError("the widget has no open comm to wait on")
    tap = _StreamTap.of(kernel)
    tap.context = contextvars.copy_context()
    if kind == ROUTE_HOOK:
        _install_route_hook(comm, widget)
    else:
        tap.watch(comm_id, widget)


def _install_route_hook(comm: Any, widget: Widget) -> None:
    """Wrap the comm's ``_reply_subshell_for``, which the shell channel thread calls."""
    current = getattr(comm, "_reply_subshell_for", None)
    if current is None:
        raise UnsupportedKernelError(
            f"the widget's comm ({type(comm).__name__}) has no _reply_subshell_for: {_INSTEAD}"
        )
    installed = getattr(current, "_mead_target", None)
    if isinstance(installed, _Target):
        installed.context = contextvars.copy_context()
        return
    target = _Target(widget)

    def route(data: object, default: object) -> object:
        target.deliver(data)
        return current(data, default)

    route._mead_target = target  # type: ignore[attr-defined]
    comm._reply_subshell_for = route


class _StreamTap:
    """A wrapper around the shell channel thread's receive callback (7.x).

    While the main shell is busy it serves a connecting frontend: it answers info
    requests, ipywidgets' control comm and ``request_state`` itself, which only read
    state. On 7.0 - 7.3 (no route hook) it also forwards the watched widgets' messages.
    """

    _taps: ClassVar[weakref.WeakKeyDictionary[Any, _StreamTap]] = weakref.WeakKeyDictionary()
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.session = _require(kernel, "session", "session")
        self.stream = _require(kernel, "shell_stream", "shell stream")
        thread = _require(kernel, "shell_channel_thread", "shell channel thread")
        self.io_loop = _require(thread, "io_loop", "shell channel loop")
        self.thread = thread
        self.context = contextvars.copy_context()
        self.targets: dict[str, _Target] = {}
        self.original: Callable[[list[Any]], Any] | None = None
        self.kick: Any = None

    @classmethod
    def of(cls, kernel: Any) -> _StreamTap:
        with cls._lock:
            tap = cls._taps.get(kernel)
            if tap is None:
                tap = cls(kernel)
                tap._install()
                cls._taps[kernel] = tap
            return tap

    def watch(self, comm_id: str, widget: Widget) -> None:
        with self._lock:
            target = self.targets.get(comm_id)
            if target is None:
                self.targets[comm_id] = _Target(widget)
            else:
                target.context = contextvars.copy_context()

    def _install(self) -> None:
        installed = threading.Event()
        failure: list[BaseException] = []

        def install() -> None:
            try:
                original = getattr(self.stream, "_recv_callback", None)
                if original is None or not callable(self.stream.on_recv):
                    raise UnsupportedKernelError(
                        "the shell stream has no receive callback to wrap: " + _INSTEAD
                    )
                self.original = original
                self.stream.on_recv(self._receive, copy=False)
                self._start_kick()
            except BaseException as exc:
                failure.append(exc)
            finally:
                installed.set()

        if threading.current_thread() is self.thread:
            install()
        else:
            self.io_loop.add_callback(install)
        if not installed.wait(INSTALL_TIMEOUT):
            raise UnsupportedKernelError(
                f"the shell channel thread did not install the tap within {INSTALL_TIMEOUT:g} s"
            )
        if failure:
            raise failure[0]

    def _start_kick(self) -> None:
        # ipykernel 7.0 - 7.3 sends replies on the shell socket outside its ZMQStream; the
        # socket's edge-triggered descriptor can then miss a message that arrived meanwhile,
        # which waits unread (the next cell never runs). Re-check the socket now and then.
        from tornado.ioloop import PeriodicCallback

        self.kick = PeriodicCallback(self._kick, KICK_INTERVAL_MS)
        self.kick.start()

    def _kick(self) -> None:
        try:
            import zmq

            socket = self.stream.socket
            if socket is not None and socket.get(zmq.EVENTS) & zmq.POLLIN:
                self.stream._handle_events(socket, 0)
        except Exception:
            log.debug("could not re-check the shell socket", exc_info=True)

    def _receive(self, frames: list[Any]) -> Any:
        try:
            if self._peek(frames):
                return None
        except Exception:
            log.debug("could not peek at a shell message", exc_info=True)
        assert self.original is not None
        return self.original(frames)

    def _peek(self, frames: list[Any]) -> bool:
        """Look at one shell message; return True when it was handled here."""
        idents, rest = self.session.feed_identities(frames, copy=False)
        # content=False verifies the signature without recording it as seen.
        msg = self.session.deserialize(rest, content=False, copy=False)
        msg_type = msg["header"].get("msg_type")
        if msg_type in _INFO_TYPES:
            return _main_busy(self.kernel) and self._answer(idents, msg)
        if msg_type not in _COMM_TYPES:
            return False
        content = self.session.unpack(msg["content"])
        if not isinstance(content, dict):
            return False
        if msg_type == "comm_msg":
            target = self.targets.get(str(content.get("comm_id")))
            if target is not None:
                target.deliver(content.get("data"))
        # Whatever subshell it names (7.4 may route it to the busy main shell anyway).
        if self._restores_views(msg_type, content) and _main_busy(self.kernel):
            msg["content"] = content
            return self._answer(idents, msg)
        return False

    def _restores_views(self, msg_type: str, content: dict[str, Any]) -> bool:
        """Whether a comm message only reads widget state for a frontend restoring views."""
        if msg_type == "comm_open":
            return content.get("target_name") == _CONTROL_TARGET
        manager = getattr(self.kernel, "comm_manager", None)
        get_comm = getattr(manager, "get_comm", None)
        comm = get_comm(content.get("comm_id")) if callable(get_comm) else None
        target = getattr(comm, "target_name", None)
        if target == _CONTROL_TARGET:
            return True
        return (
            msg_type == "comm_msg" and target == _WIDGET_TARGET and _asks_state(content.get("data"))
        )

    def _answer(self, idents: list[Any], msg: dict[str, Any]) -> bool:
        """Run the kernel's own handler for ``msg`` here, if it never suspends.

        It runs in the context of the cell that last waited, so that what it publishes
        has a parent (ipykernel 7.0 publishes nothing from a thread without one).
        """
        handler = getattr(self.kernel, "shell_handlers", {}).get(msg["header"]["msg_type"])
        if handler is None:
            return False
        if not isinstance(msg["content"], dict):
            msg["content"] = self.session.unpack(msg["content"])
        coro = self.context.copy().run(handler, self.stream, idents, msg)
        if not asyncio.iscoroutine(coro):
            return True
        try:
            coro.send(None)
        except StopIteration:
            return True
        coro.close()
        log.debug("%s suspended; left for the kernel", msg["header"]["msg_type"])
        return False


class _Interrupts:
    """A SIGINT handler for while the pump works on the main thread.

    ipykernel's own handler would raise ``KeyboardInterrupt`` anywhere: half-way
    through flushing the shell stream (which then never sends again) or inside a
    comm handler the pump dispatched (where the kernel swallows it). This one only
    notes the interrupt, and raises it inside a handler (``raising``) so a stuck
    handler still stops; :func:`_interrupts_held` raises it again afterwards.
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
def _interrupts_held() -> Iterator[_Interrupts]:
    """Install :class:`_Interrupts`; afterwards deliver a caught SIGINT to the old handler."""
    interrupts = _Interrupts()
    try:
        previous = signal.signal(signal.SIGINT, interrupts)
    except ValueError:  # not the main thread: SIGINT never lands here
        yield interrupts
        return
    try:
        yield interrupts
    finally:
        # None: a handler not set from Python, which cannot be put back.
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
        if interrupts.caught:
            signal.raise_signal(signal.SIGINT)


class _MainPump:
    """Dispatches comm messages on ipykernel 6's main thread while a cell holds it."""

    _pumps: ClassVar[weakref.WeakKeyDictionary[Any, _MainPump]] = weakref.WeakKeyDictionary()

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.session = _require(kernel, "session", "session")
        self.stream = _require(kernel, "shell_stream", "main shell stream")
        self.dispatch = _require(kernel, "dispatch_shell", "dispatch_shell")
        _require(kernel, "set_parent", "set_parent")
        _require(kernel, "get_parent", "get_parent")
        _require(kernel, "_parent_ident", "parent identity")
        _require(self.stream, "flush", "stream flush")
        if not hasattr(self.stream, "_recv_callback"):
            raise UnsupportedKernelError("the shell stream has no receive callback: " + _INSTEAD)
        self.busy = False
        self.interrupts: _Interrupts | None = None

    @classmethod
    def of(cls, kernel: Any) -> _MainPump:
        pump = cls._pumps.get(kernel)
        if pump is None:
            pump = cls._pumps[kernel] = cls(kernel)
        return pump

    def pump(self) -> None:
        """Read what waits on the socket or in the kernel's queue; dispatch comm messages."""
        if self.busy:
            return
        self.busy = True
        try:
            with self.interrupts_held():
                self._drain_queue()
                original = self.stream._recv_callback
                if original is None or getattr(original, "_mead_diverted", False):
                    return
                held: list[list[Any]] = []
                self.stream._recv_callback = held.append
                try:
                    self.stream.flush(_pollin())
                finally:
                    self.stream._recv_callback = original
                self._sort(collections.deque(held), original)
        finally:
            self.busy = False

    @contextlib.contextmanager
    def interrupts_held(self) -> Iterator[_Interrupts]:
        """Hold SIGINT (see :class:`_Interrupts`) while the pump touches the kernel."""
        if self.interrupts is not None:
            yield self.interrupts
            return
        with _interrupts_held() as interrupts:
            self.interrupts = interrupts
            try:
                yield interrupts
            finally:
                self.interrupts = None

    def diverted(self) -> _Diversion:
        """While in effect, comm messages are dispatched as the kernel's loop reads them."""
        return _Diversion(self)

    def _sort(self, held: collections.deque[list[Any]], original: Callable[..., Any]) -> None:
        """Dispatch comm messages now, hand the rest back in order (even when interrupted)."""
        try:
            while held:
                frames = held.popleft()
                if self._at_once(frames):
                    self._dispatch_now(frames)
                else:
                    original(frames)
        finally:
            for frames in held:
                original(frames)

    def _drain_queue(self) -> None:
        """Take comm messages the kernel queued behind the running cell (Run All)."""
        queue = getattr(getattr(self.kernel, "msg_queue", None), "_queue", None)
        if not isinstance(queue, collections.deque) or not queue:
            return
        comms = []
        for item in list(queue):
            if (
                isinstance(item, tuple)
                and len(item) == 3
                and item[1] == self.dispatch
                and len(item[2]) == 1
                and self._at_once(item[2][0])
            ):
                comms.append(item)
        for item in comms:
            queue.remove(item)
        held = collections.deque(item[2][0] for item in comms)
        try:
            while held:
                self._dispatch_now(held[0])
                held.popleft()
        finally:
            for frames in reversed(held):
                queue.appendleft((-1, self.dispatch, (frames,)))

    def _at_once(self, frames: list[Any]) -> bool:
        try:
            _, rest = self.session.feed_identities(frames, copy=False)
            header = self.session.unpack(_bytes(rest[1]))
        except Exception:
            return False
        return isinstance(header, dict) and header.get("msg_type") in _AT_ONCE

    def _dispatch_now(self, frames: list[Any]) -> None:
        """Run the kernel's own dispatch; comm handlers finish without suspending."""
        kernel = self.kernel
        parent = kernel.get_parent("shell")
        ident = kernel._parent_ident["shell"]
        with self.interrupts_held() as interrupts:
            # The kernel's own hooks would put its SIGINT handler back around the handler.
            hooks = {
                "pre_handler_hook": interrupts.handler_starts,
                "post_handler_hook": interrupts.handler_ends,
            }
            vars(kernel).update(hooks)
            try:
                coro = self.dispatch(frames)
                try:
                    coro.send(None)
                except StopIteration:
                    pass
                else:
                    coro.close()
                    raise UnsupportedKernelError(
                        f"ipykernel {_ipykernel_version()} suspends while dispatching a comm "
                        "message: " + _INSTEAD
                    )
            finally:
                for name in hooks:
                    vars(kernel).pop(name, None)
                interrupts.raising = False
                kernel.set_parent(ident, parent, channel="shell")


class _Diversion:
    """Swaps the main shell stream's callback for one that dispatches comm messages."""

    def __init__(self, pump: _MainPump) -> None:
        self.pump = pump
        self.original: Callable[..., Any] | None = None

    def __enter__(self) -> None:
        stream = self.pump.stream
        original = stream._recv_callback
        if original is None or getattr(original, "_mead_diverted", False):
            return
        self.original = original

        def receive(frames: list[Any]) -> Any:
            if self.pump._at_once(frames):
                try:
                    self.pump._dispatch_now(frames)
                except UnsupportedKernelError:
                    log.exception("comm message left for the kernel")
                    return original(frames)
                return None
            return original(frames)

        receive._mead_diverted = True  # type: ignore[attr-defined]
        self.pump.pump()
        stream._recv_callback = receive

    def __exit__(self, *exc: object) -> None:
        if self.original is not None:
            self.pump.stream._recv_callback = self.original
            self.original = None


def _pollin() -> int:
    import zmq

    return int(zmq.POLLIN)


def _bytes(frame: Any) -> bytes:
    return bytes(frame.bytes) if hasattr(frame, "bytes") else bytes(frame)
