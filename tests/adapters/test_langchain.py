"""LangChain agents and LangGraph graphs under an interaction, offline.

The model is a small ``BaseChatModel`` that streams text chunks and tool-call chunks
(``mead_langchain.scripted_model``), or ``Seen`` below when a test reads what the
model was told.
"""

from __future__ import annotations

import asyncio
import functools
import json
import operator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from mead_notebook import ModelError, ToolCall, TurnError
from mead_notebook.adapters import langchain as mead_langchain
from mead_notebook.schema import check
from mead_notebook.testing import Recording

from .harness_langchain import Seen
from .helpers import (
    ALLOWED,
    ANSWERED,
    DENIED,
    Person,
    asked,
    one_at_a_time,
    recorded,
    running,
    steps,
    texts,
)

ran: list[str] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


@tool
def read_file(path: str) -> str:
    """Read a file."""
    ran.append(f"read {path}")
    return f"contents of {path}"


@tool
def write_file(path: str, text: str) -> str:
    """Write a file."""
    ran.append(f"write {path}")
    return f"wrote {len(text)} characters"


@tool
async def slow() -> str:
    """Takes a minute."""
    await asyncio.sleep(60)
    ran.append("slow finished")
    return "finished"


@tool
def explode() -> str:
    """Always fails."""
    raise OSError("disk on fire")


@tool
def refuse() -> str:
    """Fails the way a tool reports errors to the model."""
    raise ToolException("no such file")


refuse.handle_tool_error = True


def seen(*replies: list[Any]) -> Seen:
    return Seen(replies=[list(r) for r in replies], requests=[])


def tool_messages(model: Seen) -> dict[str, ToolMessage]:
    """What ``model`` was last told of each call, by id."""
    return {m.tool_call_id: m for m in model.requests[-1] if isinstance(m, ToolMessage)}


def agent_for(model: Any, *tools: Any, **kwargs: Any) -> Any:
    return create_agent(model, tools=list(tools) or [read_file, write_file], **kwargs)


def test_tool_errors_fail_the_call() -> None:
    model = seen([ToolCall("refuse", {}, "f1")], ["ok"])
    rec, _ = recorded()
    result = mead_langchain.run(agent_for(model, refuse), "go", interaction=rec)
    assert (result.calls[0].outcome, result.calls[0].error) == ("error", "no such file")
    assert tool_messages(model)["f1"].status == "error"

    model = mead_langchain.scripted_model([[ToolCall("explode", {}, "e1")], ["never"]])
    rec, person = recorded()
    with pytest.raises(TurnError) as raised:
        mead_langchain.run(agent_for(model, explode), "go", interaction=rec)
    assert isinstance(raised.value.__cause__, OSError)
    [call] = raised.value.result.calls
    assert (call.status, call.outcome) == ("failed", "error")
    assert "OSError: disk on fire" in str(call.error)
    assert person.hooks[-1] == ("turn_ended", ("end_turn", raised.value))


@tool
def pick_color() -> str:
    """Ask the person for a color, LangGraph's way."""
    color = interrupt({"question": "Which color?", "options": ["red", "blue"]})
    ran.append(f"picked {color}")
    return f"painting it {color}"


def test_an_interrupt_offering_options_goes_to_ask_choice_and_the_run_resumes() -> None:
    model = seen([ToolCall("pick_color", {}, "c1")], ["done"])
    rec, _ = recorded(Person(pick={"Which color?": "blue"}))
    result = mead_langchain.run(agent_for(model, pick_color), "paint", interaction=rec)

    assert ran == ["picked blue"]
    assert tool_messages(model)["c1"].content == "painting it blue"
    assert result.stop_reason == "end_turn"
    question = next(c for c in result.calls if c.tool == "interrupt")
    assert json.loads(str(question.result)) == {"option_id": "blue", "label": "blue"}
    assert steps(rec)["c1"] == [
        "pending",
        "ask",
        "register",
        "in_progress",
        "register",
        "in_progress",
        "completed",
    ]


def test_an_unanswered_interrupt_pauses_the_run() -> None:
    model = mead_langchain.scripted_model([[ToolCall("pick_color", {}, "c1")], ["never"]])
    result = mead_langchain.run(agent_for(model, pick_color), "paint", interaction=Person())
    assert result.stop_reason == "paused"
    [pending] = result.output["__interrupt__"]
    assert pending.value["question"] == "Which color?"
    assert ran == []


@pytest.mark.parametrize("mode", ["batched", "per_call"])
def test_human_in_the_loop_reviews_go_through_the_interaction_once(mode: str) -> None:
    hitl = HumanInTheLoopMiddleware(
        interrupt_on={"write_file": True, "read_file": True}, interrupt_mode=mode
    )
    model = seen(
        [
            ToolCall("read_file", {"path": "a"}, "r1"),
            ToolCall("write_file", {"path": "b", "text": "x"}, "w1"),
        ],
        ["ok"],
    )
    rec, _ = recorded(Person(deny={"write_file": "read only today"}))
    result = mead_langchain.run(agent_for(model, middleware=[hitl]), "go", interaction=rec)

    assert ran == ["read a"]
    assert [e.name for e in rec.events].count("request_permission") == 2
    assert {c.tool_call_id: c.outcome for c in result.calls} == {"r1": None, "w1": "denied"}
    told = tool_messages(model)
    assert told["w1"].status == "error"
    assert "read only today" in str(told["w1"].content)
    assert result.stop_reason == "end_turn"


@tool
def ask_human(question: str, options: list[str]) -> str:
    """A question the person answers in the tool's place."""
    ran.append("ask_human ran")
    return "never"


def test_a_review_that_only_allows_respond_goes_to_ask_choice() -> None:
    hitl = HumanInTheLoopMiddleware(interrupt_on={"ask_human": {"allowed_decisions": ["respond"]}})
    question = {"question": "Which size?", "options": ["S", "M", "L"]}
    model = seen([ToolCall("ask_human", question, "h1")], ["ok"])
    rec, _ = recorded(Person(pick={"Which size?": "M"}))
    result = mead_langchain.run(
        agent_for(model, ask_human, middleware=[hitl]), "go", interaction=rec
    )

    assert ran == []
    assert steps(rec)["h1"] == ANSWERED
    told = tool_messages(model)["h1"]
    assert told.status == "success"
    assert json.loads(str(told.content)) == {"option_id": "M", "label": "M"}
    assert result.stop_reason == "end_turn"


def test_tool_calls_of_a_subgraph_are_asked_too() -> None:
    model = mead_langchain.scripted_model(
        [["Inside. ", ToolCall("write_file", {"path": "b", "text": "x"}, "w1")], ["Done."]]
    )
    builder = StateGraph(MessagesState)
    builder.add_node("assistant", agent_for(model))
    builder.add_edge(START, "assistant")
    builder.add_edge("assistant", END)
    rec, _ = recorded(Person(deny={"write_file": "no"}))
    result = mead_langchain.run(builder.compile(), "go", interaction=rec)

    assert ran == []
    assert steps(rec) == {"w1": DENIED}
    assert result.text == "Inside. Done."
    assert result.output["messages"][-1].content == "Done."


def test_only_graphs_can_run() -> None:
    with pytest.raises(TypeError, match="take a LangGraph graph"):
        mead_langchain.run(read_file, "go", interaction=Person())


def test_config_and_thread_id_pass_through() -> None:
    model = mead_langchain.scripted_model([["first"], ["second"]])
    agent = agent_for(model, checkpointer=InMemorySaver())
    mead_langchain.run(agent, "one", interaction=Person(), thread_id="t1")
    second = mead_langchain.run(
        agent, "two", interaction=Person(), config={"configurable": {"thread_id": "t1"}}
    )
    contents = [m.content for m in second.output["messages"]]
    assert contents == ["one", "first", "two", "second"]


def test_the_agent_itself_is_left_unchanged() -> None:
    rec, _ = recorded(Person(deny={"write_file": "no"}))
    model = mead_langchain.scripted_model(
        [[ToolCall("write_file", {"path": "b", "text": "x"})], ["ok"]] * 2
    )
    agent = agent_for(model)
    mead_langchain.run(agent, "go", interaction=rec)
    assert ran == []
    agent.invoke({"messages": [{"role": "user", "content": "go"}]})
    assert ran == ["write b"]


def test_run_arun_and_start_work_where_a_loop_is_already_running() -> None:
    def agent(text: str) -> Any:
        return agent_for(mead_langchain.scripted_model([[text]]))

    async def cell() -> list[str]:
        first = mead_langchain.run(agent("sync"), "a", interaction=Person())
        second = await mead_langchain.arun(agent("async"), "b", interaction=Person())
        third = await mead_langchain.start(agent("started"), "c", interaction=Person())
        return [first.text, second.text, third.text]

    assert asyncio.run(cell()) == ["sync", "async", "started"]


@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
def test_the_middleware_asks_in_a_loop_of_your_own(how: str) -> None:
    rec, person = recorded(Person(deny={"write_file": "no"}))
    model = mead_langchain.scripted_model(
        [
            [
                "Working. ",
                ToolCall("read_file", {"path": "a"}, "r1"),
                ToolCall("write_file", {"path": "b", "text": "x"}, "w1"),
            ],
            ["Done."],
        ]
    )
    agent = agent_for(model, middleware=[mead_langchain.middleware(rec)])
    given = {"messages": [{"role": "user", "content": "go"}]}
    out = agent.invoke(given) if how == "invoke" else asyncio.run(agent.ainvoke(given))

    assert out["messages"][-1].content == "Done."
    assert ran == ["read a"]
    assert steps(rec) == {"r1": ALLOWED, "w1": DENIED}
    one_at_a_time(rec)
    assert texts(rec) == ["Working. ", "Done."]
    running = next(
        e.args[0]
        for e in rec.events
        if e.name == "tool_updated" and e.args[0]["status"] == "in_progress"
    )
    assert running["cancellable"] is (how == "ainvoke")
    if how == "invoke":
        assert running["current_step"] == "running (this call cannot be cancelled)"
    assert [name for name, _ in person.hooks] == ["turn_started", "turn_ended"]


def test_scripted_chat_model_streams_tool_call_chunks() -> None:
    model = mead_langchain.scripted_model([["Hi ", ToolCall("read_file", {"path": "a"}, "r1")]])
    chunks = list(model.stream("x"))
    assert [c.content for c in chunks if c.content] == ["Hi "]
    assert [len(c.tool_call_chunks) for c in chunks if not c.content] in ([1], [1, 0])
    merged = functools.reduce(operator.add, chunks)
    assert isinstance(merged, AIMessage)
    assert merged.content == "Hi "
    call = {"name": "read_file", "args": {"path": "a"}, "id": "r1", "type": "tool_call"}
    assert merged.tool_calls == [call]
    assert model.remaining == 0
    with pytest.raises(ModelError, match="no reply left"):
        model.invoke("again")


def test_ask_user_outside_mead_is_a_langgraph_interrupt() -> None:
    options = [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}]
    model = mead_langchain.scripted_model(
        [[ToolCall("ask_user", {"prompt": "Which?", "options": options}, "q1")], ["ok"]]
    )
    agent = agent_for(model, mead_langchain.ask_user_tool(), checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    paused = agent.invoke({"messages": [{"role": "user", "content": "ask"}]}, config)
    [question] = paused["__interrupt__"]
    assert question.value == {"prompt": "Which?", "options": options}
    done = agent.invoke(Command(resume="b"), config)
    assert [m.content for m in done["messages"] if m.type == "tool"] == ["b"]


# -- edited arguments ------------------------------------------------------------------------


@tool
def resize(path: str, width: int) -> str:
    """Resize an image."""
    ran.append(f"resize {path} {width}")
    return f"{path} is {width} wide"


ASKED = {"path": "a.png", "width": 4000}
EDITED = {"path": "a.png", "width": 800}
BROKEN = {"path": "a.png", "width": "wide"}
PATHS = ["invoke", "ainvoke", "hitl-batched", "hitl-per_call"]


def run_edited(how: str, edited: dict[str, Any], **review: Any) -> tuple[Seen, Recording, Any]:
    """One ``resize`` call the person allows with ``edited``, along ``how``; the run's result.

    ``run``: under ``run``; ``invoke``/``ainvoke``: the middleware in a loop of your
    own; ``hitl-<mode>``: under ``run`` with a human-in-the-loop review of ``resize``
    (``review``: its config, every decision allowed by default).
    """
    model = seen([ToolCall("resize", ASKED, "e1")], ["ok"])
    rec, person = recorded(Person(edit={"resize": edited}))
    if how in ("invoke", "ainvoke"):
        agent = agent_for(model, resize, middleware=[mead_langchain.middleware(rec)])
        given = {"messages": [{"role": "user", "content": "go"}]}
        agent.invoke(given) if how == "invoke" else asyncio.run(agent.ainvoke(given))
        [result] = person.results
        return model, rec, result
    middleware = []
    if how.startswith("hitl-"):
        config = review or True
        mode = how.removeprefix("hitl-")
        middleware = [HumanInTheLoopMiddleware({"resize": config}, interrupt_mode=mode)]
    agent = agent_for(model, resize, middleware=middleware)
    return model, rec, mead_langchain.run(agent, "go", interaction=rec)


@pytest.mark.parametrize("how", PATHS)
def test_edited_arguments_run_exactly_and_the_record_keeps_both(how: str) -> None:
    model, rec, result = run_edited(how, EDITED)

    assert ran == ["resize a.png 800"]
    [request] = asked(rec)
    assert request["arguments"] == ASKED
    parameters = request["parameters"]
    assert parameters["properties"]["width"]["type"] == "integer"
    assert "width" in (check(BROKEN, parameters) or "")
    [record] = result.calls
    assert (record.arguments, record.approved_arguments) == (ASKED, EDITED)
    assert (record.status, record.outcome) == ("completed", None)
    assert running(rec)["e1"]["approved_arguments"] == EDITED
    told = tool_messages(model)["e1"]
    assert told.status == "success"
    assert "a.png is 800 wide" in str(told.content)
    assert ("a human reviewer replaced" in str(told.content)) is how.startswith("hitl-")


@pytest.mark.parametrize("how", PATHS)
def test_edited_arguments_that_break_the_schema_never_run_the_tool(how: str) -> None:
    model, rec, result = run_edited(how, BROKEN)

    assert ran == []
    [record] = result.calls
    assert (record.arguments, record.approved_arguments) == (ASKED, BROKEN)
    assert (record.status, record.outcome) == ("failed", "invalid_arguments")
    assert steps(rec)["e1"] == ["pending", "ask", "failed"]
    told = tool_messages(model)["e1"]
    assert told.status == "error"
    assert "width: Input should be a valid integer" in str(told.content)
    assert record.error == told.content


@pytest.mark.parametrize("how", ["hitl-batched", "hitl-per_call"])
def test_a_review_that_does_not_allow_edits_refuses_an_edited_call(how: str) -> None:
    model, rec, result = run_edited(how, EDITED, allowed_decisions=["approve", "reject"])

    assert ran == []
    assert len(asked(rec)) == 1
    [record] = result.calls
    assert (record.status, record.outcome) == ("failed", "denied")
    told = tool_messages(model)["e1"]
    assert told.status == "error"
    assert "does not allow edited arguments" in str(told.content)
    assert result.stop_reason == "end_turn"
