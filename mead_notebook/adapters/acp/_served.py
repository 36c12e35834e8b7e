"""The gate of the package's own tools served to an ACP agent (``acp.run(..., tools=)``).

The tools run in the kernel, behind :class:`~._tool_server.ToolServer`; the
agent reaches them over MCP. Each call that reaches the server is one card,
asked here, run here, ended here:

- the agent asked first through its own permission request (Claude does):
  that request's card carries the tool's kind and preview, and the person's
  Allow there becomes a pass (:mod:`mead_notebook.adapters.base.passes`) for
  exactly one call of that tool with exactly the arguments the card showed;
  the call that takes it runs on that card without a second question;
- any other call (the agent did not ask, as Codex does not; different
  arguments; a second call) is asked on a card of its own, or on the card of
  the agent's report of that very call (same tool, same arguments), never
  twice and never not at all.

An agent's report of a served call (its ``tool_call`` updates) is shown on the
same card and never counts as a call the agent ran under its own rules: what
runs, runs here. A call the agent reports ended that never reached the server
ends ``failed``. All of it runs on the turn's callback thread, in order.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp.types as mt
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    InitializeResponse,
    McpServerStdio,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from mead_notebook import Allow, Call
from mead_notebook.interaction import FINAL_STATUSES
from mead_notebook.tools import Tool, ToolOutput
from mead_notebook.turn import CallRecord

from .._mcp_bridge import TOKEN_VARIABLE
from .._mcp_bridge import command as bridge_command
from ..base.own_tools import check, ending, invoke, kind_of, raised, shown, watching
from ..base.passes import PASS_TTL, Passes, canonical
from . import _mapping as m
from ._tool_server import ToolServer

if TYPE_CHECKING:
    from ._client import TurnMapper

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["NEVER_REACHED", "NO_TURN", "SERVER_NAME", "Served"]

SERVER_NAME = "mead"
"""The MCP server name the agent knows the tools under (Claude calls them ``mcp__mead__<tool>``)."""
NO_TURN = "No turn of the notebook is running: the call was refused and nothing ran."
NEVER_REACHED = (
    "The agent reports this call ended, but it never reached the notebook's kernel: "
    "nothing ran here."
)

Report = ToolCallStart | ToolCallProgress | ToolCallUpdate
Key = tuple[str, str]


@dataclass
class _Own:
    """A card of a served call: its tool, and whether the call has reached the server."""

    tool: Tool
    record: CallRecord
    reached: bool = False
    asked: bool = False
    """The agent's permission request for it has been answered: its card no longer changes."""
    unreported: float | None = None
    """When the server began this card for a call the agent had not reported (None: it had,
    or its report has been matched to it since)."""


class Served:
    """The served tools of one ACP session and the gate of their calls.

    ``turn_of()`` gives the turn running now (its ``TurnMapper``), or None.
    """

    def __init__(
        self,
        tools: Sequence[Tool],
        turn_of: Callable[[], TurnMapper | None],
        name: str = SERVER_NAME,
    ) -> None:
        self.tools = {t.name: t for t in tools}
        self.name = name
        self.turn_of = turn_of
        self.passes = Passes()
        self._own: dict[str, _Own] = {}
        """The cards of served calls, by record id."""
        self._waiting: dict[Key, list[CallRecord]] = {}
        """Cards of served calls whose call has not reached the server, by tool and arguments."""
        self._numbers = itertools.count(1)
        self.server = ToolServer(name, list(tools), self.on_call)

    # -- the server ------------------------------------------------------------------------

    def mcp_servers(self, initialized: InitializeResponse) -> list[HttpMcpServer | McpServerStdio]:
        """What ``session/new`` gives the agent: the server over HTTP, with its token in a
        header, if the agent speaks MCP over HTTP; else the stdio bridge, the token in its
        environment. The server starts listening here (once)."""
        self.server.start()
        capabilities = initialized.agent_capabilities
        mcp_capabilities = capabilities.mcp_capabilities if capabilities is not None else None
        http = mcp_capabilities is not None and mcp_capabilities.http
        if http:
            headers = [HttpHeader(name=k, value=v) for k, v in self.server.headers().items()]
            return [
                HttpMcpServer(type="http", name=self.name, url=self.server.url, headers=headers)
            ]
        program, *args = bridge_command(self.server.url)
        token = EnvVariable(name=TOKEN_VARIABLE, value=self.server.secret())
        return [McpServerStdio(name=self.name, command=program, args=args, env=[token])]

    def close(self) -> None:
        """Stop serving (calls still open are cancelled)."""
        self.server.close()

    # -- the agent's reports (callback thread) -------------------------------------------

    def identify(self, update: Report) -> tuple[Tool, dict[str, Any] | None] | None:
        """The served tool an agent's report is of, and its arguments (None: not known yet).

        Claude names it in ``_meta`` (``mcp__<server>__<tool>``); Codex's input is
        ``{server, tool, arguments}``. Neither is the model's to write.
        """
        meta = update.field_meta or {}
        raw = update.raw_input
        if isinstance(raw, dict) and raw.get("server") == self.name and "arguments" in raw:
            tool = self.tools.get(str(raw.get("tool")))
            given = raw.get("arguments")
            if tool is not None:
                return tool, dict(given) if isinstance(given, dict) else None
        named = m.tool_name(meta, None, None) if m.named(meta) else None
        prefix = f"mcp__{self.name}__"
        if named is not None and named.startswith(prefix):
            tool = self.tools.get(named.removeprefix(prefix))
            if tool is not None:
                return tool, m.arguments_of(raw)
        return None

    def see(
        self, mapper: TurnMapper, update: Report, known: CallRecord | None
    ) -> CallRecord | None:
        """The card of an agent's report of a served call (None: it is not one)."""
        own = self._own.get(known.tool_call_id) if known is not None else None
        if known is not None and own is None:
            return None
        found = self.identify(update)
        if found is None and own is None:
            return None
        tool = own.tool if own is not None else found[0] if found is not None else None
        assert tool is not None
        # A later report of a known call may name it no more (Claude's permission request).
        arguments = found[1] if found is not None else m.arguments_of(update.raw_input)
        if known is not None and own is not None:
            changes = not (own.asked or own.reached) and known.status == "pending"
            if arguments and arguments != known.arguments and changes:
                self._unlist(known)
                said = _preview(tool, arguments)
                mapper.session.describe(
                    known,
                    arguments=arguments,
                    content=said.content if said else None,
                    locations=said.locations if said else None,
                )
                if not own.reached:
                    self._list(tool, known)
            return known
        if arguments is not None:
            begun = self._adoptable(tool, arguments)
            if begun is not None:
                return begun
        said = _preview(tool, arguments) if arguments is not None else None
        record = mapper.session.begin(
            update.tool_call_id,
            tool.name,
            self.name,
            None,
            arguments or {},
            kind=kind_of(tool),
            content=said.content if said else None,
            locations=said.locations if said else None,
        )
        self._own[record.tool_call_id] = _Own(tool, record)
        if arguments is not None:
            self._list(tool, record)
        return record

    def owns(self, record: CallRecord) -> bool:
        """Whether ``record`` is the card of a served call."""
        return record.tool_call_id in self._own

    def reported(self, mapper: TurnMapper, record: CallRecord, update: Report) -> None:
        """The agent's word on how a served call went: the server's own word wins.

        A call the agent reports ended that never reached the server ends ``failed``.
        """
        own = self._own[record.tool_call_id]
        if own.reached or update.status not in ("completed", "failed"):
            return
        self._unlist(record)
        self.passes.revoke(record)
        if record.status in FINAL_STATUSES:
            return
        said = m.result_text(update.raw_output, m.content_of(update.content))
        if update.status == "failed":
            mapper.session.fail(record, "error", said or f"{record.tool} failed")
        else:
            mapper.session.fail(record, "error", f"{NEVER_REACHED} {said}".strip())

    def permission(
        self, mapper: TurnMapper, record: CallRecord, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        """The agent asks before a served call: this card asks; an Allow is a pass for one call."""
        session = mapper.session
        own = self._own[record.tool_call_id]
        tool = own.tool
        if own.asked or own.reached:
            log.warning("%s asked again about %s; refused", mapper.server, record.tool_call_id)
            return _select(None)
        own.asked = True
        valid, problem = check(tool, record.arguments)
        if valid is None:
            session.fail(record, "invalid_arguments", problem or "invalid arguments")
            return _select(m.option_for(options, "reject"))
        self._unlist(record)
        decision = session.decide(record, tool.parameters)
        if not isinstance(decision, Allow):
            if decision.reason == "rejected":
                return _select(m.option_for(options, "reject"))
            return _select(None)
        chosen = m.option_for(options, "allow", mapper.forward_always)
        if chosen is None:
            session.fail(record, "error", "the agent offered no allow option")
            return _select(None)
        self.passes.grant(tool.name, record.arguments, record)
        return _select(chosen)

    # -- the server's calls (its own loop) -----------------------------------------------

    async def on_call(self, name: str, arguments: dict[str, Any]) -> mt.CallToolResult:
        """One ``tools/call``: asked (or its pass taken), run, ended; the agent gets the result."""
        mapper = self.turn_of()
        tool = self.tools.get(name)
        if mapper is None:
            return _error(NO_TURN)
        if tool is None:
            return _error(f"There is no tool named {name!r}. Tools: {', '.join(self.tools)}.")
        session = mapper.session
        admitted = await session.call(self._admit, mapper, tool, arguments)
        if isinstance(admitted, str):
            return _error(admitted)
        record, handle, valid, context = admitted
        return await self._run(mapper, tool, record, handle, valid, context)

    def _admit(
        self, mapper: TurnMapper, tool: Tool, arguments: dict[str, Any]
    ) -> tuple[CallRecord, Call, dict[str, Any], contextvars.Context] | str:
        """Take this call's pass, or ask on its card (callback thread); why not, as text.

        An allowed call comes with the context of the turn's cell, which the tool runs in.
        """
        session = mapper.session
        context = contextvars.copy_context()
        valid, problem = check(tool, arguments)
        passed = self.passes.take(tool.name, arguments) if valid is not None else None
        if passed is not None and passed.record.status == "pending":
            record = passed.record
            self._own[record.tool_call_id].reached = True
            assert valid is not None
            return record, session.running(record), valid, context
        record = self._claim(tool, arguments) or self._begin(mapper, tool, arguments)
        self._own[record.tool_call_id].reached = True
        if valid is None:
            message = problem or f"Invalid arguments for {tool.name}."
            session.fail(record, "invalid_arguments", message)
            return message
        decision = session.decide(record, tool.parameters)
        if not isinstance(decision, Allow):
            return record.error or f"Permission to run {tool.name} was denied."
        if record.approved_arguments is not None:
            valid, problem = check(tool, record.approved_arguments)
            if valid is None:
                message = problem or f"Invalid arguments for {tool.name}."
                session.fail(record, "invalid_arguments", message)
                return message
        return record, session.running(record), valid, context

    def _begin(self, mapper: TurnMapper, tool: Tool, arguments: dict[str, Any]) -> CallRecord:
        """A card for a call the agent did not report (yet)."""
        said = _preview(tool, arguments)
        record = mapper.session.begin(
            f"{self.name}-{next(self._numbers)}",
            tool.name,
            self.name,
            None,
            arguments,
            kind=kind_of(tool),
            content=said.content if said else None,
            locations=said.locations if said else None,
        )
        self._own[record.tool_call_id] = _Own(tool, record, unreported=time.monotonic())
        return record

    async def _run(
        self,
        mapper: TurnMapper,
        tool: Tool,
        record: CallRecord,
        handle: Call,
        arguments: dict[str, Any],
        context: contextvars.Context,
    ) -> mt.CallToolResult:
        """Run the allowed call; the card's Cancel stops it (and only it)."""
        session = mapper.session
        loop = asyncio.get_running_loop()
        with watching() as ran:
            task = asyncio.ensure_future(invoke(tool, arguments, handle, context=context))

            def cancel() -> None:
                if not loop.is_closed():
                    loop.call_soon_threadsafe(task.cancel)

            handle.on_cancel(cancel)
            try:
                value = await task
            except asyncio.CancelledError:
                if not (handle.cancelled and task.cancelled()):
                    raise
                message = f"The call to {tool.name} was cancelled."
                await session.call(session.fail, record, "cancelled", message)
                return _error(message)
            except Exception:
                failure = raised(tool, ran)
                await session.call(
                    session.fail, record, failure.outcome, failure.text, content=failure.content
                )
                return _error(failure.text)
        end = ending(ran)
        text = end.text if end is not None else ""
        await session.call(
            session.complete, record, text, content=end.content if end is not None else None
        )
        return _result(text, value)

    # -- cards waiting for their call ------------------------------------------------------

    def _list(self, tool: Tool, record: CallRecord) -> None:
        key = canonical(record.arguments)
        if key is not None:
            self._waiting.setdefault((tool.name, key), []).append(record)

    def _unlist(self, record: CallRecord) -> None:
        for key, records in list(self._waiting.items()):
            kept = [r for r in records if r is not record]
            if kept:
                self._waiting[key] = kept
            else:
                del self._waiting[key]

    def _claim(self, tool: Tool, arguments: dict[str, Any]) -> CallRecord | None:
        """The agent's report of this very call, still pending and not yet reached (oldest)."""
        key = canonical(arguments)
        waiting = self._waiting.get((tool.name, key)) if key is not None else None
        while waiting:
            record = waiting.pop(0)
            own = self._own.get(record.tool_call_id)
            if record.status == "pending" and own is not None and not own.reached:
                return record
        return None

    def _adoptable(self, tool: Tool, arguments: dict[str, Any]) -> CallRecord | None:
        """The card the server began for this very call before the agent reported it (once)."""
        key = canonical(arguments)
        now = time.monotonic()
        for own in self._own.values():
            since = own.unreported
            if own.tool is not tool or since is None or now - since > PASS_TTL:
                continue
            if key is not None and canonical(own.record.arguments) == key:
                own.unreported = None
                return own.record
        return None

    def end_turn(self) -> None:
        """The turn has ended: its passes and waiting cards go."""
        self.passes.clear()
        self._waiting.clear()
        self._own.clear()


def _preview(tool: Tool, arguments: dict[str, Any]) -> Any:
    valid, _ = check(tool, arguments)
    return shown(tool, valid) if valid is not None else None


def _select(option_id: str | None) -> RequestPermissionResponse:
    if option_id is None:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
    return RequestPermissionResponse(
        outcome=AllowedOutcome(outcome="selected", option_id=option_id)
    )


def _error(text: str) -> mt.CallToolResult:
    return mt.CallToolResult(content=[mt.TextContent(type="text", text=text)], is_error=True)


def _result(text: str, value: Any) -> mt.CallToolResult:
    """The agent's result: the text, and the images of a ``ToolOutput``."""
    content: list[Any] = [mt.TextContent(type="text", text=text)]
    if isinstance(value, ToolOutput):
        content += [
            mt.ImageContent(type="image", data=image["data"], mime_type=image["mime_type"])
            for image in value.images
        ]
    return mt.CallToolResult(content=content)
