"""An agent's replay of an earlier session (``session/load``), kept as the contract's history.

While a session loads, the agent streams the earlier conversation back as
``session/update`` notifications: the person's messages, its own, and its
tool calls with their updates. :class:`Replay` keeps them in order as
:data:`~mead_notebook.interaction.HistoryEntry` values, and nothing else: no
call in a replay is asked about, allowed or run, whatever its status says.
Consecutive chunks of one side make one message, unless their ``messageId``s
say they are two (an agent that sends none, as Gemini CLI 0.61, makes one
message of a side's consecutive chunks). Everything is bounded: the
latest :data:`MAX_ENTRIES` entries are kept (the earlier ones are counted in
``left_out``), each message at most :data:`MAX_TEXT` characters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, cast

from acp.schema import (
    AgentMessageChunk,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from mead_notebook.driver import short
from mead_notebook.interaction import (
    FINAL_STATUSES,
    ContentBlock,
    HistoryCall,
    HistoryEntry,
    HistoryMessage,
    Location,
    ToolKind,
    Update,
    class_of,
)

from . import _mapping as m

__all__ = ["MAX_ENTRIES", "MAX_TEXT", "Replay"]

MAX_ENTRIES = 2000
"""Most entries of a replay kept (the latest ones)."""
MAX_TEXT = 200_000
"""Longest message of a replay kept, in characters; the rest is cut."""


@dataclass
class _Call:
    """One replayed tool call, as its updates have said it so far."""

    tool_call_id: str
    tool: str
    title: str
    kind: ToolKind
    arguments: dict[str, Any]
    content: list[ContentBlock] = field(default_factory=list)
    locations: list[Location] = field(default_factory=list)
    status: str = "pending"
    text: str = ""


@dataclass
class _Message:
    side: Literal["prompt", "text"]
    message_id: str | None = None
    parts: list[str] = field(default_factory=list)
    size: int = 0


class Replay:
    """The history an agent replays while a session loads; never asks, never runs."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._entries: dict[int, _Message | _Call] = {}
        self._calls: dict[str, int] = {}
        self._next = 0
        self.left_out = 0
        """Entries of the replay not kept (the earliest, past :data:`MAX_ENTRIES`)."""
        self.heard = 0
        """How many notifications of the replay were taken."""

    def update(self, update: Any) -> None:
        """Take one ``session/update`` of the replay (other kinds are not history)."""
        self.heard += 1
        if isinstance(update, (UserMessageChunk, AgentMessageChunk)):
            if isinstance(update.content, TextContentBlock):
                mine = isinstance(update, UserMessageChunk)
                self._say("prompt" if mine else "text", update.content.text, update.message_id)
        elif isinstance(update, ToolCallStart):
            self._start(update)
        elif isinstance(update, ToolCallProgress):
            self._progress(update)

    def entries(self) -> list[HistoryEntry]:
        """The replay so far, oldest first; every call ended (one left open: failed)."""
        return [self._entry(item) for item in self._entries.values()]

    # -- messages ------------------------------------------------------------------------

    def _say(self, side: Literal["prompt", "text"], text: str, message_id: str | None) -> None:
        last = self._entries.get(self._next - 1)
        other = message_id is not None and _last_id(last) not in (None, message_id)
        if not isinstance(last, _Message) or last.side != side or other:
            last = _Message(side, message_id)
            self._add(last)
        elif last.message_id is None:
            last.message_id = message_id
        room = MAX_TEXT - last.size
        if room > 0:
            last.parts.append(text[:room])
        last.size += len(text)

    # -- tool calls -----------------------------------------------------------------------

    def _start(self, update: ToolCallStart) -> None:
        kind: ToolKind = m.kind_from_acp(update.kind) or "other"
        arguments = m.arguments_of(update.raw_input) or {}
        call = _Call(
            tool_call_id=update.tool_call_id,
            tool=m.tool_name(update.field_meta, update.title, update.kind),
            title=update.title,
            kind=kind,
            arguments=arguments,
        )
        self._calls[update.tool_call_id] = self._add(call)
        self._describe(call, update)

    def _progress(self, update: ToolCallProgress) -> None:
        index = self._calls.get(update.tool_call_id)
        call = self._entries.get(index) if index is not None else None
        if not isinstance(call, _Call):
            return  # a call whose start was left out, or never sent
        if update.title:
            call.title = update.title
        kind = m.kind_from_acp(update.kind)
        if kind is not None:
            call.kind = kind
        arguments = m.arguments_of(update.raw_input)
        if arguments:
            call.arguments = arguments
        self._describe(call, update)

    def _describe(self, call: _Call, update: ToolCallStart | ToolCallProgress) -> None:
        """What the update says the call is, did or ended as."""
        reported = m.content_of(update.content)
        locations = m.locations_of(update.locations)
        if locations is not None:
            call.locations = locations
        if not call.content or not any(b["type"] == "terminal" for b in call.content):
            terminal = m.terminal_of(call.kind, call.arguments)
            if terminal is not None:
                call.content = [terminal, *call.content]
        status = update.status
        if status in FINAL_STATUSES:
            call.text = m.result_text(update.raw_output, reported)
            call.content = m.finished_content(call.content, reported, call.text, update.raw_output)
            call.status = status
        elif reported is not None:
            kept = [b for b in call.content if b["type"] == "terminal"]
            call.content = kept + [b for b in reported if b not in kept]
        if status is not None and call.status not in FINAL_STATUSES:
            call.status = status

    # -- bounds ----------------------------------------------------------------------------

    def _add(self, item: _Message | _Call) -> int:
        index = self._next
        self._next += 1
        self._entries[index] = item
        if len(self._entries) > MAX_ENTRIES:
            del self._entries[next(iter(self._entries))]
            self.left_out += 1
        return index

    def _entry(self, item: _Message | _Call) -> HistoryEntry:
        if isinstance(item, _Message):
            text = "".join(item.parts)
            if item.size > MAX_TEXT:
                text += "…"
            return HistoryMessage(type=item.side, text=text)
        update: dict[str, Any] = {
            "tool_call_id": item.tool_call_id,
            "title": item.title or item.tool,
            "status": item.status,
            "current_step": None,
            "progress": None,
            "cancellable": False,
            "tool": item.tool,
            "server": self.server,
            "class": class_of(item.kind),
            "arguments": dict(item.arguments),
            "kind": item.kind,
        }
        if item.content:
            update["content"] = list(item.content)
        if item.locations:
            update["locations"] = list(item.locations)
        if item.status == "completed":
            update.update(outcome=None, result=short(item.text), error=None)
        elif item.status == "failed":
            error = item.text or f"{item.tool} failed"
            update.update(outcome="error", result=None, error=short(error))
        return HistoryCall(type="call", update=cast(Update, update))


def _last_id(entry: _Message | _Call | None) -> str | None:
    """The message id of ``entry`` when it is a message that has one."""
    return entry.message_id if isinstance(entry, _Message) else None
