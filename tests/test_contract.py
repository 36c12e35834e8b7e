"""The public contract alone is enough to drive a NotebookInteraction through a turn.

What an adapter for another agent framework does: no Router, only the callbacks of
``Interaction`` and the hooks of ``TurnHooks`` (directly, or through ``TurnDriver``).
"""

from __future__ import annotations

from typing import Any

import pytest
from fakes import answer_when_asked

from mead_notebook import (
    Allow,
    Call,
    CallRecord,
    Choice,
    Deny,
    Interaction,
    Picked,
    TurnDriver,
    TurnHooks,
    TurnResult,
    Update,
)
from mead_notebook.policies import AllowAll, AllowReads

pytestmark = pytest.mark.timeout(60)


def test_the_widget_implements_both_protocols(make: Any) -> None:
    w, _c = make()
    assert isinstance(w, Interaction)
    assert isinstance(w, TurnHooks)


def test_a_whole_turn_through_the_two_protocols_only(make: Any) -> None:
    w, c = make(policy=AllowReads(), display=False)
    w.deliver({"type": "rendered"})
    hooks: TurnHooks = w
    interaction: Interaction = w
    hooks.turn_started(None, "tidy up")
    interaction.text_delta(None, "Reading first. ")

    def pending(tool_call_id: str, tool: str, cls: str, arguments: dict[str, Any]) -> Update:
        return {  # type: ignore[typeddict-item]
            "tool_call_id": tool_call_id,
            "title": tool,
            "status": "pending",
            "current_step": None,
            "progress": None,
            "cancellable": False,
            "tool": tool,
            "server": "files",
            "class": cls,
            "arguments": arguments,
        }

    def final(tool_call_id: str, tool: str, outcome: Any, result: Any, error: Any) -> Update:
        return {
            "tool_call_id": tool_call_id,
            "title": tool,
            "status": "failed" if outcome else "completed",
            "current_step": None,
            "progress": None,
            "cancellable": False,
            "outcome": outcome,
            "result": result,
            "error": error,
        }

    # a read, allowed by the policy
    interaction.tool_updated(None, pending("t1", "list", "read", {"dir": "data"}))
    decision = interaction.request_permission(
        None,
        {
            "tool_call_id": "t1",
            "tool": "list",
            "server": "files",
            "class": "read",
            "arguments": {"dir": "data"},
        },
    )
    assert decision == Allow()
    interaction.register_call(None, "t1", Call("t1", "list"))
    interaction.tool_updated(
        None,
        {**final("t1", "list", None, None, None), "status": "in_progress", "cancellable": True},
    )
    assert w.calls["t1"]["cancellable"] is True
    interaction.tool_updated(None, final("t1", "list", None, "a.csv b.csv", None))

    # an effect the person denies with a reason
    interaction.tool_updated(None, pending("t2", "delete", "effect", {"path": "data/a.csv"}))
    person = answer_when_asked(w, c, "t2", decision="deny", note="keep it")
    decision = interaction.request_permission(
        None,
        {
            "tool_call_id": "t2",
            "tool": "delete",
            "server": "files",
            "class": "effect",
            "arguments": {"path": "data/a.csv"},
        },
    )
    person.join(10)
    assert decision == Deny("rejected", "keep it")
    interaction.tool_updated(None, final("t2", "delete", "denied", None, "denied: keep it"))

    # a question
    interaction.tool_updated(None, pending("t3", "ask_user", "read", {}))
    person = answer_when_asked(w, c, "t3", option_id="b")
    choice: Choice = {
        "tool_call_id": "t3",
        "prompt": "Archive?",
        "options": [{"id": "a", "label": "Keep"}, {"id": "b", "label": "Archive"}],
    }
    assert interaction.ask_choice(None, choice) == Picked("b")
    person.join(10)
    interaction.tool_updated(None, final("t3", "ask_user", None, "Archive", None))
    interaction.text_delta(None, "Done.")

    result = TurnResult(text="Reading first. Done.", stop_reason="end_turn")
    hooks.turn_ended(None, result, None)

    assert (w.status, w.stop_reason, w.text) == ("done", "end_turn", "Reading first. Done.")
    assert w.order == ["t1", "t2", "t3"]
    t1, t2, t3 = (w.calls[i] for i in w.order)
    assert (t1["tool"], t1["server"], t1["class"], t1["arguments"]) == (
        "list",
        "files",
        "read",
        {"dir": "data"},
    )
    assert (t1["status"], t1["result"], t1["question"]["answer"]["by"]) == (
        "completed",
        "a.csv b.csv",
        "policy",
    )
    assert (t2["status"], t2["outcome"], t2["error"]) == ("failed", "denied", "denied: keep it")
    assert t2["question"]["answer"]["note"] == "keep it"
    assert (t3["status"], t3["result"], t3["question"]["answer"]["decision"]) == (
        "completed",
        "Archive",
        "picked",
    )
    # what the frontend saw at the end is the same state
    assert c.updates()[-1]["calls"] == w.calls


def test_turn_driver_drives_the_widget_and_keeps_records_and_cards_in_agreement(
    make: Any,
) -> None:
    w, c = make(display=False)
    w.deliver({"type": "rendered"})
    driver = TurnDriver(w)
    driver.start("go")
    driver.text("Working. ")
    ok = driver.begin("c1", "train", "local", "effect", {"epochs": 2})
    person = answer_when_asked(w, c, "c1", decision="allow")
    assert driver.permission(ok) == Allow()
    person.join(10)
    call = Call("c1", "train")
    driver.running(ok, call)
    driver.progress(ok, 0.5, "epoch 1")
    assert (w.calls["c1"]["progress"], w.calls["c1"]["current_step"]) == (0.5, "epoch 1")
    driver.complete(ok, "loss 0.1")
    bad = driver.begin("c2", "nope", "", "effect", {})
    driver.fail(bad, "unknown", "There is no tool named 'nope'.")
    open_call = driver.begin("c3", "train", "local", "effect", {})
    result = driver.end(KeyboardInterrupt())

    assert [(r.status, r.outcome) for r in result.calls] == [
        ("completed", None),
        ("failed", "unknown"),
        ("failed", "interrupted"),
    ]
    assert open_call.outcome == "interrupted"
    for record in result.calls:
        card = w.calls[record.tool_call_id]
        assert (card["status"], card["outcome"], card["result"], card["error"]) == (
            record.status,
            record.outcome,
            record.result,
            record.error,
        )
    assert (w.status, result.stop_reason, w.text) == ("interrupted", "interrupted", "Working. ")
    assert isinstance(result.calls[0], CallRecord)


def test_a_turn_started_hook_that_raises_refuses_the_turn() -> None:
    class Refuses:
        def __init__(self) -> None:
            self.called: list[str] = []

        def __getattr__(self, name: str) -> Any:
            def callback(*args: Any) -> None:
                self.called.append(name)
                if name == "turn_started":
                    raise RuntimeError("not here")

            return callback

    refuses = Refuses()
    driver = TurnDriver(refuses)
    assert driver.hooks is refuses
    with pytest.raises(RuntimeError, match="not here"):
        driver.start("go")
    driver.end(None)
    assert refuses.called == ["turn_started"]


def test_valid_says_whether_a_value_is_an_interaction_and_its_context() -> None:
    from mead_notebook import valid
    from mead_notebook.testing import Recording

    rec = Recording(AllowAll())
    assert valid((rec, {"user": "ada"}))
    assert valid((rec, None))
    assert not valid(rec)  # a bare interaction is not a pair
    assert not valid((object(), None))
    assert not valid((rec, None, None))
    assert not valid(None)
