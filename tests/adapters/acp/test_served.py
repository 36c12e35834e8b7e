"""The package's own tools served to an ACP agent over MCP (``acp.run(..., tools=)``).

The scripted agent calls them as Claude does (it asks first, and the Allow on
that card is a pass for exactly one call), as Codex does (it reports the call
and does not ask: the call asks when it arrives) or without a word. Each call
is one card; the pass binds one call of one tool with exactly the arguments the
card showed; the server refuses a request without its token, and the token is
nowhere a person or a file can see it.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from adapters.helpers import Person, asked, finals, recorded, steps
from mead_notebook import Allow, Call, Deny, tool
from mead_notebook.adapters import acp
from mead_notebook.interaction import Request
from mead_notebook.tools import preview

from .conftest import Script

pytestmark = pytest.mark.timeout(90)


class Bench:
    """The served tools: ``note`` keeps what it was given; ``wait`` waits for its cancel."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.stopped = threading.Event()

        @tool(kind="edit", preview=lambda text, times: preview.code(text * times, "text"))
        def note(text: str, times: int = 1) -> str:
            """Keep a note."""
            self.notes.append(text * times)
            return f"noted {text * times}"

        @tool(kind="execute")
        def wait(call: Call) -> str:
            """Wait until cancelled."""
            if call.wait_cancelled(30):
                self.stopped.set()
            return "waited"

        self.tools = [note, wait]


class ByArguments(Person):
    """Allows a call unless its arguments are in ``deny``."""

    def __init__(self, deny: list[dict[str, Any]] | None = None, **more: Any) -> None:
        super().__init__(**more)
        self.refused = list(deny or [])

    def decide(self, request: Request) -> Allow | Deny:
        if request["arguments"] in self.refused:
            return Deny("rejected", "not these")
        return Allow()


def mcp(**spec: Any) -> dict[str, Any]:
    return {"mcp": {"id": "m1", "tool": "note", "arguments": {"text": "a"}, **spec}}


def run(
    script: Script,
    tmp_path: Path,
    *turns: list[dict[str, Any]],
    person: Any = None,
    env: dict[str, str] | None = None,
) -> tuple[Any, Any, Bench]:
    bench = Bench()
    rec, _ = recorded(person or Person())
    session = acp.session(script.agent(turns, env=env), cwd=tmp_path, tools=bench.tools)
    try:
        results = [session.run("go", interaction=rec) for _ in turns]
    finally:
        session.close()
    return results[-1], rec, bench


def told(script: Script) -> list[tuple[str, bool]]:
    return [(e["text"], e["error"]) for e in script.events("mcp")]


# -- one card per call -------------------------------------------------------------------


def test_an_agent_that_asks_first_gets_one_card_and_its_allow_runs_the_call(
    script: Script, tmp_path: Path
) -> None:
    result, rec, bench = run(script, tmp_path, [mcp(report="claude", ask=True)])
    assert bench.notes == ["a"]
    [request] = asked(rec)
    assert (request["tool"], request["server"], request["kind"]) == ("note", "mead", "edit")
    assert request["arguments"] == {"text": "a"}
    assert request["content"] == [{"type": "code", "language": "text", "code": "a"}]
    assert steps(rec)["m1"][-4:] == ["ask", "register", "in_progress", "completed"]
    assert told(script) == [("noted a", False)]
    assert [(c.tool, c.status, c.result) for c in result.calls] == [
        ("note", "completed", "noted a")
    ]


def test_deny_on_the_agents_request_runs_nothing(script: Script, tmp_path: Path) -> None:
    _, rec, bench = run(
        script, tmp_path, [mcp(report="claude", ask=True)], person=Person(deny={"note": "no"})
    )
    assert bench.notes == []
    assert len(asked(rec)) == 1
    assert script.events("mcp") == []
    assert finals(rec)["m1"]["outcome"] == "denied"


def test_an_agent_that_does_not_ask_is_asked_on_the_card_of_its_report(
    script: Script, tmp_path: Path
) -> None:
    result, rec, bench = run(script, tmp_path, [mcp(report="codex")])
    assert bench.notes == ["a"]
    [request] = asked(rec)
    assert request["tool_call_id"] == "m1"
    assert list(steps(rec)) == ["m1"]
    assert result.calls[0].decided_by is None, "the call ran here, on the person's Allow"
    assert told(script) == [("noted a", False)]


def test_a_denied_call_that_did_not_ask_tells_the_agent_why_and_runs_nothing(
    script: Script, tmp_path: Path
) -> None:
    _, _, bench = run(script, tmp_path, [mcp(report="codex")], person=Person(deny={"note": "no"}))
    assert bench.notes == []
    [(text, error)] = told(script)
    assert error
    assert "denied" in text
    assert "no" in text


def test_a_call_nobody_reported_asks_on_a_card_of_its_own(script: Script, tmp_path: Path) -> None:
    _, rec, bench = run(script, tmp_path, [mcp()])
    assert bench.notes == ["a"]
    [request] = asked(rec)
    assert (request["tool"], request["server"]) == ("note", "mead")
    assert list(steps(rec)) == [request["tool_call_id"]]


def test_strict_leaves_a_served_call_to_its_card(script: Script, tmp_path: Path) -> None:
    bench = Bench()
    rec, _ = recorded(Person())
    agent = script.agent([[mcp(report="codex")]])
    result = acp.run(agent, "go", interaction=rec, cwd=tmp_path, strict=True, tools=bench.tools)
    assert result.stopped is None
    assert bench.notes == ["a"]


# -- the tool's own validation and Cancel ----------------------------------------------


def test_arguments_the_tool_refuses_are_told_to_the_agent_and_nobody_is_asked(
    script: Script, tmp_path: Path
) -> None:
    _, rec, bench = run(script, tmp_path, [mcp(report="codex", arguments={"text": 3})])
    assert bench.notes == []
    assert asked(rec) == []
    [(text, error)] = told(script)
    assert error
    assert text.startswith("Invalid arguments for note: text:")
    assert list(steps(rec)) == ["m1"]
    assert finals(rec)["m1"]["outcome"] == "invalid_arguments"


def test_an_agent_asking_about_arguments_the_tool_refuses_is_rejected_unasked(
    script: Script, tmp_path: Path
) -> None:
    _, rec, bench = run(script, tmp_path, [mcp(report="claude", ask=True, arguments={"x": 1})])
    assert bench.notes == []
    assert asked(rec) == []
    [answer] = script.events("permission")
    assert answer["option"] == "reject"


def test_cancel_on_the_card_stops_the_call_alone(script: Script, tmp_path: Path) -> None:
    result, rec, bench = run(
        script,
        tmp_path,
        [mcp(report="codex", tool="wait", arguments={}), {"text": "after"}],
        person=Person(cancel_after=0.3),
    )
    assert bench.stopped.wait(5), "the tool's Call was not cancelled"
    assert finals(rec)["m1"]["outcome"] == "cancelled"
    assert told(script) == [("The call to wait was cancelled.", True)]
    assert (result.stop_reason, result.text) == ("end_turn", "after")


# -- what an Allow through the agent's request covers -----------------------------------


def test_an_allow_covers_exactly_the_arguments_its_card_showed(
    script: Script, tmp_path: Path
) -> None:
    step = mcp(report="claude", ask=True, call_arguments={"text": "b"})
    _, rec, bench = run(script, tmp_path, [step], person=ByArguments(deny=[{"text": "b"}]))
    assert bench.notes == []
    first, second = asked(rec)
    assert (first["arguments"], second["arguments"]) == ({"text": "a"}, {"text": "b"})
    assert second["tool_call_id"] != first["tool_call_id"]
    [(text, error)] = told(script)
    assert error
    assert "denied" in text


def test_a_default_the_card_did_not_show_is_another_call(script: Script, tmp_path: Path) -> None:
    step = mcp(report="claude", ask=True, call_arguments={"text": "a", "times": 1})
    _, rec, bench = run(script, tmp_path, [step])
    assert len(asked(rec)) == 2
    assert bench.notes == ["a"]


def test_an_allow_covers_one_call_when_two_race(script: Script, tmp_path: Path) -> None:
    step = mcp(report="claude", ask=True, times=2)
    _, rec, bench = run(script, tmp_path, [step], person=ByArguments())
    assert bench.notes == ["a", "a"]
    first, second = asked(rec)
    assert second["tool_call_id"] != first["tool_call_id"]
    assert sorted(s[-1] for s in steps(rec).values()) == ["completed", "completed"]


def test_a_call_again_after_its_allow_is_asked_again(script: Script, tmp_path: Path) -> None:
    turn = [mcp(report="claude", ask=True), mcp(report="claude")]
    _, rec, bench = run(script, tmp_path, turn, person=ByArguments(deny=[]))
    assert bench.notes == ["a", "a"]
    assert len(asked(rec)) == 2


def test_a_pass_is_taken_once_even_under_a_reused_id(script: Script, tmp_path: Path) -> None:
    turn = [mcp(report="claude", ask=True), mcp(report="codex")]
    _, rec, bench = run(script, tmp_path, turn, person=Person())
    assert bench.notes == ["a", "a"]
    assert len(asked(rec)) == 2


def test_an_allow_for_another_tool_is_no_pass(script: Script, tmp_path: Path) -> None:
    other = {
        "call": {
            "id": "b1",
            "title": "note",
            "kind": "other",
            "input": {"text": "a"},
            "meta": {"claudeCode": {"toolName": "note"}},
            "ask": True,
        }
    }
    _, rec, bench = run(script, tmp_path, [other, mcp()])
    assert len(asked(rec)) == 2
    assert bench.notes == ["a"]


def test_an_allow_does_not_outlive_its_turn(script: Script, tmp_path: Path) -> None:
    first = [mcp(report="claude", ask=True, times=0)]
    second = [mcp()]
    _, rec, bench = run(script, tmp_path, first, second)
    assert bench.notes == ["a"]
    assert len(asked(rec)) == 2


# -- the server: token, transport, lifetime ---------------------------------------------


@pytest.mark.parametrize("token", ["wrong", "none"])
def test_a_request_without_the_token_is_refused(script: Script, tmp_path: Path, token: str) -> None:
    bench = Bench()
    rec, _ = recorded(Person())
    session = acp.session(script.agent([[mcp(token=token)]]), cwd=tmp_path, tools=bench.tools)
    try:
        session.run("go", interaction=rec)
        assert session.served is not None
        refused = session.served.server.refused
    finally:
        session.close()
    assert refused >= 1
    assert bench.notes == []
    assert asked(rec) == []
    [(_, error)] = told(script)
    assert error


def test_the_server_listens_on_loopback_and_refuses_a_bare_request(
    script: Script, tmp_path: Path
) -> None:
    bench = Bench()
    session = acp.session(script.agent([[mcp()]]), cwd=tmp_path, tools=bench.tools)
    rec, _ = recorded(Person())
    try:
        session.run("go", interaction=rec)
        assert session.served is not None
        url = session.served.server.url
        assert url.startswith("http://127.0.0.1:")
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "note", "arguments": {"text": "x"}},
        }
        bare = httpx.post(url, json=body, timeout=5)
        forged = httpx.post(url, json=body, timeout=5, headers={"Authorization": "Bearer x"})
    finally:
        session.close()
    assert (bare.status_code, forged.status_code) == (401, 401)
    assert bench.notes == ["a"]
    with pytest.raises(httpx.ConnectError):
        httpx.post(url, json=body, timeout=5)


def test_the_token_is_nowhere_a_person_or_a_file_sees_it(
    script: Script, tmp_path: Path, make: Any
) -> None:
    from mead_notebook.notebook import static, transcript
    from mead_notebook.policies import AllowAll

    audit = tmp_path / "audit.jsonl"
    widget, comm = make(policy=AllowAll(), audit=str(audit))
    bench = Bench()
    session = acp.session(
        script.agent([[mcp(report="claude", ask=True), mcp(report="codex")]]),
        cwd=tmp_path,
        tools=bench.tools,
    )
    try:
        result = session.run("go", interaction=widget)
        assert session.served is not None
        token = session.served.server.secret()
    finally:
        session.close()
    assert bench.notes == ["a", "a"]
    state = widget._turn_state()
    seen = {
        "result": repr(result)
        + repr(result.calls)
        + json.dumps([c.__dict__ for c in result.calls], default=str),
        "widget": json.dumps(widget.get_state(), default=str),
        "comm": repr(comm.sent) if hasattr(comm, "sent") else repr(comm.__dict__),
        "markdown": transcript.to_markdown(state),
        "html": static.to_html(state, 1),
        "audit": audit.read_text(),
        "agent": script.log.read_text(),
    }
    assert len(token) >= 32
    assert all(token not in text for text in seen.values()), [
        k for k, v in seen.items() if token in v
    ]
    assert "note" in seen["audit"]


def test_an_agent_without_mcp_over_http_reaches_the_tools_through_the_bridge(
    script: Script, tmp_path: Path
) -> None:
    _, rec, bench = run(
        script, tmp_path, [mcp(report="codex")], env={"MEAD_SCRIPTED_MCP_HTTP": "0"}
    )
    [opened] = script.events("new_session")
    assert opened["mcp"] == [{"name": "mead", "http": False}]
    assert bench.notes == ["a"]
    assert len(asked(rec)) == 1


def test_the_server_closes_with_the_session(script: Script, tmp_path: Path) -> None:
    bench = Bench()
    session = acp.session(script.agent([[mcp()]]), cwd=tmp_path, tools=bench.tools)
    rec, _ = recorded(Person())
    session.run("go", interaction=rec)
    assert session.served is not None
    server = session.served.server
    assert server.listening
    session.close()
    assert not server.listening


def test_a_call_outside_a_turn_is_refused(tmp_path: Path) -> None:
    import asyncio

    from mead_notebook.adapters.acp._served import NO_TURN, Served

    bench = Bench()
    served = Served(bench.tools, lambda: None)
    result = asyncio.run(served.on_call("note", {"text": "a"}))
    assert result.is_error
    assert result.content[0].text == NO_TURN
    assert bench.notes == []


def test_no_tools_no_server(script: Script, tmp_path: Path) -> None:
    session = acp.session(script.agent([[{"text": "hi"}]]), cwd=tmp_path)
    try:
        rec, _ = recorded(Person())
        session.run("go", interaction=rec)
    finally:
        session.close()
    assert session.served is None
    [opened] = script.events("new_session")
    assert opened["mcp"] == []


def test_the_adapter_loads_the_server_stack_only_when_tools_are_served() -> None:
    import subprocess
    import sys

    code = (
        "import sys, mead_notebook.adapters.acp\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'uvicorn', 'starlette'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
