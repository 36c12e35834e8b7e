"""The adapters with the widget in a real kernel, on the oldest and newest ipykernel.

Each test runs cells over the Jupyter protocol and plays the widget's frontend
(``tests/kernel/frontend.py``): a sync cell, an async cell, a background turn,
Cancel on a running call, a question, and a kernel interrupt, for each framework.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel.frontend import Frontend, Widget, ready_kernel, reset

pytestmark = pytest.mark.kernel

CONFIGS = [
    pytest.param(("6.29.5", False), id="6.29.5-main"),
    pytest.param(("7.4.0", True), id="7.4.0-subshell"),
]
"""The oldest and newest ipykernel of the matrix (scripts/kernel-envs.sh installs the frameworks
into both); the newest with comm messages over a subshell, as JupyterLab sends them."""

FRAMEWORKS = ["langchain", "pydantic_ai"]

SETUP = '''
import asyncio, json
from mead_notebook import NotebookInteraction, ToolCall
from mead_notebook.notebook import waiting as _waiting
from mead_notebook.adapters import langchain as mead_langchain
from mead_notebook.adapters import pydantic_ai as mead_pydantic_ai
from langchain.agents import create_agent
from langchain_core.tools import tool as langchain_tool
from pydantic_ai import Agent
from pydantic_ai.messages import ToolReturnPart

def write_note(text: str) -> str:
    """Write a note."""
    return f"wrote {text}"

async def slow() -> str:
    """Wait a minute."""
    await asyncio.sleep(60)
    return "finished"

OPTIONS = [{"id": "a", "label": "Apple"}, {"id": "b", "label": "Banana"}]
NOTE = [["Writing. ", ToolCall("write_note", {"text": "hi"}, "w1")], ["Done."]]
SLOW = [[ToolCall("slow", {}, "s1")], ["Stopped."]]
ASK = [[ToolCall("ask_user", {"prompt": "Which?", "options": OPTIONS}, "q1")], ["Thanks."]]

def agent(framework, script):
    if framework == "langchain":
        tools = [langchain_tool(write_note), langchain_tool(slow), mead_langchain.ask_user_tool()]
        return mead_langchain, create_agent(mead_langchain.scripted_model(script), tools=tools)
    tools = [write_note, slow, mead_pydantic_ai.ask_user_tool()]
    return mead_pydantic_ai, Agent(mead_pydantic_ai.scripted_model(script), tools=tools)

def told(framework, res):
    """What the model was told about the first call."""
    if res.output is None:
        return None
    if framework == "langchain":
        return next((m.content for m in res.output["messages"] if m.type == "tool"), None)
    parts = [p for m in res.output.all_messages() for p in getattr(m, "parts", ())]
    return next((str(p.content) for p in parts if isinstance(p, ToolReturnPart)), None)

def report(framework, res):
    calls = [
        {"tool": c.tool, "status": c.status, "outcome": c.outcome, "result": c.result}
        for c in res.calls
    ]
    found = {"stop": res.stop_reason, "text": res.text, "calls": calls}
    print("RESULT " + json.dumps({**found, "told": told(framework, res)}))

def widget():
    return NotebookInteraction(timeout=60, grace=30)

print("READY", _waiting.mechanism())
'''

ALLOW = {"decision": "allow"}
DENY = {"decision": "deny", "note": "not now"}


@pytest.fixture(scope="module", params=CONFIGS)
def frontend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Frontend]:
    version, subshell = request.param
    workdir: Path = tmp_path_factory.mktemp(f"adapters-{version}")
    with ready_kernel(version, subshell, workdir, SETUP, timeout=120) as fe:
        yield fe


@pytest.fixture
def fe(frontend: Frontend) -> Frontend:
    return reset(frontend)


def result_of(out: str) -> dict[str, Any]:
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, out
    parsed: dict[str, Any] = json.loads(lines[0][len("RESULT ") :])
    return parsed


def cell(framework: str, script: str, how: str) -> str:
    """A cell that runs ``script`` with ``framework`` under a widget, ``how`` = run/arun/start."""
    make = f"m, a = agent({framework!r}, {script})\n"
    if how == "run":
        return make + f"report({framework!r}, m.run(a, 'go', interaction=widget()))"
    if how == "arun":
        return make + f"report({framework!r}, await m.arun(a, 'go', interaction=widget()))"
    return make + "turn = m.start(a, 'go', interaction=widget())\nprint('STARTED')"


def calls(result: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(c["tool"], c["status"], c["outcome"]) for c in result["calls"]]


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("how", ["run", "arun"])
def test_a_cell_waits_for_allow(fe: Frontend, framework: str, how: str) -> None:
    fe.responder = lambda card: ALLOW
    reply, out = fe.run(cell(framework, "NOTE", how))
    assert reply["status"] == "ok", reply
    result = result_of(out)
    assert calls(result) == [("write_note", "completed", None)]
    assert result["told"] == "wrote hi"
    assert (result["stop"], result["text"]) == ("end_turn", "Writing. Done.")
    [widget] = fe.widgets.values()
    card = widget.cards["w1"]
    assert (card["status"], card["question"]["answer"]["by"]) == ("completed", "person")
    assert widget.state["status"] == "done"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_deny_in_a_sync_cell_reaches_the_model(fe: Frontend, framework: str) -> None:
    fe.responder = lambda card: DENY
    reply, out = fe.run(cell(framework, "NOTE", "run"))
    assert reply["status"] == "ok", reply
    result = result_of(out)
    assert calls(result) == [("write_note", "failed", "denied")]
    assert "not now" in result["told"]
    assert "The tool did not run" in result["told"]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_background_turn_outlives_its_cell(fe: Frontend, framework: str) -> None:
    reply, out = fe.run(cell(framework, "NOTE", "start"))
    assert (reply["status"], out) == ("ok", "STARTED\n"), reply
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    waiting = fe.execute(f"report({framework!r}, turn.result(timeout=30))")
    card = fe.open_question()
    assert card is not None
    time.sleep(0.3)
    assert waiting not in fe.replies
    fe.answer(
        next(iter(fe.widgets)), {"type": "answer", "question_id": card["question"]["id"], **ALLOW}
    )
    reply_msg = fe.wait_reply(waiting, 45)
    assert reply_msg["content"]["status"] == "ok", reply_msg["content"]
    assert calls(result_of(fe.stdout(waiting))) == [("write_note", "completed", None)]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_cancel_in_the_widget_cancels_the_running_call(fe: Frontend, framework: str) -> None:
    fe.responder = lambda card: ALLOW
    msg_id = fe.execute(cell(framework, "SLOW", "run"))

    def running() -> dict[str, Any] | None:
        return next(
            (c for c in fe.cards() if c["status"] == "in_progress" and c.get("cancellable")), None
        )

    fe.drive(lambda: running() is not None, 30, "the running, cancellable card")
    fe.send_custom(next(iter(fe.widgets)), {"type": "cancel", "tool_call_id": "s1"})
    reply = fe.wait_reply(msg_id, 45)
    assert reply["content"]["status"] == "ok", reply["content"]
    result = result_of(fe.stdout(msg_id))
    assert calls(result) == [("slow", "failed", "cancelled")]
    assert result["told"] == "The call to slow was cancelled."
    assert result["text"] == "Stopped."


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_ask_user_is_answered_in_the_widget(fe: Frontend, framework: str) -> None:
    fe.responder = lambda card: {"option_id": "b"}
    reply, out = fe.run(cell(framework, "ASK", "run"))
    assert reply["status"] == "ok", reply
    result = result_of(out)
    assert calls(result) == [("ask_user", "completed", None)]
    assert json.loads(result["told"]) == {"option_id": "b", "label": "Banana"}


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize(
    ("how", "ename"), [("run", "KeyboardInterrupt"), ("arun", "CancelledError")]
)
def test_interrupting_the_kernel_ends_the_run(
    fe: Frontend, framework: str, how: str, ename: str
) -> None:
    msg_id = fe.execute(cell(framework, "NOTE", how))
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    card = fe.open_question()
    assert card is not None
    fe.km.interrupt_kernel()
    reply = fe.wait_reply(msg_id, 30)["content"]
    assert (reply["status"], reply.get("ename")) == ("error", ename), reply
    [widget] = fe.widgets.values()
    ended(fe, widget, reply)
    assert widget.cards["w1"]["question"]["answer"]["decision"] == "interrupted"
    assert widget.cards["w1"]["outcome"] == "interrupted"
    reply, out = fe.run("print('NEXT', 6 * 7)", timeout=30)
    assert (reply["status"], out) == ("ok", "NEXT 42\n")


def ended(fe: Frontend, widget: Widget, reply: dict[str, Any]) -> None:
    """Wait for the widget to say its turn was interrupted; say what the kernel does if not."""
    try:
        fe.drive(lambda: widget.state.get("status") == "interrupted", 10, "the turn's end")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nthe cell's reply: {reply}\n{fe.inside()}") from None


OWN_LOOP = {
    "langchain": (
        "w = widget()\n"
        "a = create_agent(mead_langchain.scripted_model(NOTE), tools=[langchain_tool(write_note)],"
        " middleware=[mead_langchain.middleware(w)])\n"
        "out = await a.ainvoke({'messages': [{'role': 'user', 'content': 'go'}]})\n"
        "print('OUT', out['messages'][2].content, '|', w)"
    ),
    "pydantic_ai": (
        "w = widget()\n"
        "a = Agent(mead_pydantic_ai.scripted_model(NOTE), tools=[write_note],"
        " capabilities=[mead_pydantic_ai.capability(w)])\n"
        "out = await a.run('go')\n"
        "print('OUT', out.all_messages()[2].parts[0].content, '|', w)"
    ),
}


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_loop_of_your_own_in_an_async_cell(fe: Frontend, framework: str) -> None:
    fe.responder = lambda card: ALLOW
    reply, out = fe.run(OWN_LOOP[framework])
    assert reply["status"] == "ok", reply
    told, shown = out.strip().removeprefix("OUT ").split(" | ")
    assert told == "wrote hi"
    assert shown == "NotebookInteraction: done, 1 tool call (1 completed), 14 characters of text"


def test_the_middleware_in_a_sync_cell(fe: Frontend) -> None:
    """ipykernel 7 delivers the answer; 6 cannot while LangGraph's worker waits, and denies.

    On 6 the question expires either way: after its grace when the kernel never heard the
    view, or at its timeout when it heard the view's ``rendered`` before LangGraph's worker
    blocked the main thread (seen once under load); the timeout is short for that."""
    fe.responder = lambda card: ALLOW
    reply, out = fe.run(
        "w = NotebookInteraction(timeout=15, grace=1)\n"
        "a = create_agent(mead_langchain.scripted_model(NOTE), tools=[langchain_tool(write_note)],"
        " middleware=[mead_langchain.middleware(w)])\n"
        "out = a.invoke({'messages': [{'role': 'user', 'content': 'go'}]})\n"
        "print('OUT', out['messages'][2].content)"
    )
    assert reply["status"] == "ok", reply
    if fe.version.startswith("6."):
        assert out.startswith("OUT Permission to run write_note was denied (expired)"), out
    else:
        assert out == "OUT wrote hi\n"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_interrupting_a_loop_of_your_own_ends_the_turn(fe: Frontend, framework: str) -> None:
    msg_id = fe.execute(OWN_LOOP[framework])
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    fe.km.interrupt_kernel()
    reply = fe.wait_reply(msg_id, 30)["content"]
    assert (reply["status"], reply.get("ename")) == ("error", "CancelledError"), reply
    [widget] = fe.widgets.values()
    ended(fe, widget, reply)
    assert widget.cards["w1"]["question"]["answer"]["decision"] == "interrupted"
    reply, out = fe.run("print('NEXT', 6 * 7)", timeout=30)
    assert (reply["status"], out) == ("ok", "NEXT 42\n")
