"""Questions: answers from views, timeouts, nobody to answer, and the policy."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from widget_helpers import (
    ask,
    asking,
    feed,
    in_thread,
    last_card,
    open_question,
    request,
    update,
)

from mead_notebook.interaction import Allow, Deny, Picked, Request, Unanswered
from mead_notebook.notebook import waiting as _waiting
from mead_notebook.notebook.widget import NotebookInteraction
from mead_notebook.policies import AllowReads, DenyAll

pytestmark = pytest.mark.timeout(60)


# -- answers ---------------------------------------------------------------------------


def test_bad_answers_are_ignored_and_a_valid_one_settles(
    make: Any, caplog: pytest.LogCaptureFixture
) -> None:
    w, c = make()
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    w.tool_updated(None, update("call_1", "pending"))
    w.tool_updated(None, update("call_2", "pending"))
    settled: list[Allow | Deny] = []
    in_thread(lambda: settled.append(w.request_permission(None, request("call_1"))))
    qid = open_question(c, "call_1")
    bad: list[Any] = [
        "not an object",
        None,
        {"type": "nonsense"},
        {"type": "answer"},
        {"type": "answer", "question_id": 7, "decision": "allow"},
        {"type": "answer", "question_id": "q999", "decision": "allow"},
        {"type": "answer", "question_id": qid, "decision": "maybe"},
        {"type": "answer", "question_id": qid, "decision": True},
        {"type": "answer", "question_id": qid, "decision": "allow", "note": 5},
        {"type": "answer", "question_id": qid, "option_id": "yes"},
    ]
    for content in bad:
        w.deliver(content)
        feed(w, content)
    assert settled == []
    assert last_card(c, "call_1")["question"]["answer"] is None
    w.deliver({"type": "answer", "question_id": qid, "decision": "deny", "note": "not today"})
    deadline = time.monotonic() + 10
    while not settled and time.monotonic() < deadline:
        time.sleep(0.005)
    assert settled == [Deny("rejected", "not today")]
    answer = last_card(c, "call_1")["question"]["answer"]
    assert answer == {
        "decision": "deny",
        "option_id": None,
        "option_ids": None,
        "text": None,
        "arguments": None,
        "rule": None,
        "by": "person",
        "note": "not today",
        "username": None,
        "display_name": None,
        "page": None,
    }
    assert last_card(c, "call_2")["question"] is None
    assert any("unknown question" in r.getMessage() for r in caplog.records)


def test_first_valid_answer_wins_and_a_second_delivery_is_a_no_op(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    settled, t, qid = asking(w, c)
    allow = {"type": "answer", "question_id": qid, "decision": "allow"}
    w.deliver(allow)
    feed(w, allow)
    w.deliver({"type": "answer", "question_id": qid, "decision": "deny"})
    t.join(10)
    assert settled == [Allow()]
    answered = [m for m in c.custom("call") if (m["card"]["question"] or {}).get("answer")]
    assert len(answered) == 1
    assert answered[0]["card"]["question"]["answer"]["decision"] == "allow"


def test_concurrent_deliveries_settle_once(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    settled, t, qid = asking(w, c)
    barrier = threading.Barrier(8)

    def answer(decision: str) -> None:
        barrier.wait(5)
        w.deliver({"type": "answer", "question_id": qid, "decision": decision})

    threads = [in_thread(lambda d=d: answer(d)) for d in ["allow", "deny"] * 4]  # type: ignore[misc]
    for th in threads:
        th.join(10)
    t.join(10)
    answered = [m for m in c.custom("call") if (m["card"]["question"] or {}).get("answer")]
    assert len(answered) == 1
    decision = answered[0]["card"]["question"]["answer"]["decision"]
    assert settled == [Allow() if decision == "allow" else Deny("rejected")]


def test_choice_answers_must_name_a_listed_option(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    got: list[Picked | Unanswered] = []
    choice = {
        "tool_call_id": "call_9",
        "prompt": "Which?",
        "options": [{"id": "a", "label": "Apples"}, {"id": "b", "label": "Pears"}],
    }
    details = {"tool": "ask_user", "server": "local", "class": "read", "arguments": choice}
    w.tool_updated(None, update("call_9", "pending", **details))
    t = in_thread(lambda: got.append(w.ask_choice(None, choice)))
    qid = open_question(c, "call_9")
    card = last_card(c, "call_9")
    assert (card["tool"], card["class"], card["status"]) == ("ask_user", "read", "pending")
    assert card["question"]["options"] == choice["options"]
    assert card["question"]["prompt"] == "Which?"
    for content in [
        {"type": "answer", "question_id": qid, "option_id": "c"},
        {"type": "answer", "question_id": qid, "option_id": 1},
        {"type": "answer", "question_id": qid, "decision": "allow"},
    ]:
        w.deliver(content)
    assert got == []
    w.deliver({"type": "answer", "question_id": qid, "option_id": "b"})
    t.join(10)
    assert got == [Picked("b")]
    answer = last_card(c, "call_9")["question"]["answer"]
    assert (answer["decision"], answer["option_id"], answer["by"]) == ("picked", "b", "person")


def test_a_late_answer_after_expiry_changes_nothing(make: Any) -> None:
    w, c = make(timeout=0.2)
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    assert ask(w) == Deny("expired")
    qid = last_card(c, "call_1")["question"]["id"]
    sent = len(c.sent)
    w.deliver({"type": "answer", "question_id": qid, "decision": "allow"})
    assert len(c.sent) == sent
    assert w.calls["call_1"]["question"]["answer"]["decision"] == "expired"


def test_question_ids_are_distinct_per_widget(make: Any) -> None:
    w, c = make(policy=DenyAll())
    w.turn_started(None, "x")
    ask(w, "call_1")
    ask(w, "call_2")
    ids = [last_card(c, i)["question"]["id"] for i in ("call_1", "call_2")]
    assert ids == ["q1", "q2"]


# -- timeouts and nobody to answer -------------------------------------------------------


def test_timeout_expires_permission_and_choice(make: Any) -> None:
    w, c = make(timeout=0.2)
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    before = time.time() * 1000
    assert ask(w) == Deny("expired")
    deadline = last_card(c, "call_1")["question"]["deadline"]
    assert before + 150 <= deadline <= time.time() * 1000 + 250
    choice = {"tool_call_id": "call_2", "prompt": "?", "options": [{"id": "a", "label": "A"}]}
    assert w.ask_choice(None, choice) == Unanswered("expired")
    answer = last_card(c, "call_2")["question"]["answer"]
    assert (answer["decision"], answer["by"]) == ("expired", "timeout")


def test_no_view_means_the_fallback_decides(make: Any) -> None:
    w, c = make(timeout=None, grace=0.2)
    w.turn_started(None, "x")
    assert ask(w) == Deny("expired")
    answer = last_card(c, "call_1")["question"]["answer"]
    assert (answer["decision"], answer["by"]) == ("expired", "fallback")
    assert last_card(c, "call_1")["question"]["deadline"] is None
    choice = {"tool_call_id": "call_2", "prompt": "?", "options": [{"id": "a", "label": "A"}]}
    assert w.ask_choice(None, choice) == Unanswered("no_answer")
    assert last_card(c, "call_2")["question"]["answer"]["by"] == "fallback"


def test_fallback_policy_decides_for_a_headless_run(make: Any) -> None:
    w, c = make(fallback=AllowReads(), grace=0.1)
    w.turn_started(None, "x")
    assert ask(w, "call_1", cls="read") == Allow()
    assert ask(w, "call_2", cls="effect") == Deny("expired")
    assert last_card(c, "call_1")["question"]["answer"]["decision"] == "allow"
    assert last_card(c, "call_2")["question"]["answer"] == {
        "decision": "expired",
        "option_id": None,
        "option_ids": None,
        "text": None,
        "arguments": None,
        "rule": None,
        "by": "fallback",
        "note": "",
        "username": None,
        "display_name": None,
        "page": None,
    }


def test_grace_counts_from_display(make: Any) -> None:
    w, c = make(grace=0.3, timeout=30.0)
    w._repr_mimebundle_()
    time.sleep(0.35)
    waits: list[float | None] = []
    original = _waiting.wait_for

    def spy(widget: Any, event: threading.Event, timeout: float | None) -> bool:
        waits.append(timeout)
        return original(widget, event, timeout)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_waiting, "wait_for", spy)
        assert ask(w) == Deny("expired")
    assert waits == []
    assert last_card(c, "call_1")["question"]["answer"]["by"] == "fallback"


def test_a_rendered_view_during_grace_keeps_the_question_open(make: Any) -> None:
    w, c = make(grace=0.3, timeout=30.0)
    w.turn_started(None, "x")
    settled, t, qid = asking(w, c)
    feed(w, {"type": "rendered"})
    time.sleep(0.6)
    assert settled == []
    feed(w, {"type": "answer", "question_id": qid, "decision": "allow"})
    t.join(10)
    assert settled == [Allow()]


def test_failing_fallback_fails_closed(make: Any) -> None:
    class Broken:
        def decide(self, request: Request) -> Allow | Deny | None:
            raise RuntimeError("boom")

    w, _c = make(fallback=Broken(), grace=0.0)
    w.turn_started(None, "x")
    assert ask(w) == Deny("expired")


def test_bad_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="timeout"):
        NotebookInteraction(timeout=0)
    with pytest.raises(ValueError, match="grace"):
        NotebookInteraction(grace=-1)
    with pytest.raises(TypeError, match="fallback"):
        NotebookInteraction(fallback=object())
    with pytest.raises(TypeError, match="policy"):
        NotebookInteraction(policy=object())


# -- policy ------------------------------------------------------------------------------


def test_policy_decides_without_asking(make: Any) -> None:
    w, c = make(policy=AllowReads(), timeout=30.0)
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})
    assert ask(w, "call_1", cls="read") == Allow()
    assert last_card(c, "call_1")["question"]["answer"]["by"] == "policy"
    settled, t, qid = asking(w, c, "call_2")
    w.deliver({"type": "answer", "question_id": qid, "decision": "allow"})
    t.join(10)
    assert settled == [Allow()]
    assert last_card(c, "call_2")["question"]["answer"]["by"] == "person"


def test_a_policy_is_anything_with_decide(make: Any) -> None:
    class HouseRule:
        def decide(self, request: Request) -> Deny:
            return Deny("rejected", "house rule")

    class Interactionish:
        def request_permission(self, context: Any, request: Request) -> Allow | Deny:
            return Allow()

    w, c = make(policy=HouseRule())
    w.turn_started(None, "x")
    assert ask(w) == Deny("rejected", "house rule")
    answer = last_card(c, "call_1")["question"]["answer"]
    assert (answer["decision"], answer["by"], answer["note"]) == ("deny", "policy", "house rule")
    with pytest.raises(TypeError, match="decide"):
        NotebookInteraction(policy=Interactionish())  # type: ignore[arg-type]


def test_policy_with_a_bad_answer_fails_closed(make: Any) -> None:
    class Odd:
        def decide(self, request: Request) -> Any:
            return "yes"

    w, _c = make(policy=Odd())
    w.turn_started(None, "x")
    decision = ask(w)
    assert isinstance(decision, Deny)
