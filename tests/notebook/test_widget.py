"""NotebookInteraction driven the way a frontend drives it: through its comm, no kernel."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import anywidget
import pytest
from widget_helpers import (
    ask,
    feed,
    final,
    in_thread,
    last_card,
    open_question,
    request,
    update,
)

from mead_notebook.calls import Call
from mead_notebook.interaction import Allow, Deny, PlanAndThoughts, PlanEntry, Unanswered
from mead_notebook.model import ScriptedModel, ToolCall
from mead_notebook.notebook import waiting as _waiting
from mead_notebook.notebook.protocol import PROTOCOL_VERSION
from mead_notebook.notebook.widget import NotebookInteraction
from mead_notebook.policies import AllowAll, AllowReads
from mead_notebook.router import Router
from mead_notebook.tools import tool
from mead_notebook.turn import TurnResult

pytestmark = pytest.mark.timeout(60)


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
        "thoughts",
        "plan",
        "protocol_version",
        "calls",
        "order",
        "agent",
        "history",
        "history_hidden",
        "keyboard",
        "_frontend",
        "_widget_id",
    }
    opened = [d for t, d in c.sent if t == "comm_open"]
    assert opened[0]["state"]["status"] == "idle"
    assert opened[0]["state"]["calls"] == {}
    assert opened[0]["state"]["_widget_id"] == w.model_id


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"polcy": AllowAll()}, "'polcy' (did you mean 'policy'?)"),
        ({"timout": 5}, "'timout' (did you mean 'timeout'?)"),
        ({"colour": "red"}, "'colour'; it takes"),
    ],
)
def test_an_unknown_keyword_is_a_type_error_naming_the_ones_it_takes(
    given: dict[str, Any], said: str
) -> None:
    with pytest.raises(TypeError) as raised:
        NotebookInteraction(**given)
    message = str(raised.value)
    assert f"NotebookInteraction() got an unexpected keyword argument {said}" in message
    assert message.endswith("it takes timeout, grace, fallback, policy, display, keyboard, audit")


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


# -- plan and thoughts -------------------------------------------------------------------


def test_the_widget_hears_plans_and_thoughts(make: Any) -> None:
    w, _c = make()
    assert isinstance(w, PlanAndThoughts)


def test_thoughts_stream_apart_from_the_text_and_never_enter_it(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "think")
    for part in ("Let me ", "think 🙂", "."):
        w.thought_delta(None, part)
    w.text_delta(None, "The answer.")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (not c.custom("thought") or not c.custom("text")):
        time.sleep(0.01)
    thoughts = c.custom("thought")
    assert thoughts[0]["start"] == 0
    assert "".join(m["delta"] for m in thoughts) == "Let me think 🙂."
    assert "".join(m["delta"] for m in c.custom("text")) == "The answer."
    # Thoughts and text leave together at most once per interval, from one thread.
    assert len(thoughts) <= 2
    w.turn_ended(None, TurnResult(text="The answer."), None)
    assert w.text == "The answer."
    assert w.thoughts == "Let me think 🙂."


def test_the_plan_is_synced_state_sent_whole_on_each_change(make: Any) -> None:
    w, c = make()
    w.turn_started(None, "plan")
    plan: list[PlanEntry] = [
        {"content": "Read", "status": "completed"},
        {"content": "Fix", "status": "in_progress", "priority": "high"},
    ]
    w.plan_updated(None, plan)
    w.plan_updated(None, plan)  # the same plan again sends nothing
    w.plan_updated(None, [*plan, {"content": "Bad", "status": "someday"}])  # type: ignore[list-item]
    assert c.custom("plan") == [{"type": "plan", "entries": plan}]
    assert w.plan == plan
    w.turn_ended(None, TurnResult(), None)
    assert c.updates()[-1]["plan"] == plan
    w.turn_started(None, "again")
    assert w.plan == []
    assert w.thoughts == ""


def test_the_state_says_its_protocol_version(make: Any) -> None:
    w, _c = make()
    assert w.protocol_version == PROTOCOL_VERSION
