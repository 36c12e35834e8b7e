"""The end of a turn: whatever interrupts it, the widget records how the turn ended."""

from __future__ import annotations

import pytest

from .cells import ALLOW, next_cell_runs
from .frontend import Frontend

pytestmark = pytest.mark.kernel

SLOW_END = """
w = widget()
_stop = w._text.stop

def _slow_stop():
    print('ENDING', flush=True)
    time.sleep(1.5)
    _stop()

w._text.stop = _slow_stop
report(permission_router().run('go', interaction=w))
"""
"""A turn whose ``turn_ended`` takes 1.5 s, so that an interrupt lands inside it."""


def test_an_interrupt_inside_turn_ended_still_ends_the_turn(fe: Frontend) -> None:
    fe.responder = lambda card: ALLOW
    msg_id = fe.execute(SLOW_END)
    fe.drive(lambda: "ENDING" in fe.stdout(msg_id), 30, "the end of the turn")
    fe.km.interrupt_kernel()
    reply = fe.wait_reply(msg_id, 30)["content"]
    assert (reply["status"], reply.get("ename")) == ("error", "KeyboardInterrupt"), reply
    widget = next(iter(fe.widgets.values()))
    fe.drive(lambda: widget.state.get("status") != "running", 10, "the turn's end in the view")
    assert widget.state["status"] == "done"
    assert [c["status"] for c in widget.state["calls"].values()] == ["completed"]
    next_cell_runs(fe)
