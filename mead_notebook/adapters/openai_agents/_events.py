"""The SDK's stream events as the contract's text and cards: unknown, hosted, handoffs."""

from __future__ import annotations

import json
from typing import Any

from agents import (
    AgentUpdatedStreamEvent,
    HandoffCallItem,
    HandoffOutputItem,
    RawResponsesStreamEvent,
    RunItemStreamEvent,
    ToolApprovalItem,
    ToolCallItem,
    ToolCallOutputItem,
)
from openai.types.responses import ResponseCompletedEvent, ResponseTextDeltaEvent

from mead_notebook.interaction import FINAL_STATUSES, ToolKind, class_of
from mead_notebook.tools.base import result_text as as_text

from ..base import AgentTurn
from ._gate import Gate

__all__ = ["HOSTED", "PROVIDER_SIDE", "Events"]

PROVIDER_SIDE = "runs on the provider's side: nothing here can gate it"
"""The step of a hosted tool's card."""
HOSTED: dict[str, ToolKind] = {
    "web_search_call": "fetch",
    "file_search_call": "search",
    "code_interpreter_call": "execute",
    "image_generation_call": "other",
    "mcp_call": "other",
    "mcp_list_tools": "read",
}
"""The output items of tools that run on the provider's side, and their kinds."""


class Events:
    """Reports one run's stream events (posted to the session's callback thread)."""

    def __init__(self, session: AgentTurn, gate: Gate) -> None:
        self.session = session
        self.gate = gate
        self.rounds = 0
        self.agent: str | None = None
        self._unknown: dict[str, tuple[str, dict[str, Any]]] = {}

    def on(self, event: Any) -> None:
        """One event of ``stream_events()``."""
        session = self.session
        if isinstance(event, RawResponsesStreamEvent):
            data = event.data
            if isinstance(data, ResponseTextDeltaEvent) and data.delta:
                session.post(session.driver.text, data.delta)
            elif isinstance(data, ResponseCompletedEvent):
                self.rounds += 1
        elif isinstance(event, AgentUpdatedStreamEvent):
            self.agent = event.new_agent.name
        elif isinstance(event, RunItemStreamEvent):
            item = event.item
            if isinstance(item, HandoffCallItem):
                session.post(self._handoff_called, item)
            elif isinstance(item, HandoffOutputItem):
                session.post(self._handoff_done, item)
            elif isinstance(item, ToolCallItem):
                session.post(self._called, item)
            elif isinstance(item, ToolCallOutputItem):
                session.post(self._output, item)

    # -- on the callback thread ----------------------------------------------------------

    def _called(self, item: ToolCallItem) -> None:
        raw = _as_dict(item.raw_item)
        kind = raw.get("type")
        if kind == "function_call":
            name = str(raw.get("name", ""))
            if name not in self.gate.servers:
                arguments = _arguments(raw.get("arguments"))
                self._unknown[str(raw.get("call_id"))] = (name, arguments)
        elif kind in HOSTED:
            self._hosted(raw, HOSTED[str(kind)])

    def _output(self, item: ToolCallOutputItem) -> None:
        raw = _as_dict(item.raw_item)
        call_id = str(raw.get("call_id", ""))
        found = self._unknown.pop(call_id, None)
        if found is None:
            return
        name, arguments = found
        server = self.agent or "openai-agents"
        session = self.session
        told = session.record(call_id)
        if told is not None and told.tool == name and told.status in FINAL_STATUSES:
            return  # a tool of the run's own (ask_user) answered it
        session.refuse(call_id, name, server, arguments, "unknown", as_text(item.output))

    def _hosted(self, raw: dict[str, Any], kind: ToolKind) -> None:
        session = self.session
        call_id = str(raw.get("id") or raw.get("call_id") or f"hosted-{len(session.result.calls)}")
        tool = str(raw.get("name") or str(raw.get("type", "hosted")).removesuffix("_call"))
        shown = {k: v for k, v in raw.items() if k not in ("id", "type", "status", "output")}
        server = str(raw.get("server_label") or "provider")
        record = session.begin(call_id, tool, server, None, shown, kind=kind)
        session.running(record, cancellable=False, step=PROVIDER_SIDE, decided_by="agent")
        if raw.get("status") in ("failed", "incomplete") or raw.get("error"):
            session.fail(
                record, "error", f"{tool} failed on the provider's side: {raw.get('error')}"
            )
        else:
            session.complete(record, as_text(raw.get("output") or raw.get("status") or ""))

    def _handoff_called(self, item: HandoffCallItem) -> None:
        raw = _as_dict(item.raw_item)
        session = self.session
        call_id = str(raw.get("call_id", ""))
        source = self.agent or item.agent.name
        record = session.begin(
            call_id,
            str(raw.get("name", "handoff")),
            source,
            None,
            _arguments(raw.get("arguments")),
            title=f"handoff from {source}",
        )
        session.running(
            record, cancellable=False, step="hands the conversation over", decided_by="agent"
        )

    def _handoff_done(self, item: HandoffOutputItem) -> None:
        raw = _as_dict(item.raw_item)
        record = self.session.record(str(raw.get("call_id", "")))
        if record is None:
            return
        target = item.target_agent.name
        record.title = f"handoff: {item.source_agent.name} → {target}"
        self.session.complete(record, f"{target} now acts")

    def approval(self, item: ToolApprovalItem) -> tuple[bool, str]:
        """Ask for an approval the SDK paused on (once per call); (allowed, the denial message)."""
        raw = _as_dict(item.raw_item)
        name = str(item.tool_name or raw.get("name") or "tool")
        call_id = str(raw.get("call_id") or raw.get("id") or name)
        server = self.gate.servers.get(name) or str(raw.get("server_label") or "openai-agents")
        schema = self.gate.schemas.get(name)
        kind = self.gate.tool_kinds.get(name) or self.gate.kinds.get(name) or "other"
        arguments = _arguments(raw.get("arguments"))
        record, allowed = self.session.admit(
            call_id, name, server, class_of(kind), arguments, schema, kind=kind, claim=False
        )
        return allowed, record.error or ""


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    return dict(dump()) if callable(dump) else {}


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        return {"arguments": raw}
    return value if isinstance(value, dict) else {"arguments": value}
