"""The two agent SDKs with the widget in a real kernel, on the oldest and newest ipykernel."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from kernel.frontend import Frontend, ready_kernel, reset
from servers.anthropic_agent_server import AgentServer, Use

from mead_notebook.adapters.claude_agent.scripted import MODEL

from .test_kernel import ALLOW, CONFIGS, DENY, calls, result_of

pytestmark = pytest.mark.kernel

SETUP = '''
import asyncio, json
from agents import Agent, function_tool, set_tracing_disabled
from mead_notebook import NotebookInteraction, ToolCall
from mead_notebook.adapters import openai_agents, claude_agent
set_tracing_disabled(True)

@function_tool
def write_note(text: str) -> str:
    """Write a note."""
    return f"wrote {text}"

@function_tool
async def slow() -> str:
    """Wait a minute."""
    await asyncio.sleep(60)
    return "finished"

NOTE = [["Writing. ", ToolCall("write_note", {"text": "hi"}, "w1")], ["Done."]]
SLOW = [[ToolCall("slow", {}, "s1")], ["Stopped."]]

def agent(script):
    return Agent("helper", model=openai_agents.scripted_model(script), tools=[write_note, slow])

def told(res):
    for item in res.output.new_items if res.output is not None else ():
        if type(item).__name__ == "ToolCallOutputItem":
            return str(item.output)
    return None

def report(res, said=None):
    calls = [
        {"tool": c.tool, "status": c.status, "outcome": c.outcome, "result": c.result}
        for c in res.calls
    ]
    print("RESULT " + json.dumps({"stop": res.stop_reason, "text": res.text, "calls": calls,
                                  "told": said if said is not None else told(res)}))

def widget():
    return NotebookInteraction(timeout=60, grace=30)

print("READY")
'''


@pytest.fixture(scope="module", params=CONFIGS)
def frontend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Frontend]:
    version, subshell = request.param
    workdir: Path = tmp_path_factory.mktemp(f"sdks-{version}")
    with ready_kernel(version, subshell, workdir, SETUP, timeout=180) as fe:
        yield fe


@pytest.fixture
def fe(frontend: Frontend) -> Frontend:
    reset(frontend)
    return frontend


@pytest.mark.parametrize("how", ["run", "arun"])
def test_openai_agents_cell_waits_for_allow(fe: Frontend, how: str) -> None:
    fe.responder = lambda card: ALLOW
    call = "openai_agents.run(agent(NOTE), 'go', interaction=widget())"
    if how == "arun":
        call = "await " + call.replace(".run(", ".arun(")
    reply, out = fe.run(f"report({call})")
    assert reply["status"] == "ok", reply
    result = result_of(out)
    assert calls(result) == [("write_note", "completed", None)]
    assert (result["told"], result["text"]) == ("wrote hi", "Writing. Done.")
    [widget] = fe.widgets.values()
    assert widget.cards["w1"]["question"]["answer"]["by"] == "person"


def test_openai_agents_deny_in_a_sync_cell(fe: Frontend) -> None:
    fe.responder = lambda card: DENY
    reply, out = fe.run("report(openai_agents.run(agent(NOTE), 'go', interaction=widget()))")
    assert reply["status"] == "ok", reply
    result = result_of(out)
    assert calls(result) == [("write_note", "failed", "denied")]
    assert "not now" in result["told"]


def test_openai_agents_background_turn(fe: Frontend) -> None:
    reply, out = fe.run(
        "turn = openai_agents.start(agent(NOTE), 'go', interaction=widget())\nprint('STARTED')"
    )
    assert (reply["status"], out) == ("ok", "STARTED\n"), reply
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    waiting = fe.execute("report(turn.result(timeout=30))")
    card = fe.open_question()
    assert card is not None
    fe.answer(
        next(iter(fe.widgets)), {"type": "answer", "question_id": card["question"]["id"], **ALLOW}
    )
    assert fe.wait_reply(waiting, 45)["content"]["status"] == "ok"
    assert calls(result_of(fe.stdout(waiting))) == [("write_note", "completed", None)]


def test_openai_agents_cancel_in_the_widget(fe: Frontend) -> None:
    fe.responder = lambda card: ALLOW
    msg_id = fe.execute("report(openai_agents.run(agent(SLOW), 'go', interaction=widget()))")

    def running() -> dict[str, Any] | None:
        return next((c for c in fe.cards() if c["status"] == "in_progress"), None)

    fe.drive(lambda: running() is not None, 30, "the running card")
    fe.send_custom(next(iter(fe.widgets)), {"type": "cancel", "tool_call_id": "s1"})
    assert fe.wait_reply(msg_id, 45)["content"]["status"] == "ok"
    result = result_of(fe.stdout(msg_id))
    assert calls(result) == [("slow", "failed", "cancelled")]
    assert result["text"] == "Stopped."


@pytest.mark.parametrize(
    ("how", "ename"), [("run", "KeyboardInterrupt"), ("arun", "CancelledError")]
)
def test_openai_agents_interrupt(fe: Frontend, how: str, ename: str) -> None:
    call = f"openai_agents.{how}(agent(NOTE), 'go', interaction=widget())"
    msg_id = fe.execute(f"report({'await ' if how == 'arun' else ''}{call})")
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    fe.km.interrupt_kernel()
    reply = fe.wait_reply(msg_id, 30)["content"]
    assert (reply["status"], reply.get("ename")) == ("error", ename), reply
    [widget] = fe.widgets.values()
    fe.drive(lambda: widget.state.get("status") == "interrupted", 10, "the turn's end")
    reply, out = fe.run("print('NEXT', 6 * 7)", timeout=30)
    assert (reply["status"], out) == ("ok", "NEXT 42\n")


@contextmanager
def claude(tmp_path: Path, script: Callable[[Path], list[Any]]) -> Iterator[tuple[Path, str]]:
    """A fake Anthropic server playing ``script(cwd)``; cell lines that make ``o``, the options."""
    home, cwd = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    cwd.mkdir()
    with AgentServer(script(cwd)) as server:
        env = {**server.env(), "HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
        yield (
            cwd,
            (
                "from claude_agent_sdk import ClaudeAgentOptions\n"
                f"o = ClaudeAgentOptions(cwd={str(cwd)!r}, env={env!r}, setting_sources=[],"
                f" model={MODEL!r})\n"
            ),
        )


def write(cwd: Path) -> list[Any]:
    return [[Use("w1", "Write", {"file_path": str(cwd / "a.txt"), "content": "hi\n"})]]


def sleep(cwd: Path) -> list[Any]:
    return [[Use("b1", "Bash", {"command": "echo waiting; sleep 30", "description": "wait"})]]


@pytest.mark.parametrize("how", ["run", "arun"])
def test_claude_agent_cell_allows_a_write(fe: Frontend, tmp_path: Path, how: str) -> None:
    fe.responder = lambda card: ALLOW
    call = f"{'await ' if how == 'arun' else ''}claude_agent.{how}(o, 'go', interaction=widget())"
    with claude(tmp_path, write) as (cwd, options):
        reply, out = fe.run(
            f"{options}res = {call}\nreport(res, said=res.calls[0].result)", timeout=120
        )
    assert reply["status"] == "ok", reply
    result = result_of(out)
    assert calls(result) == [("Write", "completed", None)]
    assert (cwd / "a.txt").read_text() == "hi\n"
    [widget] = fe.widgets.values()
    assert widget.cards["w1"]["question"]["answer"]["by"] == "person"


def test_claude_agent_background_turn_denied(fe: Frontend, tmp_path: Path) -> None:
    with claude(tmp_path, write) as (cwd, options):
        reply, out = fe.run(
            f"{options}turn = claude_agent.start(o, 'go', interaction=widget())\nprint('STARTED')"
        )
        assert (reply["status"], out) == ("ok", "STARTED\n"), reply
        fe.drive(lambda: fe.open_question() is not None, 60, "the open question")
        waiting = fe.execute("res = turn.result(timeout=60)\nreport(res, said=res.calls[0].error)")
        card = fe.open_question()
        assert card is not None
        answer = {"type": "answer", "question_id": card["question"]["id"], **DENY}
        fe.answer(next(iter(fe.widgets)), answer)
        assert fe.wait_reply(waiting, 90)["content"]["status"] == "ok"
    result = result_of(fe.stdout(waiting))
    assert calls(result) == [("Write", "failed", "denied")]
    assert "not now" in result["told"]
    assert not (cwd / "a.txt").exists()


CLIS_GONE = """
import os, time, psutil
def clis():
    found = []
    for p in psutil.Process(os.getpid()).children(recursive=True):
        try:  # a CLI can end as it is read
            if "claude" in " ".join(p.cmdline()) and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p.pid)
        except psutil.Error:
            pass
    return found
deadline = time.monotonic() + 2 * claude_agent.TEARDOWN_TIMEOUT
while clis() and time.monotonic() < deadline:
    time.sleep(0.1)
print("CLIS", clis())
"""
"""Waits (within a bound) for the kernel's Claude CLI processes to end, and prints those left."""


@pytest.mark.parametrize(
    ("how", "ename"), [("run", "KeyboardInterrupt"), ("arun", "CancelledError")]
)
def test_claude_agent_interrupt_ends_the_cli(
    fe: Frontend, tmp_path: Path, how: str, ename: str
) -> None:
    fe.responder = lambda card: ALLOW
    call = f"{'await ' if how == 'arun' else ''}claude_agent.{how}(o, 'go', interaction=widget())"
    with claude(tmp_path, sleep) as (_, options):
        msg_id = fe.execute(f"{options}report({call}, said='')")

        def running() -> dict[str, Any] | None:
            return next((c for c in fe.cards() if c["status"] == "in_progress"), None)

        fe.drive(lambda: running() is not None, 90, "the running card")
        fe.km.interrupt_kernel()
        reply = fe.wait_reply(msg_id, 30)["content"]
    said = (reply, fe.stdout(msg_id), [w.state.get("status") for w in fe.widgets.values()])
    assert (reply["status"], reply.get("ename")) == ("error", ename), said
    reply, out = fe.run(CLIS_GONE, timeout=30)
    assert (reply["status"], out) == ("ok", "CLIS []\n"), reply
