"""Who answered: the user and page a view claims, carried to the card and the audit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from widget_helpers import asking, feed, last_card

from mead_notebook import audit
from mead_notebook.interaction import Allow, Deny
from mead_notebook.notebook.protocol import MAX_NAME, claimed_name, parse

pytestmark = pytest.mark.timeout(60)


def answer(**fields: Any) -> dict[str, Any]:
    return {"type": "answer", "question_id": "q1", "decision": "allow", **fields}


def test_an_answer_carries_the_claimed_user_and_page() -> None:
    message = parse(answer(username=" alice ", display_name="Alice Liddell", page="p-1"))
    assert not isinstance(message, str)
    assert (message["username"], message["display_name"], message["page"]) == (
        "alice",
        "Alice Liddell",
        "p-1",
    )
    bare = parse(answer())
    assert not isinstance(bare, str)
    assert (bare["username"], bare["display_name"], bare["page"]) == (None, None, None)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "x" * (MAX_NAME + 1),
        "ali\nce",
        "ali\u202ece",  # a right-to-left override could disguise the name
        "\ud800",
        7,
        True,
        ["alice"],
        {"name": "alice"},
        None,
    ],
)
def test_a_malformed_name_is_unknown_and_the_answer_still_counts(name: object) -> None:
    assert claimed_name(name) is None
    message = parse(answer(username=name, display_name=name, page=name))
    assert not isinstance(message, str), "a bad name never refuses the answer"
    assert (message["username"], message["display_name"], message["page"]) == (None, None, None)
    assert message["decision"] == "allow"


def test_the_longest_name_is_kept() -> None:
    assert claimed_name("é" * MAX_NAME) == "é" * MAX_NAME


def test_the_card_says_who_answered_first_and_a_late_answer_changes_nothing(
    make: Any, tmp_path: Path
) -> None:
    path = tmp_path / "calls.jsonl"
    w, c = make(audit=path)
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    settled, t, qid = asking(w, c, "call_1")
    w.deliver(answer(question_id=qid, username="alice", display_name="Alice", page="page-a"))
    w.deliver(answer(question_id=qid, decision="deny", username="bob", page="page-b"))
    t.join(10)
    assert settled == [Allow()]
    settlement = last_card(c, "call_1")["question"]["answer"]
    assert (settlement["by"], settlement["decision"]) == ("person", "allow")
    assert (settlement["username"], settlement["display_name"], settlement["page"]) == (
        "alice",
        "Alice",
        "page-a",
    )
    (record,) = audit.read(path)
    assert (record["decided_by"], record["username"], record["display_name"], record["page"]) == (
        "person",
        "alice",
        "Alice",
        "page-a",
    )


def test_no_name_is_recorded_where_the_view_claimed_none(make: Any, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    w, c = make(audit=path)
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    settled, t, qid = asking(w, c, "call_1")
    w.deliver({"type": "answer", "question_id": qid, "decision": "deny", "username": "\x00"})
    t.join(10)
    assert settled == [Deny("rejected", "")]
    (record,) = audit.read(path)
    assert record["decided_by"] == "person"
    assert (record["username"], record["display_name"], record["page"]) == (None, None, None)


def test_a_decision_nobody_made_here_names_nobody(make: Any) -> None:
    w, c = make(grace=0.05)
    w.turn_started(None, "x")
    settled, t, _qid = asking(w, c, "call_1")
    t.join(10)
    assert settled == [Deny("expired")]
    settlement = last_card(c, "call_1")["question"]["answer"]
    assert settlement["by"] == "fallback"
    assert (settlement["username"], settlement["page"]) == (None, None)
