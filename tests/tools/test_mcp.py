"""MCP servers as tools: the third-party time server and the tests' own progress server."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers.recording import RecordingInteraction

from mead_notebook.errors import MCPServerError
from mead_notebook.model import ScriptedModel, ToolCall
from mead_notebook.router import Router
from mead_notebook.tools import ToolArgumentError
from mead_notebook.tools.mcp import MCPServer

PROGRESS_SERVER = str(Path(__file__).parent.parent / "servers" / "progress_server.py")


def time_server(**options: object) -> MCPServer:
    return MCPServer.stdio(
        sys.executable,
        ["-m", "mcp_server_time", "--local-timezone", "UTC"],
        name="time",
        timeout=30.0,
        **options,  # type: ignore[arg-type]
    )


def progress_server(*args: str, **options: object) -> MCPServer:
    options.setdefault("timeout", 30.0)
    return MCPServer.stdio(
        sys.executable,
        [PROGRESS_SERVER, *args],
        name="progress",
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="module")
def trusted() -> Iterator[MCPServer]:
    server = progress_server(trusted=True)
    server.open()
    yield server
    server.close()


def wait_for(predicate: object, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_the_time_server_answers_a_router_turn() -> None:
    server = time_server()
    model = ScriptedModel([[ToolCall("get_current_time", {"timezone": "Asia/Tokyo"})], ["Done."]])
    interaction = RecordingInteraction()
    with Router(model, tools=[server]) as router:
        assert {"get_current_time", "convert_time"} <= set(router.tools)
        result = router.run("What time is it in Tokyo?", interaction=interaction)
        assert server.running
    assert not server.running

    assert result.stop_reason == "end_turn"
    assert result.text == "Done."
    (record,) = result.calls
    assert (record.tool, record.server, record.status) == ("get_current_time", "time", "completed")
    assert record.result is not None
    answer = json.loads(record.result)
    assert answer["timezone"] == "Asia/Tokyo"
    assert answer["datetime"].endswith("+09:00")
    (request,) = interaction.requests
    assert (request["server"], request["class"]) == ("time", "effect")
    assert request["arguments"] == {"timezone": "Asia/Tokyo"}
    tool_message = result.messages[-2]
    assert tool_message["role"] == "tool"
    assert "Asia/Tokyo" in tool_message["content"]


def test_arguments_are_checked_against_the_tool_schema() -> None:
    with time_server() as server:
        tool = next(t for t in server.tools if t.name == "get_current_time")
        assert tool.parameters["required"] == ["timezone"]
        assert tool.validate({"timezone": "UTC"}) == {"timezone": "UTC"}
        with pytest.raises(ToolArgumentError, match="'timezone' is a required property"):
            tool.validate({})
        with pytest.raises(ToolArgumentError, match="timezone: 5 is not of type 'string'"):
            tool.validate({"timezone": 5})

        model = ScriptedModel([[ToolCall("get_current_time", {"zone": "UTC"})], ["Sorry."]])
        interaction = RecordingInteraction()
        result = Router(model, tools=[server]).run("time?", interaction=interaction)
    (record,) = result.calls
    assert (record.status, record.outcome) == ("failed", "invalid_arguments")
    assert interaction.requests == []


def test_read_only_hints_count_only_for_trusted_servers(trusted: MCPServer) -> None:
    classes = {t.name: t.tool_class for t in trusted.tools}
    assert classes["peek"] == "read"
    assert classes["echo"] == "effect"
    assert classes["crash"] == "effect"
    with progress_server(trusted=False) as untrusted:
        assert {t.name: t.tool_class for t in untrusted.tools}["peek"] == "effect"


def test_progress_reaches_the_interaction(trusted: MCPServer, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    model = ScriptedModel(
        [[ToolCall("slow", {"steps": 5, "marker": str(marker)}, "call_slow")], ["Finished."]]
    )
    interaction = RecordingInteraction()
    result = Router(model, tools=[trusted]).run("count", interaction=interaction)

    (record,) = result.calls
    assert (record.status, record.result) == ("completed", '{"result": "done after 5 steps"}')
    progress = [
        (u["progress"], u["current_step"])
        for u in interaction.updates
        if u["status"] == "in_progress" and u["current_step"]
    ]
    assert progress == [(i / 5, f"step {i + 1} of 5") for i in range(5)]
    assert interaction.statuses("call_slow")[-1] == "completed"
    assert marker.read_text() == "finished"


def test_cancelling_a_call_cancels_it_on_the_server(trusted: MCPServer, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    model = ScriptedModel(
        [
            [ToolCall("slow", {"steps": 200, "marker": str(marker)}, "call_slow")],
            [ToolCall("echo", {"text": "still", "times": 2}, "call_echo")],
            ["Stopped."],
        ]
    )
    interaction = RecordingInteraction()
    turn = Router(model, tools=[trusted]).start("count", interaction=interaction)
    assert interaction.registered.wait(10)
    assert wait_for(lambda: any(u["progress"] for u in interaction.updates))
    interaction.calls["call_slow"].cancel()
    result = turn.result(timeout=20)

    slow, echo = result.calls
    assert (slow.status, slow.outcome) == ("failed", "cancelled")
    assert (echo.status, echo.result) == ("completed", '{"result": "still still"}')
    assert wait_for(marker.exists)
    assert marker.read_text() == "cancelled"
    assert result.text == "Stopped."


def test_an_error_result_fails_the_call_with_the_server_text(trusted: MCPServer) -> None:
    model = ScriptedModel([[ToolCall("refuse", {"reason": "not today"})], ["Oh."]])
    result = Router(model, tools=[trusted]).run("try", interaction=RecordingInteraction())
    (record,) = result.calls
    assert (record.status, record.outcome) == ("failed", "error")
    assert record.error == (
        "refuse failed: MCPToolError: Error executing tool refuse: refused: not today"
    )


def test_structured_content_is_passed_as_json(trusted: MCPServer) -> None:
    model = ScriptedModel([[ToolCall("forecast", {"city": "Oslo"})], ["Nice."]])
    result = Router(model, tools=[trusted]).run("weather", interaction=RecordingInteraction())
    (record,) = result.calls
    assert record.result is not None
    assert json.loads(record.result) == {"city": "Oslo", "temperature": 21, "sky": "clear"}


def test_a_hanging_call_ends_failed_and_the_server_goes_on() -> None:
    with progress_server(call_timeout=1.0) as server:
        model = ScriptedModel([[ToolCall("hang", {})], ["Gave up."]])
        router = Router(model, tools=[server], tool_timeout=0.3)
        result = router.run("wait", interaction=RecordingInteraction())
        (record,) = result.calls
        assert (record.status, record.outcome) == ("failed", "timeout")

        model = ScriptedModel(
            [[ToolCall("hang", {})], [ToolCall("echo", {"text": "alive"})], ["Moving on."]]
        )
        result = Router(model, tools=[server]).run("wait", interaction=RecordingInteraction())
    hang, echo = result.calls
    assert (hang.status, hang.outcome) == ("failed", "error")
    assert hang.error is not None
    assert "MCP server 'progress' did not answer hang within 1 s" in hang.error
    assert (echo.status, echo.result) == ("completed", '{"result": "alive"}')


def test_a_crash_mid_call_fails_that_call_and_the_later_ones() -> None:
    model = ScriptedModel(
        [[ToolCall("crash", {})], [ToolCall("echo", {"text": "anyone?"})], ["The server died."]]
    )
    with progress_server() as server:
        result = Router(model, tools=[server]).run("crash", interaction=RecordingInteraction())
        assert not server.running
    crash, echo = result.calls
    assert (crash.status, crash.outcome) == ("failed", "error")
    assert crash.error is not None
    assert "MCP server 'progress' closed the connection during crash" in crash.error
    assert "crashing on purpose" in crash.error
    assert (echo.status, echo.outcome) == ("failed", "error")
    assert echo.error is not None
    assert "MCP server 'progress' cannot run echo" in echo.error
    assert result.stop_reason == "end_turn"
    assert result.text == "The server died."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, PROGRESS_SERVER, "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def listening() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        assert wait_for(listening, 20), "the HTTP MCP server did not start"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def test_streamable_http_transport(http_server: str, tmp_path: Path) -> None:
    server = MCPServer.http(http_server, name="remote", timeout=10.0)
    marker = tmp_path / "marker"
    model = ScriptedModel(
        [
            [
                ToolCall("peek", {"key": "colour"}, "call_peek"),
                ToolCall("slow", {"steps": 3, "marker": str(marker)}, "call_slow"),
            ],
            ["All read."],
        ]
    )
    interaction = RecordingInteraction()
    with Router(model, tools=[server]) as router:
        result = router.run("look", interaction=interaction)
    assert not server.running

    peek, slow = result.calls
    assert (peek.server, peek.status, peek.result) == (
        "remote",
        "completed",
        '{"result": "the value of colour"}',
    )
    assert interaction.requests[0]["class"] == "effect"
    assert slow.status == "completed"
    steps = [u["current_step"] for u in interaction.updates if u["tool_call_id"] == "call_slow"]
    assert [s for s in steps if s] == ["step 1 of 3", "step 2 of 3", "step 3 of 3"]
    assert marker.read_text() == "finished"


def test_a_bad_command_is_a_clear_error_from_open_and_the_router() -> None:
    server = MCPServer.stdio("/nonexistent/mcp-server", ["--flag"], name="ghost")
    with pytest.raises(MCPServerError) as caught:
        server.open()
    assert str(caught.value) == (
        "could not start MCP server 'ghost' (/nonexistent/mcp-server --flag): "
        "the command was not found"
    )
    router = Router(ScriptedModel([["never"]]), tools=[server])
    with pytest.raises(MCPServerError, match="the command was not found"):
        router.run("hi")


def test_a_server_that_exits_on_start_is_a_clear_error() -> None:
    server = progress_server("--crash-on-start")
    with pytest.raises(MCPServerError) as caught:
        server.open()
    message = str(caught.value)
    assert "MCP server 'progress'" in message
    assert "closed the connection during startup" in message
    assert "cannot start, configuration is broken" in message


def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    server = MCPServer.stdio(
        sys.executable, ["-c", "import time; time.sleep(30)"], name="mute", timeout=1.0
    )
    with pytest.raises(MCPServerError, match=r"did not answer the MCP handshake within 1 s"):
        server.open()
    assert not server.running
