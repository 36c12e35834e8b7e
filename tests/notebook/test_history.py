"""The earlier conversation a turn continues, as the widget syncs it: read-only, bounded."""

from __future__ import annotations

from typing import Any

import pytest

from mead_notebook import SessionHistory, TurnDriver
from mead_notebook.interaction import HistoryEntry
from mead_notebook.notebook.protocol import MAX_HISTORY, MAX_HISTORY_TEXT
from mead_notebook.testing import Recording
from mead_notebook.turn import TurnResult

pytestmark = pytest.mark.timeout(60)


def call(tool_call_id: str, status: str, **more: Any) -> HistoryEntry:
    update = {
        "tool_call_id": tool_call_id,
        "title": "rm -rf build",
        "status": status,
        "current_step": None,
        "progress": 0.5,
        "cancellable": True,
        "tool": "execute",
        "server": "gemini",
        "class": "effect",
        "arguments": {"command": "rm -rf build"},
        "kind": "execute",
        "content": [{"type": "terminal", "command": "rm -rf build"}],
        **more,
    }
    return {"type": "call", "update": update}  # type: ignore[typeddict-item]


HISTORY: list[HistoryEntry] = [
    {"type": "prompt", "text": "Clean the build"},
    {"type": "text", "text": "I will **remove** it."},
    call("c1", "completed", outcome=None, result="removed", error=None),
    call("c2", "failed", outcome="error", result=None, error="denied"),
    call("c3", "pending"),
    call("c4", "in_progress", question={"id": "q1", "kind": "permission"}),
]


def test_the_widget_hears_a_sessions_history(make: Any) -> None:
    w, _c = make()
    assert isinstance(w, SessionHistory)


def test_the_history_is_synced_read_only_with_every_call_ended(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "What did you remove?")
    w.history_replayed(None, HISTORY)
    assert [e["type"] for e in w.history] == ["prompt", "text", "call", "call", "call", "call"]
    assert w.history[0] == {"type": "prompt", "text": "Clean the build", "cut": 0}
    assert w.history[1]["text"] == "I will **remove** it."
    cards = [e["card"] for e in w.history[2:]]
    assert [(k["status"], k["outcome"]) for k in cards] == [
        ("completed", None),
        ("failed", "error"),
        ("failed", "interrupted"),
        ("failed", "interrupted"),
    ]
    assert [k["result"] for k in cards][:1] == ["removed"]
    assert all(k["question"] is None and k["cancellable"] is False for k in cards)
    assert cards[0]["content"][0]["command"] == "rm -rf build"
    assert w.history_hidden == 0
    # Synced when it arrives, apart from the turn's own cards.
    assert any("history" in state for state in c.updates())
    assert w.calls == {}
    assert w.order == []


def test_a_new_turn_has_no_history(make: Any) -> None:
    w, _c = make()
    w.turn_started(None, "first")
    w.history_replayed(None, HISTORY)
    w.turn_ended(None, TurnResult(), None)
    assert len(w.history) == len(HISTORY)
    w.turn_started(None, "second")
    assert (w.history, w.history_hidden) == ([], 0)


def test_a_long_history_keeps_its_latest_entries_and_counts_the_rest(make: Any) -> None:
    w, _c = make()
    w.turn_started(None, "go on")
    many: list[HistoryEntry] = [{"type": "text", "text": f"m{i}"} for i in range(MAX_HISTORY + 7)]
    long = "x" * (MAX_HISTORY_TEXT + 5)
    w.history_replayed(None, [*many, {"type": "prompt", "text": long}, {"type": "odd"}])  # type: ignore[list-item]
    assert len(w.history) == MAX_HISTORY
    assert w.history_hidden == 8
    assert w.history[0]["text"] == "m8"
    assert (len(w.history[-1]["text"]), w.history[-1]["cut"]) == (MAX_HISTORY_TEXT, 5)


def test_the_driver_keeps_the_history_and_ends_its_open_calls() -> None:
    recording = Recording(object())  # type: ignore[arg-type]
    driver = TurnDriver(recording)
    driver.history(HISTORY)
    [event] = recording.events
    assert event.name == "history_replayed"
    sent = event.args[0]
    assert [e["update"]["status"] for e in sent if e["type"] == "call"] == [
        "completed",
        "failed",
        "failed",
        "failed",
    ]
    assert all(e["update"]["cancellable"] is False for e in sent if e["type"] == "call")
    assert driver.result.history[4]["update"]["outcome"] == "interrupted"  # type: ignore[typeddict-item]
    assert HISTORY[4]["update"]["status"] == "pending", "the entries given are not changed"  # type: ignore[typeddict-item]


def test_an_interaction_without_it_hears_nothing_and_the_result_keeps_it() -> None:
    class Plain:
        def tool_updated(self, *a: Any) -> None: ...
        def request_permission(self, *a: Any) -> Any: ...
        def register_call(self, *a: Any) -> None: ...
        def ask_choice(self, *a: Any) -> Any: ...
        def text_delta(self, *a: Any) -> None: ...

    driver = TurnDriver(Plain())
    assert driver.session_history is None
    driver.history(HISTORY[:2])
    assert driver.result.history == HISTORY[:2]
