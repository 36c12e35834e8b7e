"""The agent's own rules, against the scripted ACP agent: its mode, the settings it is told
to load, what the turn says of it, calls it runs without asking, and ``strict``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapters.helpers import recorded
from mead_notebook import Allow, TurnError
from mead_notebook.adapters import acp
from mead_notebook.policies import AllowAll, DenyAll
from mead_notebook.testing import Recording

from .conftest import Script

pytestmark = pytest.mark.timeout(60)


def unasked(command: str, kind: str = "execute", call_id: str = "u1") -> dict[str, Any]:
    """A call the agent runs under its own rules: no question, straight to in_progress."""
    return {
        "call": {
            "id": call_id,
            "title": command,
            "kind": kind,
            "input": {"command": command},
            "run": command,
            "does": command,
        }
    }


def asked_write(tmp: Path) -> dict[str, Any]:
    path = str(tmp / "notes.txt")
    return {
        "call": {
            "id": "w1",
            "title": "Write notes.txt",
            "kind": "edit",
            "input": {"file_path": path, "content": "hello"},
            "write": {"path": path, "content": "hello"},
            "ask": True,
        }
    }


def described(rec: Recording) -> list[dict[str, Any]]:
    return [e.args[0] for e in rec.events if e.name == "agent_described"]


# -- the mode -----------------------------------------------------------------------------


def test_a_mode_the_agent_does_not_offer_fails_the_start_naming_both(
    script: Script, tmp_path: Path
) -> None:
    agent = script.agent([[{"text": "x"}]], mode="plan")
    with pytest.raises(TurnError) as failed:
        acp.run(agent, "go", interaction=AllowAll(), cwd=tmp_path)
    assert isinstance(failed.value.__cause__, acp.AgentError)
    assert "scripted cannot run in session mode 'plan': it offers default, auto" in str(
        failed.value
    )
    assert script.events("prompt") == []


def test_an_agent_without_session_modes_cannot_be_set_to_one(
    script: Script, tmp_path: Path
) -> None:
    agent = script.agent([[{"text": "x"}]], env={"MEAD_SCRIPTED_MODES": ""})
    with pytest.raises(TurnError, match="session mode 'default': it offers no session modes"):
        acp.run(agent, "go", interaction=AllowAll(), cwd=tmp_path)
    assert script.events("prompt") == []


def test_a_mode_the_agent_refuses_fails_the_start(script: Script, tmp_path: Path) -> None:
    agent = script.agent([[{"text": "x"}]], env={"MEAD_SCRIPTED_MODE_FAILS": "1"})
    with pytest.raises(TurnError) as failed:
        acp.run(agent, "go", interaction=AllowAll(), cwd=tmp_path)
    message = str(failed.value)
    assert "scripted refused session mode 'default'" in message
    assert "it offers default, auto, and it is in 'auto'" in message
    assert script.events("prompt") == []


def test_an_agent_left_in_its_own_mode_says_which(script: Script, tmp_path: Path) -> None:
    rec, _ = recorded()
    agent = script.agent([[{"text": "x"}]], mode=None, env={"MEAD_SCRIPTED_MODES": "yolo"})
    result = acp.run(agent, "go", interaction=rec, cwd=tmp_path)
    assert described(rec) == [{"agent": "scripted", "mode": "yolo"}]
    assert result.agent == {"agent": "scripted", "mode": "yolo"}


# -- what the turn says of the agent -------------------------------------------------------


def test_the_interaction_hears_who_runs_the_turn_before_anything_else(
    script: Script, tmp_path: Path
) -> None:
    rec, _ = recorded()
    result = acp.run(
        script.agent([[{"text": "hi"}, asked_write(tmp_path)]]), "go", interaction=rec, cwd=tmp_path
    )
    assert rec.names[0] == "agent_described"
    assert described(rec) == [{"agent": "scripted", "mode": "default"}]
    assert result.agent == {"agent": "scripted", "mode": "default"}


def test_a_mode_the_agent_switches_to_is_said_again(script: Script, tmp_path: Path) -> None:
    """An agent that puts itself in a mode that asks nobody: the header follows, and the
    calls it then runs say ``decided_by: "agent"``."""
    rec, _ = recorded()
    turn = [{"mode": "auto"}, asked_write(tmp_path)]
    result = acp.run(script.agent([turn]), "go", interaction=rec, cwd=tmp_path)
    assert [d["mode"] for d in described(rec)] == ["default", "auto"]
    assert result.agent is not None
    assert result.agent["mode"] == "auto"
    [call] = result.calls
    assert (call.status, call.decided_by) == ("completed", "agent")


def test_the_settings_a_preset_chose_reach_session_new(script: Script, tmp_path: Path) -> None:
    scripted = script.agent([[{"text": "x"}]])
    told = acp.AgentSpec(
        scripted.name,
        scripted.command,
        mode=scripted.mode,
        settings="user",
        session_meta={"claudeCode": {"options": {"settingSources": ["user"]}}},
    )
    rec, _ = recorded()
    result = acp.run(told, "go", interaction=rec, cwd=tmp_path)
    [opened] = script.events("new_session")
    assert opened["meta"] == {"claudeCode": {"options": {"settingSources": ["user"]}}}
    assert result.agent == {"agent": "scripted", "mode": "default", "settings": "user"}


def test_the_folder_arguments_follow_the_sessions_folder(script: Script, tmp_path: Path) -> None:
    scripted = script.agent([[{"text": "x"}]])
    seen: list[str] = []

    def in_folder(cwd: str) -> tuple[str, ...]:
        seen.append(cwd)
        return ()

    told = acp.AgentSpec(scripted.name, scripted.command, mode="default", in_folder=in_folder)
    acp.run(told, "go", interaction=AllowAll(), cwd=tmp_path)
    # Asked when the session is made (a folder it refuses fails there) and at the start.
    assert seen == [str(tmp_path), str(tmp_path)]


# -- calls the agent runs under its own rules ------------------------------------------


def test_deny_all_denies_what_the_agent_asks_and_reports_what_it_runs_on_its_own(
    script: Script, tmp_path: Path
) -> None:
    """``policy=DenyAll()`` decides the questions; a call the agent runs without asking
    (``env | grep``) is not a question: it runs and says so."""
    rec = Recording(DenyAll())
    turn = [asked_write(tmp_path), unasked("env | grep -c PATH")]
    result = acp.run(script.agent([turn]), "go", interaction=rec, cwd=tmp_path)
    written, ran = result.calls
    assert (written.outcome, written.decided_by) == ("denied", None)
    assert not (tmp_path / "notes.txt").exists()
    assert (ran.status, ran.decided_by) == ("completed", "agent")
    assert [e["text"] for e in script.events("did")] == ["env | grep -c PATH"]
    assert result.stop_reason == "end_turn"
    assert result.stopped is None


def test_strict_stops_the_turn_at_a_command_run_without_asking(
    script: Script, tmp_path: Path
) -> None:
    rec = Recording(DenyAll())
    turn = [
        unasked("env | grep -c PATH"),
        {"sleep": 5},
        unasked("touch later.txt", call_id="u2"),
    ]
    result = acp.run(script.agent([turn]), "go", interaction=rec, cwd=tmp_path, strict=True)
    assert result.stop_reason == "interrupted"
    assert result.agent_stop_reason == "cancelled"
    [call] = result.calls
    assert (call.status, call.outcome, call.decided_by) == ("failed", "interrupted", "agent")
    assert call.error is not None
    assert call.error.startswith("execute ran without asking (strict)")
    assert result.stopped == call.error
    assert script.events("cancel") != []
    assert not (tmp_path / "later.txt").exists()
    finals = [
        e.args[0]
        for e in rec.events
        if e.name == "tool_updated" and e.args[0]["status"] == "failed"
    ]
    assert [u["error"] for u in finals] == [call.error]


def test_strict_lets_reads_the_agent_runs_on_its_own_go_on(script: Script, tmp_path: Path) -> None:
    turn = [unasked("ls", kind="search"), {"text": "done"}]
    result = acp.run(script.agent([turn]), "go", interaction=AllowAll(), cwd=tmp_path, strict=True)
    assert result.stop_reason == "end_turn"
    [call] = result.calls
    assert (call.status, call.decided_by) == ("completed", "agent")
    assert result.text == "done"


def test_strict_leaves_calls_allowed_here_alone(script: Script, tmp_path: Path) -> None:
    result = acp.run(
        script.agent([[asked_write(tmp_path)]]),
        "go",
        interaction=AllowAll(),
        cwd=tmp_path,
        strict=True,
    )
    assert result.stop_reason == "end_turn"
    assert result.calls[0].status == "completed"
    assert (tmp_path / "notes.txt").read_text() == "hello"


def test_strict_holds_for_every_turn_of_a_session(script: Script, tmp_path: Path) -> None:
    agent = script.agent([[{"text": "one"}], [unasked("touch x.txt")]])
    with acp.session(agent, cwd=tmp_path, strict=True) as session:
        assert session.run("first", interaction=AllowAll()).stop_reason == "end_turn"
        second = session.run("second", interaction=AllowAll())
    assert second.stop_reason == "interrupted"
    assert second.stopped is not None


def test_a_question_after_strict_stopped_the_turn_is_cancelled(
    script: Script, tmp_path: Path
) -> None:
    turn = [unasked("touch x.txt"), asked_write(tmp_path)]
    asked: list[Any] = []

    class Recorder(AllowAll):
        def decide(self, request: Any) -> Allow:
            asked.append(request)
            return Allow()

    result = acp.run(script.agent([turn]), "go", interaction=Recorder(), cwd=tmp_path, strict=True)
    assert result.stop_reason == "interrupted"
    assert asked == []
    assert not (tmp_path / "notes.txt").exists()
