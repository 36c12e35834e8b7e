"""Every row of the ACP mapping, against the scripted ACP agent over stdio."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from adapters.helpers import Person, Waiting, asked, finals, recorded, running, steps
from mead_notebook import Allow, Deny, TurnError
from mead_notebook.adapters import acp
from mead_notebook.adapters.acp._conversation import Conversation
from mead_notebook.interaction import PlanEntry, Request
from mead_notebook.policies import AllowAll

from .conftest import Script

pytestmark = pytest.mark.timeout(60)


def write(tmp: Path, ask: bool = True, **more: Any) -> dict[str, Any]:
    path = str(tmp / "notes.txt")
    return {
        "call": {
            "id": "w1",
            "title": "Write notes.txt",
            "kind": "edit",
            "input": {"file_path": path, "content": "hello"},
            "meta": {"claudeCode": {"toolName": "Write"}},
            "diff": {"path": path, "old": None, "new": "hello"},
            "locations": [{"path": path, "line": 0}],
            "write": {"path": path, "content": "hello"},
            "ask": ask,
            **more,
        }
    }


def bash(command: str = "echo hi", **more: Any) -> dict[str, Any]:
    return {
        "call": {
            "id": "b1",
            "title": f"`{command}`",
            "kind": "execute",
            "input": {"command": command},
            "run": command,
            "ask": True,
            **more,
        }
    }


def test_first_sight_is_pending_with_name_server_kind_and_arguments(
    script: Script, tmp_path: Path
) -> None:
    rec, _ = recorded()
    read = {"call": {"id": "r1", "title": "Read a file", "kind": "read", "input": {"path": "a"}}}
    acp.run(script.agent([[write(tmp_path), read]]), "go", interaction=rec, cwd=tmp_path)
    pending = [e.args[0] for e in rec.events if e.name == "tool_updated"]
    first = {u["tool_call_id"]: u for u in reversed(pending)}
    assert (first["w1"]["tool"], first["w1"]["server"], first["w1"]["class"]) == (
        "Write",
        "scripted",
        "effect",
    )
    assert first["w1"]["kind"] == "edit"
    assert first["w1"]["arguments"] == {
        "file_path": str(tmp_path / "notes.txt"),
        "content": "hello",
    }
    assert first["w1"]["content"] == [
        {"type": "diff", "path": str(tmp_path / "notes.txt"), "old_text": None, "new_text": "hello"}
    ]
    assert first["w1"]["locations"] == [{"path": str(tmp_path / "notes.txt"), "line": 1}]
    assert (first["r1"]["tool"], first["r1"]["class"], first["r1"]["kind"]) == (
        "read",
        "read",
        "read",
    )
    assert first["r1"]["title"] == "Read a file"


def test_input_sent_late_is_on_the_question(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded()
    turn = [write(tmp_path, late=True, late_delay=0.3)]
    acp.run(script.agent([turn]), "go", interaction=rec, cwd=tmp_path)
    [request] = asked(rec)
    assert request["arguments"]["content"] == "hello"
    assert request["content"][0]["type"] == "diff"
    assert request["locations"] == [{"path": str(tmp_path / "notes.txt"), "line": 1}]


def test_a_question_that_never_gets_its_input_waits_a_bounded_time(
    script: Script, tmp_path: Path
) -> None:
    rec, _ = recorded()
    turn = [write(tmp_path, input={}, no_raw_input=True)]
    started = time.monotonic()
    acp.run(script.agent([turn]), "go", interaction=rec, cwd=tmp_path)
    assert asked(rec)[0]["arguments"] == {}
    assert time.monotonic() - started < acp._client.LATE_INPUT + 10


def test_allow_answers_allow_once_and_the_call_runs(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded()
    result = acp.run(script.agent([[write(tmp_path)]]), "go", interaction=rec, cwd=tmp_path)
    assert [(e["outcome"], e["option"]) for e in script.events("permission")] == [
        ("selected", "allow")
    ]
    assert (tmp_path / "notes.txt").read_text() == "hello"
    assert steps(rec)["w1"] == ["pending", "ask", "register", "in_progress", "completed"]
    [call] = result.calls
    assert (call.status, call.decided_by, call.content[0]["type"]) == ("completed", None, "diff")


def test_forward_always_answers_the_agents_allow_always(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded()
    agent = script.agent([[write(tmp_path)]], forward_always=True)
    acp.run(agent, "go", interaction=rec, cwd=tmp_path)
    assert [e["option"] for e in script.events("permission")] == ["always"]


def test_deny_answers_reject_once_and_the_call_ends_denied(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded(Person(deny={"Write": "no"}))
    result = acp.run(
        script.agent([[write(tmp_path, silent=True), {"text": "ok"}]]),
        "go",
        interaction=rec,
        cwd=tmp_path,
    )
    assert [e["option"] for e in script.events("permission")] == ["reject"]
    assert not (tmp_path / "notes.txt").exists()
    assert finals(rec)["w1"]["outcome"] == "denied"
    assert (result.calls[0].outcome, result.text) == ("denied", "ok")


class Deciding(Person):
    def __init__(self, decision: Allow | Deny) -> None:
        super().__init__()
        self.decision = decision

    def decide(self, request: Request) -> Allow | Deny:
        return self.decision


@pytest.mark.parametrize("reason", ["expired", "interrupted"])
def test_expired_or_interrupted_answers_cancelled(
    script: Script, tmp_path: Path, reason: Any
) -> None:
    rec, _ = recorded(Deciding(Deny(reason)))
    result = acp.run(script.agent([[write(tmp_path)]]), "go", interaction=rec, cwd=tmp_path)
    assert [e["outcome"] for e in script.events("permission")] == ["cancelled"]
    assert result.calls[0].outcome == reason
    assert not (tmp_path / "notes.txt").exists()


def test_requests_are_not_editable_and_edited_arguments_are_refused(
    script: Script, tmp_path: Path
) -> None:
    rec, _ = recorded(Deciding(Allow(arguments={"file_path": "/elsewhere"})))
    result = acp.run(script.agent([[write(tmp_path)]]), "go", interaction=rec, cwd=tmp_path)
    assert asked(rec)[0]["editable"] is False
    assert [e["option"] for e in script.events("permission")] == ["reject"]
    assert result.calls[0].outcome == "invalid_arguments"
    assert not (tmp_path / "notes.txt").exists()


def test_a_call_the_agent_ran_without_asking_says_so(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded()
    result = acp.run(script.agent([[bash(ask=False)]]), "go", interaction=rec, cwd=tmp_path)
    assert not asked(rec)
    assert running(rec)["b1"]["decided_by"] == "agent"
    assert result.calls[0].decided_by == "agent"
    assert steps(rec)["b1"] == ["pending", "register", "in_progress", "completed"]


def test_a_call_reported_in_progress_before_its_question_is_asked_not_run_unasked(
    script: Script, tmp_path: Path
) -> None:
    """Codex 2.x reports a command in progress, then asks about it: the card asks, and
    the call runs on the person's Allow, not the agent's own rules."""
    rec, _ = recorded()
    early = bash(unasked_in_progress=True, terminal=True)
    result = acp.run(script.agent([[early]]), "go", interaction=rec, cwd=tmp_path)
    assert steps(rec)["b1"] == ["pending", "ask", "register", "in_progress", "completed"]
    assert running(rec)["b1"].get("decided_by") is None
    assert result.calls[0].decided_by is None
    # Its terminal is the agent's own, known by id: the card shows the command itself.
    assert asked(rec)[0]["content"] == [{"type": "terminal", "command": "echo hi"}]


class Slow(Person):
    """Takes half a second to decide."""

    def decide(self, request: Request) -> Allow | Deny:
        time.sleep(0.5)
        return super().decide(request)


def test_a_call_reported_in_progress_while_its_question_is_open_runs_on_the_answer(
    script: Script, tmp_path: Path
) -> None:
    """OpenCode reports a command running while it asks about it: the call runs on the
    person's Allow, not the agent's own rules."""
    rec, _ = recorded(Slow())
    result = acp.run(
        script.agent([[bash(in_progress_while_asking=True)]]), "go", interaction=rec, cwd=tmp_path
    )
    assert steps(rec)["b1"] == ["pending", "ask", "register", "in_progress", "completed"]
    assert running(rec)["b1"].get("decided_by") is None
    assert result.calls[0].decided_by is None


def test_a_call_reported_in_progress_and_never_asked_about_ran_unasked(
    script: Script, tmp_path: Path
) -> None:
    rec, _ = recorded()
    unasked = bash(ask=False, unasked_in_progress=True, sleep=1.5)
    result = acp.run(script.agent([[unasked]]), "go", interaction=rec, cwd=tmp_path)
    assert not asked(rec)
    assert steps(rec)["b1"] == ["pending", "register", "in_progress", "completed"]
    assert result.calls[0].decided_by == "agent"


def test_in_progress_is_made_up_when_the_agent_sends_none(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded()
    acp.run(script.agent([[bash(no_in_progress=True)]]), "go", interaction=rec, cwd=tmp_path)
    assert steps(rec)["b1"] == ["pending", "ask", "register", "in_progress", "completed"]
    assert running(rec)["b1"]["current_step"] == acp._client.TURN_STOPS


def test_a_command_shows_as_a_terminal_with_its_output(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded()
    result = acp.run(script.agent([[bash("echo hi")]]), "go", interaction=rec, cwd=tmp_path)
    assert asked(rec)[0]["content"] == [{"type": "terminal", "command": "echo hi"}]
    [call] = result.calls
    assert call.content[0] == {"type": "terminal", "command": "echo hi", "output": "hi\n"}
    assert call.result == "hi\n"


def test_a_call_of_several_commands_shows_each_in_its_terminal(
    script: Script, tmp_path: Path
) -> None:
    """Cline's ``run_commands`` (and Copilot CLI's question) carry ``commands``, a list of
    commands run one after the other: the card shows every one, one a line."""
    rec, _ = recorded()
    call = bash("touch a; ls", input={"commands": ["touch a", "ls"]})
    acp.run(script.agent([[call]]), "go", interaction=rec, cwd=tmp_path)
    assert asked(rec)[0]["content"] == [{"type": "terminal", "command": "touch a\nls"}]


def test_a_failed_call_ends_failed_with_its_error(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded()
    result = acp.run(
        script.agent([[bash(fail="no such file")]]), "go", interaction=rec, cwd=tmp_path
    )
    assert (result.calls[0].outcome, result.calls[0].error) == ("error", "no such file")


def test_a_call_open_when_the_turn_ends_is_interrupted(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded()
    turn = [{"call": {"id": "o1", "title": "Open", "kind": "other", "open": True}}]
    result = acp.run(script.agent([turn]), "go", interaction=rec, cwd=tmp_path)
    assert (result.calls[0].status, result.calls[0].outcome) == ("failed", "interrupted")


def test_cancel_on_a_card_cancels_the_whole_turn(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded(Person(cancel_after=0.3))
    turn = [bash(sleep=30), {"text": "never"}]
    started = time.monotonic()
    result = acp.run(script.agent([turn]), "go", interaction=rec, cwd=tmp_path)
    assert time.monotonic() - started < 10
    assert script.events("cancel")
    assert [e["stop_reason"] for e in script.events("end")] == ["cancelled"]
    assert (result.stop_reason, result.agent_stop_reason) == ("interrupted", "cancelled")
    assert result.calls[0].outcome == "cancelled"
    assert "whole turn" in finals(rec)["b1"]["current_step"]
    assert "never" not in result.text


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_interrupting_cancels_answers_cancelled_and_kills_the_group(
    script: Script, tmp_path: Path
) -> None:
    waiting = Waiting()
    rec, _ = recorded(waiting)
    pidfile = tmp_path / "child.pid"
    turn = acp.start(
        script.agent([[{"spawn": str(pidfile)}, write(tmp_path)]]),
        "go",
        interaction=rec,
        cwd=tmp_path,
    )
    assert waiting.asked.wait(20)
    child = int(pidfile.read_text())
    [agent_pid] = [e["pid"] for e in script.events("initialize")] or [None]
    started = time.monotonic()
    turn.cancel()
    result = turn.result(timeout=10)
    stopped = time.monotonic() - started
    assert result.stop_reason == "interrupted"
    assert [e["outcome"] for e in script.events("permission")] == ["cancelled"]
    assert script.events("cancel")
    deadline = time.monotonic() + 5
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the agent's child outlived the interrupt"
    if agent_pid is not None:
        assert not alive(agent_pid)
    assert stopped < 5
    assert result.calls[0].outcome == "interrupted"


def test_a_cancel_the_agent_answers_before_the_run_is_cancelled_still_ends_interrupted(
    script: Script, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``turn.cancel()`` sends ``session/cancel``, then cancels the run. An agent that answers
    at once has the run already stopping it (killing its group) when the run's cancel lands:
    the turn still ends ``interrupted``, not with a ``CancelledError``."""
    stopping, cancelled = threading.Event(), threading.Event()
    interrupt, cancel_first = Conversation._interrupt, Conversation._cancel_first

    async def slow_interrupt(self: Conversation, running: Any) -> None:
        stopping.set()
        await asyncio.get_running_loop().run_in_executor(None, cancelled.wait, 10)
        await interrupt(self, running)

    def cancel_late(self: Conversation, session: Any) -> None:
        cancel = session.cancel

        def after_the_answer() -> None:
            assert stopping.wait(10), "the run never started stopping the agent"
            cancel()
            cancelled.set()

        session.cancel = after_the_answer
        cancel_first(self, session)

    monkeypatch.setattr(Conversation, "_interrupt", slow_interrupt)
    monkeypatch.setattr(Conversation, "_cancel_first", cancel_late)
    rec, _ = recorded(Person())
    turn = acp.start(
        script.agent([[{"text": "thinking"}, {"sleep": 30}]]),
        "go",
        interaction=rec,
        cwd=tmp_path,
    )
    deadline = time.monotonic() + 20
    while not [e for e in rec.events if e.name == "text_delta"]:
        assert time.monotonic() < deadline, "the agent never started its turn"
        time.sleep(0.05)
    turn.cancel()
    result = turn.result(timeout=20)
    assert result.stop_reason == "interrupted"


class Narrated(Person):
    def __init__(self) -> None:
        super().__init__()
        self.plans: list[list[PlanEntry]] = []
        self.thoughts: list[str] = []

    def plan_updated(self, context: Any, entries: list[PlanEntry]) -> None:
        self.plans.append(entries)

    def thought_delta(self, context: Any, text: str) -> None:
        self.thoughts.append(text)


def test_text_thoughts_and_plan(script: Script, tmp_path: Path) -> None:
    person = Narrated()
    turn = [
        {"thought": "Let me think. "},
        {"plan": [{"content": "Write notes", "status": "in_progress", "priority": "high"}]},
        {"text": "Hello, "},
        {"text": "world."},
        {"plan": [{"content": "Write notes", "status": "completed", "priority": "high"}]},
    ]
    result = acp.run(script.agent([turn]), "go", interaction=person, cwd=tmp_path)
    assert result.text == "Hello, world."
    assert (result.thoughts, person.thoughts) == ("Let me think. ", ["Let me think. "])
    assert [p[0]["status"] for p in person.plans] == ["in_progress", "completed"]
    assert result.plan == [{"content": "Write notes", "status": "completed", "priority": "high"}]


def test_a_malformed_update_is_ignored_without_a_traceback(
    script: Script,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    turn = [
        {"text": "before "},
        {"raw": {"sessionUpdate": "usage_update", "used": None, "size": 200000}},
        {"raw": {"sessionUpdate": "agent_message_chunk", "content": {"type": "nope"}}},
        {"text": "after"},
    ]
    result = acp.run(script.agent([turn]), "go", interaction=Narrated(), cwd=tmp_path)
    assert (result.stop_reason, result.text) == ("end_turn", "before after")
    assert not [r for r in caplog.records if r.exc_info or r.name == "root"], caplog.text
    ignored = [r for r in caplog.records if "does not validate" in r.getMessage()]
    assert [(r.levelno, "usage_update" in r.getMessage()) for r in ignored] == [
        (logging.DEBUG, True),
        (logging.WARNING, False),
    ]
    assert "Traceback" not in capfd.readouterr().err


def test_a_notification_acp_does_not_define_is_ignored_without_a_traceback(
    script: Script,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Qwen Code sends ``qwen/notify/session/mode-update`` (no ``_`` prefix) beside its
    ``current_mode_update``: dropped with a debug line, and the turn goes on."""
    caplog.set_level(logging.DEBUG)
    note = {"method": "qwen/notify/session/mode-update", "params": {"modeId": "default"}}
    turn = [{"text": "before "}, {"notify": note}, {"text": "after"}]
    result = acp.run(script.agent([turn]), "go", interaction=Narrated(), cwd=tmp_path)
    assert (result.stop_reason, result.text) == ("end_turn", "before after")
    assert not [r for r in caplog.records if r.exc_info or r.name == "root"], caplog.text
    ignored = [r for r in caplog.records if "ACP does not define" in r.getMessage()]
    assert [(r.levelno, note["method"] in r.getMessage()) for r in ignored] == [
        (logging.DEBUG, True)
    ]
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize(
    ("reason", "ours"),
    [
        ("end_turn", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("max_turn_requests", "max_rounds"),
        ("refusal", "refusal"),
        ("cancelled", "interrupted"),
    ],
)
def test_stop_reasons_map(script: Script, tmp_path: Path, reason: str, ours: str) -> None:
    result = acp.run(script.agent([[{"stop": reason}]]), "go", interaction=AllowAll(), cwd=tmp_path)
    assert (result.stop_reason, result.agent_stop_reason) == (ours, reason)
    assert result.output.stop_reason == reason


def test_an_agent_that_crashes_mid_turn_names_itself_and_its_stderr(
    script: Script, tmp_path: Path
) -> None:
    turn = [{"text": "starting"}, {"crash": "out of memory at step 2", "code": 7}]
    with pytest.raises(TurnError) as caught:
        acp.run(script.agent([turn], name="crashy"), "go", interaction=AllowAll(), cwd=tmp_path)
    message = str(caught.value)
    assert "crashy exited with code 7 during the turn" in message
    assert "out of memory at step 2" in message
    assert caught.value.result.text == "starting"


def test_a_session_keeps_one_agent_across_turns(script: Script, tmp_path: Path) -> None:
    agent = script.agent([[{"text": "one"}], [{"text": "two"}]])
    with acp.session(agent, cwd=tmp_path) as session:
        assert session.run("first", interaction=AllowAll()).text == "one"
        pid = session.process.pid if session.process else None
        assert session.run("second", interaction=AllowAll()).text == "two"
        assert session.process is not None
        assert session.process.pid == pid
    assert pid is not None
    assert not alive(pid)
    assert len(script.events("initialize")) == 1
    assert [e["text"] for e in script.events("prompt")] == ["first", "second"]


def test_a_closed_session_refuses_a_turn(script: Script, tmp_path: Path) -> None:
    session = acp.session(script.agent([[{"text": "one"}]]), cwd=tmp_path)
    session.close()
    with pytest.raises(acp.AgentError, match="closed"):
        session.run("go", interaction=AllowAll())


def test_the_mode_that_asks_is_set_and_a_missing_one_is_an_error(
    script: Script, tmp_path: Path
) -> None:
    acp.run(script.agent([[{"text": "x"}]]), "go", interaction=AllowAll(), cwd=tmp_path)
    assert [e["mode"] for e in script.events("mode")] == ["default"]
    with pytest.raises(
        TurnError, match="cannot run in session mode 'plan': it offers default, auto"
    ):
        acp.run(
            script.agent([[{"text": "x"}]], mode="plan"), "go", interaction=AllowAll(), cwd=tmp_path
        )


def test_the_agent_sees_the_kernels_environment_plus_env(
    script: Script, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEAD_SCRIPTED_ECHO", "from the kernel")
    acp.run(script.agent([[{"text": "x"}]]), "go", interaction=AllowAll(), cwd=tmp_path)
    acp.run(
        script.agent([[{"text": "x"}]], env={"MEAD_SCRIPTED_ECHO": "given"}),
        "go",
        interaction=AllowAll(),
        cwd=tmp_path,
    )
    assert [e["env"] for e in script.events("initialize")] == ["from the kernel", "given"]


def test_a_missing_executable_names_the_npm_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    for name, package in [
        ("claude", "@agentclientprotocol/claude-agent-acp"),
        ("codex", "@agentclientprotocol/codex-acp"),
        ("gemini", "@google/gemini-cli"),
    ]:
        with pytest.raises(acp.AgentNotFoundError, match=f"npm install -g {package}"):
            acp.agent(name)


def test_claude_does_not_inherit_is_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "claude-agent-acp").write_text("#!/bin/sh\n")
    (tmp_path / "claude-agent-acp").chmod(0o755)
    monkeypatch.setenv("IS_SANDBOX", "yes")
    inherited = acp.agent("claude", env={"PATH": str(tmp_path)}).environment()
    assert "IS_SANDBOX" not in inherited
    assert inherited["PATH"] == str(tmp_path)
    given = acp.agent("claude", env={"PATH": str(tmp_path), "IS_SANDBOX": "1"}).environment()
    assert given["IS_SANDBOX"] == "1"
    assert (
        acp.agent(
            "gemini",
            env={"PATH": str(tmp_path / "none")},
            executable=str(tmp_path / "claude-agent-acp"),
        ).environment()["IS_SANDBOX"]
        == "yes"
    )


def test_callbacks_run_one_at_a_time_on_the_callback_thread(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded()
    turn = [{"text": "a"}, write(tmp_path), bash(), {"text": "b"}]
    acp.run(script.agent([turn]), "go", interaction=rec, cwd=tmp_path)
    assert not rec.overlapped
    assert all(e.thread.startswith("mead-callbacks") for e in rec.events)
    assert threading.active_count() < 50
    assert os.path.exists(tmp_path / "notes.txt")


def test_a_question_before_any_tool_call_begins_the_call(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded()
    result = acp.run(script.agent([[bash(ask_first=True)]]), "go", interaction=rec, cwd=tmp_path)
    assert steps(rec)["b1"] == ["pending", "ask", "register", "in_progress", "completed"]
    assert asked(rec)[0]["content"] == [{"type": "terminal", "command": "echo hi"}]
    assert result.calls[0].status == "completed"


def test_a_session_starts_a_new_agent_after_an_interrupt(script: Script, tmp_path: Path) -> None:
    waiting = Waiting()
    agent = script.agent([[write(tmp_path)]])
    with acp.session(agent, cwd=tmp_path) as session:
        turn = session.start("first", interaction=waiting)
        assert waiting.asked.wait(20)
        turn.cancel()
        assert turn.result(timeout=10).stop_reason == "interrupted"
        again = session.run("second", interaction=Person())
    # A new agent and a new ACP session: it plays its script from the start.
    assert [c.status for c in again.calls] == ["completed"]
    first, second = script.events("initialize")
    assert first["pid"] != second["pid"]
    assert not alive(first["pid"])
