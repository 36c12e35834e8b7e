"""An Allow given through an agent's own permission request, good for exactly one call.

An agent that asks before it calls one of the package's own tools (Claude Code
asks before an MCP tool) gets the person's answer on the card of its request;
the call then reaches the tool's server, where the gate would ask again. A
:class:`Passes` keeps each such Allow as a pass for one call of exactly that
tool with exactly the arguments the card showed (compared as canonical JSON),
taken once, within :data:`PASS_TTL` seconds, in the order granted. Anything
else (another argument, a second call, a call after the turn or the time)
finds no pass and is asked about on a card of its own.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from mead_notebook.calls import Call
from mead_notebook.interaction import FINAL_STATUSES
from mead_notebook.turn import CallRecord

__all__ = ["PASS_TTL", "Pass", "Passes", "canonical"]

PASS_TTL = 30.0
"""How long an Allow given through the agent's request waits for its call (seconds)."""


def canonical(arguments: Any) -> str | None:
    """``arguments`` as canonical JSON (sorted keys, no spaces); None when JSON cannot say them."""
    try:
        return json.dumps(
            arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Pass:
    """One Allow: the call's record (its card) and, where the agent's side made one, its handle."""

    record: CallRecord
    handle: Call | None
    granted: float


class Passes:
    """The passes of one run, by tool and arguments; safe to use from any thread."""

    def __init__(self, ttl: float = PASS_TTL) -> None:
        self.ttl = ttl
        self._lock = threading.Lock()
        self._open: dict[tuple[str, str], deque[Pass]] = {}

    def grant(
        self, tool: str, arguments: Any, record: CallRecord, handle: Call | None = None
    ) -> bool:
        """A pass for one call of ``tool`` with ``arguments``; False if they cannot be keyed."""
        key = canonical(arguments)
        if key is None:
            return False
        with self._lock:
            self._open.setdefault((tool, key), deque()).append(
                Pass(record, handle, time.monotonic())
            )
        return True

    def take(self, tool: str, arguments: Any) -> Pass | None:
        """The oldest live pass for exactly this call, removed; None if there is none.

        A pass whose call has ended meanwhile (cancelled, the turn interrupted) is dropped.
        """
        key = canonical(arguments)
        if key is None:
            return None
        now = time.monotonic()
        with self._lock:
            waiting = self._open.get((tool, key))
            while waiting:
                found = waiting.popleft()
                if now - found.granted <= self.ttl and found.record.status not in FINAL_STATUSES:
                    return found
            self._open.pop((tool, key), None)
        return None

    def revoke(self, record: CallRecord) -> None:
        """Drop the passes of ``record`` (its call ended another way)."""
        with self._lock:
            for key, waiting in list(self._open.items()):
                kept = deque(p for p in waiting if p.record is not record)
                if kept:
                    self._open[key] = kept
                else:
                    del self._open[key]

    def clear(self) -> None:
        """Drop every pass (the turn has ended)."""
        with self._lock:
            self._open.clear()

    def __len__(self) -> int:
        with self._lock:
            return sum(len(w) for w in self._open.values())
