"""Claude Code under an interaction: the SDK's bundled CLI against a fake Anthropic server."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from claude_agent_sdk import ClaudeAgentOptions
from servers.anthropic_agent_server import AgentServer, Text, Think, Use

from mead_notebook import Picked
from mead_notebook.adapters import claude_agent
from mead_notebook.adapters.claude_agent._gate import CANCEL_STEP, STOPPED
from mead_notebook.policies import AllowReads, Recording

from .helpers import ALLOWED, ANSWERED, DENIED, REFUSED, Person, Waiting, asked, recorded, steps


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    (path / "notes.txt").write_text("one\n")
    return path


def options(server: AgentServer, home: Path, cwd: Path) -> ClaudeAgentOptions:
    return server.options(
        cwd=str(cwd), env={"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
    )


def clis() -> list[psutil.Process]:
    """The Claude CLI processes this test process started that are still alive."""
    found = []
    for child in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if "claude" in " ".join(child.cmdline()) and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
        except psutil.NoSuchProcess:
            continue
    return found


@pytest.fixture(autouse=True)
def no_orphans() -> Iterator[None]:
    yield
    deadline = time.monotonic() + 10
    while clis() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert clis() == []


QUESTION = {
    "questions": [
        {
            "question": "Which fruit?",
            "header": "Fruit",
            "options": [
                {"label": "Apple", "description": "red"},
                {"label": "Banana", "description": "yellow"},
            ],
            "multiSelect": False,
        }
    ]
}


def test_a_turn_asks_every_call_and_reports_what_the_cli_did(home: Path, cwd: Path) -> None:
    script = [
        [
            Think("Let me ", "think."),
            Text("Reading ", "first."),
            Use("r1", "Read", {"file_path": str(cwd / "notes.txt")}),
        ],
        [Use("w1", "Write", {"file_path": str(cwd / "new.txt"), "content": "hello\n"})],
        [Use("b1", "Bash", {"command": "echo hi", "description": "say hi"})],
        [Use("u1", "Nope", {"x": 1}), Use("i1", "Write", {"file_path": 3})],
        [Use("q1", "AskUserQuestion", QUESTION)],
        [Text("All ", "done.")],
    ]
    rec, _ = recorded(Person(deny={"Bash": "no shell today"}, pick={"Which fruit?": "1"}))
    with AgentServer(script) as server:
        result = claude_agent.run(options(server, home, cwd), "go", interaction=rec)
    assert steps(rec) == {
        "r1": ALLOWED,
        "w1": ALLOWED,
        "b1": DENIED,
        "u1": REFUSED,
        "i1": REFUSED,
        "q1": ANSWERED,
    }
    calls = {c.tool_call_id: c for c in result.calls}
    assert (calls["u1"].outcome, calls["i1"].outcome) == ("unknown", "invalid_arguments")
    assert "No such tool available: Nope" in (calls["u1"].error or "")
    assert "InputValidationError" in (calls["i1"].error or "")
    told = server.tool_results()
    assert calls["b1"].error in told["b1"][0]
    assert "no shell today" in told["b1"][0]
    assert told["b1"][1] is True
    assert '"Which fruit?"="Banana"' in told["q1"][0]
    assert (cwd / "new.txt").read_text() == "hello\n"
    requests = {r["tool_call_id"]: r for r in asked(rec)}
    assert requests["w1"]["content"] == [
        {"type": "diff", "path": str(cwd / "new.txt"), "old_text": None, "new_text": "hello\n"}
    ]
    assert requests["b1"]["content"] == [
        {"type": "terminal", "command": "echo hi", "cwd": str(cwd)}
    ]
    assert (requests["b1"]["kind"], requests["r1"]["kind"]) == ("execute", "read")
    assert (result.text, result.thoughts) == ("Reading first.All done.", "Let me think.")
    assert result.stop_reason == "end_turn"
    assert type(result.output[-1]).__name__ == "ResultMessage"


def test_edited_arguments_are_the_approved_input(home: Path, cwd: Path) -> None:
    edited = {"file_path": str(cwd / "new.txt"), "content": "edited\n"}
    rec, _ = recorded(Person(edit={"Write": edited}))
    script = [[Use("w1", "Write", {"file_path": str(cwd / "new.txt"), "content": "hello\n"})]]
    with AgentServer(script) as server:
        result = claude_agent.run(options(server, home, cwd), "go", interaction=rec)
    assert (cwd / "new.txt").read_text() == "edited\n"
    assert result.calls[0].approved_arguments == edited
    assert result.calls[0].status == "completed"


def test_cancel_on_a_card_stops_the_turn_and_says_so(home: Path, cwd: Path) -> None:
    rec, _ = recorded(Person(cancel_after=1.0))
    script = [
        [Use("s1", "Bash", {"command": "echo waiting; sleep 30", "description": "wait"})],
        [Text("x")],
    ]
    started = time.monotonic()
    with AgentServer(script) as server:
        result = claude_agent.run(options(server, home, cwd), "go", interaction=rec)
    assert time.monotonic() - started < 25
    [record] = result.calls
    assert (record.outcome, result.stop_reason) == ("cancelled", "interrupted")
    updates = [e.args[0] for e in rec.events if e.name == "tool_updated"]
    assert [u["current_step"] for u in updates[-2:]] == [CANCEL_STEP, STOPPED]
    assert "stopped while running" in (record.error or "")


def test_interrupting_the_turn_tears_the_cli_down(home: Path, cwd: Path) -> None:
    person = Waiting()
    rec, _ = recorded(person)
    script = [[Use("b1", "Bash", {"command": "echo hi", "description": "say hi"})]]
    with AgentServer(script) as server:
        turn = claude_agent.start(options(server, home, cwd), "go", interaction=rec)
        assert person.asked.wait(60)
        assert clis()
        started = time.monotonic()
        turn.cancel()
        result: Any = turn.result(timeout=30)
        took = time.monotonic() - started
    assert result.stop_reason == "interrupted"
    assert result.calls[0].outcome == "interrupted"
    assert took < claude_agent.TEARDOWN_TIMEOUT * 2
    assert clis() == []


def test_edit_diff_todo_plan_and_a_multi_select_question(home: Path, cwd: Path) -> None:
    notes = str(cwd / "notes.txt")
    todos = [
        {"content": "Read the notes", "status": "completed", "activeForm": "Reading"},
        {"content": "Fix the notes", "status": "in_progress", "activeForm": "Fixing"},
    ]
    question = {
        "questions": [
            {**QUESTION["questions"][0], "question": "Which fruits?", "multiSelect": True}
        ]
    }
    script = [
        [Use("t1", "TodoWrite", {"todos": todos}), Use("r1", "Read", {"file_path": notes})],
        [Use("e1", "Edit", {"file_path": notes, "old_string": "one", "new_string": "two"})],
        [Use("q1", "AskUserQuestion", question)],
        [Text("Done.")],
    ]
    picked = Picked("0", also=("1",))
    rec, _ = recorded(Person(pick={"Which fruits?": picked}))
    with AgentServer(script) as server:
        result = claude_agent.run(options(server, home, cwd), "go", interaction=rec)
    assert [(e["content"], e["status"]) for e in result.plan] == [
        ("Read the notes", "completed"),
        ("Fix the notes", "in_progress"),
    ]
    requests = {r["tool_call_id"]: r for r in asked(rec)}
    assert requests["e1"]["content"] == [
        {"type": "diff", "path": notes, "old_text": "one\n", "new_text": "two\n"}
    ]
    assert requests["e1"]["kind"] == "edit"
    assert (cwd / "notes.txt").read_text() == "two\n"
    [choice] = [e.args[0] for e in rec.events if e.name == "ask_choice"]
    assert (choice["multiple"], [o["label"] for o in choice["options"]]) == (
        True,
        ["Apple", "Banana"],
    )
    told = server.tool_results()
    assert '"Which fruits?"="Apple, Banana"' in told["q1"][0]
    assert result.text == "Done."


def test_reads_and_echo_ask_unless_the_policy_allows_them(home: Path, cwd: Path) -> None:
    script = [
        [Use("r1", "Read", {"file_path": str(cwd / "notes.txt")})],
        [Use("b1", "Bash", {"command": "echo hi", "description": "say hi"})],
        [Text("Done.")],
    ]
    rec = Recording(AllowReads())
    with AgentServer(script) as server:
        result = claude_agent.run(options(server, home, cwd), "go", interaction=rec)
    assert steps(rec) == {"r1": ALLOWED, "b1": DENIED}
    assert [r["tool_call_id"] for r in asked(rec)] == ["r1", "b1"]
    calls = {c.tool_call_id: c for c in result.calls}
    assert (calls["r1"].status, calls["b1"].outcome) == ("completed", "denied")
    assert "one" in (calls["r1"].result or "")
    told = server.tool_results()
    assert told["b1"][1] is True
    assert calls["b1"].error in told["b1"][0]
