"""One agent process and one ACP session, kept across turns (``acp.session``)."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import threading
import weakref
from collections.abc import Coroutine, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

import acp
from acp.schema import (
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
    FileSystemCapabilities,
    Implementation,
    PromptResponse,
)

from mead_notebook.adapters.base import AgentResult, AgentTurn
from mead_notebook.adapters.base.loops import settle
from mead_notebook.adapters.base.own_tools import own_tools
from mead_notebook.errors import MeadError
from mead_notebook.interaction import AgentInfo, HistoryEntry
from mead_notebook.turn import Turn

from . import _mapping as m
from ._client import Client, TurnMapper
from ._controls import Command, OptionError, SessionOption, Usage
from ._presets import AgentSpec, start_hint
from ._process import AgentProcess
from ._replay import Replay

if TYPE_CHECKING:
    from ._served import Served

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["AcpResult", "AgentError", "Conversation"]

T = TypeVar("T")

START_TIMEOUT = 60.0
"""How long the agent gets to start and open its session (seconds)."""
CANCEL_GRACE = 0.5
"""After a kernel interrupt, how long the agent gets to answer ``session/cancel`` before its
process group is killed (seconds)."""
CANCEL_TIMEOUT = 10.0
"""After a card's Cancel, how long the agent gets to end its turn before it is killed (s)."""
EXITED_GRACE = 0.2
"""How long a reply may still arrive after the agent's process has exited (seconds)."""
STOP_TIMEOUT = 5.0
"""How long an interrupted start gets to end the agent it was starting (seconds)."""
CONFIGURE_TIMEOUT = 30.0
"""How long the agent gets to answer one ``session/set_config_option`` (seconds)."""
REPLAY_QUIET = 0.3
"""After answering ``session/load``, how long the agent must send nothing before its replay
of the history counts as over (seconds): Gemini CLI answers before the replay is sent."""
REPLAY_TIMEOUT = 10.0
"""The longest wait for the end of a replay after ``session/load`` answered (seconds)."""

_live: weakref.WeakSet[Conversation] = weakref.WeakSet()


class AgentError(MeadError, RuntimeError):
    """The agent could not start, or exited or broke the protocol during a turn."""


@dataclass(repr=False)
class AcpResult(AgentResult):
    """A turn of an ACP agent: ``text``, ``calls``, ``thoughts``, ``plan``, ``stop_reason``.

    ``stop_reason`` is ``end_turn``, ``max_tokens``, ``max_rounds`` (ACP's
    ``max_turn_requests``), ``refusal`` or ``interrupted`` (cancelled);
    ``agent_stop_reason`` is the agent's own word. ``output`` is ACP's
    ``PromptResponse`` (None when the turn was interrupted).
    """

    agent_stop_reason: str | None = None
    stopped: str | None = None
    """Why the turn was stopped here (``strict=True``: a call that may change something
    ran without asking), or None."""
    usage: Usage | None = None
    """The session's context usage (and cost) as the agent last reported it by the end of
    the turn; None when it reported none. A figure it did not give is None, never 0."""


class Conversation:
    """One agent process and one ACP session; each :meth:`start` is one turn.

    The agent's connection lives on an event loop of its own thread. A kernel
    interrupt (or ``turn.cancel()``) cancels the ACP session, answers open
    questions ``cancelled`` and kills the agent's process group; the next turn
    starts a new agent (and a new ACP session). :meth:`close` ends it for good.

    ``strict``: a call that may change something (kind ``edit``, ``delete``,
    ``move``, ``execute``, ``fetch``, ``other``) that the agent runs under its own
    rules, without asking anyone here, ends ``interrupted`` and cancels the
    agent's turn (``result.stopped`` says why). By default such calls are
    reported ``decided_by: "agent"`` and the turn goes on.
    """

    def __init__(
        self,
        spec: AgentSpec,
        cwd: str | os.PathLike[str] | None = None,
        *,
        strict: bool = False,
        tools: Iterable[object] | None = None,
        resume: str | None = None,
    ) -> None:
        if resume is not None and (not isinstance(resume, str) or not resume):
            raise TypeError(f"resume must be a session id (a non-empty string), not {resume!r}")
        self.spec = spec
        self.resume = resume
        """The id of an earlier session this one continues (``session/resume``, else
        ``session/load``), or None for a new session."""
        self.resumed_by: str | None = None
        """How the earlier session was continued: ``"session/resume"`` or ``"session/load"``."""
        self._history: list[HistoryEntry] | None = None
        """The history ``session/load`` replayed, until a turn shows it (the first only)."""
        self._history_shown = False
        self.strict = strict
        served = own_tools(tools) if tools is not None else []
        self.served: Served | None = None
        """The package's own tools served to the agent over MCP from this kernel, if any."""
        if served:
            from ._served import Served  # the MCP server's stack, only when tools are served

            self.served = Served(served, lambda: self.client.turn)
        self.mode: str | None = None
        """The agent's session mode, as it last said."""
        self.model: str | None = None
        self._mode_offered: str | None = None
        """The mode option's value when the session opened (a change shows on the header)."""
        self._chosen: dict[str, str | bool] = {}
        """What :meth:`configure` set, by option id: set again in a session opened anew."""
        self.cwd = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        if not os.path.isdir(self.cwd):
            raise NotADirectoryError(f"cwd {self.cwd!r} is not a directory")
        spec.command_in(self.cwd)  # a folder the preset refuses is refused here, before a turn
        self.client = Client(spec.name)
        self.process: AgentProcess | None = None
        self.session_id: str | None = None
        self._opened: str | None = None
        """The id of the session the agent last opened (kept when the agent goes)."""
        self._conn: Any = None
        self._closed = False
        self._busy = threading.Lock()
        self._session: AgentTurn | None = None
        """The running turn's session, if a turn runs."""
        self._interrupted: AgentTurn | None = None
        """The last turn interrupted, marked before its ``session/cancel`` goes out."""
        self._prompting: asyncio.Task[Any] | None = None
        """The running turn's start and prompt, on the agent's loop."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name=f"mead-acp-{spec.name}", daemon=True
        )
        self._thread.start()
        _live.add(self)

    @property
    def id(self) -> str | None:
        """The agent's id of this session (pass it as ``resume=`` in another kernel), once
        the first turn has opened it; the resumed id before that."""
        return self.session_id or self._opened or self.resume

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("running" if self.process else "not started")
        return f"<acp session {self.spec.name} {state}>"

    def __enter__(self) -> Conversation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- turns --------------------------------------------------------------------------

    def run(self, prompt: str, *, interaction: object) -> AcpResult:
        """One turn; blocks until it ends (a kernel interrupt stops it and propagates)."""
        return self.start(prompt, interaction=interaction).result()

    async def arun(self, prompt: str, *, interaction: object) -> AcpResult:
        """One turn, awaited (for async cells)."""
        return await self.start(prompt, interaction=interaction)

    def start(
        self, prompt: str, *, interaction: object, close_after: bool = False
    ) -> Turn[AcpResult]:
        """Start one turn in a thread of its own and return its handle at once.

        A bad argument raises here and leaves the session free for the next turn
        (``close_after``: closed).
        """
        try:
            return self._start(prompt, interaction, close_after)
        except BaseException:
            if close_after:
                self.close()
            raise

    def _start(self, prompt: str, interaction: object, close_after: bool) -> Turn[AcpResult]:
        if self._closed:
            raise AgentError(f"the session with {self.spec.name} is closed")
        if not isinstance(prompt, str):
            raise TypeError(f"prompt must be a string, not {type(prompt).__name__}")
        result = AcpResult()
        session = AgentTurn(interaction, result)
        mapper = TurnMapper(
            session,
            self.spec.name,
            forward_always=self.spec.forward_always,
            late_input=self.spec.late_input,
            cancel_turn=lambda: self._cancel_from_card(session),
            strict=self.strict,
            mode_changed=self._mode_changed,
            described=self._described,
            served=self.served,
        )
        if not self._busy.acquire(blocking=False):
            session.close()
            raise AgentError(f"{self.spec.name} is already running a turn in this session")
        self._session = session

        def work() -> AcpResult:
            try:
                return session.run(prompt, lambda: self._turn(session, mapper, prompt))
            finally:
                self._session = None
                if self.served is not None:
                    self.served.end_turn()
                self._busy.release()
                if close_after:
                    self.close()

        def unstarted() -> None:
            self._session = None
            self._busy.release()
            session.close()

        return Turn(
            work,
            driver=session.driver,
            cancel=lambda: self._cancel_first(session),
            unstarted=unstarted,
        )

    def _cancel_first(self, session: AgentTurn) -> None:
        """A kernel interrupt: ``session/cancel`` goes out before the questions close."""
        self._interrupted = session
        conn, session_id = self._conn, self.session_id
        if conn is not None and session_id is not None and not self._loop.is_closed():
            sent = self._submit(self._send_cancel(conn, session_id))
            with contextlib.suppress(Exception):
                sent.result(CANCEL_GRACE)
        session.cancel()

    async def _turn(self, session: AgentTurn, mapper: TurnMapper, prompt: str) -> AcpResult:
        result: AcpResult = session.result  # type: ignore[assignment]
        running = self._submit(self._prompt(mapper, prompt))
        response: PromptResponse | None
        try:
            response = await asyncio.shield(asyncio.wrap_future(running))
        except asyncio.CancelledError:
            if not session.cancelled.is_set():
                raise
            response = None
        if response is None or self._interrupted is session:
            # A kernel interrupt or turn.cancel(), even one the agent answered before it
            # reached this turn: cancel, then kill the agent's group.
            interrupting = asyncio.wrap_future(self._submit(self._interrupt(running)))
            while True:  # the turn's own cancel, arriving now, must not cut this short
                try:
                    await asyncio.shield(interrupting)
                    break
                except asyncio.CancelledError:
                    if not session.cancelled.is_set() or interrupting.cancelled():
                        raise
            result.stop_reason = "interrupted"
            result.usage = self.client.controls.usage
            return result
        result.usage = self.client.controls.usage
        result.output = response
        result.agent_stop_reason = response.stop_reason
        result.stop_reason = m.stop_reason_of(response.stop_reason)
        result.stopped = mapper.stopped
        if mapper.stopped is not None:
            result.stop_reason = "interrupted"
        return result

    async def _prompt(self, mapper: TurnMapper, prompt: str) -> PromptResponse:
        self._prompting = asyncio.current_task()
        try:
            await self._ensure_started()
            if mapper.session.cancelled.is_set():
                # Interrupted while the agent started: the prompt never goes out.
                raise asyncio.CancelledError
            await mapper.session.call(mapper.session.driver.agent, self.info())
            history, self._history = self._history, None
            if history is not None:
                self._history_shown = True
                await mapper.session.call(mapper.session.driver.history, history)
            return await self._send_prompt(mapper, prompt)
        finally:
            self._prompting = None

    async def _send_prompt(self, mapper: TurnMapper, prompt: str) -> PromptResponse:
        process, conn = self.process, self._conn
        assert process is not None
        assert conn is not None
        assert self.session_id is not None
        self.client.turn = mapper
        try:
            asked = asyncio.ensure_future(
                conn.prompt(session_id=self.session_id, prompt=[acp.text_block(prompt)])
            )
            exited = asyncio.ensure_future(process.proc.wait())
            done, _ = await asyncio.wait({asked, exited}, return_when=asyncio.FIRST_COMPLETED)
            if asked not in done:
                await asyncio.wait({asked}, timeout=EXITED_GRACE)
            if asked.done() and not asked.cancelled() and asked.exception() is None:
                exited.cancel()
                response: PromptResponse = asked.result()
                return response
            asked.cancel()
            exited.cancel()
            await self._lost(process, "during the turn", asked)
            raise AssertionError("unreachable")
        finally:
            self.client.turn = None
            mapper.close()

    async def _lost(self, process: AgentProcess, when: str, asked: asyncio.Future[Any]) -> None:
        """Raise the error of an agent that exited or failed: its name, exit code, stderr tail."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.proc.wait(), EXITED_GRACE)
        tail = await process.stderr_tail()
        error = None if asked.cancelled() else asked.exception()
        code = process.returncode
        self.process = self._conn = self.session_id = None
        await process.kill()
        how = f"exited with code {code}" if code is not None else f"failed ({error!r})"
        why = start_hint(self.spec) if when == "while starting" else ""
        said = f"; its stderr ended with:\n{tail}" if tail else " (it wrote nothing to stderr)"
        raise AgentError(f"{self.spec.name} {how} {when}{why}{said}") from error

    async def _ensure_started(self) -> None:
        if self.process is not None and self.process.returncode is None:
            return
        env = self.spec.environment()
        command = self.spec.command_in(self.cwd)
        process = await AgentProcess.spawn(self.spec.name, command, env, self.cwd)
        process.inbound.usage = self.client.partial_usage
        self.client.controls.reset()
        try:
            await self._connect(process)
        except BaseException:
            # Failed, interrupted or closed while it started: the agent goes too.
            await asyncio.shield(process.kill())
            raise

    async def _connect(self, process: AgentProcess) -> None:
        """Open the ACP session on ``process``, or raise why it could not."""
        conn = acp.connect_to_agent(
            cast(Any, self.client),
            process.proc.stdin,
            process.stdout,
            use_unstable_protocol=True,
        )
        opening = asyncio.ensure_future(self._open(conn))
        exited = asyncio.ensure_future(process.proc.wait())
        try:
            done, _ = await asyncio.wait(
                {opening, exited}, timeout=START_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            exited.cancel()
            if not opening.done():
                opening.cancel()
        if opening in done and opening.exception() is None:
            self.process, self._conn, self.session_id = process, conn, opening.result()
            self._opened = self.session_id
            return
        if opening in done and isinstance(opening.exception(), AgentError):
            raise cast(AgentError, opening.exception())
        if not done:
            raise AgentError(f"{self.spec.name} did not open a session within {START_TIMEOUT} s")
        await self._lost(process, "while starting", opening)

    async def _open(self, conn: Any) -> str:
        from mead_notebook import __version__

        initialized = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=False, write_text_file=False),
                terminal=False,
                elicitation=ElicitationCapabilities(
                    form=ElicitationFormCapabilities(), url=ElicitationUrlCapabilities()
                ),
            ),
            client_info=Implementation(name="mead-notebook", version=__version__),
        )
        servers = self.served.mcp_servers(initialized) if self.served is not None else []
        if self.resume is not None:
            opened = await self._replayed(conn, initialized, servers, self.resume)
        else:
            opened = await conn.new_session(
                cwd=self.cwd, mcp_servers=servers, **self.spec.session_meta
            )
        modes = opened.modes
        controls = self.client.controls
        controls.opened(opened.config_options, modes)
        self.model = controls.current("model")
        self._mode_offered = controls.current("mode")
        # An agent started with an asking policy (Codex) may name a mode of its own that
        # the policy overrides: the policy is what the header says, until the mode changes.
        self.mode = None
        if modes is not None and self.spec.policy is None:
            self.mode = modes.current_mode_id
        elif self.spec.policy is None:
            # An agent that offers its modes as an option only (OpenCode's agents).
            self.mode = self._mode_offered
        session_id = self.resume if self.resume is not None else str(opened.session_id)
        await self._want_mode(conn, session_id, modes)
        await self._choose_again(conn, session_id)
        return session_id

    async def _want_mode(self, conn: Any, session_id: str, modes: Any) -> None:
        """The preset's session mode (``spec.mode``), set with ``session/set_mode``."""
        wanted = self.spec.mode
        if wanted is None or self.mode == wanted:
            return
        name = self.spec.name
        option = self.client.controls.find("mode")
        if modes is None and option is not None and not option.legacy:
            # Modes offered as an option only (OpenCode's agents).
            if wanted not in option.allowed:
                listed = ", ".join(str(v) for v in option.allowed)
                raise AgentError(
                    f"{name} cannot run in session mode {wanted!r}: it offers {listed}"
                )
            await self._set(conn, session_id, option.id, wanted)
            self.mode = self._mode_offered = wanted
            return
        offered = [mode.id for mode in modes.available_modes] if modes is not None else []
        listed = f"it offers {', '.join(offered)}" if offered else "it offers no session modes"
        if wanted not in offered:
            raise AgentError(f"{name} cannot run in session mode {wanted!r}: {listed}")
        try:
            await conn.set_session_mode(session_id=session_id, mode_id=wanted)
        except Exception as exc:
            raise AgentError(
                f"{name} refused session mode {wanted!r} ({exc}); {listed}, and it is in "
                f"{self.mode!r}"
            ) from exc
        self.mode = self._mode_offered = wanted
        controls = self.client.controls
        offered_as = controls.find("mode")
        if offered_as is not None:
            controls.set_current(offered_as.id, wanted)

    async def _choose_again(self, conn: Any, session_id: str) -> None:
        """A session opened anew (after an interrupt) gets what :meth:`configure` set."""
        for key, value in self._chosen.items():
            option = self.client.controls.find(key)
            if option is None or option.current != value:
                await self._set(conn, session_id, key, value)
        if self._chosen:
            self._described()

    async def _replayed(
        self, conn: Any, initialized: Any, servers: list[Any], session_id: str
    ) -> Any:
        """:meth:`_resume`, taking what the agent replays meanwhile as the history the next
        turn shows (the first turn only); anything it asks meanwhile is refused."""
        replay = self.client.replay = Replay(self.spec.name)
        try:
            opened = await self._resume(conn, initialized, servers, session_id)
            if self.resumed_by == "session/load":
                await self._replay_ends(replay)
        finally:
            self.client.replay = None
        if replay.left_out:
            log.info(
                "%s: the %d earliest entries of its replay were left out",
                self.spec.name,
                replay.left_out,
            )
        if self.resumed_by == "session/load" and not self._history_shown:
            self._history = replay.entries()
        return opened

    async def _replay_ends(self, replay: Replay) -> None:
        """Wait until the agent has sent nothing for :data:`REPLAY_QUIET` s (at most
        :data:`REPLAY_TIMEOUT` s): the rest of a replay sent after its answer is still the
        replay, not the turn's."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + REPLAY_TIMEOUT
        heard, quiet_since = replay.heard, loop.time()
        while loop.time() - quiet_since < REPLAY_QUIET:
            if loop.time() >= deadline:
                log.warning(
                    "%s was still replaying the session after %s s; the turn starts",
                    self.spec.name,
                    REPLAY_TIMEOUT,
                )
                return
            await asyncio.sleep(min(0.05, REPLAY_QUIET))
            if replay.heard != heard:
                heard, quiet_since = replay.heard, loop.time()

    async def _resume(
        self, conn: Any, initialized: Any, servers: list[Any], session_id: str
    ) -> Any:
        """Continue the agent's earlier session ``session_id``: ``session/resume`` where the
        agent offers it, else ``session/load``. Neither, or a refusal, is an
        :class:`AgentError`: never a new session instead."""
        name = self.spec.name
        capabilities = initialized.agent_capabilities
        offered = capabilities.session_capabilities if capabilities is not None else None
        if offered is not None and offered.resume is not None:
            how, asked = "session/resume", conn.resume_session
        elif capabilities is not None and capabilities.load_session:
            how, asked = "session/load", conn.load_session
        else:
            raise AgentError(
                f"{name} cannot resume session {session_id!r}: it offers neither "
                "session/resume nor session/load (no new session was started)"
            )
        try:
            opened = await asked(
                cwd=self.cwd, session_id=session_id, mcp_servers=servers, **self.spec.session_meta
            )
        except acp.RequestError as exc:
            raise AgentError(
                f"{name} refused to resume session {session_id!r} ({how}: {exc}); no new "
                "session was started"
            ) from exc
        self.resumed_by = how
        return opened

    def info(self) -> AgentInfo:
        """What the turn's header says of the agent: its name, mode, sandbox, settings,
        model and usage."""
        details = self.spec.info(self.mode, self.model)
        usage = self.client.controls.usage
        if usage is not None:
            details["usage"] = usage.info()
        return details

    def _described(self) -> AgentInfo:
        """The session's options or usage changed (agent's loop): the header as it is now."""
        controls = self.client.controls
        self.model = controls.current("model") or self.model
        mode = controls.current("mode")
        if mode is not None and mode != self._mode_offered:
            # A mode set since the session opened is what the header says (a policy too).
            self.mode = self._mode_offered = mode
        return self.info()

    # -- session controls -----------------------------------------------------------------

    @property
    def options(self) -> Mapping[str, SessionOption]:
        """The agent's session options by id (model, mode, reasoning level, ...), as it last
        said: empty until the session opens (the first turn, or :meth:`configure`)."""
        return self.client.controls.options

    @property
    def commands(self) -> tuple[Command, ...]:
        """The agent's slash commands (``/name``), as it last listed them."""
        return self.client.controls.commands

    @property
    def usage(self) -> Usage | None:
        """The session's context usage and cost, as the agent last reported them."""
        return self.client.controls.usage

    def configure(
        self,
        options: Mapping[str, str | bool] | None = None,
        /,
        *,
        model: str | None = None,
        mode: str | None = None,
        **named: str | bool,
    ) -> Mapping[str, SessionOption]:
        """Set session options: ``model=``, ``mode=`` (by id or category), any other by its
        id (``configure({"fast-mode": "on"})`` for an id that is no Python name).

        Starts the agent and opens the session if need be. Each option and value is
        checked first (:class:`OptionError` naming what is allowed, nothing sent); the
        agent's refusal is an :class:`AgentError`. A session opened anew later (after
        an interrupt) gets the same values. Returns :attr:`options`.
        """
        wanted: dict[str, str | bool] = dict(options or {})
        wanted.update({k: v for k, v in (("model", model), ("mode", mode)) if v is not None})
        wanted.update(named)
        if self._closed:
            raise AgentError(f"the session with {self.spec.name} is closed")
        if not self._busy.acquire(blocking=False):
            raise AgentError(f"{self.spec.name} is running a turn: configure it between turns")
        try:
            done = self._submit(self._configure(wanted))
            try:
                return done.result(START_TIMEOUT + CONFIGURE_TIMEOUT * max(1, len(wanted)))
            except BaseException:
                done.cancel()
                raise
        finally:
            self._busy.release()

    async def _configure(self, wanted: dict[str, str | bool]) -> Mapping[str, SessionOption]:
        await self._ensure_started()
        assert self._conn is not None
        assert self.session_id is not None
        checked = [(self._check(key, value), value) for key, value in wanted.items()]
        for option, value in checked:
            await self._set(self._conn, self.session_id, option.id, value)
            self._chosen[option.id] = value
        self._described()
        return self.options

    def _check(self, key: str, value: object) -> SessionOption:
        """The option ``key`` names, if ``value`` is one it allows; else :class:`OptionError`."""
        name = self.spec.name
        option = self.client.controls.find(key)
        if option is None:
            offered = ", ".join(self.options) or "none"
            raise OptionError(f"{name} has no session option {key!r}; its options: {offered}")
        allowed = option.allowed
        if isinstance(value, bool) != (option.kind == "boolean") or value not in allowed:
            listed = ", ".join(repr(v) for v in allowed)
            raise OptionError(
                f"{name}'s option {option.id!r} allows {listed or 'no value'}, not {value!r}"
            )
        return option

    async def _set(self, conn: Any, session_id: str, key: str, value: str | bool) -> None:
        """Send one option's value (``session/set_mode`` for a legacy mode); the agent's
        refusal, or no answer in time, is an :class:`AgentError`."""
        controls = self.client.controls
        option = self._check(key, value)
        try:
            if option.legacy:
                asked = conn.set_session_mode(session_id=session_id, mode_id=value)
                await asyncio.wait_for(asked, CONFIGURE_TIMEOUT)
                controls.set_current(option.id, value)
            else:
                asked = conn.set_config_option(
                    config_id=option.id, session_id=session_id, value=value
                )
                answer = await asyncio.wait_for(asked, CONFIGURE_TIMEOUT)
                controls.set_options(answer.config_options)
        except asyncio.TimeoutError:
            raise AgentError(
                f"{self.spec.name} did not answer setting {option.id!r} within "
                f"{CONFIGURE_TIMEOUT} s"
            ) from None
        except acp.RequestError as exc:
            listed = ", ".join(repr(v) for v in option.allowed)
            raise AgentError(
                f"{self.spec.name} refused {option.id!r} = {value!r} ({exc}); it allows "
                f"{listed}, and it is {option.current!r}"
            ) from exc

    def _mode_changed(self, mode: str) -> AgentInfo:
        """The agent says it is in another session mode now (callback thread)."""
        self.mode = mode
        if self.client.controls.current("mode") == mode:
            self._mode_offered = mode
        return self.info()

    # -- stopping -----------------------------------------------------------------------

    def _cancel_from_card(self, session: AgentTurn) -> None:
        """A card's Cancel: ``session/cancel``; open questions close; killed if it lingers."""
        session.interrupt()
        self._submit(self._cancel_turn())

    async def _cancel_turn(self) -> None:
        conn, session_id, process = self._conn, self.session_id, self.process
        if conn is None or session_id is None or process is None:
            return
        await self._send_cancel(conn, session_id)
        turn = self.client.turn
        deadline = self._loop.time() + CANCEL_TIMEOUT
        while self.client.turn is turn and turn is not None and self._loop.time() < deadline:
            await asyncio.sleep(0.05)
        if self.client.turn is turn and turn is not None and self.process is process:
            log.error("%s did not end its turn after session/cancel; killing it", self.spec.name)
            await process.kill()

    async def _interrupt(self, running: Future[PromptResponse]) -> None:
        """``session/cancel``, a moment to answer it, then the agent's group killed.

        A start still under way is stopped: the agent it spawned is killed and the
        prompt never sent.
        """
        conn, session_id, process = self._conn, self.session_id, self.process
        task = self._prompting
        prompt = asyncio.wrap_future(running)
        if conn is not None and session_id is not None and not running.done():
            await self._send_cancel(conn, session_id)
            await asyncio.wait({prompt}, timeout=CANCEL_GRACE)
        self.process = self._conn = self.session_id = None
        if process is not None:
            await process.kill()
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=STOP_TIMEOUT)
        await asyncio.wait({prompt}, timeout=CANCEL_GRACE)
        if prompt.done() and not prompt.cancelled() and prompt.exception() is not None:
            log.debug("%s after the interrupt: %r", self.spec.name, prompt.exception())

    async def _send_cancel(self, conn: Any, session_id: str) -> None:
        try:
            await asyncio.wait_for(conn.cancel(session_id=session_id), CANCEL_GRACE)
        except Exception as exc:
            log.debug("session/cancel did not reach %s: %r", self.spec.name, exc)

    def close(self, timeout: float = 5.0) -> None:
        """End the agent (stdin closed, then its process group killed) and the session.

        A turn still running is interrupted first (waiting up to ``timeout`` s).
        """
        if self._closed:
            return
        self._closed = True
        _live.discard(self)
        session = self._session
        if session is not None:
            self._cancel_first(session)
            if self._busy.acquire(timeout=timeout):
                self._busy.release()
        try:
            self._submit(self._close()).result(timeout)
        except Exception:
            log.exception("closing %s failed", self.spec.name)
        finally:
            try:
                self._submit(settle(CANCEL_GRACE)).result(timeout)
            except Exception:
                log.debug("the tasks of %s did not settle", self.spec.name)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)
            if not self._thread.is_alive():
                self._loop.close()
            if self.served is not None:
                self.served.close()

    async def _close(self) -> None:
        process, conn = self.process, self._conn
        self.process = self._conn = self.session_id = None
        if conn is not None:
            try:
                await asyncio.wait_for(conn.close(), CANCEL_GRACE)
            except Exception:
                log.debug("closing the connection to %s failed", self.spec.name)
        if process is not None:
            await process.close(timeout=CANCEL_GRACE)

    def _submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)


@atexit.register
def _close_all() -> None:
    """At interpreter exit (a kernel's shutdown too), end every agent still running."""
    for conversation in list(_live):
        try:
            conversation.close(timeout=3.0)
        except Exception:
            log.exception("closing %r at exit failed", conversation)
