"""NotebookInteraction driven the way a frontend drives it: through its comm, no kernel."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any, get_args

import anywidget
import pytest
from fakes import RecordingComm

from mead_notebook.calls import Call
from mead_notebook.driver import SHORT as TRUNCATE_AT
from mead_notebook.interaction import Allow, Deny, Outcome, Picked, Request, Unanswered, Update
from mead_notebook.model import ScriptedModel, ToolCall
from mead_notebook.notebook import waiting as _waiting
from mead_notebook.notebook import widget
from mead_notebook.notebook.widget import FLUSH_INTERVAL, NotebookInteraction
from mead_notebook.policies import AllowAll, AllowReads, DenyAll
from mead_notebook.router import Router
from mead_notebook.tools import tool
from mead_notebook.turn import TurnResult

pytestmark = pytest.mark.timeout(60)


def feed(w: NotebookInteraction, content: Any) -> None:
    """A custom message from the frontend, through the ordinary comm dispatch."""
    w._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})


def update(
    tool_call_id: str,
    status: str,
    step: str | None = None,
    progress: float | None = None,
    cancellable: bool = False,
    **details: Any,
) -> Update:
    return {  # type: ignore[typeddict-item]
        "tool_call_id": tool_call_id,
        "title": "write_file",
        "status": status,
        "current_step": step,
        "progress": progress,
        "cancellable": cancellable,
        **details,
    }


def final(
    tool_call_id: str,
    outcome: str | None = None,
    *,
    result: str | None = None,
    error: str | None = None,
) -> Update:
    """The last update of a call, as the driver sends it."""
    status = "completed" if outcome is None else "failed"
    return update(tool_call_id, status, outcome=outcome, result=result, error=error)


def request(tool_call_id: str, cls: str = "effect", name: str = "write_file") -> Request:
    return {
        "tool_call_id": tool_call_id,
        "tool": name,
        "server": "local",
        "class": cls,  # type: ignore[typeddict-item]
        "arguments": {"path": "a.txt"},
    }


def last_card(c: RecordingComm, tool_call_id: str) -> dict[str, Any]:
    cards = [m["card"] for m in c.custom("call") if m["card"]["tool_call_id"] == tool_call_id]
    assert cards, f"no card was sent for {tool_call_id}"
    card: dict[str, Any] = cards[-1]
    return card


def open_question(c: RecordingComm, tool_call_id: str, timeout: float = 10.0) -> str:
    """Wait until the card of ``tool_call_id`` carries an open question; return its id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for m in reversed(c.custom("call")):
            card = m["card"]
            q = card.get("question")
            if card["tool_call_id"] == tool_call_id and q and q["answer"] is None:
                return str(q["id"])
        time.sleep(0.005)
    raise AssertionError(f"no open question for {tool_call_id} within {timeout} s")


def in_thread(fn: Callable[[], None]) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def ask(w: NotebookInteraction, tool_call_id: str = "call_1", cls: str = "effect") -> Allow | Deny:
    w.tool_updated(None, update(tool_call_id, "pending"))
    return w.request_permission(None, request(tool_call_id, cls))


def asking(
    w: NotebookInteraction, c: RecordingComm, tool_call_id: str = "call_1", cls: str = "effect"
) -> tuple[list[Allow | Deny], threading.Thread, str]:
    """Ask in another thread: what it settles to (once joined), the thread, the question id."""
    settled: list[Allow | Deny] = []
    t = in_thread(lambda: settled.append(ask(w, tool_call_id, cls)))
    return settled, t, open_question(c, tool_call_id)


# -- traits and repr -----------------------------------------------------------------


def test_synced_traits_are_the_protocol_ones(make: Any) -> None:
    w, c = make()
    base = set(anywidget.AnyWidget.class_traits(sync=True)) | {"_esm", "_css", "_anywidget_id"}
    synced = set(w.keys) - base
    assert synced == {
        "prompt",
        "status",
        "stop_reason",
        "error",
        "text",
        "calls",
        "order",
        "keyboard",
        "_frontend",
    }
    opened = [d for t, d in c.sent if t == "comm_open"]
    assert opened[0]["state"]["status"] == "idle"
    assert opened[0]["state"]["calls"] == {}


def test_repr_is_stable_and_summarises(make: Any) -> None:
    texts = []
    for _ in range(2):
        w, _c = make(policy=AllowAll())
        w.turn_started(None, "go")
        w.text_delta(None, "hello")
        ask(w, "call_1")
        w.tool_updated(None, final("call_1", result="ok"))
        w.tool_updated(None, final("call_2", "denied", error="no"))
        w.turn_ended(None, TurnResult(), None)
        data, _meta = w._repr_mimebundle_()
        assert data["text/plain"] == repr(w)
        assert w.model_id not in data["text/plain"]
        texts.append(repr(w))
    assert texts[0] == texts[1]
    assert "0x" not in texts[0]
    assert texts[0] == (
        "NotebookInteraction: done, 2 tool calls (1 completed, 1 denied), 5 characters of text"
    )


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


# -- cancel, interrupt, idle ---------------------------------------------------------------


def test_cancel_message_cancels_the_running_call(make: Any) -> None:
    w, c = make(policy=AllowAll())
    w.turn_started(None, "x")
    call = Call("call_1", "write_file")
    other = Call("call_2", "write_file")
    ask(w, "call_1")
    w.register_call(None, "call_1", call)
    w.register_call(None, "call_2", other)
    w.tool_updated(None, update("call_1", "in_progress", cancellable=True))
    feed(w, {"type": "cancel", "tool_call_id": "call_7"})
    feed(w, {"type": "cancel", "tool_call_id": 3})
    assert not call.cancelled
    feed(w, {"type": "cancel", "tool_call_id": "call_1"})
    w.deliver({"type": "cancel", "tool_call_id": "call_1"})
    assert call.cancelled
    assert not other.cancelled
    w.tool_updated(None, final("call_1", "cancelled", error="The call was cancelled."))
    assert last_card(c, "call_1")["outcome"] == "cancelled"


def test_interrupt_closes_open_questions(make: Any) -> None:
    w, c = make(timeout=30.0)
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})

    def interrupter() -> None:
        open_question(c, "call_1")
        w.interrupt(None)

    t = in_thread(interrupter)
    decision = ask(w)
    t.join(10)
    assert isinstance(decision, Deny)
    answer = last_card(c, "call_1")["question"]["answer"]
    assert (answer["decision"], answer["by"]) == ("interrupted", "kernel")
    choice = {"tool_call_id": "call_2", "prompt": "?", "options": [{"id": "a", "label": "A"}]}
    assert w.ask_choice(None, choice) == Unanswered("interrupted")
    assert last_card(c, "call_2")["question"]["answer"]["decision"] == "interrupted"


def test_keyboard_interrupt_in_the_wait_closes_the_question(make: Any) -> None:
    w, c = make(timeout=30.0)
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})

    def interrupted(widget: Any, event: threading.Event, timeout: float | None) -> bool:
        raise KeyboardInterrupt

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_waiting, "wait_for", interrupted)
        with pytest.raises(KeyboardInterrupt):
            ask(w)
    assert last_card(c, "call_1")["question"]["answer"]["decision"] == "interrupted"
    w.turn_ended(None, TurnResult(), KeyboardInterrupt())
    assert (w.status, w.stop_reason) == ("interrupted", "interrupted")


def test_idle_polls_the_waiting_mechanism(make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    w, _c = make()
    polled: list[Any] = []
    monkeypatch.setattr(_waiting, "poll", polled.append)
    w.idle(None)
    assert polled == [w]


def test_turn_end_states(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    w.tool_updated(None, update("call_1", "in_progress"))
    w.turn_ended(None, TurnResult(), RuntimeError("model broke"))
    assert (w.status, w.error) == ("error", "RuntimeError: model broke")
    card = c.updates()[-1]["calls"]["call_1"]
    assert (card["status"], card["outcome"]) == ("failed", "interrupted")
    assert w.calls["call_1"] == card
    w.turn_started(None, "y")
    assert (w.status, w.calls, w.text) == ("running", {}, "")
    assert c.updates()[-1]["status"] == "running"


# -- text ----------------------------------------------------------------------------------


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def replay(messages: list[dict[str, Any]]) -> str:
    """Apply text messages the way the frontend does, counting in UTF-16 code units."""
    text = b""
    for m in messages:
        start = m["start"] * 2
        assert start <= len(text), "a text message left a gap"
        text = text[:start] + m["delta"].encode("utf-16-le")
    return text.decode("utf-16-le")


def test_text_is_coalesced_with_utf16_offsets(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    fragments = [f"é{i}😀 " if i % 3 else f"w{i} " for i in range(3000)]
    started = time.monotonic()
    for i, f in enumerate(fragments):
        w.text_delta(None, f)
        if i % 100 == 99:
            time.sleep(FLUSH_INTERVAL / 2)
    elapsed = time.monotonic() - started
    w.turn_ended(None, TurnResult(), None)
    messages = c.custom("text")
    assert 5 <= len(messages) <= elapsed / FLUSH_INTERVAL + 1
    streamed = "".join(m["delta"] for m in messages)
    assert "".join(fragments).startswith(streamed)
    offsets = [m["start"] for m in messages]
    expected = [0]
    for m in messages[:-1]:
        expected.append(expected[-1] + utf16(m["delta"]))
    assert offsets == expected
    assert replay(messages) == streamed
    assert c.updates()[-1]["text"] == w.text == "".join(fragments)


def test_text_is_not_resynced_on_each_change(make: Any) -> None:
    w, c = make(policy=AllowAll())
    w.turn_started(None, "x")
    n = len(c.updates())
    for i in range(50):
        w.text_delta(None, f"{i} ")
        time.sleep(0.002)
    ask(w, "call_1")
    w.tool_updated(None, final("call_1", result="ok"))
    assert c.updates()[n:] == []
    w.turn_ended(None, TurnResult(), None)
    synced = c.updates()[n:]
    assert len(synced) == 1
    assert synced[0]["text"] == w.text
    assert synced[0]["order"] == ["call_1"]
    assert synced[0]["calls"]["call_1"]["status"] == "completed"


def test_a_pause_in_the_stream_still_sends_the_text(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    w.text_delta(None, "first")
    w.text_delta(None, " second")
    deadline = time.monotonic() + 5
    while "".join(m["delta"] for m in c.custom("text")) != "first second":
        assert time.monotonic() < deadline, "buffered text was not sent during a pause"
        time.sleep(0.005)


def test_text_is_sent_before_a_card_changes(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    time.sleep(FLUSH_INTERVAL * 1.5)
    w.text_delta(None, "a")
    w.text_delta(None, "b")
    w.tool_updated(None, update("call_1", "pending"))
    kinds = [(m["type"], m.get("delta")) for m in c.custom()]
    assert kinds[-1] == ("call", None)
    assert "".join(d for k, d in kinds if k == "text") == "ab"


def test_a_card_does_not_send_text_within_the_interval(
    make: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(widget, "FLUSH_INTERVAL", 0.5)
    w, c = make()
    w.turn_started(None, "x")
    w.text_delta(None, "a")
    w.tool_updated(None, update("call_1", "pending"))
    assert c.custom("text") == []
    w.text_delta(None, "b")
    deadline = time.monotonic() + 5
    while "".join(m["delta"] for m in c.custom("text")) != "ab":
        assert time.monotonic() < deadline, "the text thread did not send the text"
        time.sleep(0.005)
    assert len(c.custom("text")) == 1


def text_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "mead-widget-text"]


def test_the_text_thread_lives_for_the_turn_only(make: Any) -> None:
    w, _c = make()
    before = set(text_threads())
    for _ in range(3):
        w.turn_started(None, "x")
        w.text_delta(None, "a")
        w.turn_ended(None, TurnResult(), None)
        assert w.text == "a"
    deadline = time.monotonic() + 5
    while set(text_threads()) - before:
        assert time.monotonic() < deadline, "a text thread outlived its turn"
        time.sleep(0.01)


def test_request_state_returns_the_current_text_and_calls(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "x")
    w.tool_updated(None, update("call_1", "in_progress", "busy"))
    w.text_delta(None, "so far ")
    w.text_delta(None, "🙂")
    w._handle_msg({"content": {"data": {"method": "request_state"}}, "buffers": []})
    state = c.updates()[-1]
    assert state["text"] == "so far 🙂"
    assert state["calls"]["call_1"]["current_step"] == "busy"
    assert state["order"] == ["call_1"]
    assert state["status"] == "running"


# -- display ---------------------------------------------------------------------------------


def test_turn_start_displays_once_in_ipython(make: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shown, _c = make()
        shown.turn_started(None, "x")
        shown.turn_started(None, "again")
        hidden, _c2 = make(display=False)
        hidden.turn_started(None, "x")
    finally:
        InteractiveShell.clear_instance()
        del shell
    out = capsys.readouterr().out
    assert out.count("NotebookInteraction: running") == 1


# -- with the router -------------------------------------------------------------------------


def scripted_router(log: list[str]) -> Router:
    @tool(read_only=True)
    def read_file(path: str) -> str:
        """Read a file."""
        log.append(f"read {path}")
        return f"contents of {path}"

    @tool
    def delete_file(path: str) -> str:
        """Delete a file."""
        log.append(f"delete {path}")
        return "deleted"

    model = ScriptedModel(
        [
            ["Let me ", "look 👀", ToolCall("read_file", {"path": "a.txt"})],
            [
                ToolCall("delete_file", {"path": "a.txt"}),
                ToolCall("delete_file", {"path": "b.txt"}),
            ],
            [
                ToolCall(
                    "ask_user",
                    {
                        "prompt": "Keep c.txt?",
                        "options": [
                            {"id": "keep", "label": "Keep"},
                            {"id": "drop", "label": "Drop"},
                        ],
                    },
                )
            ],
            ["Done: ", "a.txt deleted."],
        ]
    )
    return Router(model, [read_file, delete_file])


def test_a_whole_turn_through_the_router(make: Any) -> None:
    done: list[str] = []
    router = scripted_router(done)
    w, c = make(policy=AllowReads(), timeout=30.0, display=False)
    feed(w, {"type": "rendered"})

    def person() -> None:
        feed(w, {"type": "answer", "question_id": open_question(c, "call_2"), "decision": "allow"})
        q = open_question(c, "call_3")
        feed(w, {"type": "answer", "question_id": q, "decision": "deny", "note": "keep b"})
        feed(w, {"type": "answer", "question_id": open_question(c, "call_4"), "option_id": "keep"})

    t = in_thread(person)
    result = router.run("Tidy up", interaction=w)
    t.join(10)
    assert done == ["read a.txt", "delete a.txt"]
    assert result.text == w.text == "Let me look 👀Done: a.txt deleted."
    assert (w.status, w.stop_reason) == ("done", "end_turn")
    assert w.order == ["call_1", "call_2", "call_3", "call_4"]
    cards = w.calls
    assert cards["call_1"]["question"]["answer"]["by"] == "policy"
    assert cards["call_1"]["result"] == "contents of a.txt"
    assert (cards["call_2"]["status"], cards["call_2"]["outcome"]) == ("completed", None)
    assert (cards["call_3"]["status"], cards["call_3"]["outcome"]) == ("failed", "denied")
    assert "keep b" in cards["call_3"]["error"]
    assert cards["call_4"]["status"] == "completed"
    assert cards["call_4"]["question"]["answer"]["option_id"] == "keep"
    final = c.updates()[-1]
    assert final["calls"] == cards
    assert final["text"] == result.text
    assert repr(w) == (
        "NotebookInteraction: done, 4 tool calls (3 completed, 1 denied), 33 characters of text"
    )


def test_cancelling_a_turn_interrupts_its_question(make: Any) -> None:
    done: list[str] = []
    router = scripted_router(done)
    w, c = make(timeout=30.0, display=False)
    feed(w, {"type": "rendered"})
    turn = router.start("Tidy up", interaction=w)
    open_question(c, "call_1")
    turn.cancel()
    result = turn.result(timeout=10)
    assert result.stop_reason == "interrupted"
    assert done == []
    assert (w.status, w.stop_reason) == ("interrupted", "interrupted")
    card = w.calls["call_1"]
    assert card["question"]["answer"]["decision"] == "interrupted"
    assert card["outcome"] == "interrupted"


def test_cancel_from_the_card_stops_a_running_tool(make: Any) -> None:
    started = threading.Event()

    @tool
    def slow(call: Call) -> str:
        """Wait until cancelled."""
        started.set()
        call.wait_cancelled(20)
        return "finished"

    router = Router(ScriptedModel([[ToolCall("slow", {})], ["ok"]]), [slow])
    w, _c = make(policy=AllowAll(), display=False)

    def person() -> None:
        started.wait(10)
        feed(w, {"type": "cancel", "tool_call_id": "call_1"})

    t = in_thread(person)
    result = router.run("go", interaction=w)
    t.join(10)
    assert result.calls[0].outcome == "cancelled"
    card = w.calls["call_1"]
    assert (card["status"], card["outcome"]) == ("failed", "cancelled")
    assert result.text == w.text == "ok"


def test_a_kernel_that_cannot_wait_fails_closed(make: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    w, c = make(timeout=30.0)
    w.turn_started(None, "x")
    feed(w, {"type": "rendered"})

    def unsupported(widget: Any, event: threading.Event, timeout: float | None) -> bool:
        raise _waiting.UnsupportedKernelError("this kernel cannot deliver answers")

    monkeypatch.setattr(_waiting, "wait_for", unsupported)
    assert ask(w) == Deny("rejected", "this kernel cannot deliver answers")
    answer = last_card(c, "call_1")["question"]["answer"]
    assert (answer["decision"], answer["by"]) == ("deny", "kernel")
    assert answer["note"] == "this kernel cannot deliver answers"


def test_serve_runs_until_the_turn_is_done(make: Any) -> None:
    w, _c = make()
    checks: list[int] = []

    def done() -> bool:
        checks.append(1)
        return len(checks) >= 3

    asyncio.run(asyncio.wait_for(w.serve(None, done), timeout=10))
    assert len(checks) == 3


def test_a_card_shows_its_result_as_soon_as_the_call_completes(make: Any) -> None:
    @tool
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    @tool
    def fail() -> str:
        """Fail."""
        raise ValueError("no way")

    router = Router(
        ScriptedModel([[ToolCall("shout", {"text": "hi"}), ToolCall("fail", {})], ["ok"]]),
        [shout, fail],
    )
    w, c = make(policy=AllowAll(), display=False)
    router.run("go", interaction=w)
    live = [m["card"] for m in c.custom("call")]
    completed = [card for card in live if card["status"] == "completed"]
    failed = [card for card in live if card["status"] == "failed"]
    assert completed[0]["result"] == "HI"
    assert failed[0]["error"] == "fail failed: ValueError: no way"


def test_settled_questions_are_not_kept_without_bound(make: Any) -> None:
    from mead_notebook.notebook.questions import KEEP_SETTLED

    w, _c = make(policy=AllowAll(), display=False)
    w.turn_started(None, "many")
    for i in range(KEEP_SETTLED + 200):
        assert w.request_permission(None, request(f"call_{i}")) == Allow()
    assert len(w._questions._all) == KEEP_SETTLED
    w.turn_started(None, "next")
    assert len(w._questions._all) == 0
