"""The conformance harness of the ACP adapter: the scripted ACP agent under ``acp.start``.

ACP has no model here: the agent is the model. The harness plays the scripted
replies as the agent's one turn (texts as message chunks, each ``ToolCall`` as an
ACP tool call that asks permission first), and reads what the agent learned of
each call (``told``) and what its tools did (``ran``) from the agent's log.
``ask_user`` becomes an ACP elicitation form with one field.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

from mead_notebook import ToolCall
from mead_notebook.adapters import acp
from mead_notebook.adapters.base import AgentResult
from mead_notebook.turn import Turn

from .conformance import Capabilities, ContentCase, Replies, Told, UnaskedCase

_OWN_RULES = "u1"
"""The id of the call the agent's own rules let it run without asking."""
_KINDS = {"read_file": "read", "delete_file": "delete", "write_file": "other", "slow": "other"}
_REQUIRED = {"read_file": ("path",), "write_file": ("path", "text"), "delete_file": ("path",)}


def _result(call: ToolCall) -> tuple[str, str]:
    """What the tool does and returns, as :class:`~.conformance.Tools` would."""
    arguments = call.arguments
    if call.name == "read_file":
        return f"read {arguments['path']}", f"contents of {arguments['path']}"
    if call.name == "write_file":
        return f"write {arguments['path']}", f"wrote {len(arguments['text'])} characters"
    if call.name == "delete_file":
        return f"delete {arguments['path']}", f"deleted {arguments['path']}"
    return "slow finished", "finished"


def _refusal(call: ToolCall) -> str | None:
    """Why the agent itself refuses ``call`` (its tools, its checks), or None."""
    if call.name not in _KINDS:
        return f"unknown tool {call.name}"
    missing = [a for a in _REQUIRED.get(call.name, ()) if a not in call.arguments]
    if missing:
        return f"{call.name}: missing required argument {', '.join(missing)}"
    return None


def _question(call: ToolCall) -> dict[str, Any]:
    arguments = call.arguments
    options = [{"const": o["id"], "title": o["label"]} for o in arguments["options"]]
    field: dict[str, Any] = (
        {"type": "array", "title": "answer", "items": {"anyOf": options}}
        if arguments.get("multiple")
        else {"type": "string", "title": "answer", "oneOf": options}
    )
    schema = {"type": "object", "properties": {"answer": field}, "required": ["answer"]}
    return {"ask": {"id": call.id, "message": arguments["prompt"], "schema": schema}}


def _step(call: ToolCall) -> dict[str, Any]:
    if call.name == "ask_user":
        return _question(call)
    spec: dict[str, Any] = {
        "id": call.id,
        "title": call.name,
        "kind": _KINDS.get(call.name, "other"),
        "input": dict(call.arguments),
        # ACP has no tool-name field: this agent names its tools as Claude's does.
        "meta": {"claudeCode": {"toolName": call.name}},
    }
    refused = _refusal(call)
    if refused is not None:
        spec["fail"] = refused
        return {"call": spec}
    does, returns = _result(call)
    spec.update(ask=call.id != _OWN_RULES, does=does, result=returns)
    if call.name == "write_file":
        path = call.arguments["path"]
        spec["diff"] = {"path": path, "old": None, "new": call.arguments["text"]}
        spec["locations"] = [{"path": path, "line": 0}]
    if call.name == "slow":
        spec["sleep"] = 60
    return {"call": spec}


def script_of(replies: Replies) -> list[list[dict[str, Any]]]:
    """The agent's one turn playing ``replies`` in order."""
    steps: list[dict[str, Any]] = []
    for reply in replies:
        for item in reply:
            steps.append({"text": item} if isinstance(item, str) else _step(item))
    return [steps]


class _Agent:
    """One scripted agent and session for every test: it plays the turn its file holds."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="mead-acp-"))
        self.log = self.dir / "agent.jsonl"
        self.turn = self.dir / "turn.json"
        agent = acp.scripted_agent([], log=self.log)
        command = (*agent.command[:-2], f"@{self.turn}", str(self.log))
        self.session = acp.session(dataclasses.replace(agent, command=command), cwd=self.dir)


_shared: _Agent | None = None


def _agent() -> _Agent:
    global _shared
    if _shared is None:
        _shared = _Agent()
    return _shared


class Harness:
    name = "acp"
    server = "scripted"
    questions: tuple[str, ...] = ()
    capabilities = Capabilities(
        denial_message=False,
        edited_arguments=False,
        refuses_calls=False,
        cancel_stops_turn=True,
        counts_rounds=False,
        no_answer_text=False,
        own_words=False,
    )
    content = ContentCase(
        replies=[[ToolCall("write_file", {"path": "b.txt", "text": "hi"}, "w1")], ["ok"]],
        tool_call_id="w1",
        content=[{"type": "diff", "path": "b.txt", "old_text": None, "new_text": "hi"}],
        locations=[{"path": "b.txt", "line": 1}],
    )
    unasked = UnaskedCase(
        replies=[[ToolCall("read_file", {"path": "a.txt"}, _OWN_RULES)], ["ok"]],
        tool_call_id=_OWN_RULES,
    )

    def __init__(self) -> None:
        self.agent = _agent()
        self.log = self.agent.log
        self.seen = 0

    def events(self, name: str) -> list[dict[str, Any]]:
        """This test's events of the agent's log."""
        if not self.log.exists():
            return []
        lines = self.log.read_text().splitlines()[self.seen :]
        found = [json.loads(line) for line in lines]
        return [e for e in found if e["event"] == name]

    @property
    def ran(self) -> list[str]:
        return [e["text"] for e in self.events("did")]

    def limited(self, replies: Replies, interaction: Any, rounds: int) -> Turn[AgentResult]:
        return self.start(replies[:rounds], interaction, stop="max_turn_requests")

    def start(
        self, replies: Replies, interaction: Any, stop: str | None = None
    ) -> Turn[AgentResult]:
        [steps] = script_of(replies)
        if stop is not None:
            steps.append({"stop": stop})
        self.agent.turn.write_text(json.dumps(steps))
        self.seen = len(self.log.read_text().splitlines()) if self.log.exists() else 0
        turn: Turn[AgentResult] = self.agent.session.start("go", interaction=interaction)
        return turn

    def told(self) -> dict[str, Told]:
        return {e["id"]: Told(e["text"], e["error"]) for e in self.events("told")}
