"""Blocking a turn until the widget answers, on every supported ipykernel.

While a cell runs, the kernel's main thread is busy and the frontend's comm
messages (a click on Allow, Cancel, an option) wait in the shell channel. This
package makes them reach ``widget.deliver(content)`` anyway. How depends on the
kernel and on the waiting thread (see :func:`mechanism`):

``main-pump`` (ipykernel 6, waiting on the main thread; :mod:`.main_pump`)
    The kernel reads shell messages on the main thread only, so the waiting main
    thread reads them itself and handles comm messages at once.
``main-loop`` (ipykernel 6, waiting on another thread)
    Nothing to do while the main thread is free; when it waits too (a later cell
    blocked on the turn) it pumps through :func:`poll` or :func:`serve_while`.
``shell-tap`` (ipykernel 7, any thread but the main one; :mod:`.shell_tap`)
    A tap on the shell channel thread hands a watched widget's ``comm_msg`` to it.
``shell-tap+main-pump`` (ipykernel 7, waiting on the main thread)
    The tap delivers the answers and wakes the main thread, which meanwhile serves
    what a connecting page asks from its own shell socket, in order.
``plain``
    Outside a kernel: a plain ``Event.wait``.

A widget is watched from its turn's start (:func:`watch`, before it is displayed)
to its end (:func:`unwatch`). Hooks only peek: the kernel still dispatches each
message as usual, so a widget sees an answer twice and must ignore the duplicate.
A frontend that connects while a question waits (a page reload, a second tab)
gets ``kernel_info_reply``, ``comm_info_reply`` and every widget's state from the
waiting main thread (:mod:`.main_pump`, :mod:`.diversion`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Final

from ... import interrupts
from ...errors import UnsupportedKernelError
from .common import WAITS, WATCHED, Widget
from .kernel import current, features, on_main_thread
from .main_pump import MainPump
from .shell_tap import ShellTap

__all__ = [
    "UnsupportedKernelError",
    "Widget",
    "check",
    "interrupts_held",
    "mechanism",
    "poll",
    "serve_while",
    "unwatch",
    "wait_for",
    "watch",
]

PLAIN: Final = "plain"
MAIN_LOOP: Final = "main-loop"
MAIN_PUMP: Final = "main-pump"
SHELL_TAP: Final = "shell-tap"
SHELL_TAP_PUMP: Final = "shell-tap+main-pump"

SERVE_SLICE: Final = 0.25
"""How often :func:`serve_while` checks ``done()`` (seconds); cancelling it ends it at once."""

interrupts_held = interrupts.held
"""Hold SIGINT on the main thread for a block that must not stop half-way, then raise it."""


def mechanism(thread: threading.Thread | None = None) -> str:
    """The name of the mechanism that waiting in ``thread`` (default: this one) uses."""
    kernel = current()
    if kernel is None:
        return PLAIN
    main = (thread or threading.current_thread()) is threading.main_thread()
    if features(kernel).shell_thread:
        return SHELL_TAP_PUMP if main else SHELL_TAP
    return MAIN_PUMP if main else MAIN_LOOP


def check() -> None:
    """Raise :class:`UnsupportedKernelError` if waiting in this thread cannot work here.

    A turn calls it before it starts, so that it refuses at once instead of denying
    every call it would have asked about.
    """
    kind = mechanism()
    kernel = current()
    if kernel is None or kind == MAIN_LOOP:
        return
    if kind in (SHELL_TAP, SHELL_TAP_PUMP):
        ShellTap.check(kernel)
    if kind in (MAIN_PUMP, SHELL_TAP_PUMP):
        MainPump.check(kernel)


def wait_for(widget: Widget, event: threading.Event, timeout: float | None) -> bool:
    """Block until ``event`` is set or ``timeout`` seconds pass; return whether it was set.

    Meanwhile the frontend's custom messages for ``widget`` reach ``widget.deliver``.
    A ``KeyboardInterrupt`` propagates after whatever was changed is restored.
    Raises :class:`UnsupportedKernelError` when this kernel cannot deliver them.
    """
    kind = mechanism()
    kernel = current()
    if kernel is None:
        return event.wait(timeout)
    watched = WATCHED.has(widget)
    watch(widget)
    try:
        with WAITS.active():
            if kind in (MAIN_PUMP, SHELL_TAP_PUMP):
                return MainPump.of(kernel).wait(event, timeout)
            return event.wait(timeout)
    finally:
        if not watched:
            unwatch(widget)


def watch(widget: Widget) -> None:
    """Start forwarding the widget's frontend messages, until :func:`unwatch`.

    Call it as soon as the widget's comm is open (before displaying it): on 7.x a
    message that arrives before the tap is in place (such as ``rendered``) is only
    dispatched once the cell ends.
    """
    kernel = current()
    if kernel is None:
        return
    WATCHED.add(widget)
    if features(kernel).shell_thread:
        ShellTap.of(kernel).sync(wait=True)


def unwatch(widget: Widget) -> None:
    """Stop forwarding the widget's messages; with none watched, the tap is removed."""
    WATCHED.remove(widget)


def poll(widget: Widget) -> None:
    """Handle the main shell's pending messages now, without blocking (main thread).

    The widget's turn calls it while its thread waits on a tool: a watched widget's
    messages are delivered (on ipykernel 6; on 7 the tap does it), and while a
    question waits in another thread a connecting page is served too.
    """
    kind = mechanism()
    kernel = current()
    if kernel is None:
        return
    if kind == MAIN_PUMP:
        MainPump.of(kernel).pump(serve=WAITS.any())
    elif kind == SHELL_TAP_PUMP and WAITS.any():
        MainPump.of(kernel).pump(serve=True)


async def serve_while(
    done: Callable[[], bool], widget: Widget | None = None, interval: float = SERVE_SLICE
) -> None:
    """Keep the main shell served while an async cell awaits a turn in another thread.

    Returns once ``done()`` is true (or when cancelled). The kernel's loop runs this
    coroutine but holds the shell's messages until the cell ends; the diversion
    handles them meanwhile (see :mod:`.diversion`), the messages of the watched
    ``widget`` at once (its turn watches it).
    """
    interval = max(0.001, interval)
    kernel = current()
    if kernel is None or not on_main_thread():
        while not done():
            await asyncio.sleep(interval)
        return
    with MainPump.of(kernel).diverted():
        while not done():
            await asyncio.sleep(interval)
