"""OpenAIModel against a local server speaking the chat completions stream format."""

from __future__ import annotations

import json

import pytest
from servers.provider_server import (
    ADD_SPEC,
    ProviderServer,
    Reply,
    openai_chunk,
    openai_text,
    openai_tool_fragment,
    sse,
)
from servers.recording import RecordingInteraction

from mead_notebook import Router, TurnError
from mead_notebook.model import Message, ModelError, ToolCall
from mead_notebook.providers import OpenAIModel
from mead_notebook.tools import tool


def model_for(server: ProviderServer, **options: object) -> OpenAIModel:
    options.setdefault("timeout", 5.0)
    return OpenAIModel("test-model", base_url=f"{server.url}/v1", **options)  # type: ignore[arg-type]


def test_text_fragments_stream_in_order_as_they_arrive(server: ProviderServer) -> None:
    reply = Reply(frames=openai_text("Hel", "lo, ", "world"), gate_after=2)
    server.add(reply)
    stream = iter(model_for(server).reply([{"role": "user", "content": "hi"}], []))

    first = next(stream)  # the server holds back everything after it
    assert first == "Hel"
    assert not reply.gate.is_set()
    reply.gate.set()
    assert [first, *stream] == ["Hel", "lo, ", "world"]

    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer not-needed"
    assert request.body["model"] == "test-model"
    assert request.body["stream"] is True
    assert request.body["messages"] == [{"role": "user", "content": "hi"}]
    assert "tools" not in request.body


def test_tool_calls_are_assembled_from_interleaved_fragments(server: ProviderServer) -> None:
    frames = [
        openai_chunk({"role": "assistant", "content": "Adding "}),
        openai_chunk({"content": "twice."}),
        openai_tool_fragment(0, id="call_A", name="add", arguments=""),
        openai_tool_fragment(1, id="call_B", name="add", arguments='{"a"'),
        openai_tool_fragment(0, arguments='{"a": 1, '),
        openai_tool_fragment(1, arguments=': 10, "b": 20}'),
        openai_tool_fragment(0, arguments='"b": 2}'),
        openai_chunk({}, "tool_calls"),
        sse("[DONE]"),
    ]
    server.add(Reply(frames=frames))
    items = list(model_for(server).reply([{"role": "user", "content": "add"}], [ADD_SPEC]))

    assert items == [
        "Adding ",
        "twice.",
        ToolCall("add", {"a": 1, "b": 2}, "call_A"),
        ToolCall("add", {"a": 10, "b": 20}, "call_B"),
    ]
    assert server.requests[0].body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two integers.",
                "parameters": ADD_SPEC["parameters"],
            },
        }
    ]


def test_a_two_round_turn_through_the_router_sends_the_tool_result(
    server: ProviderServer,
) -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    server.add(
        Reply(
            frames=[
                openai_chunk({"role": "assistant", "content": "Let me "}),
                openai_chunk({"content": "add."}),
                openai_tool_fragment(0, id="call_xyz", name="add", arguments='{"a": 2,'),
                openai_tool_fragment(0, arguments=' "b": 3}'),
                openai_chunk({}, "tool_calls"),
                sse("[DONE]"),
            ]
        ),
        Reply(frames=openai_text("The sum ", "is 5.")),
    )
    interaction = RecordingInteraction()
    router = Router(model_for(server), tools=[add], system="Be brief.")
    result = router.run("What is 2 + 3?", interaction=interaction)

    assert result.stop_reason == "end_turn"
    assert result.text == "Let me add.The sum is 5."
    assert interaction.text == ["Let me ", "add.", "The sum ", "is 5."]
    (record,) = result.calls
    assert (record.tool_call_id, record.tool, record.status, record.result) == (
        "call_xyz",
        "add",
        "completed",
        "5",
    )
    assert interaction.statuses("call_xyz") == ["pending", "in_progress", "completed"]

    first, second = server.requests
    assert [t["function"]["name"] for t in first.body["tools"]] == ["add", "ask_user"]
    assert second.body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 2 + 3?"},
        {
            "role": "assistant",
            "content": "Let me add.",
            "tool_calls": [
                {
                    "id": "call_xyz",
                    "type": "function",
                    "function": {"name": "add", "arguments": json.dumps({"a": 2, "b": 3})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_xyz", "content": "5"},
    ]


def test_http_500_is_retried_then_succeeds(server: ProviderServer) -> None:
    server.add(
        Reply(500, body={"error": {"message": "upstream hiccup"}}),
        Reply(frames=openai_text("ok")),
    )
    items = list(model_for(server, max_retries=2).reply([{"role": "user", "content": "x"}], []))
    assert items == ["ok"]
    assert len(server.requests) == 2


def test_http_500_retries_are_bounded(server: ProviderServer) -> None:
    for _ in range(4):
        server.add(Reply(500, body={"error": {"message": "still down"}}))
    with pytest.raises(ModelError) as caught:
        list(model_for(server, max_retries=1).reply([{"role": "user", "content": "x"}], []))
    message = str(caught.value)
    assert message.startswith("openai: test-model: HTTP 500")
    assert "still down" in message
    assert "after 1 retries" in message
    assert len(server.requests) == 2


def test_http_401_is_not_retried_and_says_why(server: ProviderServer) -> None:
    server.add(
        Reply(401, body={"error": {"message": "Incorrect API key provided", "type": "auth"}}),
        Reply(frames=openai_text("never sent")),
    )
    model = model_for(server, max_retries=2)
    with pytest.raises(ModelError) as caught:
        list(model.reply([{"role": "user", "content": "x"}], []))
    assert caught.value.provider == "openai"
    assert str(caught.value) == (
        "openai: test-model: HTTP 401, the API key was refused: Incorrect API key provided"
    )
    assert len(server.requests) == 1


def test_a_malformed_event_fails_and_keeps_the_text(server: ProviderServer) -> None:
    server.add(
        Reply(
            frames=[
                openai_chunk({"role": "assistant", "content": "Hello"}),
                b"data: {not json\n\n",
                *openai_text(" never"),
            ]
        )
    )
    interaction = RecordingInteraction()
    with pytest.raises(TurnError) as caught:
        Router(model_for(server)).run("hi", interaction=interaction)
    assert "openai: test-model: the server sent a malformed stream event" in str(caught.value)
    assert caught.value.result.text == "Hello"
    assert interaction.text == ["Hello"]
    assert len(server.requests) == 1


def test_arguments_that_are_not_json_fail_clearly(server: ProviderServer) -> None:
    server.add(
        Reply(
            frames=[
                openai_tool_fragment(0, id="call_1", name="add", arguments='{"a": 2,'),
                openai_tool_fragment(0, arguments=' "b": }'),
                openai_chunk({}, "tool_calls"),
                sse("[DONE]"),
            ]
        )
    )
    with pytest.raises(ModelError) as caught:
        list(model_for(server).reply([{"role": "user", "content": "x"}], [ADD_SPEC]))
    assert "the arguments of the call to 'add' are not valid JSON" in str(caught.value)


def test_a_connection_dropped_mid_answer_names_the_provider_and_keeps_the_text(
    server: ProviderServer,
) -> None:
    server.add(
        Reply(frames=openai_text("Hello", " there", " and more"), drop_after=3),
        Reply(frames=openai_text("a retry must not happen")),
    )
    interaction = RecordingInteraction()
    with pytest.raises(TurnError) as caught:
        Router(model_for(server, max_retries=2)).run("hi", interaction=interaction)
    message = str(caught.value)
    assert message.startswith("openai: test-model: the connection dropped mid-answer")
    assert caught.value.result.text == "Hello there"
    assert interaction.text == ["Hello", " there"]
    assert len(server.requests) == 1


def test_a_drop_before_any_text_is_retried(server: ProviderServer) -> None:
    server.add(
        Reply(frames=openai_text("lost"), drop_after=1),
        Reply(frames=openai_text("second ", "try")),
    )
    items = list(model_for(server, max_retries=1).reply([{"role": "user", "content": "x"}], []))
    assert items == ["second ", "try"]
    assert len(server.requests) == 2


def test_a_stalled_stream_times_out_and_keeps_the_text(server: ProviderServer) -> None:
    server.add(Reply(frames=openai_text("Partial", " rest"), stall_after=2))
    model = model_for(server, timeout=0.5, max_retries=0)
    with pytest.raises(TurnError) as caught:
        Router(model).run("hi", interaction=RecordingInteraction())
    assert "openai: test-model: the server sent nothing for 0.5 s mid-answer (timed out)" in str(
        caught.value
    )
    assert caught.value.result.text == "Partial"


def test_an_unreachable_server_is_a_clear_error() -> None:
    with ProviderServer() as s:
        url = f"{s.url}/v1"
    model = OpenAIModel("test-model", base_url=url, timeout=2.0, max_retries=0)
    with pytest.raises(ModelError) as caught:
        list(model.reply([{"role": "user", "content": "x"}], []))
    assert str(caught.value).startswith(f"openai: test-model: could not connect to {url}/")


def test_a_key_is_required_without_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OpenAIModel needs an API key"):
        OpenAIModel("gpt-4o-mini")


def test_failed_tool_results_are_marked_as_errors(server: ProviderServer) -> None:
    server.add(Reply(frames=openai_text("noted")))
    messages: list[Message] = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "add", "arguments": {"a": 1}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "b is missing", "is_error": True},
    ]
    assert list(model_for(server).reply(messages, [ADD_SPEC])) == ["noted"]
    sent = server.requests[0].body["messages"]
    assert sent[1]["content"] is None
    assert sent[1]["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'
    assert sent[2] == {"role": "tool", "tool_call_id": "c1", "content": "Error: b is missing"}


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_streamed_reasoning_arrives_as_thoughts_apart_from_the_text(
    server: ProviderServer, field: str
) -> None:
    frames = [
        openai_chunk({"role": "assistant", "content": ""}),
        openai_chunk({field: "Think "}),
        openai_chunk({field: "first."}),
        openai_chunk({"content": "Answer"}),
        openai_chunk({}, "stop"),
        sse("[DONE]"),
    ]
    server.add(Reply(frames=frames))
    result = Router(model_for(server)).run("hi")
    assert result.text == "Answer"
    assert result.thoughts == "Think first."
