"""Continuing an earlier session by its id: never a new session in its place; the history
an agent replays on ``session/load`` is the first turn's, and nothing in it is asked or run."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from mead_notebook import Allow, Answered, Choice, Deny, Picked, Request, TurnError, Unanswered
from mead_notebook.adapters import acp
from mead_notebook.notebook import NotebookInteraction
from mead_notebook.policies import AllowAll
from mead_notebook.testing import Recording

from .conftest import Script

pytestmark = pytest.mark.timeout(60)


def test_a_sessions_id_is_the_agents(script: Script, tmp_path: Path) -> None:
    with acp.session(script.agent([[{"text": "hi"}]]), cwd=tmp_path) as session:
        assert session.id is None  # not opened before its first turn
        session.run("go", interaction=AllowAll())
        assert session.id == "s1"
        assert session.resumed_by is None


def test_an_agent_that_cannot_resume_fails_the_turn_and_starts_no_session(
    script: Script, tmp_path: Path
) -> None:
    """The scripted agent offers neither ``session/resume`` nor ``session/load``."""
    session = acp.session(script.agent([[{"text": "hi"}]]), cwd=tmp_path, resume="s0")
    assert session.id == "s0"
    with session, pytest.raises(TurnError, match="offers neither session/resume nor session/load"):
        session.run("go", interaction=AllowAll())
    assert script.events("new_session") == []
    assert script.events("prompt") == []


@pytest.mark.parametrize("given", ["", 42])
def test_resume_takes_a_session_id(script: Script, tmp_path: Path, given: object) -> None:
    with pytest.raises(TypeError, match="resume must be a session id"):
        acp.session(script.agent([]), cwd=tmp_path, resume=given)  # type: ignore[arg-type]


def test_an_agent_that_lists_no_sessions_says_so(script: Script, tmp_path: Path) -> None:
    with pytest.raises(acp.AgentError, match=r"does not list its sessions \(no session/list\)"):
        acp.sessions(script.agent([]), cwd=tmp_path)
    assert [e["event"] for e in script.events()] == ["initialize"]


# -- session/load: the agent replays the history --------------------------------------------

HISTORY = [
    {"user": "The word is "},
    {"user": "PINEAPPLE."},
    {"text": "Noted: "},
    {"text": "PINEAPPLE."},
    {"call": {"id": "t1", "title": "ls", "kind": "execute", "input": {"command": "ls"}}},
    {"call": {"id": "t2", "title": "cat x", "kind": "read", "fail": "no such file"}},
    {"user": "Thanks.", "message_id": "m2"},
    {"user": "Bye.", "message_id": "m3"},
]


def loading(script: Script, history: list[dict[str, Any]], *, late: bool = False) -> acp.AgentSpec:
    """The scripted agent, offering ``session/load`` that replays ``history``."""
    env = {"MEAD_SCRIPTED_HISTORY": json.dumps(history)}
    if late:
        env["MEAD_SCRIPTED_REPLAY_LATE"] = "1"
    return script.agent([[{"text": "It was PINEAPPLE."}], [{"text": "Bye."}]], env=env)


@pytest.mark.parametrize("late", [False, True], ids=["before-its-answer", "after-its-answer"])
def test_a_loaded_sessions_replay_is_the_first_turns_history(
    script: Script, tmp_path: Path, late: bool
) -> None:
    person = Recording(AllowAll())
    with acp.session(loading(script, HISTORY, late=late), cwd=tmp_path, resume="s0") as session:
        result = session.run("What was the word?", interaction=person)
        again = session.run("Bye?", interaction=AllowAll())
    assert session.resumed_by == "session/load"
    assert [e["session_id"] for e in script.events("load_session")] == ["s0"]
    messages = [(e["type"], e["text"]) for e in result.history if e["type"] != "call"]
    assert messages == [
        ("prompt", "The word is PINEAPPLE."),
        ("text", "Noted: PINEAPPLE."),
        ("prompt", "Thanks."),
        ("prompt", "Bye."),
    ]
    calls = [e["update"] for e in result.history if e["type"] == "call"]
    assert [(c["tool_call_id"], c["status"], c.get("outcome")) for c in calls] == [
        ("t1", "completed", None),
        ("t2", "failed", "error"),
    ]
    assert calls[0]["content"][0] == {"type": "terminal", "command": "ls", "output": "done"}
    assert calls[1]["error"] == "no such file"
    # The turn itself is only the turn's: none of the replay is its text or its calls.
    assert result.text == "It was PINEAPPLE."
    assert result.calls == []
    assert person.names[:3] == ["agent_described", "history_replayed", "text_delta"]
    # Shown once: the next turn of the session continues nothing new.
    assert again.history == []
    assert again.text == "Bye."


SNEAKY = [
    {"mode": "default"},
    {
        "call": {
            "id": "p1",
            "title": "touch pwned",
            "kind": "execute",
            "ask": True,
            "run": "touch pwned",
        }
    },
    {
        "ask": {
            "message": "Your password?",
            "schema": {"type": "object", "properties": {"p": {"type": "string"}}},
        }
    },
    {
        "call": {
            "id": "p2",
            "title": "rm -rf ~",
            "kind": "execute",
            "open": True,
            "no_in_progress": True,
        }
    },
]


class Asked(AllowAll):
    """Allows every call and answers every question, and says what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def request_permission(self, context: Any, request: Request) -> Allow | Deny:
        self.asked.append(request["tool_call_id"])
        return Allow()

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Answered | Unanswered:
        self.asked.append(choice["tool_call_id"])
        return Answered("hunter2")


@pytest.mark.parametrize("late", [False, True], ids=["before-its-answer", "after-its-answer"])
def test_nothing_in_a_replay_is_asked_allowed_or_run(
    script: Script, tmp_path: Path, late: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """A replayed call that asks for permission is refused unasked; a question is cancelled;
    a pending call is a record that ended, never a question."""
    caplog.set_level(logging.WARNING)
    person = Asked()
    with acp.session(loading(script, SNEAKY, late=late), cwd=tmp_path, resume="s0") as session:
        result = session.run("go on", interaction=person)
    assert person.asked == []
    [permission] = script.events("permission")
    assert (permission["id"], permission["outcome"]) == ("p1", "cancelled")
    [elicitation] = script.events("elicitation")
    assert elicitation["answer"] == {"action": "cancel"}
    assert script.events("ran") == []
    assert not (tmp_path / "pwned").exists()
    calls = [e["update"] for e in result.history if e["type"] == "call"]
    assert [(c["tool_call_id"], c["status"], c.get("outcome")) for c in calls] == [
        ("p1", "failed", "interrupted"),
        ("p2", "failed", "interrupted"),
    ]
    assert result.calls == []
    assert "asked for permission (p1) while it replayed a session; refused" in caplog.text


def test_a_widget_shows_the_replay_above_the_first_turn(script: Script, tmp_path: Path) -> None:
    widget = NotebookInteraction(display=False, grace=0.1)
    try:
        with acp.session(loading(script, HISTORY), cwd=tmp_path, resume="s0") as session:
            session.run("What was the word?", interaction=widget)
        kinds = [e["type"] for e in widget.history]
        assert kinds == ["prompt", "text", "call", "call", "prompt", "prompt"]
        assert widget.history[0]["text"] == "The word is PINEAPPLE."
        assert [e["card"]["status"] for e in widget.history if e["type"] == "call"] == [
            "completed",
            "failed",
        ]
        assert widget.text == "It was PINEAPPLE."
        assert widget.calls == {}
    finally:
        widget.close()


def test_a_new_session_has_no_history(script: Script, tmp_path: Path) -> None:
    with acp.session(script.agent([[{"text": "hi"}]]), cwd=tmp_path) as session:
        result = session.run("go", interaction=AllowAll())
    assert result.history == []
