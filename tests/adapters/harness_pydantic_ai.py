"""The conformance harness of the pydantic-ai adapter: an ``Agent`` under ``start``.

Its own way to ask: ``pick`` defers as a pydantic-ai question
(``CallDeferred(kind="question")`` offering the options); the adapter answers
the deferred call and the model is told the answer.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.exceptions import CallDeferred
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart
from pydantic_ai.usage import UsageLimits

from mead_notebook.adapters import pydantic_ai as mead_pydantic_ai
from mead_notebook.adapters.base import AgentResult, AskUserOption
from mead_notebook.turn import Turn

from .conformance import Capabilities, ContentCase, Replies, Told, Tools, UnaskedCase


class Harness:
    name = "pydantic_ai"
    server = "pydantic-ai"
    questions = ("pick",)
    capabilities = Capabilities()
    content: ContentCase | None = None
    unasked: UnaskedCase | None = None

    def __init__(self) -> None:
        self.plain = Tools()
        self.ran = self.plain.ran
        self.requests: list[list[ModelMessage]] = []

    def tools(self) -> list[Tool[Any]]:
        plain = self.plain

        def pick(prompt: str, options: list[AskUserOption], multiple: bool = False) -> str:
            """Ask the person, pydantic-ai's way."""
            offered = [o.model_dump() for o in options]
            question = {"prompt": prompt, "options": offered, "multiple": multiple}
            raise CallDeferred(metadata=question, kind="question")

        return [
            Tool(plain.read_file, metadata={"read_only": True}),
            Tool(plain.write_file),
            Tool(plain.delete_file, metadata={"kind": "delete"}),
            Tool(plain.slow),
            Tool(pick),
            mead_pydantic_ai.ask_user_tool(),
        ]

    def start(self, replies: Replies, interaction: Any, **options: Any) -> Turn[AgentResult]:
        model = mead_pydantic_ai.scripted_model(replies, requests=self.requests)
        agent: Agent[Any, str] = Agent(model, tools=self.tools())
        return mead_pydantic_ai.start(agent, "go", interaction=interaction, **options)

    def limited(self, replies: Replies, interaction: Any, rounds: int) -> Turn[AgentResult]:
        return self.start(replies, interaction, usage_limits=UsageLimits(request_limit=rounds))

    def told(self) -> dict[str, Told]:
        assert self.requests
        found: dict[str, Told] = {}
        for message in self.requests[-1]:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    found[part.tool_call_id] = Told(
                        part.model_response_str(), part.outcome != "success"
                    )
                elif isinstance(part, RetryPromptPart) and part.tool_call_id:
                    found[part.tool_call_id] = Told(part.model_response(), True)
        return found
