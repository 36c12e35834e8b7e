"""The conformance harness of the pydantic-ai adapter: an ``Agent`` under ``start``.

Its own way to ask: ``pick`` defers as a pydantic-ai question
(``CallDeferred(kind="question")`` offering the options); the adapter answers
the deferred call and the model is told the answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.exceptions import CallDeferred
from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from mead_notebook.adapters import pydantic_ai as mead_pydantic_ai
from mead_notebook.adapters.base import AgentResult, AskUserOption, ScriptedReplies
from mead_notebook.turn import Turn

from .conformance import ContentCase, Replies, Told


class Harness:
    name = "pydantic_ai"
    server = "pydantic-ai"
    questions = ("pick",)
    content: ContentCase | None = None

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.requests: list[list[ModelMessage]] = []

    def tools(self) -> list[Tool[Any]]:
        ran = self.ran

        def read_file(path: str) -> str:
            """Read a file."""
            ran.append(f"read {path}")
            return f"contents of {path}"

        def write_file(path: str, text: str) -> str:
            """Write a file."""
            ran.append(f"write {path}")
            return f"wrote {len(text)} characters"

        def delete_file(path: str) -> str:
            """Delete a file."""
            ran.append(f"delete {path}")
            return f"deleted {path}"

        async def slow() -> str:
            """Takes a minute."""
            await asyncio.sleep(60)
            ran.append("slow finished")
            return "finished"

        def pick(prompt: str, options: list[AskUserOption], multiple: bool = False) -> str:
            """Ask the person, pydantic-ai's way."""
            offered = [o.model_dump() for o in options]
            question = {"prompt": prompt, "options": offered, "multiple": multiple}
            raise CallDeferred(metadata=question, kind="question")

        return [
            Tool(read_file, metadata={"read_only": True}),
            Tool(write_file),
            Tool(delete_file, metadata={"kind": "delete"}),
            Tool(slow),
            Tool(pick),
            mead_pydantic_ai.ask_user_tool(),
        ]

    def start(self, replies: Replies, interaction: Any) -> Turn[AgentResult]:
        script = ScriptedReplies(replies)
        requests = self.requests

        async def stream(
            messages: list[ModelMessage], info: AgentInfo
        ) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
            requests.append(list(messages))
            for index, item in enumerate(script.next()):
                if isinstance(item, str):
                    yield item
                else:
                    arguments = json.dumps(item.arguments)
                    yield {index: DeltaToolCall(item.name, arguments, tool_call_id=item.id)}

        agent: Agent[Any, str] = Agent(FunctionModel(stream_function=stream), tools=self.tools())
        return mead_pydantic_ai.start(agent, "go", interaction=interaction)

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
