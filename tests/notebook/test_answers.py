"""What an answer means (answers.py), and the audit of calls nobody here decided (auditing.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from widget_helpers import update

from mead_notebook import audit
from mead_notebook.interaction import Deny, Request, Unanswered
from mead_notebook.notebook.answers import Asked, interpret, unanswered
from mead_notebook.notebook.protocol import AnswerMessage

pytestmark = pytest.mark.timeout(60)


def request(**extra: Any) -> Request:
    found: Request = {
        "tool_call_id": "c1",
        "tool": "write_file",
        "server": "agent",
        "class": "effect",
        "arguments": {"path": "a.txt"},
    }
    found.update(extra)  # type: ignore[typeddict-item]
    return found


def message(**fields: Any) -> AnswerMessage:
    base: AnswerMessage = {
        "type": "answer",
        "question_id": "q1",
        "decision": None,
        "option_id": None,
        "option_ids": None,
        "text": None,
        "arguments": None,
        "remember": None,
        "note": "",
    }
    base.update(fields)  # type: ignore[typeddict-item]
    return base


def test_a_request_that_cannot_take_edits_refuses_edited_arguments_and_drops_the_note() -> None:
    fixed = Asked("permission", request(editable=False))
    assert fixed.editable is False
    refused = interpret(fixed, message(decision="allow", arguments={"path": "b.txt"}))
    assert refused == "this call's source cannot take edited arguments"
    denied = interpret(fixed, message(decision="deny", note="wrong file"))
    assert not isinstance(denied, str)
    assert denied.result == Deny("rejected", "")
    assert denied.answer["note"] == ""


def test_an_editable_request_keeps_both() -> None:
    open_ = Asked("permission", request())
    assert open_.editable is True
    denied = interpret(open_, message(decision="deny", note="wrong file"))
    assert not isinstance(denied, str)
    assert denied.result == Deny("rejected", "wrong file")


@pytest.mark.parametrize(
    ("verdict", "by", "permission", "choice"),
    [
        ("expired", "timeout", Deny("expired"), Unanswered("expired")),
        ("interrupted", "kernel", Deny("interrupted", "n"), Unanswered("interrupted")),
        ("deny", "fallback", Deny("rejected", ""), Unanswered("no_answer")),
        ("deny", "kernel", Deny("rejected", "n"), Unanswered("no_answer")),
        ("no_answer", "kernel", Deny("rejected", "n"), Unanswered("no_answer")),
    ],
)
def test_an_unanswered_question_ends_by_one_map(
    verdict: Any, by: Any, permission: Deny, choice: Unanswered
) -> None:
    asked = unanswered(Asked("permission", request()), verdict, by, "n")
    assert asked.result == permission
    assert asked.answer["decision"] == verdict
    assert asked.answer["by"] == by
    assert unanswered(Asked("choice"), verdict, by, "n").result == choice


def test_a_call_the_agent_ran_is_audited_as_decided_by_the_agent(make: Any, tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    w, _c = make(audit=path, display=False)
    w.turn_started(None, "run")
    block = {"type": "terminal", "command": "ls", "cwd": "/repo"}
    details = {"tool": "shell", "server": "agent", "kind": "execute", "content": [block]}
    w.tool_updated(None, update("c1", "pending", **details))
    w.tool_updated(None, update("c1", "in_progress", decided_by="agent"))
    w.tool_updated(None, update("c1", "in_progress", progress=0.5))
    w.tool_updated(None, update("c1", "completed", outcome=None, result="a b"))
    lines = [line for line in path.read_text().splitlines() if '"decided"' in line]
    assert len(lines) == 1, "one decision line, when the agent's decision is first seen"
    (record,) = audit.read(path)
    assert record["decided_by"] == "agent"
    assert record["decision"] == "allow"
    assert record["tool_kind"] == "execute"
    assert record["content"] == [{**block, "output": None, "exit_code": None, "cut": 0}]
    assert record["status"] == "completed"
