"""The offline scripted Anthropic server, read by Anthropic's own client over real HTTP."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import anthropic
import pytest

from mead_notebook import ToolCall
from mead_notebook.adapters.claude_agent.scripted import (
    ScriptedServer,
    Text,
    Think,
    Use,
    blocks,
)

TOOLS: list[Any] = [{"name": "Write", "description": "w", "input_schema": {"type": "object"}}]


def stream(server: ScriptedServer, messages: list[Any], tools: list[Any] = TOOLS) -> Any:
    client = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0, timeout=10)
    with client.messages.stream(model="m", max_tokens=10, messages=messages, tools=tools) as events:
        texts = [e.text for e in events if e.type == "text"]
        return texts, events.get_final_message()


def test_a_reply_joins_text_and_names_tool_calls() -> None:
    reply = ["a", "b", Think("hm"), ToolCall("Write", {"x": 1}), Use("u", "Bash"), "c"]
    assert blocks(reply, 3) == [
        Text("a", "b"),
        Think("hm"),
        Use("toolu_3_3", "Write", {"x": 1}),
        Use("u", "Bash", {}),
        Text("c"),
    ]
    with pytest.raises(TypeError, match="not 5"):
        ScriptedServer([["a", 5]])  # type: ignore[list-item]


def test_the_conversation_gets_the_reply_its_history_has_reached() -> None:
    script = [
        ["Writing ", "it. ", ToolCall("Write", {"file_path": "a.txt", "content": "hi"}, "w1")],
        ["All ", "done."],
    ]
    with ScriptedServer(script) as server:
        texts, first = stream(server, [{"role": "user", "content": "go"}])
        assert texts == ["Writing ", "it. "]
        assert first.stop_reason == "tool_use"
        [text, use] = first.content
        assert (text.text, use.id, use.name) == ("Writing it. ", "w1", "Write")
        assert use.input == {"file_path": "a.txt", "content": "hi"}
        result = {"type": "tool_result", "tool_use_id": "w1", "content": "written"}
        history = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [use.model_dump(exclude_none=True)]},
            {"role": "user", "content": [result]},
        ]
        texts, second = stream(server, history)
        assert (texts, second.stop_reason) == (["All ", "done."], "end_turn")
        assert stream(server, [*history, *history[1:]])[0] == ["Done."]
        assert first.id != second.id
        assert server.tool_results() == {"w1": ("written", False)}
        assert len(server.requests) == 3


def test_side_requests_never_take_a_reply() -> None:
    with ScriptedServer([["only for the conversation"]]) as server:
        assert stream(server, [{"role": "user", "content": "title?"}], tools=[])[0] == ["ok"]
        head = urllib.request.Request(server.url + "/", method="HEAD")
        with urllib.request.urlopen(head, timeout=10) as answer:
            assert answer.status == 200
        assert server.requests == []
        assert stream(server, [{"role": "user", "content": "go"}])[0] == [
            "only for the conversation"
        ]


def test_options_point_the_cli_at_the_server_and_the_home_goes_with_it() -> None:
    with ScriptedServer() as server:
        options = server.options(cwd="repo", env={"EXTRA": "1"})
        env: dict[str, str] = dict(options.env)
        home = Path(env["HOME"])
        assert home.is_dir()
        assert (env["ANTHROPIC_BASE_URL"], env["EXTRA"], options.cwd) == (server.url, "1", "repo")
        assert (options.setting_sources, env["CLAUDE_CONFIG_DIR"]) == ([], str(home / ".claude"))
        body = json.dumps({"messages": []}).encode()
        req = urllib.request.Request(server.url + "/v1/messages/count_tokens", data=body)
        with urllib.request.urlopen(req, timeout=10) as answer:
            assert json.load(answer) == {"input_tokens": 10}
    assert not home.exists()
