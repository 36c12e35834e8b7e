"""A view that goes away while a question waits: the kernel notices and shows it again.

The frontend plays a view that vanishes without a word (a reopened VS Code editor,
a crashed browser: it stops answering pings and forgets every widget) or one that
says goodbye (a disposed view). The kernel must announce the widget again, with
its open question, so that a view that comes back can answer it, and the cell
must then end normally.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from mead_notebook.notebook.waiting.views import Timing

from .cells import SYNC_TURN, calls_of, next_cell_runs, result_of
from .frontend import Frontend

pytestmark = pytest.mark.kernel

ASYNC_TURN = "report(await permission_router().arun('go', interaction=widget()))"
BACKGROUND_TURN = "turn = permission_router().start('go', interaction=widget())"
VIEW = "application/vnd.jupyter.widget-view+json"
SLACK = 20.0
"""Time allowed beyond the ping schedule for the kernel to act (seconds)."""
FAST = Timing(ping_every=0.6, answer_within=0.3, announce_every=0.6)
"""The timing of most scenarios here; one keeps the default (``Timing()``)."""


@pytest.fixture
def timing(fe: Frontend, request: pytest.FixtureRequest) -> Iterator[Timing]:
    """The kernel's timing of the checks on views for one scenario (FAST unless given)."""
    chosen: Timing = getattr(request, "param", FAST)
    set_in_kernel(fe, chosen)
    yield chosen
    set_in_kernel(fe, Timing())


def set_in_kernel(fe: Frontend, timing: Timing) -> None:
    reply, _ = fe.run(
        f"from mead_notebook.notebook.waiting import views\nviews.set_timing(views.{timing!r})"
    )
    assert reply["status"] == "ok", reply


def open_card(state: dict[str, Any]) -> dict[str, Any] | None:
    for card in state.get("calls", {}).values():
        question = card.get("question")
        if question and question.get("answer") is None:
            return dict(card)
    return None


def announced_again(fe: Frontend, timeout: float) -> tuple[str, dict[str, Any]]:
    """Wait for the widget's new ``comm_open`` with its open question; return both."""
    found: list[tuple[str, dict[str, Any]]] = []

    def seen() -> bool:
        for comm_id, widget in fe.widgets.items():
            card = open_card(widget.state)
            if card is not None:
                found.append((comm_id, card))
                return True
        return False

    fe.drive(seen, timeout, "the widget announced again with its question")
    return found[0]


def republished(fe: Frontend, model_id: str) -> bool:
    return any(
        m["msg_type"] == "update_display_data"
        and m["content"]["data"].get(VIEW, {}).get("model_id") == model_id
        for m in fe.iopub
    )


def pinged(fe: Frontend, comm_id: str) -> bool:
    """Whether the kernel pinged the widget (the frontend answers while it renders)."""
    return any(d.get("content", {}).get("type") == "ping" for d in fe.comm_sent(comm_id, "custom"))


@pytest.mark.parametrize(
    ("cell", "how", "timing"),
    [
        pytest.param(SYNC_TURN, "silent", FAST, id="sync-vanishes"),
        pytest.param(ASYNC_TURN, "silent", FAST, id="async-vanishes"),
        pytest.param(BACKGROUND_TURN, "silent", FAST, id="background-vanishes"),
        pytest.param(SYNC_TURN, "goodbye", FAST, id="sync-says-goodbye"),
        pytest.param(SYNC_TURN, "silent", Timing(), id="sync-vanishes-default-timing"),
    ],
    indirect=["timing"],
)
def test_a_view_that_comes_back_gets_the_open_question(
    fe: Frontend, timing: Timing, cell: str, how: str
) -> None:
    msg_id = fe.execute(cell)
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    first = next(iter(fe.widgets))
    # The kernel has heard from the view: its first 'rendered', sent as the widget opened,
    # can be lost (a view's pong then stands for it), and a view never heard of is waited
    # for through the grace period, not taken for gone.
    fe.drive(lambda: pinged(fe, first), 30, "a ping the view answers")
    # The view goes: no more pongs, and the frontend forgets every widget.
    fe.render = False
    if how == "goodbye":
        fe.send_custom(first, {"type": "gone"})
    fe.widgets.clear()
    # Silent: the next ping goes out within ping_every, and the view is taken for gone
    # once `misses` pings in a row went unanswered; after a goodbye, the ping that
    # follows it decides alone.
    budget = timing.ping_every + timing.noticed_after() + SLACK
    comm_id, card = announced_again(fe, budget)
    assert comm_id == first, "the widget comes back under the id its output names"
    assert card["tool"] == "write_note"
    # The output is published again in place, naming the same model.
    fe.drive(lambda: republished(fe, first), 10, "the widget's output published again")
    # A view comes back and answers from it.
    fe.render = True
    fe.send_custom(comm_id, {"type": "rendered"})
    question_id = card["question"]["id"]
    fe.answer(comm_id, {"type": "answer", "question_id": question_id, "decision": "allow"})
    reply = fe.wait_reply(msg_id, 30)["content"]
    assert reply["status"] == "ok", reply
    if cell == BACKGROUND_TURN:
        reply, out = fe.run("report(turn.result(timeout=30))")
        assert reply["status"] == "ok", reply
    else:
        out = fe.stdout(msg_id)
    assert calls_of(out) == [("write_note", "completed", None)]
    assert result_of(out)["text"] == "all done"
    next_cell_runs(fe)


@pytest.mark.parametrize("timing", [Timing()], ids=["default-timing"], indirect=True)
def test_a_view_that_stays_is_pinged_and_nothing_is_announced(fe: Frontend, timing: Timing) -> None:
    msg_id = fe.execute(SYNC_TURN)
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    comm_id = next(iter(fe.widgets))
    opens_before = sum(1 for m in fe.iopub if m["msg_type"] == "comm_open")
    every = timing.ping_every
    until = time.monotonic() + 2 * every + 1
    fe.drive(lambda: time.monotonic() >= until, 3 * every + SLACK, "two pings")
    pings = [c for c in fe.widgets[comm_id].custom if c.get("type") == "ping"]
    assert len(pings) >= 2, pings
    assert sum(1 for m in fe.iopub if m["msg_type"] == "comm_open") == opens_before
    card = fe.open_question()
    assert card is not None
    question_id = card["question"]["id"]
    fe.answer(comm_id, {"type": "answer", "question_id": question_id, "decision": "deny"})
    reply = fe.wait_reply(msg_id, 30)["content"]
    assert reply["status"] == "ok", reply
    assert calls_of(fe.stdout(msg_id)) == [("write_note", "failed", "denied")]


BUSY = Timing(ping_every=1.5, answer_within=1.0, announce_every=1.5)
"""Quick pings, with time enough for this test's frontend to answer the ones it does."""


@pytest.mark.parametrize("timing", [BUSY], ids=["busy"], indirect=True)
def test_a_busy_page_that_misses_a_ping_keeps_its_widget(fe: Frontend, timing: Timing) -> None:
    # A loaded page (a big notebook, a reconnect storm) answers nothing for a while:
    # the widget is not announced again, and its view is not drawn anew.
    msg_id = fe.execute(SYNC_TURN)
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    comm_id = next(iter(fe.widgets))
    opens_before = sum(1 for m in fe.iopub if m["msg_type"] == "comm_open")
    fe.render = False  # no pongs

    def pings() -> int:
        return sum(1 for c in fe.widgets[comm_id].custom if c.get("type") == "ping")

    fe.drive(lambda: pings() >= 1, timing.ping_every + SLACK, "a ping")
    fe.render = True  # the page is back: it answers the next ping
    fe.drive(lambda: pings() >= 2, timing.ping_every + SLACK, "the ping after the missed one")
    seen = pings()
    fe.drive(lambda: pings() >= seen + 3, 3 * timing.ping_every + SLACK, "pings at the usual pace")
    assert sum(1 for m in fe.iopub if m["msg_type"] == "comm_open") == opens_before
    card = fe.open_question()
    assert card is not None
    question_id = card["question"]["id"]
    fe.answer(comm_id, {"type": "answer", "question_id": question_id, "decision": "deny"})
    assert fe.wait_reply(msg_id, 30)["content"]["status"] == "ok"
    assert calls_of(fe.stdout(msg_id)) == [("write_note", "failed", "denied")]
