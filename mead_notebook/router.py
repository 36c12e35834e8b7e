"""The router: runs a turn against a model and a hub of tools, asking the interaction."""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import json
import logging
import threading
import time
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .calls import Call, CallEvent
from .interaction import (
    FINAL_STATUSES,
    Allow,
    Choice,
    Deny,
    Interaction,
    Picked,
    Request,
    Unanswered,
    Update,
)
from .interaction import resolve as resolve_interaction
from .model import Message, Model, ModelError, ToolCall, ToolSpec
from .tools import Tool, ToolArgumentError, result_text, spec_of, split_tools

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["ASK_USER", "CallRecord", "Router", "Turn", "TurnError", "TurnResult"]

ASK_USER = "ask_user"
ASK_USER_SPEC = ToolSpec(
    name=ASK_USER,
    description=(
        "Ask the user a multiple-choice question and wait for the answer. "
        "Use it when you need the user to decide between a few options."
    ),
    parameters={
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "The question, in one or two sentences."},
            "options": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "label": {"type": "string"}},
                    "required": ["id", "label"],
                },
            },
        },
        "required": ["prompt", "options"],
    },
)

POLL_INTERVAL = 0.05
"""How often the turn's thread looks up from waiting on a running tool."""


class TurnError(RuntimeError):
    """The turn could not finish; ``result`` holds what it had produced until then."""

    def __init__(self, message: str, result: TurnResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass
class CallRecord:
    """What happened to one tool call."""

    tool_call_id: str
    tool: str
    server: str
    arguments: dict[str, Any]
    status: str = "pending"
    result: str | None = None
    error: str | None = None
    outcome: str | None = None
    """Why a call failed, in one word: denied, cancelled, timeout, invalid, unknown, error."""


@dataclass
class TurnResult:
    """The outcome of a turn."""

    text: str = ""
    calls: list[CallRecord] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    stop_reason: str = "end_turn"
    """``end_turn``, ``max_rounds`` or ``interrupted``."""
    rounds: int = 0

    def __repr__(self) -> str:
        outcomes = ", ".join(f"{c.tool}: {c.outcome or c.status}" for c in self.calls)
        return (
            f"TurnResult(stop_reason={self.stop_reason!r}, rounds={self.rounds}, "
            f"text={len(self.text)} chars, calls=[{outcomes}])"
        )


class _Cancelled(Exception):
    """The turn was cancelled from outside (``Turn.cancel``)."""


class Router:
    """Runs turns of a model against tools, asking an interaction around each call.

    ``tools`` holds ``@tool`` functions, plain functions, any ``Tool`` and
    ``ToolSource`` objects (MCP servers), opened before the first turn.
    """

    def __init__(
        self,
        model: Model,
        tools: Iterable[object] = (),
        *,
        max_rounds: int = 10,
        system: str | None = None,
        tool_timeout: float = 300.0,
    ) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        if tool_timeout <= 0:
            raise ValueError("tool_timeout must be positive")
        self.model = model
        self.max_rounds = max_rounds
        self.system = system
        self.tool_timeout = tool_timeout
        self._own_tools, self._sources = split_tools(tools)
        self._tools: dict[str, Tool] | None = None
        self._open_lock = threading.Lock()
        self._ids = itertools.count(1)
        if not self._sources:
            self._tools = self._index(self._own_tools)

    def __enter__(self) -> Router:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def tools(self) -> dict[str, Tool]:
        """The tools by name, opening tool sources first if needed."""
        return dict(self._open())

    def close(self) -> None:
        """Close every tool source (MCP server)."""
        with self._open_lock:
            for source in self._sources:
                try:
                    source.close()
                except Exception:
                    log.exception("closing %s failed", source.name)
            if self._sources:
                self._tools = None

    def _open(self) -> dict[str, Tool]:
        with self._open_lock:
            if self._tools is None:
                tools = list(self._own_tools)
                for source in self._sources:
                    tools.extend(source.open())
                self._tools = self._index(tools)
            return self._tools

    @staticmethod
    def _index(tools: Sequence[Tool]) -> dict[str, Tool]:
        index: dict[str, Tool] = {}
        for t in tools:
            if t.name == ASK_USER:
                raise ValueError(f"{ASK_USER!r} is the router's own tool; rename yours")
            if t.name in index:
                other = index[t.name]
                raise ValueError(
                    f"two tools are named {t.name!r} (servers {other.server!r} and {t.server!r})"
                )
            index[t.name] = t
        return index

    def run(
        self,
        prompt: str,
        *,
        interaction: object = None,
        history: Sequence[Message] | None = None,
    ) -> TurnResult:
        """Run one turn in this thread and return its result.

        ``interaction`` is an ``Interaction``, an ``(interaction, context)`` pair or
        ``None`` (tools run unasked). A model failure raises ``TurnError``.
        """
        pair = resolve_interaction(interaction)
        tools = self._open()
        return _TurnRunner(self, tools, pair, threading.Event()).run(prompt, history)

    def start(
        self,
        prompt: str,
        *,
        interaction: object = None,
        history: Sequence[Message] | None = None,
    ) -> Turn:
        """Start a turn in a background thread and return its handle at once."""
        pair = resolve_interaction(interaction)
        tools = self._open()
        return Turn(_TurnRunner(self, tools, pair, threading.Event()), prompt, history)

    async def arun(
        self,
        prompt: str,
        *,
        interaction: object = None,
        history: Sequence[Message] | None = None,
    ) -> TurnResult:
        """Run a turn in a worker thread and await it (for async cells)."""
        return await self.start(prompt, interaction=interaction, history=history)

    def _next_id(self) -> str:
        return f"call_{next(self._ids)}"


class Turn:
    """A turn running in a background thread."""

    def __init__(self, runner: _TurnRunner, prompt: str, history: Sequence[Message] | None) -> None:
        self._runner = runner
        self._result: TurnResult | None = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._callbacks: list[Any] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(
            target=contextvars.copy_context().run,
            args=(self._main, prompt, history),
            name="mead-turn",
            daemon=True,
        )
        self._thread.start()

    def _main(self, prompt: str, history: Sequence[Message] | None) -> None:
        try:
            self._result = self._runner.run(prompt, history)
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
        self._runner.cancel()

    def result(self, timeout: float | None = None) -> TurnResult:
        """Wait for the turn (up to ``timeout`` seconds) and return its result.

        Raises ``TimeoutError`` when it is still running, ``TurnError`` when it failed.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while not self._done.wait(POLL_INTERVAL):
                self._runner.idle()
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError(f"the turn is still running after {timeout} s")
        except KeyboardInterrupt:
            self.cancel()
            self._done.wait(5.0)
            raise
        return self._outcome()

    def _outcome(self) -> TurnResult:
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    def _on_done(self, callback: Any) -> None:
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def __await__(self) -> Generator[Any, None, TurnResult]:
        return self._wait_async().__await__()

    async def _wait_async(self) -> TurnResult:
        loop = asyncio.get_running_loop()
        finished = loop.create_future()

        def wake() -> None:
            if not finished.done():
                finished.set_result(None)

        self._on_done(lambda: loop.call_soon_threadsafe(wake))
        serve = self._runner.serve_task(self.done)
        try:
            await finished
        except BaseException:
            self.cancel()
            await asyncio.get_running_loop().run_in_executor(None, self._done.wait, 5.0)
            raise
        finally:
            if serve is not None:
                serve.cancel()
        return self._outcome()


class _TurnRunner:
    """One turn's loop: model replies, tool calls, and the interaction's callbacks."""

    def __init__(
        self,
        router: Router,
        tools: dict[str, Tool],
        pair: tuple[Interaction, Any] | None,
        cancelled: threading.Event,
    ) -> None:
        self.router = router
        self.tools = tools
        self.interaction = pair[0] if pair else None
        self.context = pair[1] if pair else None
        self.cancelled = cancelled
        self.result = TurnResult()
        self.running: dict[str, Call] = {}
        self._parts: list[str] = []

    # -- entry points -------------------------------------------------------------

    def run(self, prompt: str, history: Sequence[Message] | None) -> TurnResult:
        started = getattr(self.interaction, "turn_started", None)
        if callable(started):
            started(self.context, prompt)  # an error here refuses the turn
        result = self.result
        result.messages = [dict(m) for m in history or ()]
        result.messages.append({"role": "user", "content": prompt})
        error: BaseException | None = None
        try:
            self._loop()
        except _Cancelled:
            result.stop_reason = "interrupted"
        except BaseException as exc:
            error = exc
            raise
        finally:
            self._cancel_running()
            self._close_open_calls()
            result.text = "".join(self._parts)
            if error is not None and not isinstance(error, Exception):
                result.stop_reason = "interrupted"
            self._hook("turn_ended", result, error)
        return result

    def cancel(self) -> None:
        self.cancelled.set()
        hook = getattr(self.interaction, "interrupt", None)
        if callable(hook):
            try:
                hook(self.context)
            except Exception:
                log.exception("interaction.interrupt raised")

    def idle(self) -> None:
        """Let the interaction serve its frontend while this thread waits."""
        hook = getattr(self.interaction, "idle", None)
        if callable(hook):
            try:
                hook(self.context)
            except Exception:
                log.exception("interaction.idle raised")

    def serve_task(self, done: Any) -> asyncio.Task[Any] | None:
        """Start the interaction's ``serve`` coroutine, if any, while an async cell awaits."""
        serve = getattr(self.interaction, "serve", None)
        if not callable(serve):
            return None
        task: asyncio.Task[Any] = asyncio.ensure_future(serve(self.context, done))
        return task

    # -- the loop -----------------------------------------------------------------

    def _loop(self) -> None:
        result = self.result
        model = self.router.model
        specs: list[ToolSpec] = [spec_of(t) for t in self.tools.values()]
        specs.append(ASK_USER_SPEC)
        for _ in range(self.router.max_rounds):
            self._check_cancelled()
            result.rounds += 1
            text, calls = self._reply(model, specs)
            message: Message = {"role": "assistant", "content": text}
            if calls:
                message["tool_calls"] = [
                    {"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls
                ]
            result.messages.append(message)
            if not calls:
                result.stop_reason = "end_turn"
                return
            for call in calls:
                self._check_cancelled()
                result.messages.append(self._run_call(call))
        result.stop_reason = "max_rounds"

    def _reply(self, model: Model, specs: list[ToolSpec]) -> tuple[str, list[ToolCall]]:
        messages = list(self.result.messages)
        if self.router.system:
            messages.insert(0, {"role": "system", "content": self.router.system})
        parts: list[str] = []
        calls: list[ToolCall] = []
        delta = None
        if self.interaction is not None and getattr(model, "streaming", False):
            delta = self.interaction.text_delta
        context, cancelled, everything = self.context, self.cancelled.is_set, self._parts
        try:
            for item in model.reply(messages, specs):
                if cancelled():
                    raise _Cancelled
                if isinstance(item, str):
                    if not item:
                        continue
                    parts.append(item)
                    everything.append(item)
                    if delta is not None:
                        try:
                            delta(context, item)
                        except Exception:
                            log.exception("interaction.text_delta raised; the turn goes on")
                elif isinstance(item, ToolCall):
                    if item.id is None:
                        item = ToolCall(item.name, item.arguments, self.router._next_id())
                    calls.append(item)
                else:
                    raise ModelError(
                        getattr(model, "name", type(model).__name__),
                        f"the model produced {type(item).__name__}, not text or a tool call",
                    )
        except (_Cancelled, KeyboardInterrupt):
            raise
        except Exception as exc:
            self.result.text = "".join(self._parts)
            if isinstance(exc, ModelError):
                message = str(exc)
            else:
                name = getattr(model, "name", type(model).__name__)
                message = f"{name}: {type(exc).__name__}: {exc}"
            raise TurnError(message, self.result) from exc
        return "".join(parts), calls

    # -- one tool call ------------------------------------------------------------

    def _run_call(self, tc: ToolCall) -> Message:
        assert tc.id is not None
        if tc.name == ASK_USER:
            return self._ask_user(tc)
        t = self.tools.get(tc.name)
        arguments = tc.arguments if isinstance(tc.arguments, dict) else {}
        record = CallRecord(tc.id, tc.name, t.server if t else "", dict(arguments))
        self.result.calls.append(record)
        try:
            return self._run_tool(tc, t, record)
        except BaseException:
            if record.status not in FINAL_STATUSES:
                record.outcome = "cancelled"
                record.error = "the turn was interrupted"
                self._update(record, "failed", step="cancelled (interrupted)")
            raise

    def _run_tool(self, tc: ToolCall, t: Tool | None, record: CallRecord) -> Message:
        assert tc.id is not None
        if t is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return self._fail(
                record,
                "unknown",
                f"unknown tool {tc.name!r}",
                f"There is no tool named {tc.name!r}. Available tools: {known}, {ASK_USER}.",
            )
        try:
            arguments = t.validate(tc.arguments)
        except ToolArgumentError as exc:
            return self._fail(
                record,
                "invalid",
                "invalid arguments",
                f"Invalid arguments for {t.name}: {exc}",
            )
        self._update(record, "pending")
        decision = self._permission(
            Request(
                {
                    "tool_call_id": tc.id,
                    "tool": t.name,
                    "server": t.server,
                    "class": t.tool_class,
                    "arguments": dict(record.arguments),
                }
            )
        )
        if isinstance(decision, Deny):
            note = f": {decision.message}" if decision.message else ""
            return self._fail(
                record,
                "denied",
                f"denied ({decision.reason}){note}",
                f"Permission to run {t.name} was denied ({decision.reason}){note}. "
                "The tool did not run.",
            )
        return self._execute(t, arguments, record)

    def _permission(self, request: Request) -> Allow | Deny:
        if self.interaction is None:
            return Allow()
        try:
            decision = self.interaction.request_permission(self.context, request)
        except (_Cancelled, KeyboardInterrupt):
            raise
        except Exception:
            log.exception("request_permission raised; the call is denied")
            return Deny("rejected")
        self._check_cancelled()
        if isinstance(decision, (Allow, Deny)):
            return decision
        log.error("request_permission returned %r, not Allow or Deny; denied", decision)
        return Deny("rejected")

    def _execute(self, t: Tool, arguments: dict[str, Any], record: CallRecord) -> Message:
        call = Call(record.tool_call_id, t.name)
        self.running[call.tool_call_id] = call
        try:
            self._callback("register_call", record.tool_call_id, call)
            self._update(record, "in_progress", cancellable=True)
            worker = threading.Thread(
                target=contextvars.copy_context().run,
                args=(_invoke, t, arguments, call),
                name=f"mead-tool-{t.name}",
                daemon=True,
            )
            worker.start()
            event = self._wait_call(call, record)
        except BaseException:
            call.cancel()
            raise
        finally:
            self.running.pop(call.tool_call_id, None)
        if event.kind == "done" and event.error is None:
            record.result = call.result = result_text(event.value)
            self._update(record, "completed")
            return _tool_message(record.tool_call_id, record.result, error=False)
        if event.kind == "cancel":
            outcome, step = "cancelled", "cancelled"
            message = f"The call to {t.name} was cancelled by the user."
        elif event.kind == "timeout":
            outcome, step = "timeout", f"timed out after {self.router.tool_timeout:g} s"
            message = f"{t.name} did not finish within {self.router.tool_timeout:g} s."
        else:
            err = event.error
            outcome = "error"
            step = f"{type(err).__name__}: {err}" if err is not None else "unknown error"
            message = f"{t.name} failed: {step}"
        call.error = message
        return self._fail(record, outcome, step, message)

    def _wait_call(self, call: Call, record: CallRecord) -> CallEvent:
        deadline = time.monotonic() + self.router.tool_timeout
        while True:
            event = call._next_event(POLL_INTERVAL)
            if event is None:
                if self.cancelled.is_set():
                    call.cancel()
                    continue
                if time.monotonic() >= deadline:
                    call.cancel()
                    return CallEvent("timeout")
                self.idle()
                continue
            if event.kind == "progress":
                if not call.cancelled:
                    self._update(
                        record,
                        "in_progress",
                        step=event.step,
                        progress=event.progress,
                        cancellable=True,
                    )
                continue
            if event.kind == "cancel" and self.cancelled.is_set():
                raise _Cancelled
            return event

    def _ask_user(self, tc: ToolCall) -> Message:
        assert tc.id is not None
        record = CallRecord(tc.id, ASK_USER, "local", dict(tc.arguments or {}))
        self.result.calls.append(record)
        try:
            choice = _parse_choice(tc.id, tc.arguments)
        except ValueError as exc:
            record.status, record.outcome, record.error = "failed", "invalid", str(exc)
            return _tool_message(tc.id, f"Invalid ask_user arguments: {exc}", error=True)
        answer: Picked | Unanswered = Unanswered("no_answer")
        if self.interaction is not None:
            try:
                answer = self.interaction.ask_choice(self.context, choice)
            except (_Cancelled, KeyboardInterrupt):
                raise
            except Exception:
                log.exception("ask_choice raised; the question counts as unanswered")
            self._check_cancelled()
        labels = {o["id"]: o["label"] for o in choice["options"]}
        if isinstance(answer, Picked) and answer.option_id in labels:
            record.status = "completed"
            record.result = json.dumps(
                {"option_id": answer.option_id, "label": labels[answer.option_id]},
                ensure_ascii=False,
            )
            return _tool_message(tc.id, record.result, error=False)
        if not isinstance(answer, Unanswered):
            log.error("ask_choice returned %r, not a listed option; unanswered", answer)
            answer = Unanswered("no_answer")
        record.status, record.outcome = "failed", answer.reason
        record.error = f"the question got no answer ({answer.reason})"
        return _tool_message(tc.id, f"The user gave no answer ({answer.reason}).", error=True)

    # -- helpers ------------------------------------------------------------------

    def _fail(self, record: CallRecord, outcome: str, step: str, message: str) -> Message:
        record.outcome = outcome
        record.error = message
        self._update(record, "failed", step=step)
        return _tool_message(record.tool_call_id, message, error=True)

    def _update(
        self,
        record: CallRecord,
        status: str,
        *,
        step: str | None = None,
        progress: float | None = None,
        cancellable: bool = False,
    ) -> None:
        record.status = status
        update: Update = {
            "tool_call_id": record.tool_call_id,
            "title": record.tool,
            "status": status,  # type: ignore[typeddict-item]
            "current_step": step,
            "progress": progress,
            "cancellable": cancellable,
        }
        self._callback("tool_updated", update)

    def _callback(self, name: str, *args: Any) -> None:
        if self.interaction is None:
            return
        try:
            getattr(self.interaction, name)(self.context, *args)
        except (_Cancelled, KeyboardInterrupt):
            raise
        except Exception:
            log.exception("interaction.%s raised; the turn goes on", name)

    def _hook(self, name: str, *args: Any) -> None:
        hook = getattr(self.interaction, name, None)
        if callable(hook):
            try:
                hook(self.context, *args)
            except Exception:
                log.exception("interaction.%s raised", name)

    def _check_cancelled(self) -> None:
        if self.cancelled.is_set():
            raise _Cancelled

    def _close_open_calls(self) -> None:
        """Give every tool call of the last reply a result, so the history stays usable."""
        messages = self.result.messages
        asked: Message = next(
            (m for m in reversed(messages) if m.get("role") == "assistant"), {"tool_calls": []}
        )
        answered = {m["tool_call_id"] for m in messages if m.get("role") == "tool"}
        for c in asked.get("tool_calls") or ():
            if c["id"] not in answered:
                messages.append(_tool_message(c["id"], "The turn was interrupted.", error=True))

    def _cancel_running(self) -> None:
        for call in list(self.running.values()):
            call.cancel()


def _invoke(t: Tool, arguments: dict[str, Any], call: Call) -> None:
    try:
        value = t.invoke(arguments, call)
    except BaseException as exc:
        call._finish(error=exc)
    else:
        call._finish(value=value)


def _tool_message(tool_call_id: str, content: str, *, error: bool) -> Message:
    return {"role": "tool", "tool_call_id": tool_call_id, "content": content, "is_error": error}


def _parse_choice(tool_call_id: str, arguments: object) -> Choice:
    if not isinstance(arguments, dict):
        raise ValueError("arguments must be an object with prompt and options")
    prompt = arguments.get("prompt")
    options = arguments.get("options")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("prompt must be a non-empty string")
    if not isinstance(options, list) or not options:
        raise ValueError("options must be a non-empty list of {id, label}")
    parsed = []
    seen: set[str] = set()
    for option in options:
        if not isinstance(option, dict):
            raise ValueError("each option must be an object with id and label")
        oid, label = option.get("id"), option.get("label")
        if not isinstance(oid, str) or not oid or not isinstance(label, str) or not label:
            raise ValueError("each option needs a non-empty string id and label")
        if oid in seen:
            raise ValueError(f"duplicate option id {oid!r}")
        seen.add(oid)
        parsed.append({"id": oid, "label": label})
    return Choice(tool_call_id=tool_call_id, prompt=prompt, options=parsed)  # type: ignore[typeddict-item]
