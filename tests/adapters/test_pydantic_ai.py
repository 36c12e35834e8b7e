"""pydantic-ai agents under an interaction, offline (FunctionModel with a stream function)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

from mead_notebook import ToolCall, TurnError
from mead_notebook.adapters import pydantic_ai as mead_pydantic_ai
from mead_notebook.schema import check
from mead_notebook.testing import Recording

from .helpers import (
    ALLOWED,
    DENIED,
    Person,
    asked,
    one_at_a_time,
    recorded,
    running,
    steps,
)

ran: list[str] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


def agent_for(*replies: list[Any], model: Any = None, **kwargs: Any) -> Agent[Any, str]:
    """An agent with a file reader and writer, on ``model`` or a model playing ``replies``."""
    agent: Agent[Any, str] = Agent(model or mead_pydantic_ai.scripted_model(replies), **kwargs)

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file."""
        ran.append(f"read {path}")
        return f"contents of {path}"

    @agent.tool_plain
    def write_file(path: str, text: str) -> str:
        """Write a file."""
        ran.append(f"write {path}")
        return f"wrote {len(text)} characters"

    return agent


class Seen:
    """A stream function that calls ``tools`` first, then answers with what it was told."""

    def __init__(self, *tools: ToolCall, text: str = "done") -> None:
        self.tools = tools
        self.text = text
        self.returns: list[ToolReturnPart] = []
        self.requests: list[list[ModelMessage]] = []

    async def __call__(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
        self.requests.append(list(messages))
        if len(self.requests) == 1 and self.tools:
            for i, t in enumerate(self.tools):
                yield {i: DeltaToolCall(t.name, json.dumps(t.arguments), tool_call_id=t.id)}
            return
        last = messages[-1]
        if isinstance(last, ModelRequest):
            self.returns.extend(p for p in last.parts if isinstance(p, ToolReturnPart))
        yield self.text


def test_a_tool_error_fails_the_call_and_the_run() -> None:
    rec, person = recorded()
    agent = agent_for([ToolCall("explode", {}, "e1")], ["never"])

    @agent.tool_plain
    def explode() -> str:
        """Always fails."""
        raise OSError("disk on fire")

    with pytest.raises(TurnError) as raised:
        mead_pydantic_ai.run(agent, "go", interaction=rec)
    assert isinstance(raised.value.__cause__, OSError)
    [call] = raised.value.result.calls
    assert (call.status, call.outcome) == ("failed", "error")
    assert "OSError: disk on fire" in str(call.error)
    assert person.hooks[-1][0] == "turn_ended"
    assert person.hooks[-1][1][1] is raised.value


def test_a_retry_the_tool_asks_for_fails_the_call_and_the_run_goes_on() -> None:
    seen = Seen(ToolCall("picky", {}, "p1"))
    agent: Agent[Any, str] = Agent(FunctionModel(stream_function=seen))

    @agent.tool_plain
    def picky() -> str:
        """Asks the model to try again."""
        raise ModelRetry("use another path")

    rec, _ = recorded()
    result = mead_pydantic_ai.run(agent, "go", interaction=rec)
    assert (result.calls[0].outcome, result.stop_reason) == ("error", "end_turn")
    assert "use another path" in str(result.calls[0].error)
    assert seen.returns[0].outcome == "retried"


def test_an_unanswered_question_fails_and_the_model_is_told() -> None:
    options = [{"id": "a", "label": "A"}]
    seen = Seen(ToolCall("ask_user", {"prompt": "Which?", "options": options}, "q1"))
    agent: Agent[Any, str] = Agent(
        FunctionModel(stream_function=seen), tools=[mead_pydantic_ai.ask_user_tool()]
    )
    rec, _ = recorded()
    result = mead_pydantic_ai.run(agent, "ask", interaction=rec)
    assert result.calls[0].outcome == "no_answer"
    assert seen.returns[0].outcome == "failed"
    assert "no answer" in str(seen.returns[0].content)


def test_the_frameworks_own_approvals_and_questions_go_through_the_interaction() -> None:
    seen = Seen(
        ToolCall("drop_table", {"name": "users"}, "d1"),
        ToolCall("color", {}, "c1"),
        ToolCall("truncate", {"name": "logs"}, "t1"),
    )
    agent: Agent[Any, str] = Agent(FunctionModel(stream_function=seen))

    @agent.tool_plain(requires_approval=True)
    def drop_table(name: str) -> str:
        """Drop a table."""
        ran.append(f"drop {name}")
        return "dropped"

    @agent.tool
    def truncate(ctx: RunContext[Any], name: str) -> str:
        """Truncate a table, once approved."""
        if not ctx.tool_call_approved:
            raise ApprovalRequired()
        ran.append(f"truncate {name}")
        return "truncated"

    @agent.tool
    def color(ctx: RunContext[Any]) -> str:
        """Ask for a color."""
        offer = {"prompt": "Which color?", "options": ["red", "blue"]}
        raise CallDeferred(metadata=offer, kind="question")

    rec, _ = recorded(Person(pick={"Which color?": "blue"}))
    result = mead_pydantic_ai.run(agent, "go", interaction=rec)

    assert sorted(ran) == ["drop users", "truncate logs"]
    asked = [e.args[0]["tool_call_id"] for e in rec.events if e.name == "request_permission"]
    assert sorted(asked) == ["c1", "d1", "t1"], "each call is asked once"
    by_id = {c.tool_call_id: c for c in result.calls}
    assert (by_id["d1"].status, by_id["t1"].status) == ("completed", "completed")
    assert json.loads(str(by_id["c1"].result)) == {"option_id": "blue", "label": "blue"}
    returns = {p.tool_call_id: p for p in seen.returns}
    assert json.loads(str(returns["c1"].content))["option_id"] == "blue"


def test_calls_run_concurrently_while_callbacks_stay_serialised() -> None:
    seen = Seen(ToolCall("nap", {"n": 1}, "n1"), ToolCall("nap", {"n": 2}, "n2"))
    agent: Agent[Any, str] = Agent(FunctionModel(stream_function=seen))
    inside: list[int] = []
    most: list[int] = []

    @agent.tool_plain
    async def nap(n: int) -> str:
        """Sleep a little."""
        inside.append(n)
        most.append(len(inside))
        await asyncio.sleep(0.3)
        inside.remove(n)
        return f"napped {n}"

    rec, _ = recorded()
    result = mead_pydantic_ai.run(agent, "go", interaction=rec)
    assert max(most) == 2
    assert [c.status for c in result.calls] == ["completed", "completed"]
    assert steps(rec) == {"n1": ALLOWED, "n2": ALLOWED}
    one_at_a_time(rec)


def test_options_pass_through_to_the_run() -> None:
    seen = Seen(ToolCall("whoami", {}, "i1"))
    agent: Agent[str, str] = Agent(FunctionModel(stream_function=seen), deps_type=str)

    @agent.tool
    def whoami(ctx: RunContext[str]) -> str:
        """Who is asking."""
        return f"you are {ctx.deps}"

    first = mead_pydantic_ai.run(agent, "hello", interaction=Person(), deps="Ada")
    assert str(seen.returns[0].content) == "you are Ada"
    history = first.output.all_messages()
    seen.requests.clear()
    seen.tools = ()
    mead_pydantic_ai.run(
        agent,
        "again",
        interaction=Person(),
        deps="Ada",
        message_history=history,
        model_settings={"temperature": 0.0},
    )
    assert len(seen.requests[0]) == len(history) + 1


def test_run_arun_and_start_work_where_a_loop_is_already_running() -> None:
    async def cell() -> list[str]:
        first = mead_pydantic_ai.run(agent_for(["sync"]), "a", interaction=Person())
        second = await mead_pydantic_ai.arun(agent_for(["async"]), "b", interaction=Person())
        third = await mead_pydantic_ai.start(agent_for(["started"]), "c", interaction=Person())
        return [first.text, second.text, third.text]

    assert asyncio.run(cell()) == ["sync", "async", "started"]


def test_the_capability_asks_in_a_loop_of_your_own() -> None:
    rec, person = recorded(Person(deny={"write_file": "no"}))
    agent = agent_for(
        [ToolCall("write_file", {"path": "b", "text": "x"}, "w1")],
        ["fine"],
        capabilities=[mead_pydantic_ai.capability(rec)],
    )
    output = asyncio.run(agent.run("go")).output
    assert output == "fine"
    assert steps(rec) == {"w1": DENIED}
    one_at_a_time(rec)
    assert [name for name, _ in person.hooks] == ["turn_started", "turn_ended"]
    assert (
        agent_for(["again"], capabilities=[mead_pydantic_ai.capability(rec)])
        .run_sync("sync")
        .output
        == "again"
    )
    assert [name for name, _ in person.hooks].count("turn_ended") == 2


def test_ask_user_outside_mead_defers_as_a_pydantic_ai_question() -> None:
    options = [{"id": "a", "label": "A"}]
    model = mead_pydantic_ai.scripted_model(
        [[ToolCall("ask_user", {"prompt": "Which?", "options": options}, "q1")]]
    )
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        model, tools=[mead_pydantic_ai.ask_user_tool()], output_type=[str, DeferredToolRequests]
    )
    requests = agent.run_sync("ask").output
    assert isinstance(requests, DeferredToolRequests)
    assert requests.kind("q1") == "question"
    assert requests.metadata["q1"] == {"prompt": "Which?", "options": options}


# -- edited arguments ------------------------------------------------------------------------

ASKED = {"path": "a.png", "width": 4000}
EDITED = {"path": "a.png", "width": 800}
BROKEN = {"path": "a.png", "width": "wide"}
PATHS = ["capability", "run-approval", "capability-approval"]


def run_edited(how: str, edited: dict[str, Any]) -> tuple[Seen, Recording, Any]:
    """One ``resize`` call the person allows with ``edited``, along ``how``; the run's result.

    ``run``: under ``run``; ``capability``: the capability in a run of your own;
    ``-approval``: ``resize`` requires pydantic-ai's own approval.
    """
    seen = Seen(ToolCall("resize", ASKED, "e1"))
    rec, person = recorded(Person(edit={"resize": edited}))
    own = how.startswith("capability")
    agent: Agent[Any, str] = Agent(
        FunctionModel(stream_function=seen),
        capabilities=[mead_pydantic_ai.capability(rec)] if own else None,
    )

    @agent.tool_plain(requires_approval=how.endswith("-approval"))
    def resize(path: str, width: int) -> str:
        """Resize an image."""
        ran.append(f"resize {path} {width}")
        return f"{path} is {width} wide"

    if not own:
        return seen, rec, mead_pydantic_ai.run(agent, "go", interaction=rec)
    asyncio.run(agent.run("go"))
    [result] = person.results
    return seen, rec, result


@pytest.mark.parametrize("how", PATHS)
def test_edited_arguments_run_exactly_and_the_record_keeps_both(how: str) -> None:
    seen, rec, result = run_edited(how, EDITED)

    assert ran == ["resize a.png 800"]
    [request] = asked(rec)
    assert request["arguments"] == ASKED
    parameters = request["parameters"]
    assert parameters["properties"]["width"]["type"] == "integer"
    assert "width" in (check(BROKEN, parameters) or "")
    [record] = result.calls
    assert (record.arguments, record.approved_arguments) == (ASKED, EDITED)
    assert (record.status, record.outcome, record.result) == (
        "completed",
        None,
        "a.png is 800 wide",
    )
    assert running(rec)["e1"]["approved_arguments"] == EDITED
    [part] = seen.returns
    assert (part.outcome, part.content) == ("success", "a.png is 800 wide")


@pytest.mark.parametrize("how", PATHS)
def test_edited_arguments_that_break_the_schema_never_run_the_tool(how: str) -> None:
    seen, rec, result = run_edited(how, BROKEN)

    assert ran == []
    [record] = result.calls
    assert (record.arguments, record.approved_arguments) == (ASKED, BROKEN)
    assert (record.status, record.outcome) == ("failed", "invalid_arguments")
    assert steps(rec)["e1"] == ["pending", "ask", "failed"]
    [part] = seen.returns
    assert part.outcome == "retried"
    assert "Input should be a valid integer" in str(part.content)
    assert record.error == part.model_response_str(wrap_if_error=False)
