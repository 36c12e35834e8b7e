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

from .cells import ALLOW, DENY, asking, interrupt, next_cell_runs, open_questions, result_of
from .frontend import Frontend

pytestmark = pytest.mark.kernel

MECHANISMS = {
    "6.29.5": ("main-pump", "main-loop"),
    "6.31.0": ("main-pump", "main-loop"),
    "7.0.1": ("shell-tap+main-pump", "shell-tap"),
    "7.3.0": ("shell-tap+main-pump", "shell-tap"),
    "7.4.0": ("shell-tap+main-pump", "shell-tap"),
}
"""Per version: the mechanism on the main thread, and on another thread."""


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


def test_mechanism_is_pinned_per_version(fe: Frontend) -> None:
    main, other = MECHANISMS[fe.version]
    reply, out = fe.run(
        "box = []\n"
        "t = threading.Thread(target=lambda: box.append(waiting.mechanism()))\n"
        "t.start(); t.join(5)\n"
        "print('MECH', waiting.mechanism(), box[0])\n"
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
    control = fe.open_control()
    fe.request_states(control)
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
    # The waiting main thread runs the handler; the interrupt lands inside it.
    fe.drive(lambda: fe.comm_data(slow, "handling") is not None, 10, "the slow handler")
    interrupt(fe, msg_id, card, "KeyboardInterrupt", timeout=10)
    assert fe.comm_data(slow, "handled") is None, "the interrupt should stop the handler"
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


def test_a_kernel_missing_a_piece_refuses_the_turn_up_front(fe: Frontend) -> None:
    # The main thread's waiting dispatches through the kernel's own dispatch_shell.
    cell = (
        "kernel = get_ipython().kernel\n"
        "kernel.dispatch_shell = None\n"
        "try:\n"
        "    permission_router().run('go', interaction=widget())\n"
        "finally:\n"
        "    del kernel.dispatch_shell\n"
    )
    msg_id = fe.execute(cell)
    reply = fe.wait_reply(msg_id, 30)["content"]
    assert (reply["status"], reply.get("ename")) == ("error", "UnsupportedKernelError"), reply
    assert "router.arun" in reply["evalue"], reply
    assert "router.start" in reply["evalue"], reply
    shown = [
        m
        for m in fe.iopub
        if m["msg_type"] == "display_data" and m["parent_header"].get("msg_id") == msg_id
    ]
    assert shown == [], "the turn should stop before showing anything"
    assert [w.state["status"] for w in fe.widgets.values()] == ["idle"]
    next_cell_runs(fe)


def test_nothing_stays_watched_after_the_turns(fe: Frontend) -> None:
    fe.responder = lambda card: ALLOW
    cells = [
        "report(permission_router().run('go', interaction=widget()))",
        "report(await permission_router().arun('go', interaction=widget()))",
        "report(permission_router().start('go', interaction=widget()).result(timeout=30))",
    ]
    for cell in cells * 2:
        reply, out = fe.run(cell)
        assert reply["status"] == "ok", reply
        assert result_of(out)["calls"][0]["status"] == "completed"
    reply, out = fe.run(
        "from mead_notebook.notebook.waiting import common, shell_tap\n"
        "kernel = get_ipython().kernel\n"
        "tap = shell_tap.ShellTap._instances.get(kernel)\n"
        "stream = kernel.shell_stream\n"
        "own = getattr(kernel, 'shell_channel_thread_main', None)\n"
        "print('WATCHED', len(common.WATCHED), 'TAPPED', tap is not None and tap.installed,\n"
        "      'KERNEL', own is None or stream._recv_callback == own)\n"
    )
    assert reply["status"] == "ok", reply
    assert out.split() == ["WATCHED", "0", "TAPPED", "False", "KERNEL", "True"]


PRINTING = """
@tool
def printing(word: str) -> str:
    \"\"\"Print a word from the tool's thread.\"\"\"
    print('TOOL SAYS', word, flush=True)
    return word
"""


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_what_a_tool_prints_shows_in_the_cell_that_runs_the_turn(fe: Frontend, kind: str) -> None:
    reply, _ = fe.run(PRINTING)
    assert reply["status"] == "ok", reply
    fe.responder = lambda card: ALLOW
    turn = (
        "Router(ScriptedModel([[ToolCall('printing', {'word': 'hello'})], ['done']]), [printing])"
    )
    call = f"await {turn}.arun" if kind == "async" else f"{turn}.run"
    msg_id = fe.execute(f"report({call}('go', interaction=widget()))")
    assert fe.wait_reply(msg_id, 60)["content"]["status"] == "ok"
    elsewhere = {p: t for p, t in fe.streams_by_parent().items() if "TOOL SAYS" in t}
    assert "TOOL SAYS hello\n" in fe.stdout(msg_id), f"the tool's output went to {elsewhere}"
