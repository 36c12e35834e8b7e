"""A turn waits for the widget's answer in a real kernel, on every supported ipykernel.

Each test runs cells over the Jupyter protocol and plays the widget's frontend
(see ``frontend.py``), with and without subshell routing of comm messages.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest

from .frontend import Frontend

pytestmark = pytest.mark.kernel

MECHANISMS = {
    "6.29.5": ("main-pump", "main-loop"),
    "6.31.0": ("main-pump", "main-loop"),
    "7.0.1": ("shell-stream-tap", "shell-stream-tap"),
    "7.3.0": ("shell-stream-tap", "shell-stream-tap"),
    "7.4.0": ("comm-route-hook", "comm-route-hook"),
}
"""Per version: the mechanism on the main thread, and on another thread."""

CONTROL = "jupyter.widget.control"
"""ipywidgets' comm through which a (re)loaded page asks for every widget's state."""

ALLOW = {"decision": "allow"}
DENY = {"decision": "deny", "note": "not now"}


def result_of(out: str) -> dict[str, Any]:
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, out
    parsed: dict[str, Any] = json.loads(lines[0][len("RESULT ") :])
    return parsed


def open_questions(state: dict[str, Any]) -> int:
    """How many cards in a widget's synced state wait for an answer."""
    questions = [card.get("question") for card in state["calls"].values()]
    return sum(1 for q in questions if q and q.get("answer") is None)


def answered_by_person(fe: Frontend) -> list[str]:
    """The decisions the person's answers settled, as the widget last showed them."""
    decisions = []
    for card in fe.cards():
        answer = (card.get("question") or {}).get("answer") or {}
        assert answer.get("by") == "person", card
        decisions.append(str(answer.get("decision")))
    return decisions


def note_latency(fe: Frontend, label: str) -> None:
    """Print the time from each answer to the card's next state (the turn moving on)."""
    for card_id, sent in fe.answered.items():
        moved = [
            m["_received"]
            for m in fe.iopub
            if m.get("_received", 0) > sent and m["msg_type"] == "comm_msg"
        ]
        if moved:
            print(
                f"[{fe.version}] {label} {card_id}: answer -> next message {moved[0] - sent:.3f} s"
            )


def asking(fe: Frontend, cell: str) -> tuple[str, dict[str, Any]]:
    """Run ``cell`` until it asks; return its ``msg_id`` and the card with the question."""
    msg_id = fe.execute(cell)
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    card = fe.open_question()
    assert card is not None
    return msg_id, card


def interrupt(fe: Frontend, msg_id: str, card: dict[str, Any], ename: str, timeout: float) -> None:
    """Interrupt the kernel; the cell ends with ``ename`` and the question as interrupted."""
    fe.km.interrupt_kernel()
    reply = fe.wait_reply(msg_id, timeout)["content"]
    assert (reply["status"], reply.get("ename")) == ("error", ename), reply
    closed = next(iter(fe.widgets.values())).cards[card["tool_call_id"]]
    assert closed["question"]["answer"]["decision"] == "interrupted"


def next_cell_runs(fe: Frontend) -> None:
    reply, out = fe.run("print('NEXT', 6 * 7)", timeout=30)
    assert reply["status"] == "ok", reply
    assert out == "NEXT 42\n"


def test_mechanism_is_pinned_per_version(fe: Frontend) -> None:
    main, other = MECHANISMS[fe.version]
    reply, out = fe.run(
        "box = []\n"
        "t = threading.Thread(target=lambda: box.append(_waiting.mechanism()))\n"
        "t.start(); t.join(5)\n"
        "print('MECH', _waiting.mechanism(), box[0])\n"
    )
    assert reply["status"] == "ok", reply
    assert out.split() == ["MECH", main, other]


@pytest.mark.parametrize(
    ("answer", "status", "outcome"), [(ALLOW, "completed", None), (DENY, "failed", "denied")]
)
def test_sync_cell_blocks_until_answered(
    fe: Frontend, answer: dict[str, str], status: str, outcome: str | None
) -> None:
    fe.responder = lambda card: answer
    reply, out = fe.run("report(permission_router().run('go', interaction=widget()))")
    assert reply["status"] == "ok", reply
    result = result_of(out)
    assert result["stop"] == "end_turn"
    assert [(c["tool"], c["status"], c["outcome"]) for c in result["calls"]] == [
        ("write_note", status, outcome)
    ]
    if status == "completed":
        assert result["calls"][0]["result"] == "wrote hi"
    assert answered_by_person(fe) == [answer["decision"]]
    note_latency(fe, "sync")


def test_a_frontend_connecting_while_a_sync_cell_waits_can_answer(fe: Frontend) -> None:
    msg_id, _ = asking(fe, "report(permission_router().run('go', interaction=widget()))")
    comm_id = list(fe.widgets)[-1]
    widget = fe.widgets[comm_id]
    # What a reloaded page asks before it can show the widget again: kernel info, then
    # every widget's state through ipywidgets' control comm...
    info = fe.request("kernel_info_request", {}, timeout=10)
    assert info["content"]["status"] == "ok", info
    control = uuid.uuid4().hex
    opening = {"comm_id": control, "target_name": CONTROL, "data": {}}
    fe.send_main("comm_open", opening, metadata={"version": "1.0.0"})
    fe.send_main("comm_msg", {"comm_id": control, "data": {"method": "request_states"}})
    fe.drive(lambda: fe.comm_data(control, "update_states") is not None, 10, "every state")
    states = (fe.comm_data(control, "update_states") or {})["states"]
    fe.send_main("comm_close", {"comm_id": control, "data": {}})
    assert open_questions(states[comm_id]["state"]) == 1, states[comm_id]
    # ...or, from older frontends, the widget comms and then each widget's state.
    comms = fe.request("comm_info_request", {"target_name": "jupyter.widget"}, timeout=10)
    assert comm_id in comms["content"]["comms"], comms
    seen = widget.updates
    fe.send_comm(comm_id, {"method": "request_state"})
    fe.drive(lambda: widget.updates > seen, 10, "the widget's whole state")
    assert open_questions(widget.state) == 1, widget.state
    assert msg_id not in fe.replies, "the cell should still wait for the answer"
    cards = list(widget.state["calls"].values())
    question = cards[0]["question"]["id"]
    fe.answer(comm_id, {"type": "answer", "question_id": question, **ALLOW})
    reply = fe.wait_reply(msg_id)
    assert reply["content"]["status"] == "ok", reply["content"]
    result = result_of(fe.stdout(msg_id))
    assert [(c["tool"], c["status"]) for c in result["calls"]] == [("write_note", "completed")]


def test_async_cell_awaits_the_turn(fe: Frontend) -> None:
    fe.responder = lambda card: ALLOW
    reply, out = fe.run("report(await permission_router().arun('go', interaction=widget()))")
    assert reply["status"] == "ok", reply
    result = result_of(out)
    assert [(c["tool"], c["status"]) for c in result["calls"]] == [("write_note", "completed")]
    assert answered_by_person(fe) == ["allow"]
    note_latency(fe, "async")


def test_background_turn_outlives_its_cell(fe: Frontend) -> None:
    reply, out = fe.run(
        "turn = permission_router().start('go', interaction=widget())\nprint('STARTED')"
    )
    assert reply["status"] == "ok", reply
    assert out == "STARTED\n"
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    # The next cell blocks on the turn while the question is still open.
    waiting = fe.execute("report(turn.result(timeout=30))")
    card = fe.open_question()
    assert card is not None
    widget_id = next(iter(fe.widgets))
    time.sleep(0.3)
    fe.answer(widget_id, {"type": "answer", "question_id": card["question"]["id"], **ALLOW})
    reply = fe.wait_reply(waiting, 45)
    assert reply["content"]["status"] == "ok", reply["content"]
    result = result_of(fe.stdout(waiting))
    assert [(c["tool"], c["status"]) for c in result["calls"]] == [("write_note", "completed")]
    reply, out = fe.run("report(await turn)")
    assert reply["status"] == "ok", reply
    assert result_of(out) == result
    final = fe.widgets[widget_id].cards[card["tool_call_id"]]
    assert final["status"] == "completed"
    note_latency(fe, "background")


def test_cancel_in_the_widget_cancels_a_running_tool(fe: Frontend) -> None:
    fe.responder = lambda card: ALLOW
    msg_id = fe.execute(
        "report(router([ToolCall('slow', {})], ['stopped']).run('go', interaction=widget()))"
    )

    def running() -> dict[str, Any] | None:
        for card in fe.cards():
            if card["status"] == "in_progress" and card.get("cancellable"):
                return card
        return None

    fe.drive(lambda: running() is not None, 30, "the running, cancellable card")
    card = running()
    assert card is not None
    sent = time.monotonic()
    fe.send_custom(next(iter(fe.widgets)), {"type": "cancel", "tool_call_id": card["tool_call_id"]})
    reply = fe.wait_reply(msg_id, 45)
    print(f"[{fe.version}] cancel -> cell end {time.monotonic() - sent:.3f} s")
    assert reply["content"]["status"] == "ok", reply["content"]
    result = result_of(fe.stdout(msg_id))
    assert [(c["tool"], c["status"], c["outcome"]) for c in result["calls"]] == [
        ("slow", "failed", "cancelled")
    ]


@pytest.mark.parametrize(
    ("cell", "ename"),
    [
        ("permission_router().run('go', interaction=widget())", "KeyboardInterrupt"),
        # ipykernel turns an interrupt of an awaiting cell into CancelledError.
        ("await permission_router().arun('go', interaction=widget())", "CancelledError"),
    ],
    ids=["sync", "async"],
)
def test_interrupting_the_kernel_ends_the_turn(fe: Frontend, cell: str, ename: str) -> None:
    msg_id, card = asking(fe, cell)
    interrupt(fe, msg_id, card, ename, timeout=30)
    next_cell_runs(fe)


SLOW_COMM = """
def _slow_target(comm, msg):
    @comm.on_msg
    def _handle(msg):
        comm.send({"method": "handling"})
        for _ in range(40):
            time.sleep(0.05)
        comm.send({"method": "handled"})

get_ipython().kernel.comm_manager.register_target("mead-test-slow", _slow_target)
"""
"""Another comm whose handler takes 2 s, as a busy widget callback does."""


def test_interrupting_while_another_comm_handler_runs_ends_the_turn(fe: Frontend) -> None:
    reply, _ = fe.run(SLOW_COMM)
    assert reply["status"] == "ok", reply
    msg_id, card = asking(fe, "permission_router().run('go', interaction=widget())")
    slow = uuid.uuid4().hex
    fe.send_main("comm_open", {"comm_id": slow, "target_name": "mead-test-slow", "data": {}})
    fe.send_main("comm_msg", {"comm_id": slow, "data": {}})
    pumped = MECHANISMS[fe.version][0] == "main-pump"
    if pumped:
        # The waiting main thread runs the handler; the interrupt lands inside it.
        fe.drive(lambda: fe.comm_data(slow, "handling") is not None, 10, "the slow handler")
    else:
        # 7.x leaves other comms' messages queued behind the cell.
        later = time.monotonic() + 0.5
        fe.drive(lambda: time.monotonic() > later, 5, "half a second")
        assert fe.comm_data(slow, "handling") is None
    interrupt(fe, msg_id, card, "KeyboardInterrupt", timeout=10)
    if pumped:
        assert fe.comm_data(slow, "handled") is None, "the interrupt should stop the handler"
    else:
        fe.drive(lambda: fe.comm_data(slow, "handled") is not None, 10, "the handler, after")
    next_cell_runs(fe)


def test_run_all_keeps_order_and_output_placement(fe: Frontend) -> None:
    fe.responder = lambda card: ALLOW
    first = fe.execute("print('ONE'); report(permission_router().run('go', interaction=widget()))")
    second = fe.execute("print('TWO')")
    third = fe.execute("print('THREE')")
    order: list[str] = []

    def all_replied() -> bool:
        for msg_id in (first, second, third):
            if msg_id in fe.replies and msg_id not in order:
                order.append(msg_id)
        return len(order) == 3 and all(fe.idle(m) for m in order)

    fe.drive(all_replied, 60, "the three replies")
    assert order == [first, second, third]
    assert all(fe.replies[m]["content"]["status"] == "ok" for m in order)
    streams = fe.streams_by_parent()
    assert streams[second] == "TWO\n"
    assert streams[third] == "THREE\n"
    assert streams[first].startswith("ONE\nRESULT ")
    assert result_of(streams[first])["calls"][0]["status"] == "completed", streams[first]


def test_choice_answered_by_option_id(fe: Frontend) -> None:
    fe.responder = lambda card: {"option_id": "b"}
    options = [{"id": "a", "label": "Apple"}, {"id": "b", "label": "Banana"}]
    reply, out = fe.run(
        "report(router([ToolCall('ask_user', {'prompt': 'Which?', 'options': "
        + repr(options)
        + "})], ['ok']).run('go', interaction=widget()))"
    )
    assert reply["status"] == "ok", reply
    result = result_of(out)
    assert result["calls"][0]["status"] == "completed"
    assert json.loads(result["calls"][0]["result"]) == {"option_id": "b", "label": "Banana"}
    assert answered_by_person(fe) == ["picked"]
    note_latency(fe, "choice")
