"""The handle of one running tool call."""

from __future__ import annotations

import logging
import math
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

log = logging.getLogger(__name__)

__all__ = ["Call", "CallEvent"]


@dataclass(frozen=True)
class CallEvent:
    """Something that happens to a running call.

    ``progress`` and ``done`` come from the tool, ``cancel`` from ``Call.cancel``,
    ``timeout`` from the runner when the tool outlives ``Router(tool_timeout=)``.
    """

    kind: Literal["progress", "cancel", "done", "timeout"]
    progress: float | None = None
    step: str | None = None
    value: Any = None
    error: BaseException | None = None


class Call:
    """A running tool call: cancel it, or (from inside the tool) report progress.

    A tool function receives its ``Call`` when it has a parameter annotated ``Call``.
    Everything here is safe to use from any thread.
    """

    def __init__(self, tool_call_id: str, tool: str) -> None:
        self.tool_call_id = tool_call_id
        self.tool = tool
        self._cancelled = threading.Event()
        self._events: queue.SimpleQueue[CallEvent] = queue.SimpleQueue()
        self._on_cancel: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self.result: str | None = None
        """The text the model receives, once the call has completed."""
        self.error: str | None = None
        """What went wrong, once the call has failed."""

    def __repr__(self) -> str:
        state = "cancelled" if self.cancelled else "active"
        return f"<Call {self.tool} {self.tool_call_id} {state}>"

    @property
    def cancelled(self) -> bool:
        """Whether the call was cancelled; a long tool should check this and stop."""
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Cancel the call: it ends ``failed`` at once, whether or not the tool notices."""
        with self._lock:
            if self._cancelled.is_set():
                return
            self._cancelled.set()
            hooks = list(self._on_cancel)
        self._events.put(CallEvent("cancel"))
        for hook in hooks:
            try:
                hook()
            except Exception:
                log.exception("cancel hook of %s raised", self.tool_call_id)

    def on_cancel(self, hook: Callable[[], None]) -> None:
        """Run ``hook`` when the call is cancelled (at once if it already is)."""
        with self._lock:
            if not self._cancelled.is_set():
                self._on_cancel.append(hook)
                return
        hook()

    def wait_cancelled(self, timeout: float | None = None) -> bool:
        """Block up to ``timeout`` seconds until cancelled; return whether it was."""
        return self._cancelled.wait(timeout)

    def progress(self, fraction: float | None = None, step: str | None = None) -> None:
        """Report how far the tool is (``fraction`` in [0, 1] or None) and what it does now."""
        if fraction is not None:
            try:
                fraction = float(fraction)
            except (TypeError, ValueError):
                fraction = None
            else:
                fraction = None if math.isnan(fraction) else min(1.0, max(0.0, fraction))
        self._events.put(CallEvent("progress", progress=fraction, step=step))

    def _finish(self, value: Any = None, error: BaseException | None = None) -> None:
        self._events.put(CallEvent("done", value=value, error=error))

    def _next_event(self, timeout: float) -> CallEvent | None:
        try:
            return self._events.get(timeout=timeout)
        except queue.Empty:
            return None
