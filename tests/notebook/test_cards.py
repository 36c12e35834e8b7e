"""Cards: each update of a call, as the widget syncs it to every view."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from widget_helpers import (
    ask,
    feed,
    final,
    last_card,
    request,
    update,
)

from mead_notebook.calls import Call
from mead_notebook.driver import SHORT as TRUNCATE_AT
from mead_notebook.interaction import Allow, Deny, Outcome
from mead_notebook.notebook.protocol import MAX_BLOCK_TEXT, MAX_BLOCKS
from mead_notebook.policies import AllowAll

pytestmark = pytest.mark.timeout(60)


# -- cards ---------------------------------------------------------------------------


def test_card_lifecycle_follows_each_status(make: Any) -> None:
    w, c = make(policy=AllowAll())
    w.turn_started(None, "write it")
    details = {"tool": "write_file", "server": "local", "class": "effect"}
    w.tool_updated(None, update("call_1", "pending", arguments={"path": "a.txt"}, **details))
    card = last_card(c, "call_1")
    assert card["status"] == "pending"
    assert (card["tool"], card["server"], card["class"]) == ("write_file", "local", "effect")
    assert card["arguments"] == {"path": "a.txt"}
    assert w.request_permission(None, request("call_1")) == Allow()
    card = last_card(c, "call_1")
    assert card["question"]["answer"]["by"] == "policy"
    assert card["question"]["answer"]["decision"] == "allow"
    w.register_call(None, "call_1", Call("call_1", "write_file"))
    w.tool_updated(None, update("call_1", "in_progress", cancellable=True))
    assert last_card(c, "call_1")["cancellable"] is True
    w.tool_updated(None, update("call_1", "in_progress", "writing", 0.5, cancellable=True))
    card = last_card(c, "call_1")
    assert (card["current_step"], card["progress"]) == ("writing", 0.5)
    w.tool_updated(None, final("call_1", result="wrote it"))
    card = last_card(c, "call_1")
    assert (card["status"], card["outcome"], card["cancellable"]) == ("completed", None, False)
    assert (card["result"], card["error"]) == ("wrote it", None)
    assert w.order == ["call_1"]
    assert w.calls["call_1"] == card


def test_bytes_per_card_update_do_not_grow_with_the_number_of_calls(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "many")
    sizes = []
    for i in range(300):
        before = len(c.sent)
        w.tool_updated(None, update(f"call_{i}", "in_progress", "step", 0.5))
        sizes.append(sum(len(repr(d)) for _t, d in c.sent[before:]))
    assert len(set(sizes[:10])) <= 2
    assert max(sizes[-10:]) <= max(sizes[:10]) + 10


@pytest.mark.parametrize("outcome", list(get_args(Outcome)))
def test_the_card_takes_outcome_and_error_from_the_final_update(make: Any, outcome: str) -> None:
    w, c = make()
    w.turn_started(None, "x")
    w.tool_updated(None, update("call_1", "in_progress", "working", cancellable=True))
    w.tool_updated(None, final("call_1", outcome, error=f"why: {outcome}"))
    card = last_card(c, "call_1")
    assert (card["status"], card["outcome"]) == ("failed", outcome)
    assert card["error"] == f"why: {outcome}"
    assert (card["result"], card["cancellable"]) == (None, False)


def test_a_step_that_reads_like_an_outcome_is_only_a_step(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    w.tool_updated(None, update("call_1", "failed", step="denied (rejected)"))
    card = last_card(c, "call_1")
    assert (card["outcome"], card["error"], card["current_step"]) == (
        None,
        None,
        "denied (rejected)",
    )


def test_outcome_of_an_unanswered_permission_is_expired(make: Any) -> None:
    w, c = make(timeout=0.2)
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    assert ask(w) == Deny("expired")
    w.tool_updated(None, final("call_1", "expired", error="no answer in time"))
    card = last_card(c, "call_1")
    assert card["outcome"] == "expired"
    assert card["question"]["answer"]["by"] == "timeout"


def test_long_results_and_errors_are_truncated(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    long = "E" * (TRUNCATE_AT * 3)
    w.tool_updated(None, final("call_1", "error", error=long))
    w.tool_updated(None, final("call_2", result=long))
    for text in (last_card(c, "call_1")["error"], last_card(c, "call_2")["result"]):
        assert len(text) == TRUNCATE_AT
        assert text.endswith("…")


# -- what a call will do ---------------------------------------------------------------

DIFF = {"type": "diff", "path": "a.txt", "old_text": "a\n", "new_text": "b\n"}
SHOWN_DIFF = {
    "type": "diff",
    "path": "a.txt",
    "new_file": False,
    "rows": [
        {"sign": "@", "old": None, "new": None, "text": "@@ -1,1 +1,1 @@", "cut": 0},
        {"sign": "-", "old": 1, "new": None, "text": "a", "cut": 0},
        {"sign": "+", "old": None, "new": 1, "text": "b", "cut": 0},
    ],
    "added": 1,
    "removed": 1,
    "hidden": 0,
    "cut": 0,
}
"""``DIFF`` as a card shows it: the rows the kernel computed, and the totals."""
SHELL = {"type": "terminal", "command": "ls", "cwd": "/repo"}


def test_a_card_carries_kind_content_and_locations(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "edit")
    w.tool_updated(
        None,
        update(
            "call_1",
            "pending",
            tool="write_file",
            server="local",
            kind="edit",
            content=[DIFF, SHELL, {"type": "text", "text": "why"}],
            locations=[{"path": "a.txt", "line": 3}, {"path": "b.txt", "line": None}],
        ),
    )
    card = last_card(c, "call_1")
    assert card["kind"] == "edit"
    assert card["class"] == "effect"  # derived from the kind when no class came
    assert card["content"] == [
        SHOWN_DIFF,
        {**SHELL, "output": None, "exit_code": None, "cut": 0},
        {"type": "text", "text": "why", "cut": 0},
    ]
    assert card["locations"] == [{"path": "a.txt", "line": 3}, {"path": "b.txt", "line": None}]
    assert card["decided_by"] is None
    # A later update that says nothing of them keeps them; one that does replaces them.
    w.tool_updated(None, update("call_1", "in_progress"))
    assert last_card(c, "call_1")["content"][0] == SHOWN_DIFF
    done = {**SHELL, "output": "x", "exit_code": 0}
    w.tool_updated(None, update("call_1", "completed", content=[done], outcome=None))
    assert last_card(c, "call_1")["content"] == [{**done, "cut": 0}]


def test_the_question_keeps_what_the_card_showed_of_the_call(make: Any) -> None:
    """A request that says nothing of the content (a coding agent's, a policy's) keeps the
    diff and command the pending update showed, on the card and once the call has run."""
    w, c = make(policy=AllowAll())
    w.turn_started(None, "edit")
    w.tool_updated(
        None, update("call_1", "pending", tool="write_file", server="local", content=[DIFF, SHELL])
    )
    assert w.request_permission(None, request("call_1")) == Allow()
    assert [b["type"] for b in last_card(c, "call_1")["content"]] == ["diff", "terminal"]
    w.tool_updated(None, update("call_1", "in_progress"))
    w.tool_updated(None, update("call_1", "completed", outcome=None))
    assert last_card(c, "call_1")["content"][0] == SHOWN_DIFF


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "diff", "path": "a", "old_text": 3, "new_text": "x"},
        {"type": "diff", "path": None, "old_text": None, "new_text": "x"},
        {"type": "terminal", "command": ["rm", "-rf"]},
        {"type": "image", "data": "..."},
        {"type": "text"},
        "text",
        None,
    ],
)
def test_malformed_blocks_are_dropped(make: Any, bad: Any) -> None:
    w, c = make()
    w.turn_started(None, "edit")
    places = [{"line": 3}, {"path": 5}, "a.txt", {"path": "b", "line": -1}]
    w.tool_updated(None, update("call_1", "pending", content=[bad, DIFF], locations=places))
    card = last_card(c, "call_1")
    assert card["content"] == [SHOWN_DIFF]
    assert card["locations"] == [{"path": "b", "line": None}]


def test_block_text_is_bounded_and_cleaned_and_says_what_is_cut(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "edit")
    huge = {"type": "text", "text": "\ud800" + "x" * (MAX_BLOCK_TEXT + 10)}
    w.tool_updated(None, update("call_1", "pending", content=[huge] * (MAX_BLOCKS + 5)))
    card = last_card(c, "call_1")
    assert len(card["content"]) == MAX_BLOCKS
    assert card["blocks_hidden"] == 5
    block = card["content"][0]
    assert block["type"] == "text"
    assert len(block["text"]) == MAX_BLOCK_TEXT
    assert block["text"].startswith("\ufffd")
    assert block["cut"] == 11
    assert card["incomplete"] is True


def test_a_call_the_agent_ran_is_marked_agent_and_nothing_else_is(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "run")
    w.tool_updated(None, update("call_1", "pending", tool="shell", kind="execute"))
    w.tool_updated(None, update("call_1", "in_progress", decided_by="agent"))
    assert last_card(c, "call_1")["decided_by"] == "agent"
    w.tool_updated(None, update("call_2", "pending", tool="shell"))
    w.tool_updated(None, update("call_2", "in_progress", decided_by="person"))
    assert last_card(c, "call_2")["decided_by"] is None


def test_an_unknown_kind_is_not_kept(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    w.tool_updated(None, update("call_1", "pending", kind="obliterate", **{"class": "read"}))
    card = last_card(c, "call_1")
    assert card["kind"] is None
    assert card["class"] == "read"
