"""A view's message that reaches the widget the moment its comm opens.

A kernel that dispatches comm messages on another thread (ipykernel 7 with comms
over a subshell, as JupyterLab sends them) can hand a fast page's ``rendered`` to
the widget while the cell that makes it is still in ``__init__``; the widget must
take it, or its questions never count a view and are settled by the fallback.
ipywidgets itself leaves a moment between publishing the comm and hearing on it,
where a ``rendered`` is lost for good: a question that has heard of no view pings,
and a view's pong counts as its ``rendered``.
"""

from __future__ import annotations

import threading
import time
from typing import Any, TypeVar

import comm
import pytest
from fakes import RecordingComm, answer_when_asked
from widget_helpers import ask

from mead_notebook.interaction import Allow, Deny
from mead_notebook.notebook.waiting import views
from mead_notebook.notebook.widget import NotebookInteraction
from mead_notebook.policies import AllowAll

pytestmark = pytest.mark.timeout(60)

C = TypeVar("C", bound=RecordingComm)


def comms_made(monkeypatch: pytest.MonkeyPatch, kind: type[C]) -> list[C]:
    """Every comm the widget makes from now on is a ``kind``; the list of those made."""
    made: list[C] = []

    def create(*args: Any, **kwargs: Any) -> C:
        made.append(kind(**kwargs))
        return made[-1]

    monkeypatch.setattr(comm, "create_comm", create)
    return made


class RenderedAtOnce(RecordingComm):
    """A comm whose view says ``rendered`` as soon as the widget can receive messages."""

    def on_msg(self, callback: Any) -> None:
        super().on_msg(callback)
        if callback is not None:
            data = {"method": "custom", "content": {"type": "rendered"}}
            callback({"content": {"comm_id": self.comm_id, "data": data}, "buffers": []})


def test_a_view_that_renders_while_the_widget_is_made_is_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = comms_made(monkeypatch, RenderedAtOnce)
    # No grace: unless the view's rendered counted, the question is settled at once
    # by the fallback (denied as expired) instead of waiting for the person.
    w = NotebookInteraction(grace=0.0, timeout=30.0)
    try:
        assert w.comm in made
        w.turn_started(None, "x")
        person = answer_when_asked(w, w.comm, "call_1", decision="allow")
        decision = ask(w)
        person.join(10)
        assert isinstance(decision, Allow), decision
        answer = w.calls["call_1"]["question"]["answer"]
        assert answer["decision"] == "allow"
    finally:
        w.interrupt(None)
        w.close()


class PongsOnly(RecordingComm):
    """A view whose ``rendered`` was lost: it only answers the kernel's pings."""

    def __init__(self, **kwargs: Any) -> None:
        self.deliver: Any = None
        super().__init__(**kwargs)

    def publish_msg(self, msg_type: str, data: dict[str, Any] | None = None, **keys: Any) -> None:
        super().publish_msg(msg_type, data, **keys)
        content = (data or {}).get("content") or {}
        if msg_type == "comm_msg" and content.get("type") == "ping" and self.deliver is not None:
            pong = {"type": "pong", "seq": content["seq"]}
            threading.Thread(target=self.deliver, args=(pong,), daemon=True).start()


def test_a_view_whose_rendered_was_lost_is_found_by_a_ping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = comms_made(monkeypatch, PongsOnly)
    # The person answers after the grace: unless the pong counted, the fallback
    # would have settled the question (denied as expired) by then.
    w = NotebookInteraction(grace=0.3, timeout=30.0)
    try:
        made[-1].deliver = w.deliver
        w.turn_started(None, "x")

        def late_person() -> None:
            time.sleep(1.0)
            answer_when_asked(w, w.comm, "call_1", decision="allow").join(10)

        person = threading.Thread(target=late_person, daemon=True)
        person.start()
        decision = ask(w)
        person.join(15)
        assert isinstance(decision, Allow), decision
        assert made[-1].custom("ping"), "the question never pinged"
    finally:
        w.interrupt(None)
        w.close()


def test_a_goodbye_from_a_view_whose_rendered_was_lost_brings_the_widget_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = comms_made(monkeypatch, RecordingComm)
    old = views.set_timing(views.Timing(ping_every=0.2, answer_within=0.1, announce_every=0.2))
    # A long grace: unless the goodbye counted as a view, nothing is announced before it ends.
    w = NotebookInteraction(grace=30.0, timeout=30.0)
    try:
        w.turn_started(None, "x")
        decided: list[Any] = []
        asking = threading.Thread(target=lambda: decided.append(ask(w)), daemon=True)
        asking.start()
        deadline = time.monotonic() + 10
        while not (w.calls.get("call_1") or {}).get("question") and time.monotonic() < deadline:
            time.sleep(0.01)
        opened = len(made)
        w.deliver({"type": "gone"})
        while len(made) == opened and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(made) > opened, "the widget was not announced again after the goodbye"
        question = w.calls["call_1"]["question"]
        w.deliver({"type": "answer", "question_id": question["id"], "decision": "allow"})
        asking.join(10)
        assert isinstance(decided[0], Allow), decided
    finally:
        views.set_timing(old)
        w.interrupt(None)
        w.close()


def test_what_counts_as_a_view_never_answers_for_the_person(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pongs (forged ones too) and a goodbye say that a view is there: the question then
    waits for the person, it is not settled by the fallback, which here would allow."""
    made = comms_made(monkeypatch, PongsOnly)
    w = NotebookInteraction(grace=0.2, timeout=1.5, fallback=AllowAll())
    try:
        made[-1].deliver = w.deliver
        w.turn_started(None, "x")
        for forged in (
            {"type": "pong", "seq": 0},
            {"type": "pong", "seq": 10**9},
            {"type": "pong", "seq": "1"},
            {"type": "gone"},
        ):
            w.deliver(forged)
        decision = ask(w)
        assert isinstance(decision, Deny), decision
        assert decision.reason == "expired", decision
        assert made[-1].custom("ping"), "the question never pinged"
    finally:
        w.interrupt(None)
        w.close()
