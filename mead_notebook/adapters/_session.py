"""One framework run reported through a TurnDriver: its loop, callbacks and cancellation."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, TypeVar

from mead_notebook import Allow, Call, Deny, TurnError
from mead_notebook.driver import TurnDriver
from mead_notebook.interaction import FINAL_STATUSES, Outcome, ToolClass
from mead_notebook.turn import POLL_INTERVAL, CallRecord, Turn, TurnResult

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["AgentResult", "Session", "canceller", "current", "missing_extra"]

R = TypeVar("R")

SETTLE_TIMEOUT = 2.0
"""How long a run's leftover tasks get to finish once the run has ended (seconds)."""

current: contextvars.ContextVar[Session | None] = contextvars.ContextVar(
    "mead_adapter_session", default=None
)
"""The session of the run this task or thread belongs to, if any."""


@dataclass(repr=False)
class AgentResult(TurnResult):
    """What a framework's run produced: ``text`` and ``calls`` as for ``Router``, and ``output``.

    ``output`` is what the framework's own run returned (LangGraph: the final
    state; pydantic-ai: the ``AgentRunResult``), ``None`` when the run was
    interrupted. ``stop_reason`` is ``end_turn``, ``interrupted``, ``paused``
    (the graph waits on a question nobody answered; ``output`` holds its state
    and, under ``__interrupt__``, what it asked) or ``max_rounds`` (the graph
    kept asking after ``MAX_RESUMES`` answers).
    """

    output: Any = None

    def __repr__(self) -> str:
        turn = super().__repr__().removeprefix("TurnResult(").removesuffix(")")
        return f"AgentResult({turn}, output={type(self.output).__name__})"


def missing_extra(module: str, extra: str) -> str:
    """The message of an adapter imported without its framework."""
    return (
        f"mead_notebook.adapters.{module} needs its framework: pip install 'mead-notebook[{extra}]'"
    )


class Session:
    """One framework run under one interaction.

    Every interaction callback runs on the session's own callback thread, in the
    order it was posted, one at a time: never on the framework's event loop.
    """

    def __init__(self, interaction: object, result: TurnResult | None = None) -> None:
        self.driver = TurnDriver(interaction)
        if result is not None:
            self.driver.result = result
        self.cancelled = threading.Event()
        self.allowed: set[str] = set()
        self._records: dict[str, CallRecord] = {}
        self._callbacks = ThreadPoolExecutor(1, thread_name_prefix="mead-callbacks")
        self._context = contextvars.copy_context()
        self._lock = threading.Lock()
        self._interrupted = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None

    @property
    def result(self) -> TurnResult:
        """What the run has produced so far."""
        return self.driver.result

    # -- callbacks ----------------------------------------------------------------------

    def post(self, fn: Callable[..., R], *args: Any, **kwargs: Any) -> Future[R]:
        """Run ``fn`` on the callback thread after everything posted before it.

        It runs in the context of the code that made the session (a cell's), so
        that what it displays or prints lands where that code's output does.
        """
        return self._callbacks.submit(self._context.run, fn, *args, **kwargs)

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
        """Post ``fn`` and await it; on the kernel's own loop, serve the frontend meanwhile."""
        done = asyncio.wrap_future(self.post(fn, *args, **kwargs))
        serve = None
        if threading.current_thread() is threading.main_thread():
            serve = self.driver.serve(done.done)
        try:
            return await done
        except asyncio.CancelledError:
            # The run is being torn down (a kernel interrupt, a cancelled task):
            # close the open questions, or the callbacks behind them would wait.
            self.interrupt()
            raise
        finally:
            if serve is not None:
                serve.cancel()

    # -- calls --------------------------------------------------------------------------

    def record(self, tool_call_id: str) -> CallRecord | None:
        """The record of a call this session has begun, if any."""
        found = self._records.get(tool_call_id)
        if found is not None:
            return found
        return next((r for r in self.result.calls if r.tool_call_id == tool_call_id), None)

    def begin(
        self, tool_call_id: str, tool: str, server: str, tool_class: ToolClass, arguments: Any
    ) -> CallRecord:
        """``pending`` for a new call (on the callback thread)."""
        given = arguments if isinstance(arguments, dict) else {"arguments": arguments}
        record = self.driver.begin(tool_call_id, tool, server, tool_class, given)
        self._records[tool_call_id] = record
        return record

    def admit(
        self,
        tool_call_id: str,
        tool: str,
        server: str,
        tool_class: ToolClass,
        arguments: Any,
        parameters: dict[str, Any] | None = None,
    ) -> tuple[CallRecord, bool]:
        """Begin the call unless it was, and ask unless it was allowed; return (record, allowed).

        ``parameters`` is the tool's JSON schema, which edited arguments must fit.
        A call is asked once: a framework that pauses and runs it again (an approval
        it asks for itself, a resumed graph) gets the first answer, and the
        arguments the person approved stay in ``record.approved_arguments``.
        """
        record = self.record(tool_call_id)
        if record is None:
            record = self.begin(tool_call_id, tool, server, tool_class, arguments)
        elif tool_call_id in self.allowed:
            return record, True
        elif record.status == "failed":
            return record, False
        decision: Allow | Deny = self.driver.permission(record, parameters)
        if isinstance(decision, Allow):
            self.allowed.add(tool_call_id)
            return record, True
        return record, False

    def refuse(
        self,
        tool_call_id: str,
        tool: str,
        server: str,
        arguments: Any,
        outcome: Outcome,
        error: str,
    ) -> None:
        """Report a call the framework refused (unknown tool, bad arguments, approved or not).

        A call begun earlier ends ``failed`` unless it has already ended.
        """
        record = self.record(tool_call_id)
        if record is None:
            record = self.begin(tool_call_id, tool, server, "effect", arguments)
        elif record.status in FINAL_STATUSES:
            return
        self.allowed.discard(tool_call_id)
        self.driver.fail(record, outcome, error)

    def handle(self, record: CallRecord) -> Call:
        """A new ``Call`` handle for a call about to run."""
        return Call(record.tool_call_id, record.tool)

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

    def turn(self, prompt: str, main: Callable[[], Coroutine[Any, Any, R]]) -> Turn[R]:
        """Run ``main()`` as one turn in a thread of its own; return its handle at once."""
        return Turn(lambda: self.run(prompt, main), driver=self.driver, cancel=self.cancel)

    def run(self, prompt: str, main: Callable[[], Coroutine[Any, Any, R]]) -> R:
        """Run ``main()`` as one turn on an event loop of this thread.

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
            raise
        finally:
            self.finish(error)

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
        token = current.set(self)
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
            current.reset(token)
            _close(loop)
            workers.shutdown(wait=False, cancel_futures=True)


def canceller(task: asyncio.Future[Any]) -> Callable[[], None]:
    """What cancels ``task`` from any thread (a card's Cancel)."""
    loop = task.get_loop()

    def cancel() -> None:
        if not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    return cancel


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
