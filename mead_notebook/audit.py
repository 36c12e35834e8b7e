"""An audit log of every request and its outcome, as JSON Lines.

``NotebookInteraction(audit="path")`` appends one line when a question is
decided (who decided: ``person``, ``policy``, ``rule``, ``timeout``,
``fallback`` when nobody was there, ``kernel``, or ``agent`` for a call the
agent ran under its own rules without asking; with the arguments as asked and
as approved, and what the call said it would do: its ``tool_kind``,
``content`` blocks and ``locations`` as its card showed them, and whether that
card showed ``invisible`` or bidirectional characters or was ``incomplete``) and
one when the call ends (its status and outcome). Text is kept exactly as it came.
A person's decision also records ``username`` and ``display_name``, the user the
answering view *claimed* (the Jupyter server's identity of that page, or the
kernel connection's user name in VS Code), and ``page``, a random id of that
page: what the frontend said, not an authentication (any page that can reach the
kernel can claim any name). They are None where the frontend said nothing (a
page whose server has no identity to give, a client of its own). Each line
is written and flushed at once, so a kernel that dies mid-turn loses nothing
already decided. The file is created readable by its owner only (``0600``): it
holds the arguments of every call. :func:`read` joins the lines into one record
per call; a call's decision is the first one written, and a later line that
decides it otherwise is reported and left out, never merged.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["FIELDS", "AuditLog", "read"]

FIELDS = (
    "interaction",
    "turn",
    "tool_call_id",
    "kind",
    "tool",
    "server",
    "class",
    "tool_kind",
    "arguments",
    "content",
    "locations",
    "invisible",
    "incomplete",
    "approved_arguments",
    "prompt",
    "asked_at",
    "decided_at",
    "decided_by",
    "username",
    "display_name",
    "page",
    "decision",
    "rule",
    "note",
    "answer",
    "ended_at",
    "status",
    "outcome",
    "error",
)
"""The fields of a record :func:`read` returns, in order (absent ones are None)."""


class AuditLog:
    """Appends audit lines to ``path`` (created with its folders if missing)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def write(self, event: str, fields: Mapping[str, Any]) -> None:
        """Append one line ``{"event": event, "time": now, **fields}`` and flush it."""
        line = json.dumps(
            {"event": event, "time": time.time(), **fields}, ensure_ascii=False, default=str
        )
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as f:
                f.write(line + "\n")
                f.flush()


def read(path: str | os.PathLike[str], *, as_frame: bool = False) -> Any:
    """One record per call (a dict of :data:`FIELDS`), in the order calls first appear.

    A half-written last line (the kernel died while writing) is skipped. With
    ``as_frame=True``, a pandas DataFrame (pandas must be installed).
    """
    records: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
    with Path(path).open(encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                log.warning("%s:%d is not a whole JSON line; skipped", path, number)
                continue
            if not isinstance(entry, dict):
                continue
            key = (entry.get("interaction"), entry.get("turn"), entry.get("tool_call_id"))
            record = records.setdefault(key, dict.fromkeys(FIELDS))
            if entry.get("event") == "decided" and record["decided_by"] is not None:
                if (entry.get("decision"), entry.get("decided_by")) != (
                    record["decision"],
                    record["decided_by"],
                ):
                    log.warning(
                        "%s:%d decides call %s again (%s by %s, first %s by %s); left out",
                        path,
                        number,
                        entry.get("tool_call_id"),
                        entry.get("decision"),
                        entry.get("decided_by"),
                        record["decision"],
                        record["decided_by"],
                    )
                continue
            for name in FIELDS:
                value = entry.get(name)
                if value is not None:
                    record[name] = value
    rows = list(records.values())
    if not as_frame:
        return rows
    try:
        import pandas
    except ImportError as exc:
        raise ImportError("read(..., as_frame=True) needs pandas: pip install pandas") from exc
    return pandas.DataFrame(rows, columns=list(FIELDS))
