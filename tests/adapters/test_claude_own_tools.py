"""``claude_agent.as_server``: the package's own tools as an in-process MCP server, driven by
the SDK's bundled Claude CLI against the offline scripted Anthropic server.

The card carries the tool's own kind (no ``trusted`` needed) and its preview;
Allow runs the tool once with its own validation, Deny never runs it, a schema
error is refused before anyone is asked, the card's Cancel reaches the tool's
``Call``, and the server runs a tool only for a call its card allowed. The
kernel's ``run_python`` runs the same way, in an IPython shell of its own (a
subprocess).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from servers.anthropic_agent_server import AgentServer, Text, Use

from mead_notebook import Call, tool
from mead_notebook.adapters import claude_agent
from mead_notebook.adapters.base import AgentTurn, active_turn
from mead_notebook.adapters.claude_agent._own_tools import NO_PASS, NOT_HERE
from mead_notebook.policies import AllowAll
from mead_notebook.tools import ToolOutput, preview

from .claude_cli import clis, every_cli_ends, repo_folder  # noqa: F401 (fixtures)
from .helpers import ALLOWED, DENIED, Person, asked, finals, recorded, steps

pytestmark = pytest.mark.timeout(120)


class Shop:
    def __init__(self) -> None:
        self.got: list[tuple[str, Any]] = []
        self.stopped = threading.Event()
        got = self.got

        @tool(kind="edit", preview=lambda path, text, mode: preview.text(f"{mode} {path}: {text}"))
        def save(path: str, text: str, mode: str = "w") -> ToolOutput:
            """Save a text."""
            got.append(("save", (path, text, mode)))
            return ToolOutput(f"saved {path}", [{"type": "text", "text": f"{path} says {text}"}])

        @tool(kind="execute")
        def wait(call: Call) -> str:
            """Wait until cancelled."""
            got.append(("wait", None))
            if call.wait_cancelled(30):
                self.stopped.set()
            return "waited"

        self.tools = [save, wait]


def play(cwd: Path, script: list[list[Any]], person: Person) -> tuple[Shop, Any, Any, Any]:
    shop = Shop()
    rec, _ = recorded(person)
    with AgentServer(script) as server:
        given = server.options(cwd=str(cwd))
        given.mcp_servers = {"mead": claude_agent.as_server(shop.tools)}
        result = claude_agent.run(given, "go", interaction=rec)
        results = server.tool_results()
    return shop, rec, result, results


def test_allow_runs_the_tool_once_with_its_kind_and_preview_on_the_card(cwd: Path) -> None:
    script = [[Use("s1", "mcp__mead__save", {"path": "a.txt", "text": "hi"})], [Text("Done.")]]
    shop, rec, result, told = play(cwd, script, Person())
    assert shop.got == [("save", ("a.txt", "hi", "w"))]
    assert steps(rec)["s1"] == ALLOWED
    [request] = asked(rec)
    assert (request["server"], request["tool"]) == ("mead", "save")
    assert (request["kind"], request["class"]) == ("edit", "effect")
    assert request["content"] == [{"type": "text", "text": "w a.txt: hi"}]
    assert finals(rec)["s1"]["content"] == [{"type": "text", "text": "a.txt says hi"}]
    text, error = told["s1"]
    assert (text.splitlines()[0], error) == ("saved a.txt", False)
    assert result.calls[0].result == "saved a.txt"


def test_deny_never_runs_the_tool_and_the_model_reads_why(cwd: Path) -> None:
    script = [[Use("s1", "mcp__mead__save", {"path": "a.txt", "text": "hi"})], [Text("Ok.")]]
    shop, rec, _, told = play(cwd, script, Person(deny={"save": "not today"}))
    assert shop.got == []
    assert steps(rec)["s1"] == DENIED
    text, error = told["s1"]
    assert error
    assert "not today" in text


def test_arguments_the_tool_refuses_are_refused_before_anyone_is_asked(cwd: Path) -> None:
    script = [[Use("s1", "mcp__mead__save", {"path": "a.txt", "text": 3})], [Text("Ok.")]]
    shop, rec, _, told = play(cwd, script, Person())
    assert shop.got == []
    assert asked(rec) == []
    assert finals(rec)["s1"]["outcome"] == "invalid_arguments"
    assert told["s1"][1]


def test_cancel_on_the_card_reaches_the_tools_call(cwd: Path) -> None:
    script = [[Use("w1", "mcp__mead__wait", {})], [Text("Stopped.")]]
    shop, rec, _, _ = play(cwd, script, Person(cancel_after=1.0))
    assert shop.stopped.wait(10), "the tool's Call was not cancelled"
    assert finals(rec)["w1"]["outcome"] == "cancelled"


def call_directly(config: Any, session: AgentTurn | None) -> Any:
    """``tools/call`` on the server as a client of one's own would make it."""

    async def go() -> Any:
        token = active_turn.set(session)
        try:
            async with Client(config["instance"]) as client:
                return await client.call_tool("save", {"path": "a.txt", "text": "hi"})
        finally:
            active_turn.reset(token)

    return asyncio.run(go())


def test_the_server_runs_nothing_outside_a_run_or_without_an_allow() -> None:
    shop = Shop()
    config = claude_agent.as_server(shop.tools)
    outside = call_directly(config, None)
    assert outside.is_error
    assert outside.content[0].text == NOT_HERE
    session = AgentTurn(AllowAll())
    claude_agent.passes_of(session)
    try:
        unasked = call_directly(config, session)
    finally:
        session.close()
    assert unasked.is_error
    assert unasked.content[0].text == NO_PASS.format(tool="save")
    assert shop.got == []


KERNEL = """
import json, sys
sys.path.insert(0, {tests!r})
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
from mead_notebook import kernel_tools
from mead_notebook.adapters import claude_agent
from servers.anthropic_agent_server import AgentServer, Text, Use
from adapters.helpers import Person, asked, finals, recorded

code = "x = 6 * 7\\nprint('six times seven is', x)"
rec, _ = recorded(Person(deny={deny!r}))
script = [[Use("r1", "mcp__mead__run_python", {{"code": code}})], [Text("Done.")]]
with AgentServer(script) as server:
    given = server.options(cwd={cwd!r})
    given.mcp_servers = {{"mead": claude_agent.as_server(kernel_tools(timeout=10))}}
    claude_agent.run(given, "go", interaction=rec)
print("RESULT " + json.dumps({{
    "x": shell.user_ns.get("x"),
    "asked": [r.get("content") for r in asked(rec)],
    "final": finals(rec)["r1"],
}}))
"""


@pytest.mark.parametrize("deny", [{}, {"run_python": "no"}], ids=["allow", "deny"])
def test_run_python_through_as_server_runs_in_the_shell_only_on_allow(
    cwd: Path, deny: dict[str, str]
) -> None:
    tests = Path(__file__).resolve().parents[1]
    script = KERNEL.format(tests=str(tests), deny=deny, cwd=str(cwd))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tests
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stdout + done.stderr
    found = json.loads(lines[-1].removeprefix("RESULT "))
    code = "x = 6 * 7\nprint('six times seven is', x)"
    assert found["asked"] == [[{"type": "code", "language": "python", "code": code}]]
    if deny:
        assert found["x"] is None
        assert found["final"]["outcome"] == "denied"
    else:
        assert found["x"] == 42
        assert found["final"]["status"] == "completed"
        stdout = {"type": "output", "name": "stdout", "text": "six times seven is 42\n"}
        assert stdout in found["final"]["content"]
