"""ipykernel 7.0 - 7.4: a tap on the shell channel thread forwards a watched widget's answers.

ipykernel 7 receives every shell message on its shell channel thread and forwards
it to the main thread or to a subshell, where a blocked cell or a busy loop can
hold it until the cell ends. The tap wraps that thread's receive callback: for
each ``comm_msg`` on a watched widget's comm (never a ``comm_close``: closing a
comm answers nothing) it hands the ``custom`` data to the widget, notes the
message as delivered (the main thread's pump then leaves it to the kernel) and
wakes the main thread's wait, then passes the message on unchanged. It serves nothing
itself: whatever else a frontend asks is handled on the thread the kernel chose
(the main thread's pump serves a connecting page while a question waits there).

The tap verifies each message's signature without recording it: the kernel's
``Session.deserialize(..., content=True)`` would record the signature, and the
kernel would then reject the real message as a duplicate.

It is in place while some widget is watched (a turn's start to its end) and
removed afterwards. Installing it the first time also routes 7.0 - 7.3's replies
through the shell stream, which those versions bypass (:mod:`.reply_path`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Final

from ...errors import UnsupportedKernelError
from . import reply_path
from .common import DELIVERED, WATCHED, waker
from .kernel import INSTEAD, PerKernel, require

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

INSTALL_TIMEOUT: Final = 5.0
"""Bound on installing the tap from the shell channel thread (seconds)."""


class ShellTap(PerKernel):
    """The wrapper around one kernel's shell channel receive callback."""

    def __init__(self, kernel: Any) -> None:
        super().__init__(kernel)
        self.session = require(kernel, "session", "session")
        self.stream = require(kernel, "shell_stream", "shell stream")
        self.thread = require(kernel, "shell_channel_thread", "shell channel thread")
        self.io_loop = require(self.thread, "io_loop", "shell channel loop")
        if not callable(getattr(self.stream, "on_recv", None)) or not callable(
            getattr(self.stream, "_recv_callback", None)
        ):
            raise UnsupportedKernelError(
                "the shell stream has no receive callback to wrap: " + INSTEAD
            )
        self.original: Callable[[list[Any]], Any] | None = None

    def created(self) -> None:
        WATCHED.subscribe(lambda: self.sync(wait=False))

    @property
    def installed(self) -> bool:
        return self.original is not None

    def sync(self, *, wait: bool) -> None:
        """Install the tap while a widget is watched, remove it when none is.

        The change is made on the shell channel thread; ``wait`` waits for it (bounded).
        """
        if wait and self.installed and len(WATCHED):
            return
        done = threading.Event()
        failure: list[BaseException] = []

        def apply() -> None:
            try:
                self._apply()
            except BaseException as exc:
                failure.append(exc)
            finally:
                done.set()

        if wait and threading.current_thread() is self.thread:
            apply()
        else:
            self.io_loop.add_callback(apply)
        if not wait:
            return
        if not done.wait(INSTALL_TIMEOUT):
            raise UnsupportedKernelError(
                f"the shell channel thread did not install the tap within {INSTALL_TIMEOUT:g} s"
            )
        if failure:
            raise failure[0]

    def _apply(self) -> None:
        """Install or remove the tap, on the shell channel thread."""
        if len(WATCHED) and self.original is None:
            original = self.stream._recv_callback
            if not callable(original):
                raise UnsupportedKernelError("the shell stream has no receive callback: " + INSTEAD)
            self.original = original
            self.stream.on_recv(self._receive, copy=False)
            reply_path.install(self.kernel)
        elif not len(WATCHED) and self.original is not None:
            if self.stream._recv_callback != self._receive:
                return  # wrapped again since: leave ours in place, it forwards nothing now
            self.stream.on_recv(self.original, copy=False)
            self.original = None

    def _receive(self, frames: list[Any]) -> Any:
        try:
            self._peek(frames)
        except Exception:
            log.debug("could not peek at a shell message", exc_info=True)
        original = self.original
        return None if original is None else original(frames)

    def _peek(self, frames: list[Any]) -> None:
        """Forward a watched widget's ``comm_msg`` and wake the main thread's wait."""
        if not len(WATCHED):
            return
        _, rest = self.session.feed_identities(frames, copy=False)
        # content=False verifies the signature without recording it as seen.
        msg = self.session.deserialize(rest, content=False, copy=False)
        if msg["header"].get("msg_type") != "comm_msg":
            return
        content = self.session.unpack(msg["content"])
        if not isinstance(content, dict):
            return
        if WATCHED.deliver(content.get("comm_id"), content.get("data")):
            DELIVERED.add(msg["header"].get("msg_id"))
            waker().set()
