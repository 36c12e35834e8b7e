"""One turn of the router: model replies, tool calls, each reported through the driver."""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import ask_user
from .calls import Call, CallEvent
from .driver import TurnDriver
from .errors import ModelError, ToolArgumentError, TurnError
from .interaction import Deny
from .model import Message, Model, Thought, ToolCall, ToolSpec
from .tools import Tool, ToolFailure, ToolOutput, preview, result_text, spec_of
from .turn import POLL_INTERVAL, CallRecord, TurnResult

if TYPE_CHECKING:
    from .router import Router

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["TurnRunner"]


class _Cancelled(Exception):
    """The turn was cancelled from outside (``Turn.cancel``)."""


class TurnRunner:
    """Runs one turn of ``router``'s model against ``tools``, reporting through ``driver``."""

    def __init__(self, router: Router, tools: dict[str, Tool], driver: TurnDriver) -> None:
        self.router = router
        self.tools = tools
        self.driver = driver
        self.cancelled = threading.Event()
        self.running: dict[str, Call] = {}

    def run(self, prompt: str, history: Sequence[Message] | None) -> TurnResult:
        """Run the turn in this thread; ``TurnError`` if the model fails."""
        driver = self.driver
        result = driver.result
        result.messages = [dict(m) for m in history or ()]
        result.messages.append({"role": "user", "content": prompt})
        driver.start(prompt)
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
            driver.end(error)
        return result

    def cancel(self) -> None:
        """Stop the turn from any thread: open questions close, running calls are cancelled."""
        self.cancelled.set()
        self.driver.interrupt()

    def _loop(self) -> None:
        result = self.driver.result
        specs: list[ToolSpec] = [spec_of(t) for t in self.tools.values()]
        specs.append(ask_user.ASK_USER_SPEC)
        for _ in range(self.router.max_rounds):
            self._check_cancelled()
            result.rounds += 1
            text, calls = self._reply(specs)
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

    def _reply(self, specs: list[ToolSpec]) -> tuple[str, list[ToolCall]]:
        model: Model = self.router.model
        messages = list(self.driver.result.messages)
        if self.router.system:
            messages.insert(0, {"role": "system", "content": self.router.system})
        parts: list[str] = []
        calls: list[ToolCall] = []
        stream = bool(getattr(model, "streaming", False))
        text, cancelled = self.driver.text, self.cancelled.is_set
        try:
            for item in model.reply(messages, specs):
                if cancelled():
                    raise _Cancelled
                if isinstance(item, str):
                    if item:
                        parts.append(item)
                        text(item, stream=stream)
                elif isinstance(item, Thought):
                    self.driver.thought(item.text)
                elif isinstance(item, ToolCall):
                    if item.id is None:
                        item = ToolCall(item.name, item.arguments, self.router._next_id())
                    calls.append(item)
                else:
                    raise ModelError(
                        _model_name(model),
                        f"the model produced {type(item).__name__}, "
                        "not text, a thought or a tool call",
                    )
        except (_Cancelled, KeyboardInterrupt):
            raise
        except Exception as exc:
            self.driver.result.text = self.driver.text_so_far
            if isinstance(exc, ModelError):
                message = str(exc)
            else:
                message = f"{_model_name(model)}: {type(exc).__name__}: {exc}"
            raise TurnError(message, self.driver.result) from exc
        return "".join(parts), calls

    # -- one tool call ----------------------------------------------------------------

    def _run_call(self, tc: ToolCall) -> Message:
        tool_call_id = tc.id or self.router._next_id()
        if tc.name == ask_user.ASK_USER:
            content, is_error = ask_user.ask(self.driver, tool_call_id, tc.arguments)
            self._check_cancelled()
            return _tool_message(tool_call_id, content, error=is_error)
        t = self.tools.get(tc.name)
        arguments = tc.arguments if isinstance(tc.arguments, dict) else {}
        kind = t.kind if isinstance(t, preview.Previewing) else None
        record = self.driver.begin(
            tool_call_id,
            tc.name,
            t.server if t else "",
            t.tool_class if t else "effect",
            arguments,
            kind=kind,
        )
        try:
            return self._run_tool(tc, t, record)
        except BaseException:
            if record.status not in ("completed", "failed"):
                self.driver.fail(record, "interrupted", "The turn was interrupted.")
            raise

    def _run_tool(self, tc: ToolCall, t: Tool | None, record: CallRecord) -> Message:
        if t is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return self._fail(
                record,
                "unknown",
                f"There is no tool named {tc.name!r}. "
                f"Available tools: {known}, {ask_user.ASK_USER}.",
            )
        try:
            arguments = t.validate(tc.arguments)
        except ToolArgumentError as exc:
            return self._fail(record, "invalid_arguments", f"Invalid arguments for {t.name}: {exc}")
        shown = preview.of(t, arguments)
        if shown.content or shown.locations:
            self.driver.describe(record, content=shown.content, locations=shown.locations)
        decision = self.driver.permission(record, t.parameters, preview=preview.previewer(t))
        self._check_cancelled()
        if isinstance(decision, Deny):
            return _tool_message(record.source_id, record.error or "", error=True)
        if record.approved_arguments is not None:
            try:
                arguments = t.validate(record.approved_arguments)
            except ToolArgumentError as exc:
                return self._fail(
                    record,
                    "invalid_arguments",
                    f"The arguments approved for {t.name} do not fit its schema: {exc}. "
                    "The tool did not run.",
                )
        return self._execute(t, arguments, record)

    def _execute(self, t: Tool, arguments: dict[str, Any], record: CallRecord) -> Message:
        call = Call(record.tool_call_id, t.name)
        self.running[call.tool_call_id] = call
        try:
            self.driver.running(record, call)
            threading.Thread(
                target=contextvars.copy_context().run,
                args=(_invoke, t, arguments, call),
                name=f"mead-tool-{t.name}",
                daemon=True,
            ).start()
            event = self._wait_call(call, record)
        except BaseException:
            call.cancel()
            raise
        finally:
            self.running.pop(call.tool_call_id, None)
        if event.kind == "done" and event.error is None:
            call.result = result_text(event.value)
            content = event.value.content if isinstance(event.value, ToolOutput) else None
            self.driver.complete(record, call.result, content=content)
            return _tool_message(record.source_id, call.result, error=False)
        timeout = self.router.tool_timeout
        if event.kind == "cancel":
            message = self._fail(record, "cancelled", f"The call to {t.name} was cancelled.")
        elif event.kind == "timeout":
            message = self._fail(
                record, "timeout", f"{t.name} did not finish within {timeout:g} s."
            )
        elif isinstance(event.error, ToolFailure):
            failure = event.error
            self.driver.fail(record, failure.outcome, failure.message, content=failure.content)
            message = _tool_message(record.source_id, failure.message, error=True)
        else:
            err = event.error
            what = f"{type(err).__name__}: {err}" if err is not None else "unknown error"
            message = self._fail(record, "error", f"{t.name} failed: {what}")
        call.error = record.error
        return message

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
                self.driver.idle()
                continue
            if event.kind == "progress":
                if not call.cancelled:
                    self.driver.progress(record, event.progress, event.step)
                continue
            if event.kind == "cancel" and self.cancelled.is_set():
                raise _Cancelled
            return event

    # -- helpers ------------------------------------------------------------------------

    def _fail(self, record: CallRecord, outcome: Any, message: str) -> Message:
        self.driver.fail(record, outcome, message)
        return _tool_message(record.source_id, message, error=True)

    def _check_cancelled(self) -> None:
        if self.cancelled.is_set():
            raise _Cancelled

    def _close_open_calls(self) -> None:
        """Give every tool call of the last reply a result, so the history stays usable."""
        messages = self.driver.result.messages
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


def _model_name(model: object) -> str:
    return str(getattr(model, "name", type(model).__name__))


def _invoke(t: Tool, arguments: dict[str, Any], call: Call) -> None:
    try:
        value = t.invoke(arguments, call)
    except BaseException as exc:
        call._finish(error=exc)
    else:
        call._finish(value=value)


def _tool_message(tool_call_id: str, content: str, *, error: bool) -> Message:
    return {"role": "tool", "tool_call_id": tool_call_id, "content": content, "is_error": error}
