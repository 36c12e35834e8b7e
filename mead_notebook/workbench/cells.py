"""Putting a proposed cell below the cell that runs the turn: IPython's ``set_next_input``.

A cell's ``execute_reply`` carries the payloads its run wrote; JupyterLab and
Notebook 7 insert the first ``set_next_input`` payload of a reply that is ``ok``
as a new cell below that cell, VS Code inserts it below whatever the reply's
status. The payload goes to whichever cell ends next, so it is written only
while the turn's own cell still runs (a sync or async turn, or a background one
whose cell has not ended), and at most once per run of that cell. IPython's
``pre_run_cell`` and ``post_run_cell`` events say which cells run; the kernel
reads the payloads after ``post_run_cell``, and the check and the write happen
under the same lock as the end, so a payload never lands in another cell.

The turn's cell is the request whose output the tool's thread writes to: the
kernel's output streams follow a thread's context back to the cell that started it.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Final, Literal

__all__ = ["Cells", "Placement", "cells_of"]

Placement = Literal["inserted", "ended", "taken"]
"""What became of a proposed cell: ``inserted`` below the turn's cell when it ends;
not inserted because that cell had ``ended``, or because a cell was proposed in its
run already (``taken``)."""

_lock = threading.Lock()
_by_shell: dict[int, Cells] = {}
_SOURCE: Final = "set_next_input"


def request_id() -> str | None:
    """The id of the request (cell) this thread's output belongs to, or None."""
    header = getattr(sys.stdout, "parent_header", None)
    if isinstance(header, dict):
        header = header.get("header", header)
        msg_id = header.get("msg_id")
        if isinstance(msg_id, str) and msg_id:
            return msg_id
    return None


class Cells:
    """The cells of one shell that are running now, and those a cell was proposed under."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self._lock = threading.Lock()
        self._running: set[str] = set()
        self._proposed: set[str] = set()
        if threading.current_thread() is threading.main_thread():
            current = request_id()
            if current is not None:
                self._running.add(current)
        shell.events.register("pre_run_cell", self._started)
        shell.events.register("post_run_cell", self._ended)

    def _started(self, info: object = None) -> None:
        current = request_id()
        if current is not None:
            with self._lock:
                self._running.add(current)

    def _ended(self, result: object = None) -> None:
        current = request_id()
        if current is not None:
            with self._lock:
                self._running.discard(current)
                self._proposed.discard(current)

    def propose(self, code: str) -> Placement:
        """Put ``code`` below the turn's cell (this thread's request) if it still runs."""
        origin = request_id()
        with self._lock:
            if origin is None or origin not in self._running:
                return "ended"
            if origin in self._proposed:
                return "taken"
            self.shell.payload_manager.write_payload(
                {"source": _SOURCE, "text": code, "replace": False}, single=True
            )
            self._proposed.add(origin)
            return "inserted"


def cells_of(shell: Any) -> Cells:
    """The one :class:`Cells` of ``shell`` (made, and its events hooked, on first use)."""
    with _lock:
        found = _by_shell.get(id(shell))
        if found is None or found.shell is not shell:
            found = _by_shell[id(shell)] = Cells(shell)
        return found
