"""AnthropicModel against a local server speaking the messages stream format."""

from __future__ import annotations

import pytest
from servers.provider_server import (
    ADD_SPEC,
    ProviderServer,
    Reply,
    anthropic_block_stop,
    anthropic_end,
    anthropic_json_delta,
    anthropic_start,
    anthropic_text,
    anthropic_text_block,
    anthropic_tool_start,
    sse,
)
from servers.recording import RecordingInteraction

from mead_notebook import Router, TurnError
from mead_notebook.model import Message, ModelError, Thought, ToolCall
from mead_notebook.providers import AnthropicModel
from mead_notebook.tools import tool


def model_for(server: ProviderServer, **options: object) -> AnthropicModel:
    options.setdefault("timeout", 5.0)
    return AnthropicModel(
        "claude-test",
        api_key="test-key",
        base_url=server.url,
        **options,  # type: ignore[arg-type]
    )


def test_text_fragments_stream_in_order_as_they_arrive(server: ProviderServer) -> None:
    reply = Reply(frames=anthropic_text("Hel", "lo, ", "world"), gate_after=3)
    server.add(reply)
    stream = iter(model_for(server).reply([{"role": "user", "content": "hi"}], []))

    first = next(stream)  # the server holds back everything after it
    assert first == "Hel"
    assert not reply.gate.is_set()
    reply.gate.set()
    assert [first, *stream] == ["Hel", "lo, ", "world"]

    (request,) = server.requests
    assert request.path == "/v1/messages"
    sent_key = request.headers.get("x-api-key") or request.headers["authorization"]
    assert sent_key.removeprefix("Bearer ") == "test-key"
    assert request.body["model"] == "claude-test"
    assert request.body["max_tokens"] == 4096
    assert request.body["stream"] is True
    assert request.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]
    assert "system" not in request.body
    assert "tools" not in request.body


def test_tool_calls_are_assembled_from_split_input_json(server: ProviderServer) -> None:
    frames = [
        anthropic_start(),
        *anthropic_text_block(0, "Adding ", "twice."),
        anthropic_tool_start(1, "toolu_A", "add"),
        anthropic_json_delta(1, ""),
        anthropic_json_delta(1, '{"a": 1, '),
        anthropic_json_delta(1, '"b": 2}'),
        anthropic_block_stop(1),
        anthropic_tool_start(2, "toolu_B", "add"),
        anthropic_json_delta(2, '{"a"'),
        anthropic_json_delta(2, ': 10, "b": 20}'),
        anthropic_block_stop(2),
        *anthropic_end("tool_use"),
    ]
    server.add(Reply(frames=frames))
    items = list(model_for(server).reply([{"role": "user", "content": "add"}], [ADD_SPEC]))

    assert items == [
        "Adding ",
        "twice.",
        ToolCall("add", {"a": 1, "b": 2}, "toolu_A"),
        ToolCall("add", {"a": 10, "b": 20}, "toolu_B"),
    ]
    assert server.requests[0].body["tools"] == [
        {
            "name": "add",
            "description": "Add two integers.",
            "input_schema": ADD_SPEC["parameters"],
        }
    ]


def test_a_two_round_turn_through_the_router_sends_the_tool_results(
    server: ProviderServer,
) -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    server.add(
        Reply(
            frames=[
                anthropic_start(),
                *anthropic_text_block(0, "Let me ", "add."),
                anthropic_tool_start(1, "toolu_1", "add"),
                anthropic_json_delta(1, '{"a": 2,'),
                anthropic_json_delta(1, ' "b": 3}'),
                anthropic_block_stop(1),
                anthropic_tool_start(2, "toolu_2", "add"),
                anthropic_json_delta(2, '{"a": 1}'),
                anthropic_block_stop(2),
                *anthropic_end("tool_use"),
            ]
        ),
        Reply(frames=anthropic_text("The sum ", "is 5.")),
    )
    interaction = RecordingInteraction()
    router = Router(model_for(server), tools=[add], system="Be brief.")
    result = router.run("What is 2 + 3?", interaction=interaction)

    assert result.stop_reason == "end_turn"
    assert result.text == "Let me add.The sum is 5."
    assert interaction.text == ["Let me ", "add.", "The sum ", "is 5."]
    good, bad = result.calls
    assert (good.tool_call_id, good.status, good.result) == ("toolu_1", "completed", "5")
    assert (bad.tool_call_id, bad.status, bad.outcome) == ("toolu_2", "failed", "invalid_arguments")

    first, second = server.requests
    assert [t["name"] for t in first.body["tools"]] == ["add", "ask_user"]
    assert second.body["system"] == "Be brief."
    user, assistant, results = second.body["messages"]
    assert user == {"role": "user", "content": [{"type": "text", "text": "What is 2 + 3?"}]}
    assert assistant == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me add."},
            {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}},
            {"type": "tool_use", "id": "toolu_2", "name": "add", "input": {"a": 1}},
        ],
    }
    assert results["role"] == "user"
    ok, failed = results["content"]
    assert ok == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "5",
        "is_error": False,
    }
    assert failed["type"] == "tool_result"
    assert failed["tool_use_id"] == "toolu_2"
    assert failed["is_error"] is True
    assert "Invalid arguments for add" in failed["content"]


def test_http_529_is_retried_then_succeeds(server: ProviderServer) -> None:
    server.add(
        Reply(529, body={"type": "error", "error": {"type": "overloaded_error", "message": "x"}}),
        Reply(frames=anthropic_text("ok")),
    )
    items = list(model_for(server, max_retries=2).reply([{"role": "user", "content": "x"}], []))
    assert items == ["ok"]
    assert len(server.requests) == 2


def test_http_500_retries_are_bounded(server: ProviderServer) -> None:
    for _ in range(4):
        server.add(Reply(500, body={"type": "error", "error": {"message": "still down"}}))
    with pytest.raises(ModelError) as caught:
        list(model_for(server, max_retries=1).reply([{"role": "user", "content": "x"}], []))
    message = str(caught.value)
    assert message.startswith("anthropic: claude-test: HTTP 500")
    assert "still down" in message
    assert len(server.requests) == 2


def test_http_401_is_not_retried_and_says_why(server: ProviderServer) -> None:
    body = {
        "type": "error",
        "error": {"type": "authentication_error", "message": "invalid x-api-key"},
    }
    server.add(Reply(401, body=body), Reply(frames=anthropic_text("never sent")))
    with pytest.raises(ModelError) as caught:
        list(model_for(server, max_retries=2).reply([{"role": "user", "content": "x"}], []))
    assert caught.value.provider == "anthropic"
    assert str(caught.value) == (
        "anthropic: claude-test: HTTP 401, the API key was refused: invalid x-api-key"
    )
    assert len(server.requests) == 1


def test_a_malformed_event_fails_and_keeps_the_text(server: ProviderServer) -> None:
    frames = anthropic_text("Hello", " never")
    frames.insert(3, b"event: content_block_delta\ndata: {not json\n\n")
    server.add(Reply(frames=frames))
    interaction = RecordingInteraction()
    with pytest.raises(TurnError) as caught:
        Router(model_for(server)).run("hi", interaction=interaction)
    assert "anthropic: claude-test: the server sent a malformed stream event" in str(caught.value)
    assert caught.value.result.text == "Hello"
    assert interaction.text == ["Hello"]


def test_an_error_event_mid_stream_is_reported(server: ProviderServer) -> None:
    frames = anthropic_text("Hello", " never")
    frames.insert(
        3,
        sse(
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            "error",
        ),
    )
    server.add(Reply(frames=frames))
    with pytest.raises(TurnError) as caught:
        Router(model_for(server)).run("hi", interaction=RecordingInteraction())
    assert str(caught.value) == (
        "anthropic: claude-test: the server reported an error mid-answer: Overloaded"
    )
    assert caught.value.result.text == "Hello"


def test_arguments_that_are_not_json_fail_clearly(server: ProviderServer) -> None:
    server.add(
        Reply(
            frames=[
                anthropic_start(),
                anthropic_tool_start(0, "toolu_1", "add"),
                anthropic_json_delta(0, '{"a": 2, "b"'),
                anthropic_block_stop(0),
                *anthropic_end("max_tokens"),
            ]
        )
    )
    with pytest.raises(ModelError) as caught:
        list(model_for(server).reply([{"role": "user", "content": "x"}], [ADD_SPEC]))
    message = str(caught.value)
    assert "the arguments of the call to 'add' are not valid JSON" in message
    assert "cut off at the token limit" in message


def test_a_connection_dropped_mid_answer_names_the_provider_and_keeps_the_text(
    server: ProviderServer,
) -> None:
    server.add(
        Reply(frames=anthropic_text("Hello", " there", " and more"), drop_after=4),
        Reply(frames=anthropic_text("a retry must not happen")),
    )
    interaction = RecordingInteraction()
    with pytest.raises(TurnError) as caught:
        Router(model_for(server, max_retries=2)).run("hi", interaction=interaction)
    assert str(caught.value).startswith("anthropic: claude-test: the connection dropped mid-answer")
    assert caught.value.result.text == "Hello there"
    assert interaction.text == ["Hello", " there"]
    assert len(server.requests) == 1


def test_a_stream_ending_without_message_stop_is_an_error(server: ProviderServer) -> None:
    frames = anthropic_text("Hello", " there")[:-1]
    server.add(Reply(frames=frames))
    with pytest.raises(ModelError) as caught:
        list(model_for(server, max_retries=0).reply([{"role": "user", "content": "x"}], []))
    assert "the stream ended before the answer was complete" in str(caught.value)


def test_a_stalled_stream_times_out_and_keeps_the_text(server: ProviderServer) -> None:
    server.add(Reply(frames=anthropic_text("Partial", " rest"), stall_after=3))
    model = model_for(server, timeout=0.5, max_retries=0)
    with pytest.raises(TurnError) as caught:
        Router(model).run("hi", interaction=RecordingInteraction())
    assert "anthropic: claude-test: the server sent nothing for 0.5 s mid-answer (timed out)" in (
        str(caught.value)
    )
    assert caught.value.result.text == "Partial"


def test_a_server_that_never_answers_times_out(server: ProviderServer) -> None:
    server.add(Reply(frames=anthropic_text("late"), stall_after=0))
    model = model_for(server, timeout=0.5, max_retries=0)
    with pytest.raises(ModelError) as caught:
        list(model.reply([{"role": "user", "content": "x"}], []))
    assert "timed out" in str(caught.value)


def test_consecutive_tool_results_merge_into_one_user_turn(server: ProviderServer) -> None:
    server.add(Reply(frames=anthropic_text("noted")))
    messages: list[Message] = [
        {"role": "system", "content": "First."},
        {"role": "system", "content": "Second."},
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "t1", "name": "add", "arguments": {"a": 1, "b": 2}},
                {"id": "t2", "name": "add", "arguments": {"a": 3, "b": 4}},
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "3", "is_error": False},
        {"role": "tool", "tool_call_id": "t2", "content": "boom", "is_error": True},
        {"role": "user", "content": "and now?"},
    ]
    assert list(model_for(server).reply(messages, [ADD_SPEC])) == ["noted"]
    body = server.requests[0].body
    assert body["system"] == "First.\n\nSecond."
    assert body["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1, "b": 2}},
                {"type": "tool_use", "id": "t2", "name": "add", "input": {"a": 3, "b": 4}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "3", "is_error": False},
                {"type": "tool_result", "tool_use_id": "t2", "content": "boom", "is_error": True},
                {"type": "text", "text": "and now?"},
            ],
        },
    ]


def test_streamed_thinking_arrives_as_thoughts_apart_from_the_text(server: ProviderServer) -> None:
    from servers.provider_server import anthropic_thinking_block

    frames = [
        anthropic_start(),
        *anthropic_thinking_block(0, "The user ", "greets me."),
        *anthropic_text_block(1, "Hello"),
        *anthropic_end(),
    ]
    server.add(Reply(frames=frames))
    items = list(model_for(server).reply([{"role": "user", "content": "hi"}], []))
    assert items == [Thought("The user "), Thought("greets me."), "Hello"]


def test_a_turn_keeps_thoughts_out_of_its_text(server: ProviderServer) -> None:
    from servers.provider_server import anthropic_thinking_block

    frames = [
        anthropic_start(),
        *anthropic_thinking_block(0, "hmm"),
        *anthropic_text_block(1, "Hi"),
    ]
    server.add(Reply(frames=[*frames, *anthropic_end()]))
    result = Router(model_for(server)).run("hi")
    assert (result.text, result.thoughts) == ("Hi", "hmm")
    assert all("hmm" not in str(m.get("content")) for m in result.messages)
