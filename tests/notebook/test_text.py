"""Streamed text: coalesced, with UTF-16 offsets, through one thread per turn."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from widget_helpers import (
    ask,
    final,
    update,
)

from mead_notebook.notebook import widget
from mead_notebook.notebook.widget import FLUSH_INTERVAL
from mead_notebook.policies import AllowAll
from mead_notebook.turn import TurnResult

pytestmark = pytest.mark.timeout(60)


# -- text ----------------------------------------------------------------------------------


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def replay(messages: list[dict[str, Any]]) -> str:
    """Apply text messages the way the frontend does, counting in UTF-16 code units."""
    text = b""
    for m in messages:
        start = m["start"] * 2
        assert start <= len(text), "a text message left a gap"
        text = text[:start] + m["delta"].encode("utf-16-le")
    return text.decode("utf-16-le")


def test_text_is_coalesced_with_utf16_offsets(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    fragments = [f"é{i}😀 " if i % 3 else f"w{i} " for i in range(3000)]
    started = time.monotonic()
    for i, f in enumerate(fragments):
        w.text_delta(None, f)
        if i % 100 == 99:
            time.sleep(FLUSH_INTERVAL / 2)
    elapsed = time.monotonic() - started
    w.turn_ended(None, TurnResult(), None)
    messages = c.custom("text")
    assert 5 <= len(messages) <= elapsed / FLUSH_INTERVAL + 1
    streamed = "".join(m["delta"] for m in messages)
    assert "".join(fragments).startswith(streamed)
    offsets = [m["start"] for m in messages]
    expected = [0]
    for m in messages[:-1]:
        expected.append(expected[-1] + utf16(m["delta"]))
    assert offsets == expected
    assert replay(messages) == streamed
    assert c.updates()[-1]["text"] == w.text == "".join(fragments)


def test_text_is_not_resynced_on_each_change(make: Any) -> None:
    w, c = make(policy=AllowAll())
    w.turn_started(None, "x")
    n = len(c.updates())
    for i in range(50):
        w.text_delta(None, f"{i} ")
        time.sleep(0.002)
    ask(w, "call_1")
    w.tool_updated(None, final("call_1", result="ok"))
    assert c.updates()[n:] == []
    w.turn_ended(None, TurnResult(), None)
    synced = c.updates()[n:]
    assert len(synced) == 1
    assert synced[0]["text"] == w.text
    assert synced[0]["order"] == ["call_1"]
    assert synced[0]["calls"]["call_1"]["status"] == "completed"


def test_a_pause_in_the_stream_still_sends_the_text(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    w.text_delta(None, "first")
    w.text_delta(None, " second")
    deadline = time.monotonic() + 5
    while "".join(m["delta"] for m in c.custom("text")) != "first second":
        assert time.monotonic() < deadline, "buffered text was not sent during a pause"
        time.sleep(0.005)


def test_text_is_sent_before_a_card_changes(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    time.sleep(FLUSH_INTERVAL * 1.5)
    w.text_delta(None, "a")
    w.text_delta(None, "b")
    w.tool_updated(None, update("call_1", "pending"))
    kinds = [(m["type"], m.get("delta")) for m in c.custom()]
    assert kinds[-1] == ("call", None)
    assert "".join(d for k, d in kinds if k == "text") == "ab"


def test_a_card_does_not_send_text_within_the_interval(
    make: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(widget, "FLUSH_INTERVAL", 0.5)
    w, c = make()
    w.turn_started(None, "x")
    w.text_delta(None, "a")
    w.tool_updated(None, update("call_1", "pending"))
    assert c.custom("text") == []
    w.text_delta(None, "b")
    deadline = time.monotonic() + 5
    while "".join(m["delta"] for m in c.custom("text")) != "ab":
        assert time.monotonic() < deadline, "the text thread did not send the text"
        time.sleep(0.005)
    assert len(c.custom("text")) == 1


def text_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "mead-widget-text"]


def test_the_text_thread_lives_for_the_turn_only(make: Any) -> None:
    w, _c = make()
    before = set(text_threads())
    for _ in range(3):
        w.turn_started(None, "x")
        w.text_delta(None, "a")
        w.turn_ended(None, TurnResult(), None)
        assert w.text == "a"
    deadline = time.monotonic() + 5
    while set(text_threads()) - before:
        assert time.monotonic() < deadline, "a text thread outlived its turn"
        time.sleep(0.01)


def test_request_state_returns_the_current_text_and_calls(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    w.tool_updated(None, update("call_1", "in_progress", "busy"))
    w.text_delta(None, "so far ")
    w.text_delta(None, "🙂")
    w._handle_msg({"content": {"data": {"method": "request_state"}}, "buffers": []})
    state = c.updates()[-1]
    assert state["text"] == "so far 🙂"
    assert state["calls"]["call_1"]["current_step"] == "busy"
    assert state["order"] == ["call_1"]
    assert state["status"] == "running"
