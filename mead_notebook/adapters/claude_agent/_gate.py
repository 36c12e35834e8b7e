"""Claude Code's permission callbacks and messages, put through the contract.

Every call Claude Code would run passes our ``PreToolUse`` hook (it answers
``ask``), then ``can_use_tool``, where the person is asked. A call the hook saw
but ``can_use_tool`` never got was settled by Claude Code itself: its settings'
deny rules or a ``PreToolUse`` hook of yours denied it (``denied``, with Claude
Code's message), or its own rules ran it (``decided_by: "agent"``). A call the
hook never saw was refused before any rule: an unknown tool (not in the init
message's tool list) or input that breaks the tool's schema.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from claude_agent_sdk.types import StreamEvent

from mead_notebook import ask_user
from mead_notebook.interaction import Allow, Choice, ToolKind
from mead_notebook.schema import check
from mead_notebook.tools import Tool
from mead_notebook.tools.base import result_text as as_text
from mead_notebook.tools.preview import Preview, previewer
from mead_notebook.turn import CallRecord, StopReason

from ..base import AgentTurn
from ..base.own_tools import check as check_own
from ..base.own_tools import shown
from ._calls import claude_kind, content_of, locations_of, plan_of
from ._catalog import SdkTool
from ._own_tools import STOPPED, passes_of

__all__ = ["ASK_USER", "ASK_USER_SERVER", "CANCEL_STEP", "SERVER", "STOPPED", "Gate"]

SERVER = "claude-code"
"""What a card names as the server of Claude Code's own tools."""
ASK_USER = "AskUserQuestion"
ASK_USER_SERVER = "mead"
"""The in-process MCP server of the adapter's ``ask_user`` tool (``ask_user_server()``)."""
_ASK_USER_TOOL = f"mcp__{ASK_USER_SERVER}__{ask_user.ASK_USER}"
CANCEL_STEP = (
    "running (Cancel stops the whole turn: Claude Code cannot stop one of its tools alone)"
)
MODEL_STOPS: dict[str, StopReason] = {"max_tokens": "max_tokens", "refusal": "refusal"}
"""The model's stop reasons (``ResultMessage.stop_reason``) that end a turn by name."""


class Gate:
    """Asks the session for each call, and reports what the CLI sends back."""

    def __init__(
        self,
        session: AgentTurn,
        cwd: str | None,
        interrupt: Callable[[], None],
        kinds: Mapping[str, ToolKind] | None = None,
    ) -> None:
        self.session = session
        session.driver.agent_servers.add(SERVER)
        self.kinds = dict(kinds or {})
        """What tools do, by name (``Bash``, ``mcp__server__tool`` or a bare MCP tool name)."""
        self.sdk_tools: dict[str, SdkTool] = {}
        """The in-process MCP tools (schemas, kinds), by the name Claude Code calls them."""
        self.cwd = cwd
        self.interrupt = interrupt
        """Interrupts the client's turn from any thread (a card's Cancel)."""
        self.tools: set[str] | None = None
        self.uses: dict[str, ToolUseBlock] = {}
        self.hooked: set[str] = set()
        """The calls our ``PreToolUse`` hook saw: past Claude Code's checks of tool and input."""
        self.rounds = 0
        self.cancelled: set[str] = set()

    # -- the CLI asks --------------------------------------------------------------------

    async def pre_tool_use(self, given: Any, tool_use_id: str | None, context: Any) -> Any:
        """Every call asks, whatever Claude Code's own rules would do."""
        if tool_use_id is not None:
            self.hooked.add(tool_use_id)
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}

    async def can_use_tool(
        self, tool: str, given: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        tool_use_id = context.tool_use_id or f"{tool}-{len(self.session.result.calls)}"
        if tool == ASK_USER:
            return await self.session.call(self._questions, tool_use_id, given)
        if tool == _ASK_USER_TOOL:
            return await self.session.call(self._ask_user, tool_use_id, given)
        return await self.session.call(self._ask, tool_use_id, tool, given)

    def _begin(self, tool_use_id: str, tool: str, given: dict[str, Any]) -> CallRecord:
        """The pending record of this very call, or a new one (an id given again is a new call)."""
        server, _, name = (
            tool.removeprefix("mcp__").partition("__")
            if tool.startswith("mcp__")
            else (SERVER, "", tool)
        )
        found = self.session.known(tool_use_id, name or tool, server, given)
        if found is not None and found.status == "pending":
            return found
        own = self.sdk_tools[tool].own if tool in self.sdk_tools else None
        said = _preview(own, given) if own is not None else None
        return self.session.begin(
            tool_use_id,
            name or tool,
            server,
            None,
            given,
            kind=self._kind(tool, name or tool),
            content=said.content if said is not None else content_of(tool, given, self.cwd),
            locations=said.locations if said is not None else locations_of(given),
        )

    def _kind(self, tool: str, name: str) -> ToolKind:
        known = self.sdk_tools.get(tool)
        given = self.kinds.get(tool) or self.kinds.get(name)
        return given or (known.kind if known is not None else claude_kind(tool))

    def _ask(
        self, tool_use_id: str, tool: str, given: dict[str, Any]
    ) -> PermissionResultAllow | PermissionResultDeny:
        session = self.session
        record = self._begin(tool_use_id, tool, given)
        known = self.sdk_tools.get(tool)
        schema = known.schema if known is not None else None
        own = known.own if known is not None else None
        problem = check(given, schema) if schema is not None else None
        message = (
            f"Invalid arguments for {record.tool}: {problem}. The tool did not run."
            if problem is not None
            else None
        )
        if message is None and own is not None:
            message = check_own(own, given)[1]
        if message is not None:
            session.fail(record, "invalid_arguments", message)
            return PermissionResultDeny(message=message)
        decision = session.decide(
            record, schema, preview=previewer(own) if own is not None else None
        )
        if not isinstance(decision, Allow):
            return PermissionResultDeny(message=record.error or decision.message or "Denied.")
        approved = record.approved_arguments
        problem = check(approved, schema) if approved is not None and schema else None
        if problem is None and approved is not None and own is not None:
            problem = check_own(own, approved)[1]
        if problem is not None:
            message = (
                problem
                if problem.startswith("Invalid arguments")
                else f"Invalid approved arguments for {record.tool}: {problem}. "
                "The tool did not run."
            )
            session.fail(record, "invalid_arguments", message)
            return PermissionResultDeny(message=message)
        handle = session.handle(record)
        handle.on_cancel(lambda: self._cancel(tool_use_id))
        session.running(record, handle, step=CANCEL_STEP)
        allowed = dict(approved if approved is not None else given)
        if own is not None:
            # The tool runs only on this pass: exactly this call, once (see ``_own_tools``).
            passes_of(session).grant(tool, allowed, record, handle)
        return PermissionResultAllow(updated_input=allowed)

    def _ask_user(
        self, tool_use_id: str, given: dict[str, Any]
    ) -> PermissionResultAllow | PermissionResultDeny:
        """The adapter's ``ask_user``: asked here; the tool only hands the answer back."""
        text, is_error = ask_user.ask(self.session.driver, tool_use_id, given)
        if is_error:
            return PermissionResultDeny(message=text)
        return PermissionResultAllow(updated_input={**given, "answer": text})

    def _cancel(self, tool_use_id: str) -> None:
        self.cancelled.add(tool_use_id)
        self.interrupt()

    def _questions(
        self, tool_use_id: str, given: dict[str, Any]
    ) -> PermissionResultAllow | PermissionResultDeny:
        """``AskUserQuestion``: each question a call of its own, asked in turn on its own card.

        Every question settles as ``ask_user`` does; the first left unanswered
        (``no_answer``, ``expired``, ``interrupted``) ends the asking, and the
        model is told why along with the answers given before it.
        """
        answers: dict[str, str] = {}
        questions = given.get("questions")
        for question in questions if isinstance(questions, list) else ():
            shown = question if isinstance(question, dict) else {"question": question}
            choice, labels = _choice_of(tool_use_id, shown)
            settled = self.session.ask(choice, ASK_USER, SERVER, shown)
            if not settled.answered:
                so_far = json.dumps(answers, ensure_ascii=False)
                told = f"{settled.text} Answers given before: {so_far}" if answers else settled.text
                return PermissionResultDeny(message=told)
            if settled.own_words is not None:
                answers[choice["prompt"]] = settled.own_words
            else:
                answers[choice["prompt"]] = ", ".join(labels[int(i)] for i in settled.option_ids)
        return PermissionResultAllow(updated_input={**given, "answers": answers})

    # -- the CLI reports -----------------------------------------------------------------

    def on(self, message: Any) -> None:
        """One message of the client's stream (posted to the callback thread)."""
        session, driver = self.session, self.session.driver
        if isinstance(message, StreamEvent):
            event = message.event
            if event.get("type") == "content_block_delta" and message.parent_tool_use_id is None:
                delta = event.get("delta") or {}
                if delta.get("type") == "text_delta" and delta.get("text"):
                    session.post(driver.text, delta["text"])
                elif delta.get("type") == "thinking_delta" and delta.get("thinking"):
                    session.post(driver.thought, delta["thinking"])
            elif event.get("type") == "message_start":
                self.rounds += 1
        elif isinstance(message, SystemMessage) and message.subtype == "init":
            tools = message.data.get("tools")
            if isinstance(tools, list):
                self.tools = {str(t) for t in tools}
        elif isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    self.uses[block.id] = block
                    entries = plan_of(block.input) if block.name == "TodoWrite" else None
                    if entries is not None:
                        session.post(driver.plan, entries)
        elif isinstance(message, UserMessage) and isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    session.post(self._result, block)

    def _result(self, block: ToolResultBlock) -> None:
        session = self.session
        text = _text_of(block.content)
        record = self.session.record(block.tool_use_id)
        if record is None:
            use = self.uses.get(block.tool_use_id)
            name = use.name if use is not None else "tool"
            record = self._begin(block.tool_use_id, name, dict(use.input) if use else {})
            if block.tool_use_id not in self.hooked:
                unknown = self.tools is not None and name not in self.tools
                session.fail(record, "unknown" if unknown else "invalid_arguments", text)
            elif block.is_error:
                session.fail(record, "denied", text)
            else:
                session.running(record, cancellable=False, decided_by="agent")
                session.complete(record, text)
            return
        if record.status in ("completed", "failed"):
            return
        if block.tool_use_id in self.cancelled:
            message = (
                "Cancelled: the whole turn was stopped (Claude Code cannot stop one of its"
                f" tools alone). Claude Code told the model: {text}"
            )
            session.fail(record, "cancelled", message, step=STOPPED)
        elif block.is_error:
            session.fail(record, "error", text)
        else:
            session.complete(record, text)

    def ended(self, message: ResultMessage) -> StopReason:
        """The turn's stop reason from the CLI's result (``max_turns``: ``max_rounds``)."""
        if self.cancelled and message.is_error:
            return "interrupted"
        if message.subtype == "error_max_turns":
            return "max_rounds"
        return MODEL_STOPS.get(message.stop_reason or "", "end_turn")


def _choice_of(tool_use_id: str, question: dict[str, Any]) -> tuple[Choice, list[str]]:
    """One question of ``AskUserQuestion`` as a choice (options by position), and its labels."""
    options = question.get("options")
    labels = (
        [str(o.get("label", "")) for o in options if isinstance(o, dict)]
        if isinstance(options, list)
        else []
    )
    choice: Choice = {
        "tool_call_id": tool_use_id,
        "prompt": str(question.get("question", "")),
        "options": [{"id": str(i), "label": label} for i, label in enumerate(labels)],
        "multiple": bool(question.get("multiSelect")),
    }
    return choice, labels


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return as_text(content)


def call_soon(loop: asyncio.AbstractEventLoop, fn: Callable[[], Any]) -> Callable[[], None]:
    """``fn`` scheduled on ``loop`` from any thread."""

    def soon() -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(fn)

    return soon


def _preview(own: Tool, given: dict[str, Any]) -> Preview | None:
    """The card's preview of a call of one of the package's own tools (None: invalid)."""
    valid, _ = check_own(own, given)
    return shown(own, valid) if valid is not None else None
