"""One framework run reported through a TurnDriver: its loop, callbacks, calls and cancellation."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from mead_notebook import Allow, Call, Deny, TurnError, ask_user
from mead_notebook.driver import TurnDriver
from mead_notebook.errors import GateError
from mead_notebook.interaction import (
    FINAL_STATUSES,
    Choice,
    ContentBlock,
    DecidedBy,
    Location,
    Outcome,
    PlanEntry,
    Previewer,
    ToolClass,
    ToolKind,
)
from mead_notebook.interaction import resolve as resolve_interaction
from mead_notebook.turn import POLL_INTERVAL, CallRecord, Turn

from .result import AgentResult

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = [
    "NO_INTERACTION",
    "SETTLE_TIMEOUT",
    "AgentTurn",
    "CallCancelled",
    "active_turn",
    "required",
]

R = TypeVar("R")

SETTLE_TIMEOUT = 2.0
"""How long a run's leftover tasks get to finish once the run has ended (seconds)."""

active_turn: contextvars.ContextVar[AgentTurn | None] = contextvars.ContextVar(
    "mead_active_turn", default=None
)
"""The turn whose run this task or thread belongs to (``None``: no run of ours)."""


class CallCancelled(Exception):
    """A running call was cancelled from its card; ``message`` is what the model is told.

    By then the call has ended ``failed`` (``cancelled``); the framework answers
    the model in its own form (a tool message, a failed tool result).
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AgentTurn:
    """One framework run under one interaction, with ``result`` (an :class:`AgentResult`).

    Every interaction callback runs on the turn's own callback thread, in the
    order it was posted, one at a time: never on the framework's event loop.
    Methods that call the driver (``begin``, ``admit``, ``refuse``, ``ask``) run
    on that thread: put them there with :meth:`call` (async code),
    :meth:`call_now` (a thread that may block) or :meth:`post` (no wait).
    """

    def __init__(self, interaction: object, result: AgentResult | None = None) -> None:
        self.result = result if result is not None else AgentResult()
        self.driver = TurnDriver(required(interaction))
        self.driver.result = self.result
        self.cancelled = threading.Event()
        """Set once the whole run is being cancelled (not one call)."""
        self._allowed: set[str] = set()
        self._records: dict[str, CallRecord] = {}
        self._callbacks = ThreadPoolExecutor(1, thread_name_prefix="mead-callbacks")
        self._context = contextvars.copy_context()
        self._lock = threading.Lock()
        self._interrupted = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._running: object | None = None
        """The ticket of the callback running now (see :meth:`_post`)."""
        self._running_calls: set[str] = set()
        """The calls claimed by a run that has not ended (see :meth:`admit`)."""

    # -- callbacks ----------------------------------------------------------------------

    def post(self, fn: Callable[..., R], *args: Any, **kwargs: Any) -> Future[R]:
        """Run ``fn`` on the callback thread after everything posted before it.

        It runs in the context of the code that made the turn (a cell's), so
        that what it displays or prints lands where that code's output does.
        """
        return self._post(fn, args, kwargs)[0]

    def _post(
        self, fn: Callable[..., R], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Future[R], object]:
        """:meth:`post`, with the ticket that says whether this callback is the one running."""
        ticket = object()

        def one() -> R:
            with self._lock:
                self._running = ticket
            try:
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self._running = None
                    self.driver.callback_ended()

        return self._callbacks.submit(self._context.run, one), ticket

    def wait(self, future: Future[R]) -> R:
        """Block this thread until ``future`` is done, letting the interaction serve meanwhile."""
        try:
            while True:
                try:
                    return future.result(POLL_INTERVAL)
                except FutureTimeout:
                    self.driver.idle()
        except KeyboardInterrupt:
            self.cancel()
            raise

    def call_now(self, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        """Post ``fn`` and wait for it (from a thread that is not an event loop's)."""
        return self.wait(self.post(fn, *args, **kwargs))

    async def call(self, fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        """Post ``fn`` and await it; on the kernel's own loop, serve the frontend meanwhile.

        Cancelled while ``fn`` waits for the person: when the whole run is being
        cancelled, every open question closes; when only this await is (a
        framework's timeout around one call), only ``fn``'s question closes, and a
        callback that has not started never runs.
        """
        future, ticket = self._post(fn, args, kwargs)
        done = asyncio.wrap_future(future)
        serve = None
        if threading.current_thread() is threading.main_thread():
            serve = self.driver.serve(done.done)
        try:
            return await done
        except asyncio.CancelledError:
            if self.cancelled.is_set() or _cancelling(self._task):
                self.interrupt()
            else:
                with self._lock:
                    if self._running is ticket:
                        self.driver.withdraw_current()
            raise
        finally:
            if serve is not None:
                serve.cancel()

    # -- what the agent says ------------------------------------------------------------

    def text(self, fragment: str) -> None:
        """A fragment of the answer, in order (posted)."""
        if fragment:
            self.post(self.driver.text, fragment)

    def thought(self, fragment: str) -> None:
        """A fragment of the agent's reasoning, kept apart from the answer (posted)."""
        if fragment:
            self.post(self.driver.thought, fragment)

    def plan(self, entries: list[PlanEntry]) -> None:
        """The agent's whole plan, each time it changes (posted)."""
        self.post(self.driver.plan, list(entries))

    # -- calls (on the callback thread) -------------------------------------------------

    def record(self, tool_call_id: str) -> CallRecord | None:
        """The latest call this turn has begun under the agent's ``tool_call_id``, if any."""
        found = self._records.get(tool_call_id)
        if found is not None:
            return found
        return next((r for r in reversed(self.result.calls) if r.source_id == tool_call_id), None)

    def known(self, tool_call_id: str, tool: str, server: str, arguments: Any) -> CallRecord | None:
        """The call begun under ``tool_call_id`` if it is this very call and has not run.

        This very call: the same server and tool, with the arguments it was asked
        with or those the person approved, not ended yet (a framework resuming a
        call runs it again from the start) or refused before it ran. Anything else
        under the same id (a model or proxy that repeats ids, a call made again
        after it ended) is a new call with a card and a question of its own.
        """
        record = self.record(tool_call_id)
        if record is None or (record.server, record.tool) != (server, tool):
            return None
        given = _wrapped(arguments)
        if given != record.arguments and given != record.approved_arguments:
            return None
        if record.status in ("pending", "in_progress"):
            return record
        if record.status == "failed" and record.outcome in UNRUN:
            return record
        return None

    def begin(
        self,
        tool_call_id: str,
        tool: str,
        server: str,
        tool_class: ToolClass | None,
        arguments: Any,
        *,
        kind: ToolKind | None = None,
        title: str | None = None,
        content: list[ContentBlock] | None = None,
        locations: list[Location] | None = None,
        tool_named: bool = True,
    ) -> CallRecord:
        """``pending`` for a new call, as ``TurnDriver.begin`` (non-dict arguments are wrapped)."""
        record = self.driver.begin(
            tool_call_id,
            tool,
            server,
            tool_class,
            _wrapped(arguments),
            kind=kind,
            title=title,
            content=content,
            locations=locations,
            tool_named=tool_named,
        )
        self._records[tool_call_id] = record
        return record

    def admit(
        self,
        tool_call_id: str,
        tool: str,
        server: str,
        tool_class: ToolClass | None,
        arguments: Any,
        parameters: dict[str, Any] | None = None,
        *,
        kind: ToolKind | None = None,
        title: str | None = None,
        content: list[ContentBlock] | None = None,
        locations: list[Location] | None = None,
        claim: bool = True,
        preview: Previewer | None = None,
    ) -> tuple[CallRecord, bool]:
        """Ask for a call unless this very call was decided; return (record, allowed).

        ``parameters`` is the tool's JSON schema, which edited arguments must fit.
        A decision holds for the call it was made for (see :meth:`known`) until
        it runs: a framework that pauses and runs it again (an approval it asks
        for itself, a resumed graph) gets the first answer, and the arguments the
        person approved stay in ``record.approved_arguments``.

        ``claim`` (the default): the call is about to run, and is this run's until
        :meth:`execute` ends; the same call asked for again meanwhile (a model
        that repeats a call under one id, run twice at once) is a new call with a
        card of its own. ``claim=False`` for an approval a framework asks before
        its own run of the call. ``preview``: what the call does with edited
        arguments, shown on the card before they are allowed.
        """
        record = self.known(tool_call_id, tool, server, arguments)
        if record is not None and self._claimed(record):
            record = None
        if record is None:
            record = self.begin(
                tool_call_id,
                tool,
                server,
                tool_class,
                arguments,
                kind=kind,
                title=title,
                content=content,
                locations=locations,
            )
        elif record.tool_call_id in self._allowed:
            return record, self._claim(record, claim)
        elif record.status == "failed":
            return record, False
        if isinstance(self.decide(record, parameters, preview=preview), Allow):
            return record, self._claim(record, claim)
        return record, False

    def decide(
        self,
        record: CallRecord,
        parameters: dict[str, Any] | None = None,
        *,
        preview: Previewer | None = None,
    ) -> Allow | Deny:
        """``request_permission`` for a begun call: an Allow holds for exactly this call.

        A Deny has ended the call (its record and card say why). ``preview``: what the
        call does with other arguments (``tools.preview.previewer``), for an edit's card.
        """
        decision = self.driver.permission(record, parameters, preview=preview)
        if isinstance(decision, Allow):
            self._allowed.add(record.tool_call_id)
        return decision

    def _claimed(self, record: CallRecord) -> bool:
        with self._lock:
            return record.tool_call_id in self._running_calls

    def _claim(self, record: CallRecord, claim: bool) -> bool:
        if claim:
            with self._lock:
                self._running_calls.add(record.tool_call_id)
        return True

    def _release(self, record: CallRecord) -> None:
        with self._lock:
            self._running_calls.discard(record.tool_call_id)

    def running(
        self,
        record: CallRecord,
        handle: Call | None = None,
        *,
        cancellable: bool = True,
        step: str | None = None,
        decided_by: DecidedBy | None = None,
    ) -> Call:
        """``register_call`` and ``in_progress`` for a call that starts running now.

        Only a call allowed here (:meth:`admit`, :meth:`decide`) runs, or one the
        agent runs under its own rules, which says so (``decided_by="agent"``).
        Anything else is a mistake of the adapter's: ``GateError``, and the call ends
        ``failed`` (``denied``) rather than show as running.
        """
        if decided_by is None and record.tool_call_id not in self._allowed:
            message = f"{record.tool} was about to run without an Allow; it was stopped"
            self.driver.fail(record, "denied", message)
            raise GateError(message)
        handle = handle if handle is not None else self.handle(record)
        self.driver.running(
            record, handle, cancellable=cancellable, step=step, decided_by=decided_by
        )
        return handle

    def complete(
        self, record: CallRecord, result: str, *, content: list[ContentBlock] | None = None
    ) -> None:
        """The call ended well: ``completed`` with what the model was told."""
        self.driver.complete(record, result, content=content)

    def fail(
        self,
        record: CallRecord,
        outcome: Outcome,
        error: str,
        *,
        step: str | None = None,
        content: list[ContentBlock] | None = None,
    ) -> None:
        """The call ended ``failed`` with ``outcome``; ``error`` is what the model was told."""
        self._allowed.discard(record.tool_call_id)
        self.driver.fail(record, outcome, error, step=step, content=content)

    def describe(self, record: CallRecord, **changes: Any) -> None:
        """More of what a pending call will do (see ``TurnDriver.describe``)."""
        self.driver.describe(record, **changes)

    def refuse(
        self,
        tool_call_id: str,
        tool: str,
        server: str,
        arguments: Any,
        outcome: Outcome,
        error: str,
    ) -> CallRecord:
        """Report a call the framework refused (unknown tool, bad arguments, approved or not).

        This very call, begun earlier, ends ``failed`` unless it has already ended
        (a framework's report of what was said already: empty ``arguments`` stand
        for the call's own); any other is begun and ends ``failed``.
        """
        record = self.known(tool_call_id, tool, server, arguments)
        latest = self.record(tool_call_id)
        if record is None and latest is not None:
            same = (latest.server, latest.tool) == (server, tool)
            given = _wrapped(arguments)
            if same and given in ({}, latest.arguments, latest.approved_arguments):
                record = latest
        if record is None:
            record = self.begin(tool_call_id, tool, server, "effect", arguments)
        elif record.status in FINAL_STATUSES:
            return record
        self._allowed.discard(record.tool_call_id)
        self.driver.fail(record, outcome, error)
        return record

    def ask(self, choice: Choice, tool: str, server: str, arguments: Any) -> ask_user.Settled:
        """Put ``choice`` to the person as one call, as ``ask_user`` does.

        The question is the card of the call open under its id (a tool that asks
        while it runs), or a call of its own.

        Returns how it was settled; the framework answers in its own form (see
        :class:`~mead_notebook.adapters.base.FrameworkQuestion`).
        """
        tool_call_id = choice["tool_call_id"]
        record = self.record(tool_call_id)
        if record is None or record.status in FINAL_STATUSES:
            record = self.begin(tool_call_id, tool, server, "read", arguments)
        return ask_user.settle(self.driver, record, choice)

    def handle(self, record: CallRecord) -> Call:
        """A new ``Call`` handle for a call about to run."""
        return Call(record.tool_call_id, record.tool)

    # -- running a call -----------------------------------------------------------------

    async def execute(
        self,
        record: CallRecord,
        work: Callable[[], Awaitable[R]],
        *,
        decided_by: DecidedBy | None = None,
        passthrough: tuple[type[BaseException], ...] = (),
    ) -> R:
        """Run an admitted call: ``in_progress``, then ``work()`` as a task its card can cancel.

        Returns what ``work`` returned; ending the call (``driver.complete`` or
        ``fail``) from it is the caller's, who knows how to read it. A card's Cancel
        ends the call ``cancelled`` and raises :class:`CallCancelled`; an exception
        ends it ``error`` and propagates, unless its type is in ``passthrough``
        (the framework's own signals, which the caller ends the call for).
        ``decided_by="agent"``: the agent ran the call without asking anyone here.
        """
        try:
            handle = await self.call(self.running, record, decided_by=decided_by)
            task = asyncio.ensure_future(work())
            loop = task.get_loop()

            def cancel() -> None:
                if not loop.is_closed():
                    loop.call_soon_threadsafe(task.cancel)

            handle.on_cancel(cancel)
            try:
                return await task
            except asyncio.CancelledError:
                if not (handle.cancelled and task.cancelled()) or self.cancelled.is_set():
                    raise
                message = f"The call to {record.tool} was cancelled."
                await self.call(self.fail, record, "cancelled", message)
                raise CallCancelled(message) from None
            except passthrough:
                raise
            except Exception as exc:
                await self.call(self.fail, record, "error", failure(record, exc))
                raise
        finally:
            self._release(record)

    def execute_blocking(
        self,
        record: CallRecord,
        work: Callable[[], R],
        *,
        decided_by: DecidedBy | None = None,
        passthrough: tuple[type[BaseException], ...] = (),
    ) -> R:
        """:meth:`execute` for a framework's sync path: nothing stops ``work``, the card says so."""
        try:
            self.call_now(self.running, record, cancellable=False, decided_by=decided_by)
            try:
                return work()
            except passthrough:
                raise
            except Exception as exc:
                self.call_now(self.fail, record, "error", failure(record, exc))
                raise
        finally:
            self._release(record)

    # -- the run ------------------------------------------------------------------------

    def interrupt(self) -> None:
        """Close the open questions (``interrupt``, once per run), from any thread."""
        with self._lock:
            if self._interrupted:
                return
            self._interrupted = True
        self.driver.interrupt()

    def cancel(self) -> None:
        """Stop the run from any thread: open questions close, the framework's run is cancelled."""
        self.cancelled.set()
        self.interrupt()
        with self._lock:
            loop, task = self._loop, self._task
        if loop is not None and task is not None:
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:
                log.debug("the run's loop had already closed")

    def turn(
        self, prompt: str, main: Callable[[], Coroutine[Any, Any, object]]
    ) -> Turn[AgentResult]:
        """Run ``main()`` as one turn in a thread of its own; return its handle at once.

        ``main`` fills :attr:`result` (``output``, ``stop_reason``, ``rounds``); the
        turn returns it. A run that ends because the turn was cancelled (the
        Stop button, ``turn.cancel()``, a kernel interrupt) returns it with
        ``stop_reason`` ``interrupted``, whatever the framework raised; any other
        framework error becomes ``TurnError`` holding what the run produced.
        """

        async def guarded() -> AgentResult:
            try:
                await main()
            except BaseException:
                if self.cancelled.is_set():
                    self.result.stop_reason = "interrupted"
                    return self.result
                raise
            return self.result

        return Turn(lambda: self.run(prompt, guarded), driver=self.driver, cancel=self.cancel)

    def run(self, prompt: str, main: Callable[[], Coroutine[Any, Any, R]]) -> R:
        """Run ``main()`` as one turn on an event loop of this thread (``turn`` uses it).

        A framework error becomes ``TurnError`` holding what the turn produced.
        """
        try:
            self.call_now(self.driver.start, prompt)
        except BaseException:
            self.close()
            raise
        error: BaseException | None = None
        try:
            return self._run_loop(main)
        except Exception as exc:
            error = TurnError(f"{type(exc).__name__}: {exc}", self.result)
            raise error from exc
        except BaseException as exc:
            error = exc
            self.cancel()
            raise
        finally:
            self.finish(error)

    @contextlib.asynccontextmanager
    async def hosted(self, prompt: str) -> AsyncIterator[AgentTurn]:
        """One turn around a run on a loop that is not ours (a framework's loop of your own).

        ``turn_started`` on entry, ``turn_ended`` on exit; meanwhile this turn
        is :data:`active_turn`. Leaving on a ``BaseException`` that is not an
        ``Exception`` (a cancelled task, a kernel interrupt) cancels the turn.
        """
        try:
            await self.call(self.driver.start, prompt)
        except BaseException:
            self.close()
            raise
        token = active_turn.set(self)
        error: BaseException | None = None
        try:
            yield self
        except BaseException as exc:
            error = exc
            if not isinstance(exc, Exception):
                self.cancel()
            raise
        finally:
            active_turn.reset(token)
            try:
                await self.call(self.driver.end, error)
            finally:
                self.close()

    def finish(self, error: BaseException | None) -> None:
        """End the turn (``turn_ended``) after every callback posted so far."""
        try:
            self.wait(self.post(self.driver.end, error))
        finally:
            self.close()

    def close(self) -> None:
        """Let the callback thread end once it has run what was posted."""
        self._callbacks.shutdown(wait=False)

    def _run_loop(self, main: Callable[[], Coroutine[Any, Any, R]]) -> R:
        loop = asyncio.new_event_loop()
        workers = ThreadPoolExecutor(thread_name_prefix="mead-framework")
        loop.set_default_executor(workers)
        token = active_turn.set(self)
        try:
            task = loop.create_task(main())
            with self._lock:
                self._loop, self._task = loop, task
            if self.cancelled.is_set():
                task.cancel()
            return loop.run_until_complete(task)
        finally:
            with self._lock:
                self._loop = self._task = None
            active_turn.reset(token)
            _close(loop)
            workers.shutdown(wait=False, cancel_futures=True)


UNRUN: frozenset[Outcome] = frozenset(
    {"denied", "expired", "no_answer", "invalid_arguments", "unknown"}
)
"""The outcomes of a call that ended before it ran: its decision is final."""


def _wrapped(arguments: Any) -> dict[str, Any]:
    return dict(arguments) if isinstance(arguments, dict) else {"arguments": arguments}


NO_INTERACTION = (
    "an adapter needs an interaction: NotebookInteraction() to ask the person, or a "
    "policy to decide alone (mead_notebook.policies.AllowAll() allows every call, and "
    "says so). Without one, no call may run unasked"
)


def required(interaction: object) -> object:
    """``interaction``, checked: an adapter's run always has one (None raises ``TypeError``).

    The framework's own safeguards are replaced by the gate, so a run without an
    interaction would run every call unasked.
    """
    if interaction is None:
        raise TypeError(NO_INTERACTION)
    resolve_interaction(interaction)
    return interaction


def _cancelling(task: asyncio.Task[Any] | None) -> bool:
    """Whether the run's own task is being cancelled (Python 3.11+ can tell)."""
    cancelling = getattr(task, "cancelling", None)
    return bool(cancelling()) if cancelling is not None else False


def failure(record: CallRecord, exc: BaseException) -> str:
    """What a card and the model are told of a call that raised ``exc``."""
    return f"{record.tool} failed: {type(exc).__name__}: {exc}"


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what the run left behind and close the loop, waiting a bounded time."""
    try:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=SETTLE_TIMEOUT))
        loop.run_until_complete(asyncio.wait_for(loop.shutdown_asyncgens(), timeout=SETTLE_TIMEOUT))
    except Exception:
        log.exception("the run's event loop did not close cleanly")
    finally:
        loop.close()
