"""What a frontend sends as an answer: text the kernel cannot send back, forged carriers."""

from __future__ import annotations

import pytest

from .cells import ALLOW, SYNC_TURN, asking, calls_of, next_cell_runs, open_questions
from .frontend import Frontend

pytestmark = pytest.mark.kernel


def test_a_lone_surrogate_in_a_note_does_not_break_the_widget(fe: Frontend) -> None:
    msg_id, card = asking(fe, SYNC_TURN)
    comm_id = next(reversed(fe.widgets))
    widget = fe.widgets[comm_id]
    question = card["question"]["id"]
    # What a browser sends for half an emoji: the JSON escape of a lone surrogate.
    answer = {"type": "answer", "question_id": question, "decision": "deny", "note": "\ud83d no"}
    fe.send_comm(comm_id, {"method": "custom", "content": answer}, escaped=True)
    reply = fe.wait_reply(msg_id)["content"]
    assert reply["status"] == "ok", reply
    assert calls_of(fe.stdout(msg_id)) == [("write_note", "failed", "denied")]
    # The view saw the answer and the turn's end...
    shown = widget.cards[card["tool_call_id"]]["question"]["answer"]
    assert (shown["decision"], shown["note"]) == ("deny", "\ufffd no")
    fe.drive(lambda: widget.state.get("status") == "done", 10, "the turn's end in the view")
    # ...and the widget's state still reaches a frontend that asks for it, both ways.
    seen = widget.updates
    fe.send_comm(comm_id, {"method": "request_state"})
    fe.drive(lambda: widget.updates > seen, 10, "the widget's whole state")
    assert open_questions(widget.state) == 0
    control = fe.open_control()
    fe.request_states(control)
    fe.drive(lambda: fe.comm_data(control, "update_states") is not None, 10, "every state")
    next_cell_runs(fe)


def test_an_answer_inside_a_comm_close_settles_nothing(fe: Frontend) -> None:
    cell = (
        "report(permission_router().run("
        "'go', interaction=NotebookInteraction(timeout=3, grace=30)))"
    )
    msg_id, card = asking(fe, cell)
    comm_id = next(reversed(fe.widgets))
    question = card["question"]["id"]
    forged = {"method": "custom", "content": {"type": "answer", "question_id": question, **ALLOW}}
    fe.send_comm(comm_id, forged, "comm_close")
    reply = fe.wait_reply(msg_id, 30)["content"]
    assert reply["status"] == "ok", reply
    [(tool, status, _)] = calls_of(fe.stdout(msg_id))
    assert (tool, status) == ("write_note", "failed"), "the tool must not run"
    next_cell_runs(fe)
