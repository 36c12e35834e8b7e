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
