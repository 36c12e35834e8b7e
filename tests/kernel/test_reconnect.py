"""Pages that (re)connect while cells run get every widget's state, in order, once.

A reloading page opens ipywidgets' control comm and asks for every state
(``request_states``). ipywidgets answers on the control comm opened last, so a
request must be handled after the ``comm_open`` sent before it, and its handler
reads every widget, so it must not run while another thread creates widgets.
"""

from __future__ import annotations

import pytest

from .cells import ALLOW, SYNC_TURN, calls_of, pause
from .frontend import Frontend

pytestmark = pytest.mark.kernel

CHURN = """
import ipywidgets

def churn(seconds):
    kept = [ipywidgets.IntSlider() for _ in range(300)]
    print('CHURNING', flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ipywidgets.IntSlider().close()
        time.sleep(0.002)
    for w in kept:
        w.close()
    return 'churned'

@tool
def churning() -> str:
    \"\"\"Create and close widgets for two seconds.\"\"\"
    return churn(2)
"""
"""Widgets created and closed in a loop, from a cell or from a tool's thread."""


def finished_turn(fe: Frontend) -> None:
    fe.responder = lambda card: ALLOW
    reply, out = fe.run(SYNC_TURN)
    assert reply["status"] == "ok", reply
    assert calls_of(out) == [("write_note", "completed", None)]
    fe.responder = None


def connected_page(fe: Frontend) -> str:
    """A page's control comm, opened and answered once."""
    control = fe.open_control()
    fe.request_states(control)
    fe.drive(lambda: fe.comm_data(control, "update_states") is not None, 10, "every state")
    return control


def test_each_page_is_answered_on_its_own_comm_in_the_order_it_asked(fe: Frontend) -> None:
    finished_turn(fe)
    first = connected_page(fe)
    # The main loop stalls for a second without running a cell: what comes next is
    # queued for the main thread while no cell holds it.
    stall = "import asyncio\nasyncio.get_running_loop().call_later(0.2, time.sleep, 1.0)"
    reply, _ = fe.run(stall)
    assert reply["status"] == "ok", reply
    pause(fe, 0.5)
    busy = fe.execute("time.sleep(1.5)")
    fe.request_states(first)  # behind the cell
    fe.drive(lambda: fe.busy(busy), 10, "the cell to start")
    pause(fe, 0.3)
    second = fe.open_control()  # while the cell runs
    fe.request_states(second)
    assert fe.wait_reply(busy)["content"]["status"] == "ok"
    fe.drive(lambda: len(fe.comm_sent(None, "update_states")) >= 3, 10, "an answer to each request")
    pause(fe, 0.3)
    assert len(fe.comm_sent(first, "update_states")) == 2, "the first page lost its answer"
    assert len(fe.comm_sent(second, "update_states")) == 1


@pytest.mark.parametrize(
    "cell",
    [
        "churn(2)",
        "report(Router(ScriptedModel([[ToolCall('churning', {})], ['done']]), [churning])"
        ".run('go', interaction=widget()))",
    ],
    ids=["cell", "tool"],
)
def test_state_requests_while_widgets_are_created_are_all_answered(fe: Frontend, cell: str) -> None:
    reply, _ = fe.run(CHURN)
    assert reply["status"] == "ok", reply
    finished_turn(fe)
    control = connected_page(fe)
    fe.responder = lambda card: ALLOW
    since = len(fe.iopub)
    msg_id = fe.execute(cell)

    def churning() -> list[str]:
        """The cells whose output says CHURNING, since this one was sent."""
        return [
            m["parent_header"].get("msg_id")
            for m in fe.iopub[since:]
            if m["msg_type"] == "stream" and "CHURNING" in m["content"]["text"]
        ]

    try:
        fe.drive(lambda: bool(churning()), 30, "widgets being created")
    except AssertionError as timed_out:
        # What did come says whether the kernel's IOPub dropped messages (a slider is three
        # opens and, in the loop, one close): it did, to a test process too slow to read
        # the flood, while either side of IOPub kept ZeroMQ's message limit (Frontend).
        seen = [m["msg_type"] for m in fe.iopub[since:]]
        texts = [m["content"]["text"] for m in fe.iopub[since:] if m["msg_type"] == "stream"]
        counts = {kind: seen.count(kind) for kind in ("comm_open", "comm_close", "stream")}
        raise AssertionError(f"{timed_out}; since the cell: {counts}, streams {texts}") from None
    for _ in range(6):
        fe.request_states(control)
        pause(fe, 0.2)
    assert fe.wait_reply(msg_id, 30)["content"]["status"] == "ok"
    assert churning() == [msg_id], f"the output went to {churning()}, not the cell {msg_id}"
    fe.drive(
        lambda: len(fe.comm_sent(control, "update_states")) >= 7, 20, "an answer to each request"
    )
    pause(fe, 0.3)
    assert len(fe.comm_sent(control, "update_states")) == 7
