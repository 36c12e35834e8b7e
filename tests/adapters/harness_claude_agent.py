"""The conformance harness of the Claude Agent SDK adapter: the bundled CLI under ``start``.

The model is a fake Anthropic server on loopback (``servers.anthropic_agent_server``)
playing the replies: texts as one streamed text block, each ``ToolCall`` as a
``tool_use`` of the in-process MCP server ``suite`` (whose tools are the standard
ones) or, for ``ask_user``, of the adapter's ``ask_user_server()``. What the
model was told is what the CLI sent back to the server; a call cut short by an
interrupted turn is never sent, so it is read from the CLI's own messages.
Claude Code cannot stop one tool alone; its Cancel stops the turn.
"""

from __future__ import annotations

import tempfile
import weakref
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from claude_agent_sdk import (
    ToolAnnotations,
    ToolResultBlock,
    UserMessage,
    create_sdk_mcp_server,
    tool,
)
from servers.anthropic_agent_server import AgentServer, Text, Use

from mead_notebook import ToolCall
from mead_notebook.adapters import claude_agent
from mead_notebook.adapters.base import AgentResult
from mead_notebook.turn import Turn

from .conformance import Capabilities, ContentCase, Replies, Told, Tools, UnaskedCase

SERVER = "suite"
KINDS: Any = {"delete_file": "delete"}
"""``read_file`` says it is read-only in its annotations (its server is trusted);
``delete_file`` is told by name."""
Handler = Callable[[dict[str, Any]], Coroutine[Any, Any, dict[str, Any]]]


def _text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def _turn(reply: Any) -> list[Text | Use]:
    texts = [i for i in reply if isinstance(i, str)]
    items: list[Text | Use] = [Text(*texts)] if texts else []
    for call in reply:
        if isinstance(call, ToolCall):
            name = call.name
            if not name[0].isupper():  # Claude Code's own tools (Write, Bash) keep their names
                server = claude_agent.ASK_USER_SERVER if name == "ask_user" else SERVER
                name = f"mcp__{server}__{name}"
            items.append(Use(call.id or call.name, name, call.arguments))
    return items


class Harness:
    name = "claude_agent"
    server = SERVER
    questions: tuple[str, ...] = ()
    capabilities = Capabilities(cancel_stops_turn=True)
    unasked: UnaskedCase | None = None

    def __init__(self) -> None:
        self.plain = Tools()
        self.ran = self.plain.ran
        self.agent: AgentServer | None = None
        self.turn: Turn[AgentResult] | None = None
        self.dir = Path(tempfile.mkdtemp(prefix="mead-claude-"))
        path = str(self.dir / "b.txt")
        self.content = ContentCase(
            replies=[[ToolCall("Write", {"file_path": path, "content": "hi"}, "w1")], ["ok"]],
            tool_call_id="w1",
            content=[{"type": "diff", "path": path, "old_text": None, "new_text": "hi"}],
            locations=[{"path": path, "line": None}],
        )

    def mcp(self) -> Any:
        plain = self.plain

        def string(*names: str) -> dict[str, Any]:
            properties = {n: {"type": "string"} for n in names}
            return {"type": "object", "properties": properties, "required": list(names)}

        @tool("read_file", "Read a file.", string("path"), ToolAnnotations(readOnlyHint=True))
        async def read_file(arguments: dict[str, Any]) -> dict[str, Any]:
            return _text(plain.read_file(arguments["path"]))

        @tool("write_file", "Write a file.", string("path", "text"))
        async def write_file(arguments: dict[str, Any]) -> dict[str, Any]:
            return _text(plain.write_file(arguments["path"], arguments["text"]))

        @tool("delete_file", "Delete a file.", string("path"))
        async def delete_file(arguments: dict[str, Any]) -> dict[str, Any]:
            return _text(plain.delete_file(arguments["path"]))

        @tool("slow", "Takes a minute.", string())
        async def slow(arguments: dict[str, Any]) -> dict[str, Any]:
            return _text(await plain.slow())

        return create_sdk_mcp_server(SERVER, tools=[read_file, write_file, delete_file, slow])

    def start(self, replies: Replies, interaction: Any, **given: Any) -> Turn[AgentResult]:
        self.agent = AgentServer([_turn(r) for r in replies]).__enter__()
        home = self.dir / "home"
        home.mkdir(exist_ok=True)
        env = {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")}
        options = self.agent.options(
            cwd=str(self.dir),
            env=env,
            mcp_servers={
                SERVER: self.mcp(),
                claude_agent.ASK_USER_SERVER: claude_agent.ask_user_server(),
            },
            **given,
        )
        weakref.finalize(self, self.agent.__exit__)
        self.turn = claude_agent.start(
            options, "go", interaction=interaction, kinds=KINDS, trusted={SERVER}
        )
        return self.turn

    def limited(self, replies: Replies, interaction: Any, rounds: int) -> Turn[AgentResult]:
        return self.start(replies, interaction, max_turns=rounds)

    def told(self) -> dict[str, Told]:
        assert self.agent is not None
        found = {i: Told(text, error) for i, (text, error) in self.agent.tool_results().items()}
        messages = self.turn.result(timeout=0).output if self.turn is not None else None
        for message in messages or ():
            if isinstance(message, UserMessage) and isinstance(message.content, list):
                for block in message.content:
                    if isinstance(block, ToolResultBlock) and block.tool_use_id not in found:
                        content = block.content
                        text = (
                            "".join(str(p.get("text", "")) for p in content)
                            if isinstance(content, list)
                            else str(content or "")
                        )
                        found[block.tool_use_id] = Told(text, bool(block.is_error))
        return found
