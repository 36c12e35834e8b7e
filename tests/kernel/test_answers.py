"""What a frontend sends as an answer: text the kernel cannot send back, forged carriers."""

from __future__ import annotations

import pytest

from mead_notebook.notebook.fallback import NOTHING_WAITS
from mead_notebook.notebook.outputs import SAY_AFTER

from .cells import ALLOW, SYNC_TURN, asking, calls_of, next_cell_runs, open_questions
from .conftest import CONFIGS
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


MAIN = [c for c in CONFIGS if not c.values[0][1]]
"""Every version, answers on the main shell."""
TAPPED = [c for c in MAIN if not c.values[0][0].startswith("6.")]
"""ipykernel 7.x, answers on the main shell: the shell tap delivers them."""


@pytest.mark.parametrize("frontend", TAPPED, indirect=True)
def test_an_answer_the_tap_delivered_is_left_to_the_kernel_after_the_cell(fe: Frontend) -> None:
    # The waiting main thread returns as soon as the tap has delivered the answer: it
    # neither dispatches the answer's message again nor anything queued behind it.
    msg_id, card = asking(fe, SYNC_TURN)
    comm_id = next(reversed(fe.widgets))
    answer = {"type": "answer", "question_id": card["question"]["id"], **ALLOW}
    answer_id = fe.answer(comm_id, answer)
    reply = fe.wait_reply(msg_id)["content"]
    assert reply["status"] == "ok", reply
    assert calls_of(fe.stdout(msg_id)) == [("write_note", "completed", None)]
    fe.drive(lambda: fe.idle(answer_id), 10, "the kernel's own dispatch of the answer")
    order = [
        m["parent_header"].get("msg_id")
        for m in fe.iopub
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
    ]
    assert order.index(msg_id) < order.index(answer_id), "dispatched again during the cell"
    next_cell_runs(fe)


SAID = "NotebookInteraction: waiting for a person"


def waiting_texts(fe: Frontend, msg_id: str) -> list[str]:
    """What the cell's outputs said about waiting, in order (the widget's own output aside)."""
    said = []
    for m in fe.iopub:
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        if m["msg_type"] == "stream":
            said.append(m["content"]["text"].strip())
        elif m["msg_type"] in ("display_data", "update_display_data"):
            text = m["content"]["data"].get("text/plain", "")
            if text.startswith((SAID, NOTHING_WAITS)):
                said.append(text.split(":")[1].strip())
    return said


STARTED_TURN = """
@tool
def started() -> str:
    \"\"\"Say that it runs.\"\"\"
    print("STARTED", flush=True)
    return "ran"

from mead_notebook.notebook import outputs
outputs.SAY_AFTER = {say_after}
Router(ScriptedModel([[ToolCall("started", {{}})], ["done"]]), [started]).run(
    "go", interaction=widget()
)
outputs.SAY_AFTER = {default}
"""


@pytest.mark.parametrize("frontend", MAIN, indirect=True)
def test_a_question_answered_at_once_says_nothing_about_waiting(fe: Frontend) -> None:
    fe.responder = lambda card: ALLOW
    cell = STARTED_TURN.format(say_after=60, default=SAY_AFTER)
    msg_id = fe.execute(cell)
    assert fe.wait_reply(msg_id)["content"]["status"] == "ok"
    assert waiting_texts(fe, msg_id) == ["STARTED"]


@pytest.mark.parametrize("frontend", MAIN, indirect=True)
def test_that_nothing_waits_is_said_after_the_allowed_tool_started(fe: Frontend) -> None:
    cell = STARTED_TURN.format(say_after=0, default=SAY_AFTER)
    msg_id = fe.execute(cell)
    fe.drive(lambda: waiting_texts(fe, msg_id) != [], 30, "what waits")
    card = fe.open_question()
    assert card is not None
    answer = {"type": "answer", "question_id": card["question"]["id"], **ALLOW}
    fe.answer(next(reversed(fe.widgets)), answer)
    assert fe.wait_reply(msg_id)["content"]["status"] == "ok"
    said = waiting_texts(fe, msg_id)
    assert said[:3] == ["waiting for a person", "STARTED", "no question waits for a person now."]
