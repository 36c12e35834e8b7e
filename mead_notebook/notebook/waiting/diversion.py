"""While an async cell awaits a turn: the main loop hands each shell message to the pump.

ipykernel 6 holds every shell message while a cell runs, async or not; ipykernel
7.0 - 7.3 holds them behind the cell's lock, and 7.4 dispatches only ``comm_*``
messages meanwhile. The turn's questions wait in a worker thread; the main loop
is free, so the diversion swaps the main shell stream's receive callback for one
that sorts each message as the loop reads it, by the pump's rules: a watched
widget's ``comm_msg`` at once; what a connecting frontend asks (``comm_*``, info
requests) held in arrival order and handled once a question waits, since no tool
of the waiting turn runs then; everything else to the kernel, behind the cell.
On 7.4, which dispatches ``comm_*`` messages itself meanwhile, only ipywidgets'
control comm (whose ``request_states`` reads every widget, racing a tool that
creates some) and the info requests are held. What is still held at the end goes
back to the kernel in order.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...errors import UnsupportedKernelError
from .common import WAITS, WATCHED
from .kernel import AT_ONCE, COMM_TYPES
from .messages import Kind

if TYPE_CHECKING:
    from .main_pump import MainPump

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())


class Diversion:
    """Swaps the main shell stream's receive callback for one that sorts messages."""

    def __init__(self, pump: MainPump) -> None:
        self.pump = pump
        self.original: Callable[..., Any] | None = None
        self.held: collections.deque[list[Any]] = collections.deque()
        self.opening: set[str] = set()
        """The comms whose held ``comm_open`` has not been handled yet."""
        self._unsubscribe: Callable[[], None] | None = None

    def __enter__(self) -> Diversion:
        stream = self.pump.stream
        original = stream._recv_callback
        if original is None or getattr(original, "_mead_diverted", False):
            return self
        self.original = original
        loop = asyncio.get_running_loop()

        def receive(frames: list[Any]) -> None:
            self._receive(original, frames)

        receive._mead_diverted = True  # type: ignore[attr-defined]
        self.pump.pump(serve=WAITS.any())
        stream._recv_callback = receive

        def question_started() -> None:
            loop.call_soon_threadsafe(self.serve_held)

        self._unsubscribe = WAITS.on_start(question_started)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        original, self.original = self.original, None
        if original is None:
            return
        self.pump.stream._recv_callback = original
        while self.held:
            self.pump.hand_back(original, self.held.popleft())
        self.opening.clear()

    def serve_held(self) -> None:
        """Handle the held messages, in order, if a question waits now."""
        original = self.original
        if original is None:
            return
        with WAITS.serving() as waiting:
            if not waiting:
                return
            self.pump.drain_queue(serve=True)
            while self.held:
                frames = self.held.popleft()
                self._dispatch(original, frames, self.pump.classify(frames), serve=True)
            self.opening.clear()

    def _receive(self, original: Callable[..., Any], frames: list[Any]) -> None:
        kind = self.pump.classify(frames)
        if kind.msg_type == "comm_msg" and kind.comm_id in WATCHED:
            self._dispatch(original, frames, kind, serve=False)
        elif kind.msg_type not in AT_ONCE or (self.pump.native_comms and not self._holds(kind)):
            self.pump.hand_back(original, frames)
        else:
            if kind.msg_type == "comm_open" and isinstance(kind.comm_id, str):
                self.opening.add(kind.comm_id)
            self.held.append(frames)
            self.serve_held()

    def _holds(self, kind: Kind) -> bool:
        """On 7.4, which dispatches comm messages itself: whether to hold this one anyway
        (an info request, the control comm's, or one whose comm_open is held)."""
        return (
            kind.msg_type not in COMM_TYPES
            or self.pump.on_control(kind)
            or kind.comm_id in self.opening
        )

    def _dispatch(
        self, original: Callable[..., Any], frames: list[Any], kind: Kind, *, serve: bool
    ) -> None:
        if not self.pump.now(kind, serve=serve):
            self.pump.hand_back(original, frames)
            return
        try:
            self.pump.dispatch_now(frames, kind)
        except UnsupportedKernelError:
            log.exception("a shell message was left for the kernel")
