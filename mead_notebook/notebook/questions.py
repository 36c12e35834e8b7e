"""Questions: open one, wait for its answer, settle it once, expire it.

A question is settled by the first of: the ``policy`` (before anyone is
asked), an answer from a view, the timeout, the ``fallback`` when no view has
rendered within ``grace`` seconds, or the kernel (interrupted, turn ended, a
kernel that cannot wait). Later answers change nothing. Nothing here knows
about widgets: the owner shows a question with ``show`` and waits with ``wait``.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ..driver import short
from ..interaction import Allow, Choice, Deny, Picked, Policy, Request, Unanswered
from .protocol import Answer, AnswerMessage, DecidedBy, Decision, Option, Question

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["KEEP_SETTLED", "Questions"]

WAIT_SLICE = 60.0
"""Longest single wait; the loop re-checks deadlines after each."""
KEEP_SETTLED = 1000
"""Settled questions remembered (to ignore a second delivery of an answer quietly)."""

Result = Allow | Deny | Picked | Unanswered
Show = Callable[[str, Question], None]
Wait = Callable[[threading.Event, float], object]


@dataclass
class _Question:
    id: str
    kind: Literal["permission", "choice"]
    tool_call_id: str
    options: dict[str, str]
    deadline: int | None
    prompt: str | None = None
    wake: threading.Event = field(default_factory=threading.Event)
    answer: Answer | None = None
    result: Result | None = None
    settled_by: AnswerMessage | None = None

    def view(self) -> Question:
        options = [Option(id=k, label=v) for k, v in self.options.items()]
        return Question(
            id=self.id,
            kind=self.kind,
            prompt=self.prompt,
            options=options if self.kind == "choice" else None,
            deadline=self.deadline,
            answer=self.answer,
        )


class Questions:
    """The questions of one interaction; every method is safe from any thread."""

    def __init__(
        self,
        *,
        show: Show,
        wait: Wait,
        timeout: float | None,
        grace: float,
        policy: Policy | None = None,
        fallback: Policy | None = None,
    ) -> None:
        self.timeout = timeout
        self.grace = grace
        self.policy = policy
        self.fallback = fallback
        self._show = show
        self._wait = wait
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._all: OrderedDict[str, _Question] = OrderedDict()
        self._open: dict[str, _Question] = {}
        self.rendered = False
        self.displayed_at: float | None = None
        self.interrupted = False

    # -- asking -------------------------------------------------------------------------

    def permission(self, request: Request) -> Allow | Deny:
        """Ask the policy, then the person; block until settled."""
        tool_call_id = str(request.get("tool_call_id", ""))
        decided = self._ask_policy(request)
        if decided is not None:
            q = self._open_question("permission", tool_call_id, {})
            self._settle(q, _permission_answer(decided, "policy"), decided)
        else:
            q = self._open_question("permission", tool_call_id, {})
            self._await(q, lambda: self._nobody(request))
        return q.result if isinstance(q.result, (Allow, Deny)) else Deny("rejected")

    def choice(self, choice: Choice) -> Picked | Unanswered:
        """Put the question to the person; block until settled."""
        options = {
            str(o["id"]): str(o["label"])
            for o in choice.get("options") or ()
            if isinstance(o, dict) and "id" in o and "label" in o
        }
        prompt = str(choice.get("prompt", ""))
        q = self._open_question("choice", str(choice.get("tool_call_id", "")), options, prompt)
        if not options:
            self._settle(q, _answer("no_answer", "kernel", "no options"), Unanswered("no_answer"))
        self._await(q, lambda: Unanswered("no_answer"))
        return q.result if isinstance(q.result, (Picked, Unanswered)) else Unanswered()

    # -- what the frontend and the turn say -------------------------------------------------

    def answer(self, message: AnswerMessage) -> None:
        """Settle a question with a view's answer; anything else is logged and ignored."""
        with self._lock:
            q = self._all.get(message["question_id"])
            if q is None:
                log.warning("ignored an answer to an unknown question: %r", message)
                return
            if q.answer is not None:
                if q.settled_by == message:
                    log.debug("ignored a second delivery of the answer to %s", q.id)
                else:
                    log.info("ignored a late answer to %s (already %s)", q.id, q.answer["decision"])
                return
            result: Result
            if q.kind == "permission":
                decision = message["decision"]
                if decision is None:
                    log.warning("ignored a choice answer to a permission: %r", message)
                    return
                note = message["note"]
                result = Allow() if decision == "allow" else Deny("rejected", note)
                answer = _answer(decision, "person", note)
            else:
                option_id = message["option_id"]
                if option_id is None or option_id not in q.options:
                    log.warning("ignored an answer with an unknown option: %r", message)
                    return
                result = Picked(option_id)
                answer = _answer("picked", "person", message["note"], option_id)
            self._settle(q, answer, result, message)

    def view_rendered(self) -> None:
        """A view rendered: someone can answer, so the grace period no longer applies."""
        with self._lock:
            if self.rendered:
                return
            self.rendered = True
            for q in self._open.values():
                q.wake.set()

    def view_displayed(self) -> None:
        """The widget was displayed: the grace period counts from now."""
        with self._lock:
            if self.displayed_at is None:
                self.displayed_at = time.monotonic()

    def new_turn(self) -> None:
        """Forget the last turn's interrupt and its settled questions."""
        with self._lock:
            self.interrupted = False
            for qid in [qid for qid, q in self._all.items() if q.answer is not None]:
                del self._all[qid]

    def close_all(self, note: str, *, interrupted: bool = False) -> None:
        """Settle every open question as interrupted."""
        with self._lock:
            if interrupted:
                self.interrupted = True
            open_now = list(self._open.values())
        for q in open_now:
            self._settle(q, _answer("interrupted", "kernel", note))

    # -- inside ---------------------------------------------------------------------------

    def _open_question(
        self,
        kind: Literal["permission", "choice"],
        tool_call_id: str,
        options: dict[str, str],
        prompt: str | None = None,
    ) -> _Question:
        with self._lock:
            deadline = None if self.timeout is None else _epoch_ms(self.timeout)
            q = _Question(f"q{next(self._ids)}", kind, tool_call_id, options, deadline, prompt)
            self._all[q.id] = q
            while len(self._all) > KEEP_SETTLED:
                oldest = next(iter(self._all))
                if oldest in self._open:
                    break
                del self._all[oldest]
            self._open[q.id] = q
            self._show(tool_call_id, q.view())
            if self.interrupted:
                self._settle(q, _answer("interrupted", "kernel", "the turn was interrupted"))
        return q

    def _await(self, q: _Question, nobody: Callable[[], Result]) -> None:
        """Block until ``q`` is settled, deciding it by timeout or ``nobody()`` if needed."""
        opened = time.monotonic()
        deadline = None if self.timeout is None else opened + self.timeout
        try:
            while True:
                with self._lock:
                    if q.answer is not None:
                        return
                    rendered = self.rendered
                    if rendered:
                        q.wake.clear()
                    shown = self.displayed_at
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    self._settle(q, _answer("expired", "timeout", "no answer in time"))
                    continue
                limit = WAIT_SLICE
                if not rendered:
                    grace_end = (shown if shown is not None else opened) + self.grace
                    if now >= grace_end:
                        self._unattended(q, nobody)
                        continue
                    limit = min(limit, grace_end - now)
                if deadline is not None:
                    limit = min(limit, deadline - now)
                self._wait(q.wake, max(limit, 0.0))
        except Exception as exc:
            log.error("cannot wait for an answer to %s: %s", q.id, exc)
            decision: Decision = "deny" if q.kind == "permission" else "no_answer"
            self._settle(q, _answer(decision, "kernel", str(exc)))
        except BaseException:
            self._settle(q, _answer("interrupted", "kernel", "the wait was interrupted"))
            raise

    def _unattended(self, q: _Question, nobody: Callable[[], Result]) -> None:
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
        answer: Answer,
        result: Result | None = None,
        settled_by: AnswerMessage | None = None,
    ) -> bool:
        """Record the first answer to ``q``; later ones change nothing."""
        with self._lock:
            if q.answer is not None:
                return False
            q.answer = answer
            q.result = result if result is not None else _default_result(q.kind, answer)
            q.settled_by = settled_by
            self._open.pop(q.id, None)
            try:
                self._show(q.tool_call_id, q.view())
            finally:
                q.wake.set()
        return True

    def _ask_policy(self, request: Request) -> Allow | Deny | None:
        if self.policy is None:
            return None
        try:
            decision = self.policy.decide(request)
        except Exception:
            log.exception("the policy failed on %s; the call is denied", request.get("tool"))
            return Deny("rejected", "the policy failed")
        if decision is None or isinstance(decision, (Allow, Deny)):
            return decision
        log.error("the policy returned %r, not Allow, Deny or None; denied", decision)
        return Deny("rejected", "the policy gave no valid decision")

    def _nobody(self, request: Request) -> Allow | Deny:
        decision = None if self.fallback is None else self.fallback.decide(request)
        return Deny("expired") if decision is None else decision


def _answer(
    decision: Decision, by: DecidedBy, note: str = "", option_id: str | None = None
) -> Answer:
    return Answer(decision=decision, option_id=option_id, by=by, note=short(note) or "")


def _permission_answer(result: Allow | Deny, by: DecidedBy) -> Answer:
    if isinstance(result, Allow):
        return _answer("allow", by)
    decision: Decision = "expired" if result.reason == "expired" else "deny"
    return _answer(decision, by, result.message)


def _default_result(kind: str, answer: Answer) -> Result:
    decision = answer["decision"]
    if kind == "permission":
        if decision == "expired":
            return Deny("expired")
        if decision == "interrupted":
            return Deny("interrupted", answer["note"])
        return Deny("rejected", answer["note"] if answer["by"] == "kernel" else "")
    if decision in ("expired", "interrupted"):
        return Unanswered(decision)
    return Unanswered("no_answer")


def _epoch_ms(seconds_from_now: float) -> int:
    return int((time.time() + seconds_from_now) * 1000)
