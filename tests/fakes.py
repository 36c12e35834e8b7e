"""Test doubles shared by the Python tests."""

from __future__ import annotations

import threading
import time
from typing import Any

from comm.base_comm import BaseComm


class RecordingComm(BaseComm):
    """A comm that keeps every message the kernel side publishes."""

    def __init__(self, **kwargs: Any) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        super().__init__(**kwargs)

    def publish_msg(
        self,
        msg_type: str,
        data: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        buffers: list[bytes] | None = None,
        **keys: Any,
    ) -> None:
        self.sent.append((msg_type, data or {}))

    def custom(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The custom messages sent so far, optionally only those of one ``type``."""
        out = [
            d["content"]
            for t, d in list(self.sent)
            if t == "comm_msg" and d.get("method") == "custom"
        ]
        return [m for m in out if kind is None or m.get("type") == kind]

    def updates(self) -> list[dict[str, Any]]:
        """The state updates sent so far."""
        return [
            d["state"]
            for t, d in list(self.sent)
            if t == "comm_msg" and d.get("method") == "update"
        ]


def answer_when_asked(w: Any, c: Any, tool_call_id: str, **answer: Any) -> threading.Thread:
    """Play the person: wait for the question on the card, then answer it."""

    def person() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            question = (w.calls.get(tool_call_id) or {}).get("question")
            if question and question["answer"] is None:
                w.deliver({"type": "answer", "question_id": question["id"], **answer})
                return
            time.sleep(0.005)

    t = threading.Thread(target=person, daemon=True)
    t.start()
    return t
