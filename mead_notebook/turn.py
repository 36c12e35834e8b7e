"""What a turn produces (``TurnResult``, one ``CallRecord`` per call) and ``Turn``, its handle."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from . import interrupts
from .interaction import (
    AgentInfo,
    ContentBlock,
    DecidedBy,
    HistoryEntry,
    Location,
    Outcome,
    PlanEntry,
    Status,
    ToolClass,
    ToolKind,
)
from .model import Message

if TYPE_CHECKING:
    from .driver import TurnDriver

__all__ = [
    "POLL_INTERVAL",
    "CallRecord",
    "StopReason",
    "Turn",
    "TurnResult",
    "interrupted_line",
    "one_line_interrupt",
]

POLL_INTERVAL = 0.05
"""How often a thread waiting on a turn or a tool looks up to serve the interaction."""

R = TypeVar("R")

StopReason = Literal["end_turn", "max_rounds", "max_tokens", "refusal", "paused", "interrupted"]
"""Why a turn ended: one word for every source (docs/contract.md's table says what each maps).

- ``end_turn``: the agent finished its answer;
- ``max_rounds``: the turn reached its round limit, whatever the source calls it
  (the Router's ``max_rounds``, LangGraph's ``recursion_limit``, pydantic-ai's
  ``request_limit``, the OpenAI Agents SDK's and Claude Code's ``max_turns``,
  ACP's ``max_turn_requests``), or an adapter's ``MAX_RESUMES``;
- ``max_tokens``: the model reached its token limit (ACP, Claude Code);
- ``refusal``: the model refused to go on (ACP, OpenAI Agents, Claude Code);
- ``paused``: a LangGraph run waits on a question nobody answered;
- ``interrupted``: the turn was cancelled or the kernel interrupted.

A limit is an end, not an error: the result holds what the turn did until then.
"""


@dataclass
class CallRecord:
    """What happened to one tool call; the final update said the same."""

    tool_call_id: str
    tool: str
    server: str
    arguments: dict[str, Any]
    status: Status = "pending"
    result: str | None = None
    """The text the model received, once the call completed."""
    error: str | None = None
    """What the model was told, once the call failed."""
    outcome: Outcome | None = None
    """Why the call failed (see :data:`~mead_notebook.interaction.Outcome`); None otherwise."""
    tool_class: ToolClass = "effect"
    approved_arguments: dict[str, Any] | None = None
    """The arguments the tool ran with when the person edited them; None: as asked."""
    kind: ToolKind = "other"
    """What the call does (see :data:`~mead_notebook.interaction.ToolKind`)."""
    title: str = ""
    """What a view calls it (the tool's name unless its source says more)."""
    content: list[ContentBlock] = field(default_factory=list)
    """What the call said it will do (diffs, commands, text) and, once it ran, did."""
    locations: list[Location] = field(default_factory=list)
    """The files it touches."""
    decided_by: DecidedBy | None = None
    """``agent`` when the agent's own rules let it run without asking anyone here;
    None when the interaction was asked (the interaction knows who answered)."""
    tool_named: bool = True
    """False when the source named the call only by its kind (``tool`` is the kind)."""
    source_id: str = ""
    """The id the agent gave the call. ``tool_call_id`` names one call of the turn
    only; the two differ when the agent gave an id again (``"<id>~2"``)."""

    def __post_init__(self) -> None:
        if not self.source_id:
            self.source_id = self.tool_call_id


@dataclass
class TurnResult:
    """The outcome of a turn."""

    text: str = ""
    calls: list[CallRecord] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    stop_reason: StopReason = "end_turn"
    """Why the turn ended (see :data:`StopReason`)."""
    rounds: int = 0
    thoughts: str = ""
    """The agent's streamed reasoning, apart from ``text``."""
    plan: list[PlanEntry] = field(default_factory=list)
    """The agent's plan as it last sent it."""
    agent: AgentInfo | None = None
    """Who ran the turn and under which rules, as its source last described it (None:
    the source did not say; see :class:`~mead_notebook.interaction.AgentInfo`)."""
    history: list[HistoryEntry] = field(default_factory=list)
    """The earlier conversation this turn continues, as its agent replayed it (an ACP
    session loaded by ``resume=``), oldest first; empty for any other turn."""

    def __repr__(self) -> str:
        outcomes = ", ".join(f"{c.tool}: {c.outcome or c.status}" for c in self.calls)
        return (
            f"TurnResult(stop_reason={self.stop_reason!r}, rounds={self.rounds}, "
            f"text={len(self.text)} chars, calls=[{outcomes}])"
        )


def interrupted_line(exc: BaseException, result: TurnResult) -> str:
    """What an interrupted turn's cell says, in one line: which calls stopped, and how."""
    stopped = [c for c in result.calls if c.outcome in ("interrupted", "cancelled")]
    if not stopped:
        said = "the turn was interrupted"
    else:
        names = ", ".join(dict.fromkeys(c.tool for c in stopped))
        verb = "was" if len(stopped) == 1 else "were"
        said = f"the turn was interrupted; {names} {verb} stopped and did not finish"
    return f"{type(exc).__name__}: {said}. Run the cell again for a new turn."


def one_line_interrupt(exc: BaseException, result: TurnResult) -> BaseException:
    """``exc`` (an interrupt of a waiting cell), shown by IPython as :func:`interrupted_line`
    alone instead of a traceback through the turn's waiting machinery; returns ``exc``."""
    line = interrupted_line(exc, result)
    with contextlib.suppress(AttributeError):
        exc._render_traceback_ = lambda: [line]  # type: ignore[attr-defined]
    return exc


class Turn(Generic[R]):
    """A turn running in a background thread: ``result()``, ``await turn`` or ``cancel()``.

    ``work`` runs the turn and returns its result; ``cancel`` asks it to stop;
    ``driver`` is the turn's :class:`~mead_notebook.driver.TurnDriver`, whose
    interaction is served while a thread waits for the turn. ``unstarted`` frees
    what the turn holds when its thread does not start (the constructor raises);
    once it has started, ``work`` runs to its end and frees it.
    """

    def __init__(
        self,
        work: Callable[[], R],
        *,
        driver: TurnDriver,
        cancel: Callable[[], None],
        unstarted: Callable[[], None] | None = None,
    ) -> None:
        thread: threading.Thread | None = None
        try:
            self._driver = driver
            self._cancel = cancel
            self._result: R | None = None
            self._error: BaseException | None = None
            self._done = threading.Event()
            self._callbacks: list[Callable[[], None]] = []
            self._lock = threading.Lock()
            thread = self._thread = threading.Thread(
                target=contextvars.copy_context().run,
                args=(self._main, work),
                name="mead-turn",
                daemon=True,
            )
            # Thread.start waits for the new thread: an interrupt meant for the cell that is
            # about to wait for the turn lands here, and the turn must not run on unwaited.
            with interrupts.held():
                thread.start()
        except BaseException as exc:
            if thread is None or thread.ident is None:
                if unstarted is not None:
                    unstarted()
            elif isinstance(exc, KeyboardInterrupt):
                self.cancel()
                self._done.wait(5.0)
                one_line_interrupt(exc, driver.result)
            raise

    def _main(self, work: Callable[[], R]) -> None:
        try:
            self._result = work()
        except BaseException as exc:
            self._error = exc
        finally:
            with self._lock:
                self._done.set()
                callbacks = list(self._callbacks)
            for cb in callbacks:
                cb()

    def done(self) -> bool:
        """Whether the turn has ended."""
        return self._done.is_set()

    def cancel(self) -> None:
        """End the turn: open questions close, running calls are cancelled."""
        self._cancel()

    def result(self, timeout: float | None = None) -> R:
        """Wait for the turn (up to ``timeout`` seconds) and return its result.

        Raises ``TimeoutError`` when it is still running, and what the turn raised
        (``TurnError``) when it failed. An interrupt cancels the turn and propagates.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            # Python drops an exception raised inside a finalizer, and the main thread runs
            # some while it waits (pyzmq checks for signals as it frees a message): an
            # interrupt is noted instead, and raised as the wait ends (interrupts.held).
            with interrupts.held() as interrupted:
                while not self._done.wait(POLL_INTERVAL) and not interrupted.caught:
                    self._driver.idle()
                    if deadline is not None and time.monotonic() >= deadline:
                        raise TimeoutError(f"the turn is still running after {timeout} s")
        except KeyboardInterrupt as exc:
            self.cancel()
            self._done.wait(5.0)
            one_line_interrupt(exc, self._driver.result)
            raise
        return self._outcome()

    def _outcome(self) -> R:
        if self._error is not None:
            raise self._error
        if self._result is None:
            raise RuntimeError("the turn ended without a result")
        return self._result

    def _on_done(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def __await__(self) -> Generator[Any, None, R]:
        return self._wait_async().__await__()

    async def _wait_async(self) -> R:
        loop = asyncio.get_running_loop()
        finished = loop.create_future()

        def wake() -> None:
            if not finished.done():
                finished.set_result(None)

        def wake_soon() -> None:
            loop.call_soon_threadsafe(wake)

        self._on_done(wake_soon)
        serve = self._driver.serve(self.done)
        try:
            await finished
        except BaseException as exc:
            self.cancel()
            await loop.run_in_executor(None, self._done.wait, 5.0)
            one_line_interrupt(exc, self._driver.result)
            raise
        finally:
            if serve is not None:
                serve.cancel()
        return self._outcome()
