"""The conformance harness of the OpenAI Agents SDK adapter: an ``Agent`` under ``start``.

The model is the SDK's own ``agents.testing.ScriptedModel`` (through the
adapter's ``scripted_model``), which keeps every request it received. The tools
are the SDK's function tools; ``kinds`` says what two of them do. The Responses
API has no error flag on a tool's output: a failed call is told in words only.
"""

from __future__ import annotations

from typing import Any

from agents import Agent, FunctionTool, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel

from mead_notebook.adapters import openai_agents
from mead_notebook.adapters.base import AgentResult
from mead_notebook.turn import Turn

from .conformance import Capabilities, ContentCase, Replies, Told, Tools, UnaskedCase

set_tracing_disabled(True)

KINDS: Any = {"read_file": "read", "delete_file": "delete"}


class Harness:
    name = "openai_agents"
    server = "helper"
    questions: tuple[str, ...] = ()
    capabilities = Capabilities(error_flag=False)
    content: ContentCase | None = None
    unasked: UnaskedCase | None = None

    def __init__(self) -> None:
        self.plain = Tools()
        self.ran = self.plain.ran
        self.model: ScriptedModel | None = None

    def tools(self) -> list[FunctionTool]:
        plain = self.plain
        return [
            function_tool(plain.read_file),
            function_tool(plain.write_file),
            function_tool(plain.delete_file),
            function_tool(plain.slow),
            openai_agents.ask_user_tool(),
        ]

    def start(self, replies: Replies, interaction: Any, **options: Any) -> Turn[AgentResult]:
        self.model = openai_agents.scripted_model(replies)
        agent = Agent("helper", model=self.model, tools=self.tools())
        return openai_agents.start(agent, "go", interaction=interaction, kinds=KINDS, **options)

    def limited(self, replies: Replies, interaction: Any, rounds: int) -> Turn[AgentResult]:
        return self.start(replies, interaction, max_turns=rounds)

    def told(self) -> dict[str, Told]:
        assert self.model is not None
        given = self.model.last_call.input
        items = given if isinstance(given, list) else []
        return {
            str(i["call_id"]): Told(str(i["output"]), False)
            for i in items
            if isinstance(i, dict) and i.get("type") == "function_call_output"
        }
