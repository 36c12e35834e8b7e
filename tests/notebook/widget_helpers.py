"""What the widget tests share: the updates, requests and answers a turn and a view send."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from fakes import RecordingComm

from mead_notebook.interaction import Allow, Deny, Request, Update
from mead_notebook.notebook.widget import NotebookInteraction


def feed(w: NotebookInteraction, content: Any) -> None:
    """A custom message from the frontend, through the ordinary comm dispatch."""
    w._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})


def update(
    tool_call_id: str,
    status: str,
    step: str | None = None,
    progress: float | None = None,
    cancellable: bool = False,
    **details: Any,
) -> Update:
    return {  # type: ignore[typeddict-item]
        "tool_call_id": tool_call_id,
        "title": "write_file",
        "status": status,
        "current_step": step,
        "progress": progress,
        "cancellable": cancellable,
        **details,
    }


def final(
    tool_call_id: str,
    outcome: str | None = None,
    *,
    result: str | None = None,
    error: str | None = None,
) -> Update:
    """The last update of a call, as the driver sends it."""
    status = "completed" if outcome is None else "failed"
    return update(tool_call_id, status, outcome=outcome, result=result, error=error)


def request(tool_call_id: str, cls: str = "effect", name: str = "write_file") -> Request:
    return {
        "tool_call_id": tool_call_id,
        "tool": name,
        "server": "local",
        "class": cls,  # type: ignore[typeddict-item]
        "arguments": {"path": "a.txt"},
    }


def last_card(c: RecordingComm, tool_call_id: str) -> dict[str, Any]:
    cards = [m["card"] for m in c.custom("call") if m["card"]["tool_call_id"] == tool_call_id]
    assert cards, f"no card was sent for {tool_call_id}"
    card: dict[str, Any] = cards[-1]
    return card


def open_question(c: RecordingComm, tool_call_id: str, timeout: float = 10.0) -> str:
    """Wait until the card of ``tool_call_id`` carries an open question; return its id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for m in reversed(c.custom("call")):
            card = m["card"]
            q = card.get("question")
            if card["tool_call_id"] == tool_call_id and q and q["answer"] is None:
                return str(q["id"])
        time.sleep(0.005)
    raise AssertionError(f"no open question for {tool_call_id} within {timeout} s")


def in_thread(fn: Callable[[], None]) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def ask(w: NotebookInteraction, tool_call_id: str = "call_1", cls: str = "effect") -> Allow | Deny:
    w.tool_updated(None, update(tool_call_id, "pending"))
    return w.request_permission(None, request(tool_call_id, cls))


def asking(
    w: NotebookInteraction, c: RecordingComm, tool_call_id: str = "call_1", cls: str = "effect"
) -> tuple[list[Allow | Deny], threading.Thread, str]:
    """Ask in another thread: what it settles to (once joined), the thread, the question id."""
    settled: list[Allow | Deny] = []
    t = in_thread(lambda: settled.append(ask(w, tool_call_id, cls)))
    return settled, t, open_question(c, tool_call_id)
