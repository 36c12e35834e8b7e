"""The adapter base on its own: a small framework of plain asyncio code mapped onto a AgentTurn."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from typing import Any

import pytest

from mead_notebook import Allow, Answered, Picked, ask_user
from mead_notebook.adapters.base import (
    NO_ANSWER,
    AgentResult,
    AgentTurn,
    CallCancelled,
    active_turn,
    declared_kind,
    question_from,
)
from mead_notebook.interaction import DiffBlock, Location, PlanEntry
from mead_notebook.policies import AllowAll
from mead_notebook.tools.preview import Preview

from .helpers import Person, Waiting, finals, recorded, running, steps, texts

DIFF = DiffBlock(type="diff", path="notes.txt", old_text="hello\n", new_text="hello, world\n")
WHERE = Location(path="notes.txt", line=1)


class Narrated(Person):
    """A person who also reads the agent's plan and thoughts."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.narration: list[tuple[str, Any]] = []

    def plan_updated(self, context: Any, entries: list[PlanEntry]) -> None:
        self.narration.append(("plan", [e["status"] for e in entries]))

    def thought_delta(self, context: Any, text: str) -> None:
        self.narration.append(("thought", text))


def test_a_call_the_agent_ran_on_its_own_says_so_and_keeps_what_it_will_do() -> None:
    rec, _ = recorded(Person())
    session = AgentTurn(rec)
    ran: list[str] = []

    async def edit() -> str:
        ran.append("edit")
        return "edited"

    async def main() -> None:
        record = await session.call(
            session.begin,
            "e1",
            "edit_file",
            "agent",
            None,
            {"path": "notes.txt"},
            kind="edit",
            title="Edit notes.txt",
            content=[DIFF],
            locations=[WHERE],
        )
        value = await session.execute(record, edit, decided_by="agent")
        await session.call(session.driver.complete, record, value)

    result = session.turn("go", main).result(timeout=10)

    assert ran == ["edit"]
    assert steps(rec) == {"e1": ["pending", "register", "in_progress", "completed"]}
    pending = next(e.args[0] for e in rec.events if e.name == "tool_updated")
    assert (pending["kind"], pending["class"], pending["title"]) == (
        "edit",
        "effect",
        "Edit notes.txt",
    )
    assert (pending["content"], pending["locations"]) == ([DIFF], [WHERE])
    assert running(rec)["e1"]["decided_by"] == "agent"
    [record] = result.calls
    assert (record.decided_by, record.status, record.result) == ("agent", "completed", "edited")
    assert isinstance(result, AgentResult)


def test_what_a_call_will_do_reaches_the_permission_request() -> None:
    rec, _ = recorded(Person(deny={"edit_file": "not now"}))
    session = AgentTurn(rec)

    async def main() -> None:
        _, allowed = await session.call(
            session.admit,
            "e1",
            "edit_file",
            "agent",
            None,
            {"path": "notes.txt"},
            None,
            kind="edit",
            title="Edit notes.txt",
            content=[DIFF],
            locations=[WHERE],
        )
        assert not allowed

    result = session.turn("go", main).result(timeout=10)
    [request] = [e.args[0] for e in rec.events if e.name == "request_permission"]
    assert (request["kind"], request["title"]) == ("edit", "Edit notes.txt")
    assert (request["content"], request["locations"]) == ([DIFF], [WHERE])
    assert (result.calls[0].outcome, finals(rec)["e1"]["outcome"]) == ("denied", "denied")


def test_an_admitted_calls_preview_reaches_the_request_and_shows_an_edit_once_allowed() -> None:
    edited = {"path": "todo.txt"}

    class Editor(AllowAll):
        def request_permission(self, context: Any, request: Any) -> Allow:
            assert request["preview"](edited).content == [DIFF]
            return Allow(arguments=edited)

    session = AgentTurn(Editor())

    def preview(arguments: dict[str, Any]) -> Preview:
        return Preview([DIFF] if arguments == edited else [], [WHERE])

    async def main() -> None:
        _, allowed = await session.call(
            session.admit, "e1", "edit_file", "agent", None, {"path": "notes.txt"}, None,
            kind="edit", preview=preview,
        )  # fmt: skip
        assert allowed

    result = session.turn("go", main).result(timeout=10)
    record = result.calls[0]
    assert record.approved_arguments == edited
    assert (record.content, record.locations) == ([DIFF], [WHERE])


def test_text_thoughts_and_plan_reach_the_interaction_in_order_and_apart() -> None:
    person = Narrated()
    rec, _ = recorded(person)
    session = AgentTurn(person)

    async def main() -> None:
        session.plan([PlanEntry(content="read", status="in_progress")])
        session.thought("Let me ")
        session.thought("think.")
        session.text("The answer.")
        session.plan([PlanEntry(content="read", status="completed")])

    result = session.turn("go", main).result(timeout=10)
    assert person.narration == [
        ("plan", ["in_progress"]),
        ("thought", "Let me "),
        ("thought", "think."),
        ("plan", ["completed"]),
    ]
    assert (result.text, result.thoughts) == ("The answer.", "Let me think.")
    assert [e["status"] for e in result.plan] == ["completed"]
    assert texts(rec) == []


def test_execute_fails_a_raising_call_lets_the_frameworks_signals_through_and_cancels() -> None:
    rec, _ = recorded(Person())
    session = AgentTurn(rec)
    seen: list[str] = []

    class Signal(Exception):
        pass

    async def boom() -> None:
        raise OSError("disk on fire")

    async def signal() -> None:
        raise Signal

    async def forever() -> None:
        await asyncio.sleep(60)

    async def main() -> None:
        for tool_call_id, work, passthrough in (
            ("b1", boom, ()),
            ("s1", signal, (Signal,)),
        ):
            record, _ = await session.call(session.admit, tool_call_id, "t", "x", None, {})
            with pytest.raises((OSError, Signal)):
                await session.execute(record, work, passthrough=passthrough)
            seen.append(f"{tool_call_id} {record.status}")
        record, _ = await session.call(session.admit, "c1", "slow", "x", None, {})
        handle_ready = asyncio.get_running_loop().call_later(0.2, _cancel_card, rec, "c1")
        try:
            await session.execute(record, forever)
        except CallCancelled as cancelled:
            seen.append(cancelled.message)
        finally:
            handle_ready.cancel()

    result = session.turn("go", main).result(timeout=10)
    assert seen == ["b1 failed", "s1 in_progress", "The call to slow was cancelled."]
    outcomes = {c.tool_call_id: (c.outcome, c.error) for c in result.calls}
    assert outcomes["b1"] == ("error", "t failed: OSError: disk on fire")
    assert outcomes["s1"] == ("interrupted", "the turn was interrupted")
    assert outcomes["c1"] == ("cancelled", "The call to slow was cancelled.")


def _cancel_card(rec: Any, tool_call_id: str) -> None:
    """What the card's Cancel does: cancel the registered ``Call``."""
    call = next(
        e.args[1] for e in rec.events if e.name == "register_call" and e.args[0] == tool_call_id
    )
    call.cancel()


def test_a_cancelled_turn_ends_interrupted_whatever_the_framework_raised() -> None:
    person = Person()
    session = AgentTurn(person)
    waiting = threading.Event()

    async def main() -> None:
        assert active_turn.get() is session
        waiting.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            raise RuntimeError("the framework's own error on cancel") from None

    turn = session.turn("go", main)
    assert waiting.wait(10)
    turn.cancel()
    result = turn.result(timeout=10)
    assert result.stop_reason == "interrupted"
    assert ("turn_ended", ("interrupted", None)) in person.hooks


def test_a_frameworks_question_is_answered_in_its_own_form() -> None:
    offered = question_from(
        "i1",
        {
            "question": "Sizes?",
            "options": ["S", {"id": "m", "label": "M", "value": 2}],
            "multiple": True,
        },
    )
    assert offered is not None
    assert offered.choice["multiple"] is True
    assert [o["id"] for o in offered.choice["options"]] == ["S", "m"]
    several = ask_user.Settled("{}", True, option_ids=("S", "m"))
    assert offered.value(several) == ["S", 2]
    assert offered.value(ask_user.Settled("{}", True, own_words="XL")) == "XL"
    assert offered.value(ask_user.Settled("no", False)) is NO_ANSWER
    single = question_from("i2", {"prompt": "Size?", "options": ["S", "M"]})
    assert single is not None
    assert "multiple" not in single.choice
    assert single.value(ask_user.Settled("{}", True, option_ids=("M",))) == "M"
    assert question_from("i3", {"prompt": "Size?"}) is None


@pytest.mark.parametrize(
    ("answer", "settled"),
    [
        (Picked("m"), ask_user.Settled('{"option_id": "m", "label": "M"}', True, ("m",))),
        (Answered("XL"), ask_user.Settled('{"answer": "XL"}', True, own_words="XL")),
        (Picked("s", also=("m",)), ask_user.Settled("The user gave no answer (no_answer).", False)),
    ],
)
def test_session_ask_settles_as_ask_user_does(answer: Any, settled: ask_user.Settled) -> None:
    rec, _ = recorded(Person(pick={"Size?": answer}))
    session = AgentTurn(rec)
    got: list[ask_user.Settled] = []

    async def main() -> None:
        offered = question_from(
            "q1",
            {"prompt": "Size?", "options": [{"id": "s", "label": "S"}, {"id": "m", "label": "M"}]},
        )
        assert offered is not None
        got.append(await session.call(session.ask, offered.choice, "size", "x", {}))

    result = session.turn("go", main).result(timeout=10)
    assert got == [settled]
    assert steps(rec)["q1"] == ["pending", "choice", "completed" if settled.answered else "failed"]
    assert result.calls[0].kind == "read"


def test_a_tools_kind_comes_from_its_metadata() -> None:
    assert declared_kind({"kind": "delete"}) == "delete"
    assert declared_kind({"read_only": True}) == "read"
    assert declared_kind({"kind": "explode"}) == "other"
    assert declared_kind(None) == "other"


def test_every_entry_point_needs_an_interaction() -> None:
    """run, arun, start, a session, a middleware and a capability: none has a default."""
    from mead_notebook.adapters import acp, claude_agent, langchain, openai_agents, pydantic_ai

    entries = [
        *(m.run for m in (acp, claude_agent, langchain, openai_agents, pydantic_ai)),
        *(m.arun for m in (acp, claude_agent, langchain, openai_agents, pydantic_ai)),
        *(m.start for m in (acp, claude_agent, langchain, openai_agents, pydantic_ai)),
        acp.Conversation.run,
        acp.Conversation.arun,
        acp.Conversation.start,
    ]
    for entry in entries:
        parameter = inspect.signature(entry).parameters["interaction"]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, entry
        assert parameter.default is inspect.Parameter.empty, entry
    for make in (langchain.middleware, pydantic_ai.capability):
        with pytest.raises(TypeError, match="needs an interaction"):
            make(None)
        with pytest.raises(TypeError, match="lacks"):
            make(object())


def test_a_session_refuses_no_interaction_and_names_the_policy_that_allows_all() -> None:
    with pytest.raises(TypeError, match=r"policies\.AllowAll\(\)"):
        AgentTurn(None)
    AgentTurn(AllowAll()).close()


# -- a framework's timeout around one call ------------------------------------------------------


def test_a_frameworks_timeout_around_one_question_closes_that_question_alone(make: Any) -> None:
    """A tool's own timeout gave up on one question: the turn's later questions still wait."""
    w, _ = make(timeout=30.0)
    session = AgentTurn(w)
    ran: list[str] = []

    async def ask(tool_call_id: str) -> bool:
        _, allowed = await session.call(
            session.admit, tool_call_id, "delete_file", "files", None, {"path": tool_call_id}
        )
        if allowed:
            ran.append(tool_call_id)
        return allowed

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(ask("c1"), 0.3)
        assert not await ask("c2")

    w.deliver({"type": "rendered"})
    turn = session.turn("go", main)
    deadline = time.monotonic() + 10
    while not (w.calls.get("c2") or {}).get("question") and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)
    second = w.calls["c2"]["question"]
    assert second["answer"] is None, "the second question waits for the person"
    w.deliver({"type": "answer", "question_id": second["id"], "decision": "deny"})
    result = turn.result(timeout=10)

    assert ran == []
    first = w.calls["c1"]["question"]["answer"]
    assert (first["decision"], first["by"]) == ("interrupted", "kernel")
    assert w.calls["c2"]["question"]["answer"]["by"] == "person"
    assert [(c.tool_call_id, c.outcome) for c in result.calls] == [
        ("c1", "interrupted"),
        ("c2", "denied"),
    ]


def test_without_withdraw_a_timeout_closes_every_question_as_before() -> None:
    """An interaction that cannot close one question gets ``interrupt``: nothing waits forever."""
    waiting = Waiting()
    session = AgentTurn(waiting)

    async def main() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(
                session.call(session.admit, "c1", "delete_file", "files", None, {}), 0.3
            )

    session.turn("go", main).result(timeout=10)
    assert ("interrupt", None) in waiting.hooks
