"""The ACP adapter with the widget in a real kernel, on the oldest and newest ipykernel.

Cells run over the Jupyter protocol while ``tests/kernel/frontend.py`` plays the
widget's frontend: sync, async and background turns of the scripted ACP agent,
Deny, a card's Cancel, a kernel interrupt (no process left behind), a session
across cells and the kernel's shutdown.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from kernel.frontend import Frontend, ready_kernel, reset

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

CONFIGS = [
    pytest.param(("6.29.5", False), id="6.29.5-main"),
    pytest.param(("7.4.0", True), id="7.4.0-subshell"),
]

SETUP = """
import json, os
from mead_notebook import NotebookInteraction
from mead_notebook.adapters import acp

def write(name, **more):
    path = os.path.abspath(name)
    return {"call": {"id": "w1", "title": f"Write {name}", "kind": "edit",
                     "input": {"file_path": path, "content": "hello"},
                     "diff": {"path": path, "old": None, "new": "hello"},
                     "write": {"path": path, "content": "hello"}, "ask": True, **more}}

def slow():
    return {"call": {"id": "s1", "title": "sleep", "kind": "execute",
                     "input": {"command": "sleep 60"}, "ask": True, "sleep": 60}}

def agent(*turns):
    return acp.scripted_agent(list(turns), log=os.path.abspath("agent.jsonl"))

def report(res):
    calls = [{"tool": c.tool, "status": c.status, "outcome": c.outcome} for c in res.calls]
    print("RESULT " + json.dumps({"stop": res.stop_reason, "text": res.text, "calls": calls}))

def widget():
    return NotebookInteraction(timeout=60, grace=30)

print("READY")
"""

ALLOW = {"decision": "allow"}
DENY = {"decision": "deny"}


@pytest.fixture(scope="module", params=CONFIGS)
def frontend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Frontend]:
    version, subshell = request.param
    workdir: Path = tmp_path_factory.mktemp(f"acp-{version}")
    with ready_kernel(version, subshell, workdir, SETUP, timeout=120) as fe:
        fe.workdir = workdir  # type: ignore[attr-defined]
        yield fe


@pytest.fixture
def fe(frontend: Frontend) -> Frontend:
    reset(frontend)
    workdir: Path = frontend.workdir  # type: ignore[attr-defined]
    for name in ("notes.txt", "agent.jsonl", "child.pid"):
        (workdir / name).unlink(missing_ok=True)
    return frontend


def result_of(out: str) -> dict[str, Any]:
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, out
    parsed: dict[str, Any] = json.loads(lines[0][len("RESULT ") :])
    return parsed


def events(fe: Frontend, name: str) -> list[dict[str, Any]]:
    log: Path = fe.workdir / "agent.jsonl"  # type: ignore[attr-defined]
    if not log.exists():
        return []
    found = [json.loads(line) for line in log.read_text().splitlines()]
    return [e for e in found if e["event"] == name]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


TURN = "agent([{'text': 'Writing. '}, write('notes.txt'), {'text': 'Done.'}])"


@pytest.mark.parametrize("how", ["run", "arun"])
def test_a_cell_waits_for_allow_and_the_file_is_written(fe: Frontend, how: str) -> None:
    fe.responder = lambda card: ALLOW
    wait = "await acp.arun" if how == "arun" else "acp.run"
    reply, out = fe.run(f"report({wait}({TURN}, 'go', interaction=widget()))")
    assert reply["status"] == "ok", reply
    result = result_of(out)
    assert result["calls"] == [{"tool": "edit", "status": "completed", "outcome": None}]
    assert (result["stop"], result["text"]) == ("end_turn", "Writing. Done.")
    assert (fe.workdir / "notes.txt").read_text() == "hello"  # type: ignore[attr-defined]
    assert [e["option"] for e in events(fe, "permission")] == ["allow"]
    [widget] = fe.widgets.values()
    card = widget.cards["w1"]
    assert (card["status"], card["question"]["answer"]["by"]) == ("completed", "person")


def test_deny_in_a_sync_cell_leaves_the_file_unwritten(fe: Frontend) -> None:
    fe.responder = lambda card: DENY
    reply, out = fe.run(f"report(acp.run({TURN}, 'go', interaction=widget()))")
    assert reply["status"] == "ok", reply
    assert result_of(out)["calls"][0]["outcome"] == "denied"
    assert not (fe.workdir / "notes.txt").exists()  # type: ignore[attr-defined]
    assert [e["option"] for e in events(fe, "permission")] == ["reject"]


def test_a_background_turn_outlives_its_cell(fe: Frontend) -> None:
    reply, out = fe.run(f"turn = acp.start({TURN}, 'go', interaction=widget())\nprint('STARTED')")
    assert (reply["status"], out) == ("ok", "STARTED\n"), reply
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    waiting = fe.execute("report(turn.result(timeout=30))")
    card = fe.open_question()
    assert card is not None
    fe.answer(
        next(iter(fe.widgets)), {"type": "answer", "question_id": card["question"]["id"], **ALLOW}
    )
    reply_msg = fe.wait_reply(waiting, 45)
    assert reply_msg["content"]["status"] == "ok", reply_msg["content"]
    assert result_of(fe.stdout(waiting))["calls"][0]["status"] == "completed"


def test_cancel_on_a_card_cancels_the_agents_turn(fe: Frontend) -> None:
    fe.responder = lambda card: ALLOW
    msg_id = fe.execute(
        "report(acp.run(agent([slow(), {'text': 'never'}]), 'go', interaction=widget()))"
    )

    def running() -> bool:
        return any(c["status"] == "in_progress" and c.get("cancellable") for c in fe.cards())

    fe.drive(running, 30, "the running, cancellable card")
    fe.send_custom(next(iter(fe.widgets)), {"type": "cancel", "tool_call_id": "s1"})
    reply = fe.wait_reply(msg_id, 30)
    assert reply["content"]["status"] == "ok", reply["content"]
    result = result_of(fe.stdout(msg_id))
    assert result["calls"] == [{"tool": "execute", "status": "failed", "outcome": "cancelled"}]
    assert (result["stop"], result["text"]) == ("interrupted", "")
    assert events(fe, "cancel")


@pytest.mark.parametrize(
    ("how", "ename"), [("run", "KeyboardInterrupt"), ("arun", "CancelledError")]
)
def test_a_kernel_interrupt_stops_the_agent_and_its_children(
    fe: Frontend, how: str, ename: str
) -> None:
    wait = "await acp.arun" if how == "arun" else "acp.run"
    turn = "agent([{'spawn': os.path.abspath('child.pid')}, write('notes.txt')])"
    msg_id = fe.execute(f"report({wait}({turn}, 'go', interaction=widget()))")
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    child = int((fe.workdir / "child.pid").read_text())  # type: ignore[attr-defined]
    [agent_pid] = [e["pid"] for e in events(fe, "initialize")]
    fe.km.interrupt_kernel()
    reply = fe.wait_reply(msg_id, 30)["content"]
    assert (reply["status"], reply.get("ename")) == ("error", ename), reply
    assert gone(agent_pid), "the agent outlived the interrupt"
    assert gone(child), "the agent's child outlived the interrupt"
    assert [e["outcome"] for e in events(fe, "permission")] == ["cancelled"]
    [widget] = fe.widgets.values()
    fe.drive(lambda: widget.state.get("status") == "interrupted", 10, "the turn's end")
    assert widget.cards["w1"]["outcome"] == "interrupted"
    reply, out = fe.run("print('NEXT', 6 * 7)", timeout=30)
    assert (reply["status"], out) == ("ok", "NEXT 42\n")


def test_a_session_keeps_its_agent_across_cells(fe: Frontend) -> None:
    reply, out = fe.run(
        "s = acp.session(agent([{'text': 'one'}], [{'text': 'two'}]))\n"
        "report(s.run('first', interaction=widget()))\nprint('PID', s.process.pid)"
    )
    assert reply["status"] == "ok", reply
    pid = int(out.split("PID ")[1])
    reply, out = fe.run("report(await s.arun('second', interaction=widget()))")
    assert (reply["status"], result_of(out)["text"]) == ("ok", "two"), reply
    assert len(events(fe, "initialize")) == 1
    reply, _ = fe.run("s.close()")
    assert reply["status"] == "ok"
    assert gone(pid)


def test_the_kernels_shutdown_ends_an_open_session_and_its_children(tmp_path: Path) -> None:
    fe = Frontend("7.4.0", tmp_path)
    try:
        cell = (
            SETUP + "s = acp.session(agent([{'spawn': os.path.abspath('child.pid')}]))\n"
            "s.run('go', interaction=widget())\nprint('PID', s.process.pid)"
        )
        reply, out = fe.run(cell, timeout=120)
        assert reply["status"] == "ok", reply
        pid = int(out.split("PID ")[1])
        child = int((tmp_path / "child.pid").read_text())
        assert alive(pid)
        assert alive(child)
        fe.kc.stop_channels()
        fe.km.shutdown_kernel(now=False)
        assert gone(pid, 10), "the agent outlived its kernel"
        assert gone(child, 10), "the agent's child outlived its kernel"
    finally:
        if fe.km.is_alive():
            fe.km.shutdown_kernel(now=True)


ASK = (
    "agent([{'ask': {'message': 'Which fruit?', 'schema': {'type': 'object', 'properties': "
    "{'fruit': {'type': 'string', 'oneOf': [{'const': 'a', 'title': 'Apple'}, "
    "{'const': 'b', 'title': 'Banana'}]}}}}}, "
    "{'call': {'id': 'l1', 'title': 'List files', 'kind': 'search', 'input': {'path': '.'}}}])"
)


def test_a_form_is_answered_in_the_widget_and_an_unasked_call_says_agent(fe: Frontend) -> None:
    fe.responder = lambda card: {"option_id": "b"}
    reply, out = fe.run(
        f"res = acp.run({ASK}, 'go', interaction=widget())\nreport(res)\n"
        "print('BY', [c.decided_by for c in res.calls])"
    )
    assert reply["status"] == "ok", reply
    result = result_of(out)
    assert [c["status"] for c in result["calls"]] == ["completed", "completed"]
    assert "BY [None, 'agent']" in out
    [event] = events(fe, "elicitation")
    assert event["answer"] == {"action": "accept", "content": {"fruit": "b"}}
    [widget] = fe.widgets.values()
    assert widget.cards["question-1/fruit"]["question"]["answer"]["by"] == "person"


def test_an_agent_that_crashes_fails_the_cell_with_its_stderr(fe: Frontend) -> None:
    reply, _ = fe.run(
        "acp.run(agent([{'crash': 'disk on fire', 'code': 9}]), 'go', interaction=widget())"
    )
    assert (reply["status"], reply["ename"]) == ("error", "TurnError"), reply
    assert "scripted exited with code 9 during the turn" in reply["evalue"]
    assert "disk on fire" in reply["evalue"]
