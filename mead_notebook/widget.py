"""The notebook interaction: a widget that shows a turn live and asks the person.

``NotebookInteraction`` implements the :class:`~mead_notebook.interaction.Interaction`
callbacks and the router's optional hooks. It keeps the whole turn in synced traits
(see ``docs/widget-protocol.md``); the growing ``text`` and ``calls`` travel as
small custom messages while the turn runs and are synced in full once at its end, so
that a headless run's saved widget state holds the whole turn.
"""

from __future__ import annotations

import contextvars
import itertools
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypedDict

import anywidget
import traitlets

from .calls import Call
from .interaction import (
    FINAL_STATUSES,
    Allow,
    Choice,
    Deny,
    Picked,
    Request,
    Unanswered,
    Update,
)
from .notebook import waiting as _waiting

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["NotebookInteraction"]

_STATIC = Path(__file__).parent / "static"
_FALLBACK_ESM: Final = """\
export default {
  render({ model, el }) {
    const show = () => {
      const calls = Object.keys(model.get("calls") || {}).length;
      el.textContent = `mead: ${model.get("status")}, ${calls} tool calls ` +
        "(the widget's frontend bundle is not built)";
    };
    show();
    model.on("change", show);
  },
};
"""

FLUSH_INTERVAL: Final = 0.03
"""Seconds of turn time between two text messages, at most one message per interval."""
TRUNCATE_AT: Final = 500
"""Longest ``result``/``error``/``note`` string a card carries, in characters."""
_FLUSHER_IDLE: Final = 2.0
_WAIT_SLICE: Final = 60.0

RENDERED: Final = "rendered"
ANSWER: Final = "answer"
CANCEL: Final = "cancel"

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_TURN_KEYS: Final = ("prompt", "status", "stop_reason", "error", "text", "calls", "order")


class TextMessage(TypedDict):
    """Kernel to frontend: the text from UTF-16 offset ``start`` on is ``delta``."""

    type: Literal["text"]
    start: int
    delta: str


class CallMessage(TypedDict):
    """Kernel to frontend: one whole card."""

    type: Literal["call"]
    card: dict[str, Any]


@dataclass
class _Question:
    id: str
    kind: Literal["permission", "choice"]
    tool_call_id: str
    options: dict[str, str]
    wake: threading.Event = field(default_factory=threading.Event)
    answer: dict[str, Any] | None = None
    result: Allow | Deny | Picked | Unanswered | None = None
    settled_by: Mapping[str, Any] | None = None


def _esm() -> Path | str:
    path = _STATIC / "widget.js"
    return path if path.is_file() else _FALLBACK_ESM


def _css() -> Path | str:
    path = _STATIC / "widget.css"
    return path if path.is_file() else ""


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _short(value: object) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= TRUNCATE_AT else text[: TRUNCATE_AT - 1] + "…"


def _sendable(text: str) -> str:
    """``text`` with each lone surrogate (half an emoji, from a browser) replaced by U+FFFD.

    The kernel's JSON packer refuses lone surrogates, and one stored in a trait would
    make every later message of the widget fail.
    """
    return _LONE_SURROGATE.sub("\ufffd", text)


def _epoch_ms(seconds_from_now: float) -> int:
    return int((time.time() + seconds_from_now) * 1000)


class NotebookInteraction(anywidget.AnyWidget):
    """Shows a turn in the notebook and asks the person about tool calls.

    ``timeout`` bounds every question (``None``: no bound, but only once a view has
    rendered); ``grace`` is how long to wait for a view before deciding that nobody
    is there to answer, in which case ``fallback`` decides permissions (default:
    deny as expired) and choices go unanswered. ``policy`` settles the requests it
    has a rule for without asking. ``display=False`` leaves displaying to you.
    """

    _esm = _esm()
    _css = _css()

    prompt = traitlets.Unicode("").tag(sync=True)
    """The turn's prompt."""
    status = traitlets.Unicode("idle").tag(sync=True)
    """``idle``, ``running``, ``done``, ``error`` or ``interrupted``."""
    stop_reason = traitlets.Unicode("").tag(sync=True)
    """Why the turn ended (``end_turn``, ``max_rounds``, ``interrupted``); empty while running."""
    error = traitlets.Unicode("").tag(sync=True)
    """The turn's error message, empty if none."""
    text = traitlets.Unicode("").tag(sync=True)
    """All text streamed so far (Markdown); changes travel as ``text`` messages."""
    calls = traitlets.Dict().tag(sync=True)
    """Tool-call cards by ``tool_call_id``; changes travel as ``call`` messages."""
    order = traitlets.List(traitlets.Unicode()).tag(sync=True)
    """The ``tool_call_id`` of every card, in the order the cards appeared."""

    def __init__(
        self,
        *,
        timeout: float | None = 600.0,
        grace: float = 3.0,
        fallback: Any = None,
        policy: Any = None,
        display: bool = True,
        **kwargs: Any,
    ) -> None:
        if timeout is not None and (not math.isfinite(timeout) or timeout <= 0):
            raise ValueError(
                f"timeout must be a positive number of seconds or None, not {timeout!r}"
            )
        if not math.isfinite(grace) or grace < 0:
            raise ValueError(f"grace must be a non-negative number of seconds, not {grace!r}")
        if fallback is not None and not callable(getattr(fallback, "request_permission", None)):
            raise TypeError(f"fallback needs a request_permission method: {fallback!r}")
        if policy is not None and not (
            callable(getattr(policy, "decide", None))
            or callable(getattr(policy, "request_permission", None))
        ):
            raise TypeError(f"policy needs a decide or request_permission method: {policy!r}")
        self._local = threading.local()
        self._lock = threading.RLock()
        self.timeout = timeout
        self.grace = grace
        self.fallback = fallback
        self.policy = policy
        self._auto_display = display
        self._displayed_at: float | None = None
        self._rendered = False
        self._interrupted = False
        self._qids = itertools.count(1)
        self._questions: dict[str, _Question] = {}
        self._open: dict[str, _Question] = {}
        self._handles: dict[str, Call] = {}
        self._cancel_requested: set[str] = set()
        self._pending: list[str] = []
        self._utf16 = 0
        self._next_flush = 0.0
        self._flush_stop: threading.Event | None = None
        super().__init__(**kwargs)
        self.on_msg(self._on_custom_msg)

    # -- what the kernel shows ---------------------------------------------------

    def __repr__(self) -> str:
        with self._lock:
            cards = list(self.calls.values())
            chars = len(self.text) + sum(len(p) for p in list(self._pending))
            status = self.status
        counts: dict[str, int] = {}
        for card in cards:
            kind = str(card.get("outcome") or card.get("status"))
            counts[kind] = counts.get(kind, 0) + 1
        detail = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
        noun = "call" if len(cards) == 1 else "calls"
        calls = f"{len(cards)} tool {noun}" + (f" ({detail})" if detail else "")
        return f"NotebookInteraction: {status}, {calls}, {chars} characters of text"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        with self._lock:
            if self._displayed_at is None:
                self._displayed_at = time.monotonic()
        bundle = super()._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if isinstance(data, dict):
            data["text/plain"] = repr(self)
        return bundle

    # -- the router's hooks --------------------------------------------------------

    def turn_started(self, context: Any, prompt: str) -> None:
        """Reset for a new turn and display the widget if it is not shown yet.

        Raises ``UnsupportedKernelError`` first when this kernel cannot deliver answers
        to the turn's thread, so that the turn does not start.
        """
        _waiting.check()
        with self._lock:
            self._interrupted = False
            self._pending.clear()
            self._utf16 = 0
            self._next_flush = time.monotonic() + FLUSH_INTERVAL
            self._handles.clear()
            self._cancel_requested.clear()
            with self._quiet(*_TURN_KEYS):
                self.prompt = str(prompt)
                self.status = "running"
                self.stop_reason = ""
                self.error = ""
                self.text = ""
                self.calls = {}
                self.order = []
            self.send_state(list(_TURN_KEYS))
        try:
            _waiting.watch(self)
        except Exception:
            log.exception("cannot watch the widget's frontend messages; questions may fall back")
        if self._auto_display and self._displayed_at is None:
            self._show()
        self._ensure_flusher()

    def turn_ended(self, context: Any, result: Any, error: BaseException | None) -> None:
        """Close open questions, record how the turn ended and sync everything once.

        An interrupt meanwhile is raised once the end is recorded, not half-way through.
        """
        with _waiting.interrupts_held():
            try:
                self._end_turn(result, error)
            finally:
                _waiting.unwatch(self)

    def _end_turn(self, result: Any, error: BaseException | None) -> None:
        self._close_questions("the turn ended")
        self._stop_flusher()
        if result is None and error is not None:
            result = getattr(error, "result", None)
        stop_reason = str(getattr(result, "stop_reason", "") or "")
        interrupted = (
            self._interrupted
            or stop_reason == "interrupted"
            or (error is not None and not isinstance(error, Exception))
        )
        with self._lock:
            self._flush_text(send=False)
            final_text = getattr(result, "text", "")
            if not self.text and isinstance(final_text, str) and final_text:
                self._append_text(final_text, send=False)
            self._apply_records(getattr(result, "calls", None) or ())
            with self._quiet(*_TURN_KEYS):
                if interrupted:
                    self.status = "interrupted"
                    self.stop_reason = "interrupted"
                elif error is not None:
                    self.status = "error"
                    self.stop_reason = "error"
                else:
                    self.status = "done"
                    self.stop_reason = stop_reason
                self.error = "" if error is None else _error_text(error)
            self._handles.clear()
            self.send_state(["status", "stop_reason", "error", "text", "calls", "order"])

    def interrupt(self, context: Any) -> None:
        """Close every open question as interrupted, from any thread."""
        with self._lock:
            self._interrupted = True
        self._close_questions("the turn was interrupted")

    def idle(self, context: Any) -> None:
        """Serve the frontend's messages while the turn's thread waits on a tool."""
        _waiting.poll(self)

    async def serve(self, context: Any, done: Callable[[], bool]) -> None:
        """Keep the frontend's messages flowing while an async cell awaits the turn."""
        await _waiting.serve_while(done, self)

    # -- the Interaction callbacks ---------------------------------------------

    def text_delta(self, context: Any, text: str) -> None:
        """Buffer one streamed fragment; the text thread sends it within ``FLUSH_INTERVAL``.

        The text thread runs from ``turn_started`` to ``turn_ended``; this stays a bare
        append because the router calls it once per fragment.
        """
        # Lock-free on purpose: list.append is atomic and only _flush_text removes.
        self._pending.append(text)

    def tool_updated(self, context: Any, update: Update) -> None:
        """Create or update the call's card."""
        tool_call_id = str(update.get("tool_call_id", ""))
        if not tool_call_id:
            log.warning("tool_updated without a tool_call_id: %r", update)
            return
        with self._lock:
            card = self._card(tool_call_id, title=str(update.get("title") or ""))
            status = str(update.get("status") or card["status"])
            step = update.get("current_step")
            card.update(
                title=str(update.get("title") or card["title"]),
                status=status,
                current_step=step,
                progress=update.get("progress"),
                cancellable=bool(update.get("cancellable", False)) and status == "in_progress",
            )
            extra: Mapping[str, Any] = update
            if "result" in extra:
                card["result"] = _short(extra["result"])
            if "error" in extra:
                card["error"] = _short(extra["error"])
            if status == "failed" and card["error"] is None and step:
                card["error"] = _short(step)
            if status in FINAL_STATUSES:
                card["outcome"] = self._outcome(tool_call_id, card, status, step)
                card["cancellable"] = False
                handle = self._handles.pop(tool_call_id, None)
                if handle is not None and handle.result is not None:
                    card["result"] = _short(handle.result)
                if handle is not None and handle.error is not None:
                    card["error"] = _short(handle.error)
            self._put_card(card)

    def register_call(self, context: Any, tool_call_id: str, call: Call) -> None:
        """Keep the running call's handle, so the card's Cancel can reach it."""
        with self._lock:
            self._handles[tool_call_id] = call

    def request_permission(self, context: Any, request: Request) -> Allow | Deny:
        """Ask the policy, then the person; block until answered, expired or interrupted."""
        tool_call_id = str(request.get("tool_call_id", ""))
        fields = {
            "tool": str(request.get("tool", "")),
            "server": str(request.get("server", "")),
            "class": request.get("class"),
            "arguments": dict(request.get("arguments") or {}),
        }
        decided = self._ask_policy(request)
        if decided is not None:
            settled = (_permission_answer(decided, "policy"), decided)
            q = self._open_question("permission", tool_call_id, {}, fields, settled=settled)
        else:
            q = self._open_question("permission", tool_call_id, {}, fields)
            self._await(q, lambda: self._fallback_permission(request))
        assert isinstance(q.result, (Allow, Deny))
        return q.result

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Unanswered:
        """Put the question to the person; block until answered, expired or interrupted."""
        tool_call_id = str(choice.get("tool_call_id", ""))
        options = {
            str(o["id"]): str(o["label"])
            for o in choice.get("options") or ()
            if isinstance(o, Mapping) and "id" in o and "label" in o
        }
        fields = {"tool": "ask_user", "server": "local", "class": "read", "arguments": dict(choice)}
        q = self._open_question(
            "choice",
            tool_call_id,
            options,
            fields,
            prompt=str(choice.get("prompt", "")),
            option_list=[{"id": k, "label": v} for k, v in options.items()],
        )
        if not options:
            self._settle(q, _answer("no_answer", "kernel", "no options"), Unanswered("no_answer"))
        self._await(q, lambda: Unanswered("no_answer"))
        assert isinstance(q.result, (Picked, Unanswered))
        return q.result

    # -- frontend messages -------------------------------------------------------

    def deliver(self, content: object) -> None:
        """Handle one frontend message; safe from any thread, idempotent, never raises."""
        try:
            self._deliver(content)
        except Exception:
            log.exception("a frontend message could not be handled: %r", content)

    def _on_custom_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        self.deliver(content)

    def _handle_msg(self, msg: Any) -> None:
        data = msg.get("content", {}).get("data") if isinstance(msg, dict) else None
        if isinstance(data, dict) and data.get("method") == "request_state":
            self._resend_state()
            return
        super()._handle_msg(msg)

    def _resend_state(self) -> None:
        """Send every trait to the frontend, buffered text included (``request_state``)."""
        with self._lock:
            self._flush_text(send=False)
            self.send_state()

    def _deliver(self, content: object) -> None:
        if not isinstance(content, Mapping):
            log.warning("ignored a frontend message that is not an object: %r", content)
            return
        kind = content.get("type")
        if kind == RENDERED:
            self._on_rendered()
        elif kind == ANSWER:
            self._on_answer(content)
        elif kind == CANCEL:
            self._on_cancel(content)
        else:
            log.warning("ignored a frontend message of unknown type: %r", content)

    def _on_rendered(self) -> None:
        with self._lock:
            if self._rendered:
                return
            self._rendered = True
            for q in self._open.values():
                q.wake.set()

    def _on_answer(self, content: Mapping[str, Any]) -> None:
        qid = content.get("question_id")
        with self._lock:
            q = self._questions.get(qid) if isinstance(qid, str) else None
            if q is None:
                log.warning("ignored an answer to an unknown question: %r", dict(content))
                return
            if q.answer is not None:
                if q.settled_by == content:
                    log.debug("ignored a second delivery of the answer to %s", qid)
                else:
                    log.info("ignored a late answer to %s (already %s)", qid, q.answer["decision"])
                return
            note = content.get("note", "")
            if note is None:
                note = ""
            if not isinstance(note, str):
                log.warning("ignored an answer with a malformed note: %r", dict(content))
                return
            note = _sendable(note)
            if q.kind == "permission":
                decision = content.get("decision")
                if decision not in ("allow", "deny") or content.get("option_id") is not None:
                    log.warning("ignored a malformed permission answer: %r", dict(content))
                    return
                result: Allow | Deny | Picked = (
                    Allow() if decision == "allow" else Deny("rejected", _short(note) or "")
                )
                answer = _answer(str(decision), "person", note)
            else:
                option_id = content.get("option_id")
                if not isinstance(option_id, str) or content.get("decision") is not None:
                    log.warning("ignored a malformed choice answer: %r", dict(content))
                    return
                if option_id not in q.options:
                    log.warning("ignored an answer with an unknown option: %r", dict(content))
                    return
                result = Picked(option_id)
                answer = _answer("allow", "person", note, option_id)
            self._settle(q, answer, result, dict(content))

    def _on_cancel(self, content: Mapping[str, Any]) -> None:
        tool_call_id = content.get("tool_call_id")
        with self._lock:
            if not isinstance(tool_call_id, str):
                log.warning("ignored a malformed cancel: %r", dict(content))
                return
            if tool_call_id in self._cancel_requested:
                log.debug("ignored a second cancel of %s", tool_call_id)
                return
            call = self._handles.get(tool_call_id)
            if call is None:
                log.info("ignored a cancel of %s, which is not running", tool_call_id)
                return
            self._cancel_requested.add(tool_call_id)
        call.cancel()

    # -- questions -----------------------------------------------------------------

    def _open_question(
        self,
        kind: Literal["permission", "choice"],
        tool_call_id: str,
        options: dict[str, str],
        fields: dict[str, Any],
        *,
        prompt: str | None = None,
        option_list: list[dict[str, str]] | None = None,
        settled: tuple[dict[str, Any], Allow | Deny] | None = None,
    ) -> _Question:
        """Open a question on the call's card (or record one already ``settled``)."""
        with self._lock:
            q = _Question(f"q{next(self._qids)}", kind, tool_call_id, options)
            self._questions[q.id] = q
            if settled is not None:
                q.answer, q.result = settled
            else:
                self._open[q.id] = q
            card = self._card(tool_call_id, title=str(fields.get("tool", "")))
            card.update(fields)
            card["question"] = {
                "id": q.id,
                "kind": kind,
                "prompt": prompt,
                "options": option_list,
                "deadline": None
                if self.timeout is None or settled is not None
                else _epoch_ms(self.timeout),
                "answer": q.answer,
            }
            self._put_card(card)
            if self._interrupted and settled is None:
                self._settle(q, _answer("interrupted", "kernel", "the turn was interrupted"))
        return q

    def _await(
        self, q: _Question, nobody: Callable[[], Allow | Deny | Picked | Unanswered]
    ) -> None:
        """Block until ``q`` is settled, deciding it by timeout or ``nobody()`` if needed."""
        opened = time.monotonic()
        deadline = None if self.timeout is None else opened + self.timeout
        try:
            while True:
                with self._lock:
                    if q.answer is not None:
                        return
                    rendered = self._rendered
                    if rendered:
                        q.wake.clear()
                    shown = self._displayed_at
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    self._settle(q, _answer("expired", "timeout", "no answer in time"))
                    continue
                limit = _WAIT_SLICE
                if not rendered:
                    grace_end = (shown if shown is not None else opened) + self.grace
                    if now >= grace_end:
                        self._decide_unattended(q, nobody)
                        continue
                    limit = min(limit, grace_end - now)
                if deadline is not None:
                    limit = min(limit, deadline - now)
                _waiting.wait_for(self, q.wake, max(limit, 0.0))
        except Exception as exc:
            log.error("cannot wait for an answer to %s: %s", q.id, exc)
            decision = "deny" if q.kind == "permission" else "no_answer"
            self._settle(q, _answer(decision, "kernel", str(exc)))
        except BaseException:
            self._settle(q, _answer("interrupted", "kernel", "the wait was interrupted"))
            raise

    def _decide_unattended(
        self, q: _Question, nobody: Callable[[], Allow | Deny | Picked | Unanswered]
    ) -> None:
        try:
            result = nobody()
        except Exception:
            log.exception("the fallback failed; %s is denied", q.id)
            result = Deny("expired")
        if q.kind == "permission":
            if not isinstance(result, (Allow, Deny)):
                log.error("the fallback returned %r, not Allow or Deny; denied", result)
                result = Deny("expired")
            self._settle(q, _permission_answer(result, "fallback"), result)
        else:
            self._settle(q, _answer("no_answer", "fallback", "nobody to answer"), result)

    def _settle(
        self,
        q: _Question,
        answer: dict[str, Any],
        result: Allow | Deny | Picked | Unanswered | None = None,
        settled_by: Mapping[str, Any] | None = None,
    ) -> bool:
        """Record the first answer to ``q``; later ones change nothing."""
        with self._lock:
            if q.answer is not None:
                return False
            if result is None:
                result = _default_result(q.kind, answer["decision"])
            q.answer, q.result, q.settled_by = answer, result, settled_by
            self._open.pop(q.id, None)
            card = self._card(q.tool_call_id, title="")
            question = dict(card.get("question") or {})
            question["answer"] = answer
            card["question"] = question
            if q.kind == "choice":
                if isinstance(result, Picked):
                    card.update(status="completed", result=_short(q.options.get(result.option_id)))
                else:
                    decision = answer["decision"]
                    card.update(
                        status="failed",
                        outcome=decision if decision in ("expired", "interrupted") else None,
                        error=_short(f"no answer ({decision})"),
                    )
            try:
                self._put_card(card)
            finally:
                q.wake.set()
        return True

    def _close_questions(self, note: str) -> None:
        with self._lock:
            open_now = list(self._open.values())
        for q in open_now:
            self._settle(q, _answer("interrupted", "kernel", note))

    def _ask_policy(self, request: Request) -> Allow | Deny | None:
        policy = self.policy
        if policy is None:
            return None
        try:
            decide = getattr(policy, "decide", None)
            decision = (
                decide(request) if callable(decide) else policy.request_permission(None, request)
            )
        except Exception:
            log.exception("the policy failed on %s; the call is denied", request.get("tool"))
            return Deny("rejected", "the policy failed")
        if decision is None or isinstance(decision, (Allow, Deny)):
            return decision
        log.error("the policy returned %r, not Allow, Deny or None; denied", decision)
        return Deny("rejected", "the policy gave no valid decision")

    def _fallback_permission(self, request: Request) -> Allow | Deny:
        if self.fallback is None:
            return Deny("expired")
        result: Allow | Deny = self.fallback.request_permission(None, request)
        return result

    # -- cards ---------------------------------------------------------------------

    def _card(self, tool_call_id: str, *, title: str) -> dict[str, Any]:
        """A copy of the call's card (a new one if there is none yet); lock held."""
        card = self.calls.get(tool_call_id)
        if card is not None:
            return dict(card)
        return {
            "tool_call_id": tool_call_id,
            "title": title,
            "tool": title,
            "server": "",
            "class": None,
            "arguments": {},
            "status": "pending",
            "outcome": None,
            "current_step": None,
            "progress": None,
            "cancellable": False,
            "result": None,
            "error": None,
            "question": None,
        }

    def _put_card(self, card: dict[str, Any], *, send: bool = True) -> None:
        """Store the card and send it; lock held.

        Text streamed before the card goes first when the text interval allows; else the
        text thread sends it within ``FLUSH_INTERVAL``.
        """
        if send and time.monotonic() >= self._next_flush:
            self._flush_text()
        tool_call_id = card["tool_call_id"]
        with self._quiet("calls", "order"):
            if tool_call_id not in self.calls:
                self.order = [*self.order, tool_call_id]
            self.calls = {**self.calls, tool_call_id: card}
        if send:
            message: CallMessage = {"type": "call", "card": card}
            self.send(message)

    def _outcome(
        self, tool_call_id: str, card: dict[str, Any], status: str, step: object
    ) -> str | None:
        if status != "failed":
            return None
        step_text = str(step or "").lower()
        question = card.get("question") or {}
        decision = (question.get("answer") or {}).get("decision")
        if step_text.startswith("denied"):
            return str(decision) if decision in ("expired", "interrupted") else "denied"
        if tool_call_id in self._cancel_requested:
            return "cancelled"
        if step_text.startswith(("cancelled", "canceled")):
            interrupted = self._interrupted or "interrupted" in step_text
            return "interrupted" if interrupted else "cancelled"
        if step_text.startswith(("expired", "interrupted")):
            return step_text.split()[0]
        return None

    def _apply_records(self, records: Any) -> None:
        """Complete the cards from the turn's call records, and end any left open; lock held.

        The cards are not sent one by one: the full sync at the end of the turn carries them.
        """
        for record in records:
            tool_call_id = getattr(record, "tool_call_id", None)
            if not isinstance(tool_call_id, str):
                continue
            known = tool_call_id in self.calls
            card = self._card(tool_call_id, title=str(getattr(record, "tool", "")))
            before = dict(card)
            if not known:
                card.update(
                    server=str(getattr(record, "server", "")),
                    arguments=dict(getattr(record, "arguments", None) or {}),
                )
                status = getattr(record, "status", None)
                if status in FINAL_STATUSES:
                    card["status"] = status
            if card["result"] is None:
                card["result"] = _short(getattr(record, "result", None))
            error = getattr(record, "error", None)
            if error is not None and (
                card["error"] is None or card["error"] == card["current_step"]
            ):
                card["error"] = _short(error)
            if card["outcome"] is None and getattr(record, "outcome", None) == "cancelled":
                card["outcome"] = "cancelled"
            if card != before:
                self._put_card(card, send=False)
        for tool_call_id in list(self.order):
            card = dict(self.calls[tool_call_id])
            if card["status"] not in FINAL_STATUSES:
                card.update(status="failed", outcome="interrupted", cancellable=False)
                self._put_card(card, send=False)

    # -- text ------------------------------------------------------------------------

    def _flush_text(self, *, send: bool = True) -> None:
        """Move the buffered text into ``text`` and (unless ``send`` is false) send it."""
        with self._lock:
            pending = self._pending
            count = len(pending)
            if not count:
                return
            # text_delta only appends, so the first ``count`` items are this flush's.
            parts = pending[:count]
            del pending[:count]
            try:
                delta = "".join(parts)
            except TypeError:
                delta = "".join(str(p) for p in parts)
            if not delta:
                return
            self._append_text(delta, send=send)
            # Counted from when the message has left, so that two never fall in one interval.
            self._next_flush = time.monotonic() + FLUSH_INTERVAL

    def _append_text(self, delta: str, *, send: bool = True) -> None:
        start = self._utf16
        self._utf16 += _utf16_len(delta)
        with self._quiet("text"):
            self.text = self.text + delta
        if send:
            message: TextMessage = {"type": "text", "start": start, "delta": delta}
            self.send(message)

    def _ensure_flusher(self) -> None:
        """Start the text thread unless one is running; each has its own stop event."""
        with self._lock:
            if self._flush_stop is not None:
                return
            stop = self._flush_stop = threading.Event()
        threading.Thread(
            target=contextvars.copy_context().run,
            args=(self._flush_loop, stop),
            name="mead-widget-text",
            daemon=True,
        ).start()

    def _stop_flusher(self) -> None:
        """Tell the text thread to end, without waiting for it to wake up."""
        with self._lock:
            if self._flush_stop is not None:
                self._flush_stop.set()
                self._flush_stop = None

    def _flush_loop(self, stop: threading.Event) -> None:
        """Send the buffered text at most once per ``FLUSH_INTERVAL`` until ``stop``."""
        idle_since = time.monotonic()
        try:
            while not stop.is_set():
                now = time.monotonic()
                if not self._pending:
                    idle = now - idle_since > _FLUSHER_IDLE
                    if idle and (self.status != "running" or self.comm is None):
                        return
                    stop.wait(FLUSH_INTERVAL)
                    continue
                idle_since = now
                if now < self._next_flush:
                    stop.wait(self._next_flush - now)
                    continue
                self._flush_text()
        except Exception:
            log.exception("sending streamed text failed")
        finally:
            with self._lock:
                ended = self._flush_stop is stop
                if ended:
                    self._flush_stop = None
            if ended and self._pending:
                self._ensure_flusher()

    # -- helpers ---------------------------------------------------------------------

    @contextmanager
    def _quiet(self, *names: str) -> Iterator[None]:
        """Assign the named traits in this thread without syncing them to the frontend."""
        previous: frozenset[str] = getattr(self._local, "quiet", frozenset())
        self._local.quiet = previous | frozenset(names)
        try:
            yield
        finally:
            self._local.quiet = previous

    def _should_send_property(self, key: str, value: Any) -> bool:
        local = getattr(self, "_local", None)
        if local is not None and key in getattr(local, "quiet", ()):
            return False
        result: bool = super()._should_send_property(key, value)
        return result

    def _show(self) -> None:
        try:
            from IPython.core.interactiveshell import InteractiveShell
            from IPython.display import display

            if InteractiveShell.initialized():
                display(self)  # type: ignore[no-untyped-call]
        except Exception:
            log.exception("the widget could not be displayed")


def _answer(decision: str, by: str, note: str = "", option_id: str | None = None) -> dict[str, Any]:
    return {"decision": decision, "option_id": option_id, "by": by, "note": _short(note) or ""}


def _permission_answer(result: Allow | Deny, by: str) -> dict[str, Any]:
    if isinstance(result, Allow):
        return _answer("allow", by)
    decision = "expired" if result.reason == "expired" else "deny"
    return _answer(decision, by, result.message)


def _default_result(kind: str, decision: str) -> Allow | Deny | Picked | Unanswered:
    if kind == "permission":
        if decision == "expired":
            return Deny("expired")
        return Deny("rejected", "the turn was interrupted" if decision == "interrupted" else "")
    return Unanswered("expired" if decision == "expired" else "no_answer")


def _error_text(error: BaseException) -> str:
    if isinstance(error, KeyboardInterrupt):
        return "interrupted (KeyboardInterrupt)"
    message = str(error)
    return _short(f"{type(error).__name__}: {message}" if message else type(error).__name__) or ""


def _read_bundle() -> None:
    """Read the bundle once at import, so a rebuild in progress cannot break a new widget."""
    for key, fallback in (("_esm", _FALLBACK_ESM), ("_css", "")):
        try:
            str(getattr(NotebookInteraction, key))
        except OSError:
            log.warning("the widget's %s file could not be read; using a minimal one", key)
            setattr(NotebookInteraction, key, fallback)


_read_bundle()
