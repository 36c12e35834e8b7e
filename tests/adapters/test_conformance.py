"""The conformance suite: what every adapter does, run once per harness (``conformance.py``)."""

from __future__ import annotations

import _thread
import importlib
import json
import threading
import time
from typing import Any

import pytest

from mead_notebook import Answered, Picked, ToolCall, TurnError
from mead_notebook.adapters.base import AgentResult
from mead_notebook.testing import Recording

from .conformance import Harness, Replies, Told
from .helpers import (
    ALLOWED,
    DENIED,
    REFUSED,
    Person,
    Waiting,
    asked,
    finals,
    one_at_a_time,
    recorded,
    running,
    steps,
    texts,
)

HARNESSES = [
    "harness_langchain",
    "harness_pydantic_ai",
    "harness_acp",
    "harness_openai_agents",
    "harness_claude_agent",
]
"""The harness modules of this folder, one per adapter."""

DRINKS = [{"id": "tea", "label": "Green tea"}, {"id": "coffee", "label": "Coffee"}]


def _load(name: str) -> Harness:
    harness: Harness = importlib.import_module(f".{name}", __package__).Harness()
    return harness


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "asking" in metafunc.fixturenames:
        pairs = [(h, q) for h in HARNESSES for q in ("ask_user", *_load(h).questions)]
        ids = [f"{h.removeprefix('harness_')}-{q}" for h, q in pairs]
        metafunc.parametrize(("harness_name", "asking"), pairs, ids=ids)
    elif "harness_name" in metafunc.fixturenames:
        ids = [h.removeprefix("harness_") for h in HARNESSES]
        metafunc.parametrize("harness_name", HARNESSES, ids=ids)


@pytest.fixture
def harness(harness_name: str) -> Harness:
    return _load(harness_name)


def run(harness: Harness, replies: Replies, interaction: Any) -> AgentResult:
    return harness.start(replies, interaction).result(timeout=60)


def assert_told_error(harness: Harness, told: Told) -> None:
    """The model was told the call failed: flagged as an error where the framework can flag it."""
    if harness.capabilities.error_flag:
        assert told.error
    else:
        assert not told.error, "a framework without the flag cannot have set it"


# -- the order of the callbacks --------------------------------------------------------------


def test_callbacks_come_in_the_contracts_order_one_at_a_time(harness: Harness) -> None:
    rec, person = recorded(Person(deny={"write_file": "not today"}))
    replies: Replies = [
        [
            "Reading ",
            "first. ",
            ToolCall("read_file", {"path": "a.txt"}, "r1"),
            ToolCall("write_file", {"path": "b.txt", "text": "hi"}, "w1"),
            ToolCall("delete_file", {"path": "c.txt"}, "d1"),
        ],
        ["All ", "done."],
    ]
    result = run(harness, replies, rec)

    assert steps(rec) == {"r1": ALLOWED, "w1": DENIED, "d1": ALLOWED}
    one_at_a_time(rec)
    assert sorted(harness.ran) == ["delete c.txt", "read a.txt"]
    requests = {r["tool_call_id"]: r for r in asked(rec)}
    described = {
        i: (r["tool"], r["server"], r["arguments"], r["kind"], r["class"])
        for i, r in requests.items()
    }
    assert described == {
        "r1": ("read_file", harness.server, {"path": "a.txt"}, "read", "read"),
        "w1": ("write_file", harness.server, {"path": "b.txt", "text": "hi"}, "other", "effect"),
        "d1": ("delete_file", harness.server, {"path": "c.txt"}, "delete", "effect"),
    }
    first: dict[str, Any] = {}
    for e in rec.events:
        if e.name == "tool_updated":
            first.setdefault(e.args[0]["tool_call_id"], e.args[0])
    assert {i: (u["status"], u["tool"], u["kind"]) for i, u in first.items()} == {
        "r1": ("pending", "read_file", "read"),
        "w1": ("pending", "write_file", "other"),
        "d1": ("pending", "delete_file", "delete"),
    }
    by_id = {c.tool_call_id: (c.status, c.outcome) for c in result.calls}
    assert by_id == {
        "r1": ("completed", None),
        "w1": ("failed", "denied"),
        "d1": ("completed", None),
    }
    assert {c.tool_call_id: c.result for c in result.calls if c.status == "completed"} == {
        "r1": "contents of a.txt",
        "d1": "deleted c.txt",
    }
    assert result.text == "Reading first. All done."
    rounds = 2 if harness.capabilities.counts_rounds else 0
    assert (result.stop_reason, result.rounds) == ("end_turn", rounds)
    assert person.hooks == [
        ("turn_started", "go"),
        ("turn_ended", ("end_turn", None)),
    ]


# -- permission -------------------------------------------------------------------------------


def test_a_denied_call_never_runs_and_the_model_gets_the_message(harness: Harness) -> None:
    rec, _ = recorded(Person(deny={"write_file": "keep b.txt as it is"}))
    replies: Replies = [[ToolCall("write_file", {"path": "b.txt", "text": "hi"}, "w1")], ["ok"]]
    result = run(harness, replies, rec)

    assert harness.ran == []
    told = harness.told()["w1"]
    assert_told_error(harness, told)
    [record] = result.calls
    assert finals(rec)["w1"]["outcome"] == "denied"
    if not harness.capabilities.denial_message:
        # The source carries no message: the request said so, and the model learns
        # only that the call was rejected.
        assert asked(rec)[0]["editable"] is False
        assert "keep b.txt as it is" not in told.text
        assert "rejected" in told.text
        assert result.stop_reason == "end_turn"
        return
    assert "keep b.txt as it is" in told.text
    assert "keep b.txt as it is" in str(record.error)
    assert str(record.error) in told.text, "the card says what the model was told"
    assert result.stop_reason == "end_turn"


def test_edited_arguments_run_exactly_and_the_record_keeps_both(harness: Harness) -> None:
    asked_with = {"path": "b.txt", "text": "hi"}
    edited = {"path": "c.txt", "text": "edited"}
    rec, _ = recorded(Person(edit={"write_file": edited}))
    result = run(harness, [[ToolCall("write_file", asked_with, "w1")], ["ok"]], rec)

    if not harness.capabilities.edited_arguments:
        # The source cannot take them: the request said so and the edited Allow is refused.
        assert harness.ran == []
        [request] = asked(rec)
        assert request["editable"] is False
        [record] = result.calls
        assert (record.status, record.outcome) == ("failed", "invalid_arguments")
        assert "edited arguments" in str(record.error)
        assert_told_error(harness, harness.told()["w1"])
        return
    assert harness.ran == ["write c.txt"]
    [request] = asked(rec)
    assert request["arguments"] == asked_with
    assert {"path", "text"} <= set(request["parameters"]["properties"])
    [record] = result.calls
    assert (record.arguments, record.approved_arguments) == (asked_with, edited)
    assert (record.status, record.outcome) == ("completed", None)
    assert running(rec)["w1"]["approved_arguments"] == edited
    told = harness.told()["w1"]
    assert not told.error
    assert "wrote 6 characters" in told.text


def test_edited_arguments_that_break_the_schema_never_run_the_tool(harness: Harness) -> None:
    rec, _ = recorded(Person(edit={"write_file": {"path": "c.txt"}}))
    replies: Replies = [[ToolCall("write_file", {"path": "b.txt", "text": "hi"}, "w1")], ["ok"]]
    result = run(harness, replies, rec)

    assert harness.ran == []
    [record] = result.calls
    assert (record.status, record.outcome) == ("failed", "invalid_arguments")
    assert steps(rec)["w1"] == ["pending", "ask", "failed"]
    if not harness.capabilities.edited_arguments:
        assert "edited arguments" in str(record.error)
        assert_told_error(harness, harness.told()["w1"])
        return
    told = harness.told()["w1"]
    assert_told_error(harness, told)
    assert "text" in told.text
    assert str(record.error) in told.text


@pytest.mark.parametrize(
    ("call", "outcome", "named"),
    [
        (ToolCall("read_file", {"file": 3}, "x1"), "invalid_arguments", "path"),
        (ToolCall("delete_all", {}, "x1"), "unknown", "delete_all"),
    ],
    ids=["invalid-arguments", "unknown-tool"],
)
def test_a_call_the_framework_refuses_fails_without_asking(
    harness: Harness, call: ToolCall, outcome: str, named: str
) -> None:
    rec, _ = recorded()
    result = run(harness, [[call], ["ok"]], rec)

    assert harness.ran == []
    [record] = result.calls
    if harness.capabilities.refuses_calls:
        assert steps(rec) == {"x1": REFUSED}
        assert (record.tool, record.outcome) == (call.name, outcome)
    else:
        # The agent refuses it itself: nobody here is asked, the call ends in its error.
        assert asked(rec) == []
        assert (record.tool, record.status, record.outcome) == (call.name, "failed", "error")
        assert record.decided_by == "agent"
    told = harness.told()["x1"]
    assert_told_error(harness, told)
    assert named in told.text
    assert str(record.error) in told.text, "the card says what the model was told"
    assert result.stop_reason == "end_turn"


# -- text ---------------------------------------------------------------------------------------


def test_text_reaches_text_delta_as_it_streams(harness: Harness) -> None:
    rec, _ = recorded()
    result = run(harness, [["One, ", "two, ", "three."]], rec)
    assert texts(rec) == ["One, ", "two, ", "three."]
    assert result.text == "One, two, three."
    assert result.calls == []


# -- stopping -----------------------------------------------------------------------------------


def test_a_cards_cancel_cancels_the_running_call_and_the_run_goes_on(harness: Harness) -> None:
    rec, _ = recorded(Person(cancel_after=0.2))
    started = time.monotonic()
    result = run(harness, [[ToolCall("slow", {}, "s1")], ["stopped"]], rec)

    assert time.monotonic() - started < 10
    assert harness.ran == []
    [record] = result.calls
    assert (record.status, record.outcome) == ("failed", "cancelled")
    assert steps(rec)["s1"] == ["pending", "ask", "register", "in_progress", "failed"]
    assert running(rec)["s1"]["cancellable"] is True
    told = harness.told()["s1"]
    assert_told_error(harness, told)
    if harness.capabilities.cancel_stops_turn:
        # No per-call cancel: the whole turn stops, and nothing after the call happens;
        # the agent tells its model in its own words.
        assert "turn" in str(record.error)
        assert (result.stop_reason, result.text) == ("interrupted", "")
        return
    assert "cancelled" in told.text
    assert str(record.error) in told.text
    assert (result.stop_reason, result.text) == ("end_turn", "stopped")


def test_cancelling_the_turn_closes_the_open_question_and_ends_the_run(harness: Harness) -> None:
    person = Waiting()
    turn = harness.start([[ToolCall("write_file", {"path": "b", "text": "x"}, "w1")]], person)
    assert person.asked.wait(10)
    turn.cancel()
    result = turn.result(timeout=10)

    assert result.stop_reason == "interrupted"
    [record] = result.calls
    assert (record.status, record.outcome) == ("failed", "interrupted")
    assert harness.ran == []
    assert [name for name, _ in person.hooks] == ["turn_started", "interrupt", "turn_ended"]


def test_a_keyboard_interrupt_ends_the_run_and_propagates(harness: Harness) -> None:
    person = Waiting()

    def interrupt_once_asked() -> None:
        if person.asked.wait(30):
            _thread.interrupt_main()

    threading.Thread(target=interrupt_once_asked, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        run(harness, [[ToolCall("write_file", {"path": "b", "text": "x"}, "w1")]], person)
    deadline = time.monotonic() + 10
    while not any(name == "turn_ended" for name, _ in person.hooks):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert ("turn_ended", ("interrupted", None)) in person.hooks
    assert harness.ran == []


def test_an_interrupt_that_lands_as_the_run_starts_ends_it(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Thread.start`` waits for the turn's thread: an interrupt meant for the cell about to
    wait for the turn can land there. The turn does not run on with nobody waiting for it."""
    person = Waiting()

    class Late(threading.Thread):
        def start(self) -> None:
            super().start()
            if self.name == "mead-turn" and person.asked.wait(30):
                _thread.interrupt_main()  # raised at the next instruction, inside start()

    monkeypatch.setattr(threading, "Thread", Late)
    with pytest.raises(KeyboardInterrupt):
        run(harness, [[ToolCall("write_file", {"path": "b", "text": "x"}, "w1")]], person)
    deadline = time.monotonic() + 10
    while not any(name == "turn_ended" for name, _ in person.hooks):
        assert time.monotonic() < deadline, person.hooks
        time.sleep(0.05)
    assert ("turn_ended", ("interrupted", None)) in person.hooks
    assert harness.ran == []


def test_the_sources_round_limit_ends_the_turn_max_rounds(harness: Harness) -> None:
    """Whatever the source calls its limit, reaching it ends the turn ``max_rounds``: no error."""
    rec, person = recorded()
    reads = [[ToolCall("read_file", {"path": f"{n}.txt"}, f"r{n}")] for n in (1, 2, 3, 4)]
    result = harness.limited([*reads, ["All done."]], rec, 2).result(timeout=60)

    assert result.stop_reason == "max_rounds"
    assert harness.ran == ["read 1.txt", "read 2.txt"]
    assert [(c.tool_call_id, c.status) for c in result.calls] == [
        ("r1", "completed"),
        ("r2", "completed"),
    ]
    assert "All done." not in result.text
    assert person.hooks == [("turn_started", "go"), ("turn_ended", ("max_rounds", None))]


# -- questions ----------------------------------------------------------------------------------


def ask(harness: Harness, asking: str, answer: Any, multiple: bool = False) -> tuple[Any, ...]:
    """One question through ``asking``, answered with ``answer`` (None: not answered).

    Returns the run's result, the choice asked, its call's record, what the model
    was told of the call (None if the run paused) and the recording.
    """
    arguments: dict[str, Any] = {"prompt": "Which drink?", "options": DRINKS}
    if multiple:
        arguments["multiple"] = True
    rec, _ = recorded(Person(pick={} if answer is None else {"Which drink?": answer}))
    result = run(harness, [[ToolCall(asking, arguments, "q1")], ["ok"]], rec)
    [choice] = [e.args[0] for e in rec.events if e.name == "ask_choice"]
    [record] = [c for c in result.calls if c.tool_call_id == choice["tool_call_id"]]
    return result, choice, record, harness.told().get("q1"), rec


def answered_cleanly(result: AgentResult, rec: Recording) -> None:
    assert result.stop_reason == "end_turn"
    assert [(c.tool, c.status) for c in result.calls if c.status != "completed"] == []
    assert all(u["status"] != "failed" for u in finals(rec).values())


def test_a_question_answered_with_one_option(harness: Harness, asking: str) -> None:
    result, choice, record, told, rec = ask(harness, asking, Picked("coffee"))

    assert [o["id"] for o in choice["options"]] == ["tea", "coffee"]
    assert json.loads(str(record.result)) == {"option_id": "coffee", "label": "Coffee"}
    assert not told.error
    assert "coffee" in told.text
    answered_cleanly(result, rec)


def test_a_question_answered_in_the_persons_own_words(harness: Harness, asking: str) -> None:
    own = harness.capabilities.own_words
    words = "Oolong, please" if own else "Green tea"
    result, _, record, told, rec = ask(harness, asking, Answered(words))

    assert json.loads(str(record.result)) == {"answer": words}
    assert not told.error
    assert (words if own else '"tea"') in told.text
    answered_cleanly(result, rec)


def test_a_question_answered_with_several_picks(harness: Harness, asking: str) -> None:
    picked = Picked("tea", also=("coffee",))
    result, choice, record, told, rec = ask(harness, asking, picked, multiple=True)

    assert choice.get("multiple") is True
    assert json.loads(str(record.result)) == {
        "option_ids": ["tea", "coffee"],
        "labels": ["Green tea", "Coffee"],
    }
    assert not told.error
    assert "tea" in told.text
    assert "coffee" in told.text
    answered_cleanly(result, rec)


def test_an_unanswered_question_never_ends_completed(harness: Harness, asking: str) -> None:
    result, _, record, told, _ = ask(harness, asking, None)
    assert (record.status, record.outcome) == ("failed", "no_answer")
    if not harness.capabilities.no_answer_text:
        # The source has no words for it: the agent is told the question was cancelled.
        assert_told_error(harness, told)
        assert "cancel" in told.text
        assert result.stop_reason == "end_turn"
    elif told is None:  # the framework waits for an answer: the run pauses on the question
        assert result.stop_reason == "paused"
    else:
        assert "The user gave no answer (no_answer)." in told.text


# -- what a call will do ------------------------------------------------------------------------


def test_what_a_call_will_do_reaches_its_card(harness: Harness) -> None:
    rec, _ = recorded()
    case = harness.content
    if case is None:
        # Nothing beyond the arguments: the request says no more than the framework does.
        run(harness, [[ToolCall("write_file", {"path": "b", "text": "x"}, "w1")], ["ok"]], rec)
        [request] = asked(rec)
        assert "content" not in request
        assert "locations" not in request
        return
    run(harness, case.replies, rec)
    [request] = [r for r in asked(rec) if r["tool_call_id"] == case.tool_call_id]
    assert request.get("content") == case.content
    assert request.get("locations", []) == case.locations


def test_a_call_the_agent_ran_without_asking_says_who_decided(harness: Harness) -> None:
    rec, _ = recorded()
    case = harness.unasked
    if case is None:
        # Every call that runs was asked here: none claims the agent decided.
        run(harness, [[ToolCall("read_file", {"path": "a"}, "r1")], ["ok"]], rec)
        assert steps(rec) == {"r1": ALLOWED}
        assert "decided_by" not in running(rec)["r1"]
        return
    result = run(harness, case.replies, rec)
    assert case.tool_call_id not in {r["tool_call_id"] for r in asked(rec)}
    assert running(rec)[case.tool_call_id]["decided_by"] == "agent"
    [record] = [c for c in result.calls if c.tool_call_id == case.tool_call_id]
    assert record.decided_by == "agent"


# -- a decision is bound to the call it was made for -----------------------------------------


def run_or_refusal(harness: Harness, replies: Replies, interaction: Any) -> AgentResult | str:
    """The turn's result, or the error of a framework that refuses such replies itself."""
    try:
        return run(harness, replies, interaction)
    except TurnError as refused:
        return str(refused)


@pytest.mark.parametrize("together", [False, True], ids=["later-round", "same-reply"])
def test_a_reused_id_is_a_new_call_asked_for_itself(harness: Harness, together: bool) -> None:
    """A model (or a proxy) that repeats a call id gets a question for each call under it."""
    rec, _ = recorded(Person(deny={"delete_file": "not that one"}))
    first = ToolCall("read_file", {"path": "a.txt"}, "same")
    second = ToolCall("delete_file", {"path": "important.db"}, "same")
    replies: Replies = [[first, second], ["ok"]] if together else [[first], [second], ["ok"]]
    result = run_or_refusal(harness, replies, rec)

    assert "delete important.db" not in harness.ran
    if isinstance(result, str):
        assert "call id" in result.lower() or "tool_call_id" in result
        return
    questions = [(r["tool"], r["arguments"]) for r in asked(rec)]
    assert ("delete_file", {"path": "important.db"}) in questions
    deleting = [c for c in result.calls if c.tool == "delete_file"]
    assert [(c.status, c.outcome) for c in deleting] == [("failed", "denied")]
    ids = [c.tool_call_id for c in result.calls]
    assert len(ids) == len(set(ids)), "each call has a card of its own"


def test_a_call_repeated_after_it_ran_is_asked_again(harness: Harness) -> None:
    """An Allow covers one run: the same call under the same id later is a new question."""
    rec, _ = recorded()
    again = ToolCall("write_file", {"path": "b.txt", "text": "hi"}, "w1")
    result = run_or_refusal(harness, [[again], [again], ["ok"]], rec)

    assert harness.ran.count("write b.txt") == len(asked(rec))
    if isinstance(result, str):
        assert "call id" in result.lower()
        assert len(asked(rec)) == 1
        return
    assert len(asked(rec)) == len([c for c in result.calls if c.tool == "write_file"])


# -- no interaction, no run ------------------------------------------------------------------


def test_a_run_without_an_interaction_is_refused_before_anything_runs(harness: Harness) -> None:
    """The gate replaces the framework's own safeguards: without an interaction nothing starts."""
    with pytest.raises(TypeError, match="needs an interaction"):
        harness.start([[ToolCall("delete_file", {"path": "c.txt"}, "d1")], ["ok"]], None)
    assert harness.ran == []


def test_one_allow_runs_one_call_even_when_the_model_repeats_it_in_one_reply(
    harness: Harness,
) -> None:
    """The same call twice under one id, run at once: each run is asked for itself."""
    rec, _ = recorded()
    call = ToolCall("delete_file", {"path": "c.txt"}, "same")
    result = run_or_refusal(harness, [[call, call], ["ok"]], rec)

    assert harness.ran.count("delete c.txt") == len(asked(rec))
    if isinstance(result, str):
        assert "tool_call_id" in result or "call id" in result.lower()
        return
    ran = [c for c in result.calls if c.tool == "delete_file" and c.status == "completed"]
    assert len(ran) == harness.ran.count("delete c.txt")
