"""The main thread reads its own shell messages while a cell holds it.

ipykernel 6.29 - 6.x reads shell messages on the main thread only
(``kernel.shell_stream``); ipykernel 7.0 - 7.4 forwards the main shell's messages
from its shell channel thread over an inproc socket that the main thread reads
(the main subshell pair's ``to_stream``). Either way, while a sync cell blocks,
nothing reads them; the waiting main thread does, and handles some at once:

- while a question waits (in any thread): ``comm_*`` messages of comms already
  open (and any ``comm_open``) and a connecting frontend's info requests, so a
  reloaded page is served in the order it asked, on the thread the kernel would
  have used, while no tool of the waiting turn runs;
- otherwise, on 6.x only (7.x has the shell tap): the watched widgets' ``comm_msg``.

A ``comm_msg`` that the shell tap (7.x) delivered already is left to the kernel.

Every other message goes back to the kernel in arrival order, behind the cell.
A ``comm_msg`` whose ``comm_open`` is still queued behind the cell goes back too.

An interrupt meanwhile is held while the shell stream is mid-way (it would be left
unable to send the cell's reply), stops a comm handler that is running, and always
reaches the waiting cell afterwards (see :mod:`.interrupts`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import inspect
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Final

from ... import interrupts as _interrupts
from ...errors import UnsupportedKernelError
from .common import DELIVERED, WAITS, WATCHED, waker
from .diversion import Diversion
from .kernel import COMM_TYPES, INFO_TYPES, INSTEAD, PerKernel, features, require, version
from .messages import CONTROL_TARGET, Kind, classify

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

IDLE_SLICE: Final = 2.0
"""Longest block while waiting (seconds): bounds noticing an answer set by another thread
without waking this one. The shell tap and the shell socket wake it at once, and the
waiting question's own deadlines (its timeout, the next ping) end the wait anyway, so
this only bounds the rare rest and sets the wakeups of a wait where nothing happens."""

_handed_back: set[asyncio.Future[Any]] = set()
"""The kernel's handlers of messages handed back, until they finish (ipykernel 7)."""


class MainPump(PerKernel):
    """Reads and sorts the main shell's messages on the main thread."""

    def __init__(self, kernel: Any) -> None:
        super().__init__(kernel)
        self.session = require(kernel, "session", "session")
        self.stream = _main_stream(kernel)
        self.dispatch = require(kernel, "dispatch_shell", "dispatch_shell")
        self.comms = require(require(kernel, "comm_manager", "comm manager"), "comms", "comms")
        for name, what in (
            ("set_parent", "set_parent"),
            ("get_parent", "get_parent"),
            ("_parent_ident", "parent identity"),
        ):
            require(kernel, name, what)
        require(self.stream, "flush", "shell stream flush")
        require(self.stream, "socket", "shell socket")
        require(self.stream, "io_loop", "shell stream loop")
        if not hasattr(self.stream, "_recv_callback"):
            raise UnsupportedKernelError("the shell stream has no receive callback: " + INSTEAD)
        self.native_comms = "concurrent" in inspect.signature(self.dispatch).parameters
        """ipykernel 7.4+ dispatches comm messages itself while a cell holds the main shell."""
        self.busy = False
        self.interrupts: _interrupts.Interrupts | None = None

    # -- entry points ---------------------------------------------------------------

    def wait(self, event: threading.Event, timeout: float | None) -> bool:
        """Serve the main shell until ``event`` is set or ``timeout`` passes (main thread).

        Blocks on the shell socket and the waker, so it wakes for a message or an answer.
        An answer that is in already (the shell tap delivered it) returns at once: the
        same message, still queued, is handled later as usual (answers are idempotent).
        """
        import zmq

        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        wake = waker()
        poller = zmq.Poller()
        poller.register(self.stream.socket, zmq.POLLIN)
        poller.register(wake.fileno(), zmq.POLLIN)
        try:
            while True:
                wake.clear()
                if event.is_set():
                    return True
                self.pump(serve=True)
                if event.is_set():
                    return True
                left = IDLE_SLICE if deadline is None else deadline - time.monotonic()
                if left <= 0:
                    return event.is_set()
                poller.poll(max(1, round(min(IDLE_SLICE, left) * 1000)))
        finally:
            # Polling takes the socket's notice of a message; one still unread (an
            # interrupt ended the poll) would otherwise never wake the kernel's loop.
            self.stream.io_loop.add_callback(self._recheck)

    def _recheck(self) -> None:
        """Let the stream read what waits on its socket (on the kernel's loop)."""
        import zmq

        try:
            socket = self.stream.socket
            if socket is not None and socket.get(zmq.EVENTS) & zmq.POLLIN:
                self.stream._handle_events(socket, 0)
        except Exception:
            log.debug("could not re-check the shell socket", exc_info=True)

    def pump(self, *, serve: bool) -> None:
        """Handle what waits for the main shell now; ``serve``: serve a connecting page if
        a question waits (see :meth:`Waits.serving`)."""
        if self.busy:
            return
        self.busy = True
        try:
            with WAITS.serving() as waiting, self.interrupts_held():
                serve = serve and waiting
                if not serve and features(self.kernel).shell_thread:
                    return
                self.drain_queue(serve=serve)
                original = self.stream._recv_callback
                if original is None or getattr(original, "_mead_diverted", False):
                    return
                held: list[list[Any]] = []
                self.stream._recv_callback = held.append
                try:
                    self.stream.flush(_pollin())
                finally:
                    self.stream._recv_callback = original
                try:
                    self._sort(collections.deque(held), original, serve=serve)
                finally:
                    # Freed while SIGINT is held: pyzmq checks for signals as it frees a
                    # message, and Python drops what a finalizer raises.
                    held.clear()
        finally:
            self.busy = False

    def diverted(self) -> Diversion:
        """While in effect, the kernel's loop hands each main shell message to this pump."""
        return Diversion(self)

    # -- sorting ----------------------------------------------------------------------

    def now(self, kind: Kind, *, serve: bool) -> bool:
        """Whether to handle a message at once (before the cells queued behind this one).

        A message the shell tap delivered already waits for the kernel's own dispatch,
        where the widget ignores it: dispatching it here would only delay the answer.
        """
        if kind.msg_type == "comm_msg" and DELIVERED.take(kind.msg_id):
            return False
        if not serve:
            return kind.msg_type == "comm_msg" and kind.comm_id in WATCHED
        if kind.msg_type in INFO_TYPES or kind.msg_type == "comm_open":
            return True
        # A comm not open yet has its comm_open queued behind the cell: keep the order.
        return kind.msg_type in COMM_TYPES and kind.comm_id in self.comms

    def stoppable(self, kind: Kind) -> bool:
        """Whether an interrupt stops the message's handler (it is raised afterwards anyway).

        Another comm's handler can take long; what a connecting page asks (info, every
        widget's state) and the watched widgets' own messages finish first.
        """
        if kind.msg_type in INFO_TYPES or kind.comm_id in WATCHED or self.on_control(kind):
            return False
        return not (kind.msg_type == "comm_msg" and kind.method == "request_state")

    def on_control(self, kind: Kind) -> bool:
        """Whether a comm message is on ipywidgets' control comm, whose ``request_states``
        reads every widget (and must not run while another thread creates widgets)."""
        if kind.msg_type == "comm_open":
            return kind.target == CONTROL_TARGET
        comm = self.comms.get(kind.comm_id) if isinstance(kind.comm_id, str) else None
        return getattr(comm, "target_name", None) == CONTROL_TARGET

    def classify(self, frames: list[Any]) -> Kind:
        return classify(self.session, frames)

    def hand_back(self, original: Callable[..., Any], frames: list[Any]) -> None:
        """Give a message to the kernel's own receive callback, as its stream would."""
        result = original(frames)
        if inspect.isawaitable(result):  # ipykernel 7: a coroutine for the main loop
            task = asyncio.ensure_future(result)
            _handed_back.add(task)
            task.add_done_callback(_handed_back.discard)

    def _sort(
        self, held: collections.deque[list[Any]], original: Callable[..., Any], *, serve: bool
    ) -> None:
        """Handle what is due now, hand the rest back in order (even when interrupted)."""
        try:
            while held:
                frames = held.popleft()
                kind = self.classify(frames)
                if self.now(kind, serve=serve):
                    self.dispatch_now(frames, kind)
                else:
                    self.hand_back(original, frames)
        finally:
            for frames in held:
                self.hand_back(original, frames)

    def drain_queue(self, *, serve: bool) -> None:
        """Take what is due now from the messages ipykernel 6 queued behind the cell."""
        queue = getattr(getattr(self.kernel, "msg_queue", None), "_queue", None)
        if not isinstance(queue, collections.deque):
            return
        while queue:
            item = next((i for i in list(queue) if self._queued_now(i, serve)), None)
            if item is None:
                return
            queue.remove(item)
            self.dispatch_now(item[2][0])

    def _queued_now(self, item: object, serve: bool) -> bool:
        return (
            isinstance(item, tuple)
            and len(item) == 3
            and item[1] == self.dispatch
            and len(item[2]) == 1
            and self.now(self.classify(item[2][0]), serve=serve)
        )

    # -- dispatching ------------------------------------------------------------------

    @contextlib.contextmanager
    def interrupts_held(self) -> Iterator[_interrupts.Interrupts]:
        """Hold SIGINT while the pump touches the kernel (nested holds share one)."""
        if self.interrupts is not None:
            yield self.interrupts
            return
        with _interrupts.held() as interrupts:
            self.interrupts = interrupts
            try:
                yield interrupts
            finally:
                self.interrupts = None

    def dispatch_now(self, frames: list[Any], kind: Kind | None = None) -> None:
        """Run the kernel's own dispatch; comm handlers finish without suspending."""
        kernel = self.kernel
        stoppable = self.stoppable(kind or self.classify(frames))
        parent = kernel.get_parent("shell")
        ident = kernel._parent_ident["shell"]
        with self.interrupts_held() as interrupts:
            # The kernel's own hooks would put its SIGINT handler back around the handler.
            # A subshell thread dispatching meanwhile sees these too: they ignore it.
            hooks = {
                "pre_handler_hook": _on_main(interrupts.handler_starts if stoppable else None),
                "post_handler_hook": _on_main(interrupts.handler_ends),
            }
            vars(kernel).update(hooks)
            try:
                coro = self.dispatch(frames)
                try:
                    contextvars.copy_context().run(coro.send, None)
                except StopIteration:
                    pass
                else:
                    coro.close()
                    raise UnsupportedKernelError(
                        f"ipykernel {version()} suspends while dispatching a comm message: "
                        + INSTEAD
                    )
            finally:
                for name in hooks:
                    vars(kernel).pop(name, None)
                interrupts.raising = False
                kernel.set_parent(ident, parent, channel="shell")


def _on_main(hook: Callable[[], None] | None) -> Callable[[], None]:
    """``hook``, called only on the main thread (the one SIGINT lands on)."""
    main = threading.main_thread()

    def on_main() -> None:
        if hook is not None and threading.current_thread() is main:
            hook()

    return on_main


def _main_stream(kernel: Any) -> Any:
    """The stream the main thread reads its shell messages from."""
    if not features(kernel).shell_thread:
        return require(kernel, "shell_stream", "main shell stream")
    thread = require(kernel, "shell_channel_thread", "shell channel thread")
    manager = require(thread, "manager", "subshell manager")
    pair = require(manager, "get_shell_channel_to_subshell_pair", "main shell pair")(None)
    return require(pair, "to_stream", "main shell stream")


def _pollin() -> int:
    import zmq

    return int(zmq.POLLIN)
