"""ipykernel 7.0 - 7.3: replies go out through the shell stream, as 7.4 sends them.

On 7.0 - 7.3 the shell channel thread sends every reply (from the main thread and
from each subshell) with a raw ``send_multipart`` on the shell socket. The socket's
descriptor is edge-triggered: a raw send made just as a request arrives consumes
the signal, the shell stream is never told, and the request waits unread with
every later one behind it. The kernel looks hung: no ``kernel_info_reply`` for a
reloading page, and the next cell never runs. A kernel where this library never ran
does it too (``bench/stress.py --plain``); while a question waits the main thread
also answers connecting pages during the cell, so there are more replies to race.

ipykernel 7.4 fixed it by sending replies through the shell stream, which reads
what arrived before it writes. :func:`install` puts that same path in place, once
per kernel, on the shell channel thread (streams are not thread-safe), and leaves
it there: the kernel keeps it after the turn.
"""

from __future__ import annotations

import logging
from typing import Any

from .kernel import features

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())


def install(kernel: Any) -> bool:
    """Route the kernel's replies through its shell stream (7.0 - 7.3, shell channel thread).

    Returns whether it is in place: False on kernels without the fault (6.x, 7.4+)
    and when a piece is missing (then the kernel keeps its own path).
    """
    if not features(kernel).unread_after_reply:
        return False
    manager = getattr(kernel.shell_channel_thread, "_manager", None)
    stream = getattr(kernel, "shell_stream", None)
    if manager is None or stream is None:
        return False
    if getattr(manager, "_mead_send", None) is not None:
        return True
    try:
        main_pair = manager._main_to_shell_channel
        io_loop = manager._shell_channel_io_loop
        subshells = manager._cache
        lock = manager._lock_cache
    except AttributeError:
        log.debug("the subshell manager lacks a piece: replies stay on the raw socket")
        return False

    def send(frames: list[Any]) -> None:
        stream.send_multipart(frames)

    # New subshells register manager._send_on_shell_channel when they are created.
    manager._send_on_shell_channel = send
    manager._mead_send = send
    main_pair.on_recv(io_loop, send)
    with lock:
        for subshell in subshells.values():
            subshell.subshell_to_shell_channel.on_recv(io_loop, send)
    return True
