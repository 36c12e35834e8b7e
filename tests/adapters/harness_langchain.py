"""The conformance harness of the LangChain adapter: a ``create_agent`` agent under ``start``.

Its own ways to ask: ``pick`` calls LangGraph's ``interrupt`` with the question
and returns ``answer: <resume value>``; ``choose`` is reviewed by
``HumanInTheLoopMiddleware`` allowing only ``respond`` (the person answers in
the tool's place, the tool never runs).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import interrupt

from mead_notebook.adapters import langchain as mead_langchain
from mead_notebook.adapters.base import AgentResult, AskUserOption, result_text
from mead_notebook.adapters.langchain import ScriptedChatModel
from mead_notebook.turn import Turn

from .conformance import Capabilities, ContentCase, Replies, Told, Tools, UnaskedCase


class Seen(ScriptedChatModel):
    """Plays back its replies and keeps every message list it was given."""

    requests: list[list[BaseMessage]]

    def _stream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        self.requests.append(list(messages))
        yield from super()._stream(messages, *args, **kwargs)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.requests.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


class Harness:
    name = "langchain"
    server = "langchain"
    questions = ("pick", "choose")
    capabilities = Capabilities()
    content: ContentCase | None = None
    unasked: UnaskedCase | None = None

    def __init__(self) -> None:
        self.plain = Tools()
        self.ran = self.plain.ran
        self.model: Seen | None = None

    def tools(self) -> list[BaseTool]:
        ran, plain = self.ran, self.plain

        def pick(prompt: str, options: list[AskUserOption], multiple: bool = False) -> str:
            """Ask the person, LangGraph's way."""
            offered = [o.model_dump() for o in options]
            value = interrupt({"prompt": prompt, "options": offered, "multiple": multiple})
            ran.append("pick answered")
            return f"answer: {result_text(value)}"

        def choose(prompt: str, options: list[AskUserOption], multiple: bool = False) -> str:
            """A question the person answers in the tool's place."""
            ran.append("choose ran")
            return "never"

        return [
            StructuredTool.from_function(plain.read_file, metadata={"read_only": True}),
            StructuredTool.from_function(plain.write_file),
            StructuredTool.from_function(plain.delete_file, metadata={"kind": "delete"}),
            StructuredTool.from_function(
                coroutine=plain.slow, name="slow", description="Takes a minute."
            ),
            StructuredTool.from_function(pick),
            StructuredTool.from_function(choose),
            mead_langchain.ask_user_tool(),
        ]

    def start(self, replies: Replies, interaction: Any, **options: Any) -> Turn[AgentResult]:
        self.model = Seen(replies=[list(r) for r in replies], requests=[])
        respond_only: Any = {"allowed_decisions": ["respond"]}
        review = HumanInTheLoopMiddleware(interrupt_on={"choose": respond_only})
        agent = create_agent(self.model, tools=self.tools(), middleware=[review])
        return mead_langchain.start(agent, "go", interaction=interaction, **options)

    def limited(self, replies: Replies, interaction: Any, rounds: int) -> Turn[AgentResult]:
        # Each round is three steps of the graph: the model's, the review's, the tools'.
        return self.start(replies, interaction, config={"recursion_limit": 3 * rounds})

    def told(self) -> dict[str, Told]:
        assert self.model is not None
        assert self.model.requests
        last = self.model.requests[-1]
        return {
            m.tool_call_id: Told(str(m.content), m.status == "error")
            for m in last
            if isinstance(m, ToolMessage)
        }
