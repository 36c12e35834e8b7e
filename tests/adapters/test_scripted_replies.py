"""A framework's scripted model can reply to what happened: a function of the conversation."""

from __future__ import annotations

from typing import Any

import pytest

from mead_notebook import ModelError, ToolCall
from mead_notebook.adapters.base import ScriptedReplies
from mead_notebook.model import Message
from mead_notebook.policies import AllowAll, DenyAll

pytestmark = pytest.mark.timeout(120)


def test_a_list_is_played_once_and_a_function_replies_to_the_conversation() -> None:
    listed = ScriptedReplies([["a"], [ToolCall("t", {})]])
    assert listed.next() == ["a"]
    assert listed.next() == [ToolCall("t", {}, "call_2_0")]
    with pytest.raises(ModelError, match="no reply left"):
        listed.next()
    seen: list[list[Message]] = []

    def reply(told: list[Message]) -> Any:
        seen.append(told)
        return f"{len(told)} messages" if told else [ToolCall("t", {"n": 1})]

    played = ScriptedReplies(reply)
    assert played.next() == [ToolCall("t", {"n": 1}, "call_1_0")]
    told: list[Message] = [{"role": "user", "content": "hi"}]
    assert played.next(told) == ["1 messages"]
    assert seen == [[], told]
    assert played.remaining > 1_000


def outcome_reply(told: list[Message]) -> list[Any]:
    """Delete a file, then say what became of it, from the tool result the model got."""
    if told[-1]["role"] == "user":
        return ["Deleting. ", ToolCall("delete_file", {"path": "old.csv"})]
    last = told[-1]
    assert last["role"] == "tool"
    return ["It could not be deleted."] if last["is_error"] else [f"Done: {last['content']}."]


def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@pytest.mark.parametrize(
    ("interaction", "said"),
    [
        (AllowAll(), "Deleting. Done: deleted old.csv."),
        (DenyAll(), "Deleting. It could not be deleted."),
    ],
    ids=["allowed", "denied"],
)
def test_langchains_scripted_model_replies_to_what_happened(interaction: Any, said: str) -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from mead_notebook.adapters import langchain as mead_langchain

    agent = create_agent(mead_langchain.scripted_model(outcome_reply), tools=[tool(delete_file)])
    result = mead_langchain.run(agent, "Tidy up", interaction=interaction)
    assert result.text == said


@pytest.mark.parametrize(
    ("interaction", "said"),
    [
        (AllowAll(), "Deleting. Done: deleted old.csv."),
        (DenyAll(), "Deleting. It could not be deleted."),
    ],
    ids=["allowed", "denied"],
)
def test_pydantic_ais_scripted_model_replies_to_what_happened(interaction: Any, said: str) -> None:
    from pydantic_ai import Agent

    from mead_notebook.adapters import pydantic_ai as mead_pydantic_ai

    agent = Agent(mead_pydantic_ai.scripted_model(outcome_reply), tools=[delete_file])
    result = mead_pydantic_ai.run(agent, "Tidy up", interaction=interaction)
    assert result.text == said


def test_the_openai_agents_scripted_model_takes_a_list_only() -> None:
    from mead_notebook.adapters import openai_agents

    with pytest.raises(TypeError, match="takes a list of replies"):
        openai_agents.scripted_model(outcome_reply)  # type: ignore[arg-type]


def test_the_scripted_anthropic_server_replies_to_the_tool_results_so_far() -> None:
    import anthropic

    from mead_notebook.adapters.claude_agent.scripted import Results, ScriptedServer

    def after(results: Results) -> list[Any]:
        text, failed = results["r1"]
        return [f"The command failed: {text}" if failed else "The file is gone."]

    tools = [{"name": "Bash", "description": "b", "input_schema": {"type": "object"}}]
    use = {"type": "tool_use", "id": "r1", "name": "Bash", "input": {"command": "rm a"}}
    with ScriptedServer([[ToolCall("Bash", {"command": "rm a"}, "r1")], after]) as server:
        client = anthropic.Anthropic(base_url=server.url, api_key="x", max_retries=0, timeout=10)
        for content, failed, said in [
            ("", False, "The file is gone."),
            ("denied", True, "The command failed: denied"),
        ]:
            result = {"type": "tool_result", "tool_use_id": "r1", "content": content}
            history = [
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [{**result, "is_error": failed}]},
            ]
            with client.messages.stream(
                model="m", max_tokens=10, messages=history, tools=tools
            ) as events:
                reply = events.get_final_message()
            assert [b.text for b in reply.content if b.type == "text"] == [said]


@pytest.mark.parametrize(
    ("interaction", "text", "stop"),
    [
        (AllowAll(), "Fixing. Fixed.", "end_turn"),
        (DenyAll(), "Fixing. You said no: greet.py stays as it is.", "end_turn"),
    ],
    ids=["allowed", "rejected"],
)
def test_the_scripted_acp_agent_says_a_rejected_calls_text_and_ends_its_turn(
    tmp_path: Any, interaction: Any, text: str, stop: str
) -> None:
    from mead_notebook.adapters import acp

    edit = {
        "id": "e1",
        "title": "Edit greet.py",
        "kind": "edit",
        "input": {"file_path": "greet.py"},
        "ask": True,
        "rejected": "You said no: greet.py stays as it is.",
    }
    turn = [{"text": "Fixing. "}, {"call": edit}, {"text": "Fixed."}]
    agent = acp.scripted_agent([turn])
    result = acp.run(agent, "fix", interaction=interaction, cwd=tmp_path)
    assert (result.text, result.stop_reason) == (text, stop)
