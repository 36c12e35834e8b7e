"""Late input: a call that changes while its question is open is asked about again.

An agent may send a call's arguments or diff after the permission question
opened. The question carries the version of the call it shows; an answer made
on an older version is refused and the question stays open.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from fakes import RecordingComm
from widget_helpers import asking, feed, last_card, open_question, update

from mead_notebook.interaction import Allow, Deny
from mead_notebook.notebook.protocol import parse
from mead_notebook.notebook.questions import CHANGED
from mead_notebook.notebook.widget import NotebookInteraction

pytestmark = pytest.mark.timeout(60)

DIFF = [{"type": "diff", "path": "a.txt", "old_text": "a\n", "new_text": "b\n"}]
WORSE = [{"type": "diff", "path": "/etc/passwd", "old_text": "root\n", "new_text": "evil\n"}]


def _asked(make: Any) -> tuple[NotebookInteraction, RecordingComm, list[Allow | Deny], Any, str]:
    w, c = make()
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    settled, t, qid = asking(w, c)
    return w, c, settled, t, qid


def _late_input(w: NotebookInteraction, **details: Any) -> None:
    """What ``TurnDriver.describe`` sends: another ``pending`` update of the call."""
    w.tool_updated(None, update("call_1", "pending", **details))


def _question(c: RecordingComm) -> dict[str, Any]:
    question: dict[str, Any] = last_card(c, "call_1")["question"]
    return question


def test_a_question_opens_at_version_1(make: Any) -> None:
    _, c, _, _, _ = _asked(make)
    assert _question(c)["version"] == 1


def test_late_input_moves_the_version_on_in_the_same_card(make: Any) -> None:
    w, c, _, _, _ = _asked(make)
    _late_input(w, arguments={"path": "/etc/passwd"}, content=WORSE)
    card = last_card(c, "call_1")
    assert card["arguments"] == {"path": "/etc/passwd"}
    assert card["content"][0]["path"] == "/etc/passwd"
    assert card["question"]["version"] == 2
    assert card["question"]["answer"] is None
    _late_input(w, content=DIFF)
    assert _question(c)["version"] == 3


def test_an_update_that_changes_nothing_shown_keeps_the_version(make: Any) -> None:
    w, c, _, _, _ = _asked(make)
    _late_input(w, step="still thinking")
    _late_input(w, arguments={"path": "a.txt"})
    assert _question(c)["version"] == 1


def test_an_answer_for_an_older_version_is_refused_and_the_question_stays_open(
    make: Any,
) -> None:
    w, c, settled, t, qid = _asked(make)
    _late_input(w, arguments={"path": "/etc/passwd"}, content=WORSE)
    feed(w, {"type": "answer", "question_id": qid, "decision": "allow", "version": 1})
    # Without a version, an answer is read as made on the first version: refused too.
    feed(w, {"type": "answer", "question_id": qid, "decision": "allow"})
    time.sleep(0.1)
    assert settled == []
    question = _question(c)
    assert question["answer"] is None
    assert question["rejected"] == CHANGED
    assert question["rejections"] == 2
    assert open_question(c, "call_1") == qid
    feed(w, {"type": "answer", "question_id": qid, "decision": "deny", "version": 2})
    t.join(10)
    assert settled == [Deny("rejected")]


def test_an_answer_for_the_current_version_is_accepted(make: Any) -> None:
    w, c, settled, t, qid = _asked(make)
    _late_input(w, content=DIFF)
    feed(w, {"type": "answer", "question_id": qid, "decision": "allow", "version": 2})
    t.join(10)
    assert settled == [Allow()]
    assert _question(c)["answer"]["decision"] == "allow"


def test_an_unchanged_call_takes_an_answer_with_or_without_its_version(make: Any) -> None:
    w, _, settled, t, qid = _asked(make)
    feed(w, {"type": "answer", "question_id": qid, "decision": "allow"})
    t.join(10)
    assert settled == [Allow()]
    w2, _, settled2, t2, qid2 = _asked(make)
    feed(w2, {"type": "answer", "question_id": qid2, "decision": "allow", "version": 1})
    t2.join(10)
    assert settled2 == [Allow()]


def test_an_answer_for_a_version_not_yet_shown_is_refused(make: Any) -> None:
    w, c, settled, _, qid = _asked(make)
    feed(w, {"type": "answer", "question_id": qid, "decision": "allow", "version": 2})
    time.sleep(0.1)
    assert settled == []
    assert _question(c)["rejected"] == CHANGED


@pytest.mark.parametrize("version", [0, -1, 1.0, "1", True, [1], {"v": 1}, 2**53])
def test_a_malformed_version_is_refused(make: Any, version: object) -> None:
    message = {"type": "answer", "question_id": "q1", "decision": "allow", "version": version}
    assert isinstance(parse(message), str)
    w, c, settled, _, qid = _asked(make)
    feed(w, {**message, "question_id": qid})
    time.sleep(0.05)
    assert settled == []
    assert _question(c)["answer"] is None


def test_late_input_that_makes_a_read_an_edit_withdraws_allow_every_read(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    settled, t, qid = asking(w, c, cls="read")
    assert "class" in [o["scope"] for o in _question(c)["scopes"]]
    _late_input(w, kind="edit", **{"class": "effect"}, content=DIFF)
    question = _question(c)
    assert [o["scope"] for o in question["scopes"]] == ["folder", "tool", "server"]
    feed(w, {"type": "answer", "question_id": qid, "decision": "allow", "remember": "class"})
    feed(
        w,
        {
            "type": "answer",
            "question_id": qid,
            "decision": "allow",
            "remember": "class",
            "version": question["version"],
        },
    )
    time.sleep(0.1)
    assert settled == []
    assert w.rules == []
    feed(w, {"type": "answer", "question_id": qid, "decision": "deny", "version": 2})
    t.join(10)
    assert settled == [Deny("rejected")]


def test_an_update_after_the_answer_does_not_reopen_it(make: Any) -> None:
    w, c, settled, t, qid = _asked(make)
    feed(w, {"type": "answer", "question_id": qid, "decision": "allow", "version": 1})
    t.join(10)
    _late_input(w, content=DIFF)
    question = _question(c)
    assert question["version"] == 1
    assert question["answer"]["decision"] == "allow"
    assert settled == [Allow()]
