"""One Claude Code conversation kept across turns (``claude_agent.session``).

One ``ClaudeSDKClient`` (one Claude Code process) lives on an event loop of the
session's own thread; each turn sends its prompt there and reads the reply. The
client's permission callback and hooks ask the gate of the turn that runs now;
with no turn running, every call is denied.

The session's id is Claude Code's. Before a prompt reaches the model, a
``UserPromptSubmit`` hook checks that Claude Code is in that very conversation,
and the ids its messages report are checked again: another id blocks the prompt,
ends the CLI and fails the turn (``SessionError``). A resumed id Claude Code does
not know fails the turn the same way: a new conversation never takes its place.

A turn stopped by a card's Cancel or a kernel interrupt interrupts the client's
turn and reads what is left of it, so the next turn goes on in the same process;
a CLI that does not end its turn within ``STOP_GRACE`` is ended, and the next
turn starts a new one that resumes the conversation by its id.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import logging
import threading
import uuid
import weakref
from collections.abc import Coroutine, Iterable, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    ToolPermissionContext,
)

from mead_notebook.errors import MeadError
from mead_notebook.interaction import ToolKind
from mead_notebook.tools.trust import trusted_servers
from mead_notebook.turn import Turn

from ..base import AgentResult, AgentTurn, active_turn
from ..base.loops import settle
from ._catalog import SdkTool, sdk_tools
from ._client import TEARDOWN_TIMEOUT, alive, gated_client, teardown
from ._gate import Gate, call_soon
from ._own_tools import passes_of, session_turn

__all__ = ["CONNECT_TIMEOUT", "STOP_GRACE", "Session", "SessionError", "checked_resume"]

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

T = TypeVar("T")

CONNECT_TIMEOUT = 90.0
"""How long Claude Code gets to start and connect (seconds)."""
STOP_GRACE = 3.0
"""After an interrupt, how long Claude Code gets to end its turn before it is ended (s)."""
KILL_GRACE = 0.5
"""How long a CLI that did not end its turn gets to disconnect before it is killed (s)."""
NO_TURN = "No turn of this session is running: the call was not asked about and did not run."
_STARTS_OVER = ("resume", "continue_conversation", "fork_session", "session_id")
"""Options that choose the conversation: a session chooses it (``resume=``)."""

_live: weakref.WeakSet[Session] = weakref.WeakSet()


class SessionError(MeadError, RuntimeError):
    """The session cannot go on in its conversation: an id Claude Code cannot resume, Claude
    Code in another conversation than the session's, or the session closed."""


def checked_resume(resume: object) -> str | None:
    """``resume`` as a session id (a UUID, as ``session.id`` gives it), or None.

    Claude Code would also take a session's title there; a session resumes by id only.
    """
    if resume is None:
        return None
    if not isinstance(resume, str):
        raise TypeError(f"resume must be a session id (a str), not {type(resume).__name__}")
    try:
        return str(uuid.UUID(resume))
    except ValueError:
        raise ValueError(
            f"resume must be a Claude Code session id (a UUID, as session.id gives it), "
            f"not {resume!r}"
        ) from None


class Session:
    """One Claude Code process and conversation; each :meth:`run` is one turn of it.

    Every turn has its own interaction, asks every call as ``claude_agent.run``
    does, and checks the conversation's id. :meth:`close` (or leaving a ``with``
    block, or the interpreter's exit) ends the CLI.
    """

    def __init__(
        self,
        options: ClaudeAgentOptions,
        *,
        resume: str | None = None,
        kinds: Mapping[str, ToolKind] | None = None,
        trusted: Iterable[str] = (),
    ) -> None:
        chosen = [name for name in _STARTS_OVER if getattr(options, name, None)]
        if chosen:
            raise ValueError(
                f"claude_agent.session chooses the conversation itself: leave "
                f"{', '.join(chosen)} unset in the options (resume= continues one by its id)"
            )
        self.options = options
        """The options each CLI of the session starts with (``resume`` set by the session)."""
        self.kinds = dict(kinds or {})
        """What tools do, by name, as ``claude_agent.run``'s ``kinds``."""
        self.resume = checked_resume(resume)
        """The id of the earlier conversation this one continues, or None."""
        self.resumed_by: str | None = None
        """``"resume"`` once Claude Code has continued :attr:`resume` (it reported its id)."""
        self._believed = trusted_servers(trusted)
        self._id = self.resume
        self._unconfirmed: str | None = None
        """The id the running CLI was started to resume, until Claude Code reports it."""
        self._forced = False
        """Whether a CLI of this session was ended before it ended its turn."""
        self._blocked: str | None = None
        """Why the running turn's prompt was not let through to the model."""
        self._client: ClaudeSDKClient | None = None
        self._tools: dict[str, SdkTool] | None = None
        self._gate: Gate | None = None
        self._turn: AgentTurn | None = None
        """The turn whose prompt Claude Code is answering (its calls ask its gate)."""
        self._running: AgentTurn | None = None
        """The turn started and not ended yet."""
        self._exchanging: asyncio.Task[Any] | None = None
        self._pending: set[asyncio.Future[Any]] = set()
        self._closed = False
        self._busy = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="mead-claude-session", daemon=True
        )
        self._thread.start()
        _live.add(self)

    @property
    def id(self) -> str | None:
        """Claude Code's id of this conversation (pass it as ``resume=`` in another
        kernel), once the first turn has started it; the resumed id before that."""
        return self._id

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("running" if self._client else "not started")
        return f"<claude_agent session {self._id or '(new)'} {state}>"

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- turns --------------------------------------------------------------------------

    def run(self, prompt: str, *, interaction: object) -> AgentResult:
        """One turn; blocks until it ends (a kernel interrupt stops it and propagates).

        A failed turn raises ``TurnError`` (its ``result`` holds what the turn produced).
        """
        return self.start(prompt, interaction=interaction).result()

    async def arun(self, prompt: str, *, interaction: object) -> AgentResult:
        """One turn, awaited (for async cells)."""
        return await self.start(prompt, interaction=interaction)

    def start(self, prompt: str, *, interaction: object) -> Turn[AgentResult]:
        """Start one turn in a thread of its own and return its handle at once."""
        if self._closed:
            raise SessionError("this Claude Code session is closed")
        if not isinstance(prompt, str):
            raise TypeError(f"prompt must be a string, not {type(prompt).__name__}")
        turn = AgentTurn(interaction, AgentResult())
        if not self._busy.acquire(blocking=False):
            turn.close()
            raise SessionError("this Claude Code session is already running a turn")

        self._running = turn

        def work() -> AgentResult:
            try:
                return turn.run(prompt, lambda: self._run_turn(turn, prompt))
            finally:
                self._running = None
                self._busy.release()

        def unstarted() -> None:
            self._running = None
            self._busy.release()
            turn.close()

        return Turn(work, driver=turn.driver, cancel=turn.cancel, unstarted=unstarted)

    async def _run_turn(self, turn: AgentTurn, prompt: str) -> AgentResult:
        """The turn's side (its own loop): the exchange runs on the client's loop."""
        running = self._submit(self._exchange(turn, prompt))
        try:
            return await asyncio.shield(asyncio.wrap_future(running))
        except BaseException:
            if not turn.cancelled.is_set():
                raise
            await asyncio.wrap_future(self._submit(self._stop(running)))
            turn.result.stop_reason = "interrupted"
            return turn.result

    async def _exchange(self, turn: AgentTurn, prompt: str) -> AgentResult:
        """Send the prompt and read Claude Code's reply through the turn's gate."""
        result = turn.result
        cwd = str(self.options.cwd) if self.options.cwd is not None else None
        gate = Gate(turn, cwd, call_soon(self._loop, self._interrupt_client), self.kinds)
        passes_of(turn)  # the session's own tools run only on this turn's passes
        self._exchanging = asyncio.current_task()
        try:
            client = await self._connected()
            gate.sdk_tools = dict(self._tools or {})
            if turn.cancelled.is_set():
                result.stop_reason = "interrupted"
                return result
            self._turn, self._gate, self._blocked = turn, gate, None
            messages: list[Any] = []
            result.output = messages
            await client.query(prompt)
            async for message in client.receive_response():
                messages.append(message)
                self._check(message)
                gate.on(message)
                if isinstance(message, ResultMessage):
                    result.stop_reason = gate.ended(message)
            if self._blocked is not None:
                raise SessionError(self._blocked)
            result.rounds = gate.rounds
            return result
        except BaseException as exc:
            # The CLI goes; the next turn starts one that resumes the conversation.
            await self._drop()
            resuming, self._unconfirmed = self._unconfirmed, None
            if resuming is not None and isinstance(exc, Exception):
                if isinstance(exc, SessionError):
                    raise
                lost = (
                    " (the CLI before was ended in the middle of a turn, perhaps before it "
                    "saved the conversation)"
                    if self._forced
                    else ""
                )
                raise SessionError(
                    f"Claude Code could not resume session {resuming!r} ({exc}){lost}; no new "
                    "conversation was started in its place"
                ) from exc
            raise
        finally:
            if self._gate is gate:
                self._turn = self._gate = None
            passes_of(turn).clear()

    async def _connected(self) -> ClaudeSDKClient:
        """The session's client, started (resuming the conversation) if there is none."""
        if self._client is not None and alive(self._client):
            return self._client
        await self._drop()
        if self._tools is None:
            self._tools = await sdk_tools(self.options.mcp_servers, self._believed)
        resume = self._id
        client = gated_client(
            dataclasses.replace(self.options, resume=resume),
            self._can_use_tool,
            self._pre_tool_use,
            UserPromptSubmit=self._prompt_submitted,
        )
        # The client's callbacks run in the context it connects in: its turn is the session's.
        active_turn.set(None)
        session_turn.set(lambda: self._turn)
        self._client, self._unconfirmed = client, resume
        await asyncio.wait_for(client.connect(), CONNECT_TIMEOUT)
        return client

    def _check(self, message: object) -> None:
        """The id a message reports is the conversation's (the first one reported, else)."""
        if isinstance(message, SystemMessage) and message.subtype == "init":
            reported = message.data.get("session_id")
        elif isinstance(message, ResultMessage):
            reported = message.session_id
        else:
            return
        if not isinstance(reported, str) or not reported:
            return
        self._confirm(reported)
        if self._blocked is not None:
            raise SessionError(self._blocked)

    def _confirm(self, reported: str) -> bool:
        """Whether Claude Code is in this session's conversation (noting why not)."""
        if self._id is None:
            self._id = reported
        if reported != self._id:
            self._blocked = self._blocked or (
                f"Claude Code is in session {reported!r}, not in this session's {self._id!r}; "
                "the turn was stopped and its prompt kept from the model"
            )
            return False
        if self._unconfirmed == reported:
            self._unconfirmed = None
            if reported == self.resume:
                self.resumed_by = "resume"
        return True

    # -- the client asks (on the session's loop) ------------------------------------------

    async def _prompt_submitted(self, given: Any, tool_use_id: str | None, context: Any) -> Any:
        """A prompt is about to reach the model: only in this session's conversation."""
        reported = given.get("session_id") if isinstance(given, dict) else None
        if isinstance(reported, str) and reported and self._confirm(reported):
            return {}
        self._blocked = self._blocked or (
            f"Claude Code did not say which session the prompt is in; this session is "
            f"{self._id!r}, so the prompt was kept from the model"
        )
        return {"continue_": False, "stopReason": self._blocked}

    async def _pre_tool_use(self, given: Any, tool_use_id: str | None, context: Any) -> Any:
        gate = self._gate
        if gate is not None:
            return await gate.pre_tool_use(given, tool_use_id, context)
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}

    async def _can_use_tool(
        self, tool: str, given: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        gate = self._gate
        if gate is None:
            return PermissionResultDeny(message=NO_TURN)
        return await gate.can_use_tool(tool, given, context)

    # -- stopping -----------------------------------------------------------------------

    def _interrupt_client(self) -> None:
        """A card's Cancel: Claude Code's turn is interrupted (on the session's loop)."""
        client = self._client
        if client is not None:
            task = asyncio.ensure_future(client.interrupt())
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    async def _stop(self, running: Future[AgentResult]) -> None:
        """A kernel interrupt: Claude Code's turn is interrupted and read to its end, or,
        when that takes longer than ``STOP_GRACE``, the CLI is ended."""
        exchange = asyncio.wrap_future(running)
        deadline = self._loop.time() + STOP_GRACE
        client = self._client
        if client is not None and not exchange.done():
            try:
                await asyncio.wait_for(client.interrupt(), STOP_GRACE)
            except Exception as exc:
                log.debug("Claude Code was not interrupted: %r", exc)
        await asyncio.wait({exchange}, timeout=max(0.0, deadline - self._loop.time()))
        if exchange.done():
            return
        self._forced = True
        await self._drop(KILL_GRACE)  # first: the exchange then finds no client to end
        task = self._exchanging
        if task is not None and not task.done():
            task.cancel()
        await asyncio.wait({exchange}, timeout=KILL_GRACE)

    async def _drop(self, timeout: float = TEARDOWN_TIMEOUT) -> None:
        """End the client's CLI (bounded); the next turn starts a new one."""
        client, self._client = self._client, None
        if client is not None:
            await teardown(client, timeout)

    def close(self, timeout: float = TEARDOWN_TIMEOUT) -> None:
        """End the CLI and the session; a turn still running is interrupted first
        (waiting up to ``timeout`` seconds for it)."""
        if self._closed:
            return
        self._closed = True
        _live.discard(self)
        turn = self._running
        if turn is not None:
            turn.cancel()
        if self._busy.acquire(timeout=timeout):
            self._busy.release()
        try:
            self._submit(self._drop()).result(TEARDOWN_TIMEOUT + 1.0)
        except Exception:
            log.exception("ending the Claude CLI of a session failed")
        finally:
            with contextlib.suppress(Exception):
                self._submit(settle(KILL_GRACE)).result(timeout)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)
            if not self._thread.is_alive():
                self._loop.close()

    def _submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)


@atexit.register
def _close_all() -> None:
    """At interpreter exit (a kernel's shutdown too), end every session's CLI."""
    for session in list(_live):
        try:
            session.close(timeout=3.0)
        except Exception:
            log.exception("closing %r at exit failed", session)
