"""Questions: open one, wait for its answer, settle it once, expire it.

A question is settled by the first of: the ``policy`` (before anyone is
asked), an answer from a view, the timeout, the ``fallback`` when no view has
rendered within ``grace`` seconds, or the kernel (interrupted, turn ended, a
kernel that cannot wait). Later answers change nothing. A question has a
``version``: when what the call shows changes while it is open (an agent's late
input), the owner calls ``revise`` and the version moves on, so that an answer
made on the older version is refused and the person is asked again. An Allow
whose arguments (edited, or back to the model's) do what the card does not show
yet is held: the waiting thread has the owner ``recheck`` it, which shows what
they will do (a new version) and the answer is refused, so the person allows
again what they now see. Nothing here knows about widgets: the owner shows a
question with ``show`` and waits with ``wait``.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final, Literal, cast

from ..interaction import (
    Allow,
    Answered,
    Choice,
    Deny,
    Picked,
    Policy,
    Previewer,
    Request,
    TypedAnswer,
    Unanswered,
)
from .answers import (
    Asked,
    Interpretation,
    Result,
    ask_policy,
    by_rule,
    decided_by,
    interpret,
    unanswered,
)
from .protocol import AnswerMessage, ChoiceOption, Question, Verdict
from .rules import Rule, first_match
from .waiting.views import Presence

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["KEEP_SETTLED", "QuestionState", "Questions"]

WAIT_SLICE = 60.0
"""Longest single wait; the loop re-checks deadlines after each."""
KEEP_SETTLED = 1000
"""Settled questions remembered (to ignore a second delivery of an answer quietly)."""
CHANGED: Final = "the call changed after this answer was made; check it again"
"""Why an answer made on an older version of the call is refused."""
REVISED: Final = ("title", "tool", "server", "class", "arguments", "kind", "content", "locations")
"""The fields of a request that ``revise`` brings up to date."""
PREVIEWED: Final = "the card now shows what your edited arguments will do: check the new diff"
"""Why an Allow whose arguments do what the card did not show yet is refused."""
NOT_PREVIEWED: Final = "what these arguments will do cannot be shown"
"""Why an Allow is refused when showing what its arguments will do failed."""

Show = Callable[[str, Question], None]
Wait = Callable[[threading.Event, float], object]
Recheck = Callable[[str, dict[str, Any], Previewer], bool]
"""``recheck(tool_call_id, arguments, preview)``: whether the call's card shows what
``preview`` says of ``arguments``; when it does not, the owner shows that (revising the
question, a new version) and returns False. Called in the waiting thread."""


@dataclass
class QuestionState:
    """One question: what was asked, and once settled, how and when."""

    id: str
    tool_call_id: str
    asked: Asked
    deadline: int | None
    prompt: str | None = None
    opened_at: float = field(default_factory=time.time)
    settled_at: float | None = None
    rejected: str | None = None
    rejections: int = 0
    version: int = 1
    wake: threading.Event = field(default_factory=threading.Event)
    settled: Interpretation | None = None
    settled_by: AnswerMessage | None = None
    previewed: dict[str, Any] | None = None
    """The arguments what the card shows is for (a permission's; None: a choice)."""
    checking: tuple[Interpretation, AnswerMessage, dict[str, Any]] | None = None
    """An Allow held until the card shows what its arguments do (see ``Recheck``)."""

    @property
    def kind(self) -> Literal["permission", "choice"]:
        return self.asked.kind

    def view(self) -> Question:
        options = [ChoiceOption(id=k, label=v) for k, v in self.asked.options.items()]
        return Question(
            id=self.id,
            kind=self.kind,
            prompt=self.prompt,
            options=options if self.kind == "choice" else None,
            multiple=self.asked.multiple,
            typed=self.asked.typed,
            scopes=self.asked.scopes,
            schema=self.asked.schema,
            editable=self.asked.editable,
            deadline=self.deadline,
            rejected=self.rejected,
            rejections=self.rejections,
            version=self.version,
            answer=None if self.settled is None else self.settled.answer,
        )


class Questions:
    """The questions of one interaction; every method is safe from any thread.

    ``settled`` is called with each question once it is settled (for the audit).
    """

    def __init__(
        self,
        *,
        show: Show,
        wait: Wait,
        timeout: float | None,
        grace: float,
        policy: Policy | None = None,
        fallback: Policy | None = None,
        settled: Callable[[QuestionState], None] | None = None,
        presence: Presence | None = None,
        waiting: Callable[[list[QuestionState]], None] | None = None,
        recheck: Recheck | None = None,
    ) -> None:
        self.timeout = timeout
        self.grace = grace
        self.policy = policy
        self.fallback = fallback
        self._show = show
        self._wait = wait
        self._on_settled = settled
        self._presence = presence
        self._on_waiting = waiting
        self._recheck = recheck
        self._for_person: dict[str, QuestionState] = {}
        self._lock = threading.RLock()
        self._ids = itertools.count(1)
        self._all: OrderedDict[str, QuestionState] = OrderedDict()
        self._open: dict[str, QuestionState] = {}
        self._rules: list[Rule] = []
        self.rendered = False
        self.displayed_at: float | None = None
        self.interrupted = False

    # -- asking -------------------------------------------------------------------------

    def permission(self, request: Request) -> Allow | Deny:
        """Settle by the first of: a "Deny always" rule, the policy, an "Allow always" rule,
        the person (blocking until then)."""
        tool_call_id = str(request.get("tool_call_id", ""))
        q = self._open_question(tool_call_id, Asked("permission", request=dict(request)))  # type: ignore[arg-type]
        q.previewed = dict(request.get("arguments") or {})
        rule = self._rule_for(request)
        denied = rule is not None and rule.effect == "deny"
        decided = None if denied else ask_policy(self.policy, request)
        if decided is not None:
            self._settle(q, decided_by(decided, "policy", _name(self.policy)))
        elif rule is not None:
            self._settle(q, by_rule(rule))
        self._await(q, lambda: _nobody_there(self.fallback, request))
        result = q.settled.result if q.settled is not None else None
        return result if isinstance(result, (Allow, Deny)) else Deny("rejected")

    def choice(self, choice: Choice) -> Picked | Answered | Unanswered:
        """Put the question to the person; block until settled."""
        options = {
            str(o["id"]): str(o["label"])
            for o in choice.get("options") or ()
            if isinstance(o, dict) and "id" in o and "label" in o
        }
        typed: TypedAnswer = "answer" if choice.get("typed") == "answer" else "other"
        asked = Asked("choice", options=options, multiple=bool(choice.get("multiple")), typed=typed)
        q = self._open_question(
            str(choice.get("tool_call_id", "")), asked, str(choice.get("prompt", ""))
        )
        if not options:
            self._settle(q, unanswered(asked, "no_answer", "kernel", "no options"))
        self._await(q, lambda: Unanswered("no_answer"))
        result = q.settled.result if q.settled is not None else None
        return result if isinstance(result, (Picked, Answered, Unanswered)) else Unanswered()

    # -- remembered rules -----------------------------------------------------------------

    @property
    def rules(self) -> list[Rule]:
        """The "Allow always" and "Deny always" rules in force, oldest first."""
        with self._lock:
            return list(self._rules)

    def forget(self, rule: Rule | None = None) -> None:
        """Revoke ``rule`` (every rule when None); requests are asked again."""
        with self._lock:
            if rule is None:
                self._rules.clear()
            elif rule in self._rules:
                self._rules.remove(rule)
            else:
                raise ValueError(f"no such rule: {rule}; the rules are {self._rules}")

    def _rule_for(self, request: Request) -> Rule | None:
        with self._lock:
            return first_match(self._rules, request)

    # -- what the frontend and the turn say -------------------------------------------------

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the questions' lock, so that a card and its question's version change together.

        Take it before any lock of the owner's (the order every answer takes them in).
        """
        with self._lock:
            yield

    def revise(self, tool_call_id: str, shown: Mapping[str, Any]) -> Question | None:
        """The call now shows ``shown``: its open question's next version, or None if none is open.

        The question's request takes the fields of :data:`REVISED` from ``shown``,
        so its scopes and its comparison with edited arguments follow what is shown.
        The caller shows the returned question with the card (holding :meth:`held`).
        """
        with self._lock:
            q = next((q for q in self._open.values() if q.tool_call_id == tool_call_id), None)
            if q is None:
                return None
            q.version += 1
            if q.asked.request is not None:
                revised = {k: shown[k] for k in REVISED if k in shown}
                if "arguments" in revised and revised["arguments"] != q.asked.request["arguments"]:
                    q.previewed = dict(revised["arguments"])
                q.asked.request = cast(Request, {**q.asked.request, **revised})
            log.info("the call of %s changed; its question is now version %d", q.id, q.version)
            return q.view()

    def answer(self, message: AnswerMessage) -> None:
        """Settle a question with a view's answer; anything else is logged and ignored."""
        with self._lock:
            q = self._all.get(message["question_id"])
            if q is None:
                log.warning("ignored an answer to an unknown question: %r", message)
                return
            if q.settled is not None:
                if q.settled_by == message:
                    log.debug("ignored a second delivery of the answer to %s", q.id)
                else:
                    log.info("ignored a late answer to %s", q.id)
                return
            if (message["version"] or 1) != q.version:
                log.warning(
                    "refused an answer to %s made on version %s of the call, now %d",
                    q.id,
                    message["version"] or 1,
                    q.version,
                )
                q.rejected = CHANGED
                q.rejections += 1
                self._show(q.tool_call_id, q.view())
                return
            meaning = interpret(q.asked, message)
            if isinstance(meaning, str):
                log.warning("refused an answer to %s: %s", q.id, meaning)
                if message["arguments"] is not None or message["remember"] is not None:
                    self._refuse(q, meaning)
                return
            unseen = self._unseen(q, meaning)
            if unseen is not None:
                q.checking = (meaning, message, unseen)
                q.wake.set()
                return
            self._accept(q, meaning, message)

    def _accept(self, q: QuestionState, meaning: Interpretation, message: AnswerMessage) -> None:
        """Settle ``q`` with a person's valid answer, and keep the rule it makes; lock held."""
        if meaning.rule is not None and meaning.rule not in self._rules:
            self._rules.append(meaning.rule)
        self._settle(q, meaning, message)
        if meaning.rule is not None:
            for other in list(self._open.values()):
                if other.asked.request is None:
                    continue
                rule = first_match(self._rules, other.asked.request)
                if rule is not None:
                    self._settle(other, by_rule(rule))

    def _refuse(self, q: QuestionState, reason: str) -> None:
        """Keep ``q`` open, saying why the answer was not accepted; lock held."""
        q.rejected = reason
        q.rejections += 1
        self._show(q.tool_call_id, q.view())

    def _unseen(self, q: QuestionState, meaning: Interpretation) -> dict[str, Any] | None:
        """The arguments an Allow runs with, when what they do may differ from the card's
        preview (it was made for other arguments); None when there is nothing to check."""
        request = q.asked.request
        if self._recheck is None or request is None or not isinstance(meaning.result, Allow):
            return None
        if not callable(request.get("preview")):
            return None
        edited = meaning.result.arguments
        arguments = dict(edited if edited is not None else request["arguments"])
        return None if arguments == q.previewed else arguments

    def _check(self, q: QuestionState) -> None:
        """Settle or refuse the Allow held for ``q``, once the card shows what it will run.

        In the waiting thread, outside the lock: ``recheck`` runs the tool's preview.
        """
        with self._lock:
            held, q.checking = q.checking, None
            request = q.asked.request
            if held is None or q.settled is not None or request is None:
                return
            meaning, message, arguments = held
            if (message["version"] or 1) != q.version:
                self._refuse(q, CHANGED)
                return
        preview, recheck = request.get("preview"), self._recheck
        if preview is None or recheck is None:
            return
        try:
            shown = recheck(q.tool_call_id, arguments, preview)
        except Exception:
            log.exception("showing what the arguments of %s will do failed", q.id)
            with self._lock:
                if q.settled is None:
                    self._refuse(q, NOT_PREVIEWED)
            return
        with self._lock:
            if q.settled is not None:
                return
            q.previewed = arguments
            if not shown:
                log.info("refused an allow of %s: the card did not show what it runs", q.id)
                self._refuse(q, PREVIEWED)
            elif (message["version"] or 1) != q.version:
                self._refuse(q, CHANGED)
            else:
                self._accept(q, meaning, message)

    def view_rendered(self) -> None:
        """A view rendered: someone can answer, so the grace period no longer applies."""
        with self._lock:
            if self.rendered:
                return
            self.rendered = True
            for q in self._open.values():
                q.wake.set()

    def nudge(self) -> None:
        """Wake every waiting question now (it re-checks its views and deadlines)."""
        with self._lock:
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
            for qid in [qid for qid, q in self._all.items() if q.settled is not None]:
                del self._all[qid]

    def close_all(self, note: str, *, interrupted: bool = False) -> None:
        """Settle every open question as interrupted."""
        with self._lock:
            if interrupted:
                self.interrupted = True
            open_now = list(self._open.values())
        for q in open_now:
            self._settle(q, unanswered(q.asked, "interrupted", "kernel", note))

    def withdraw(self, tool_call_id: str, note: str) -> None:
        """Settle the open question of ``tool_call_id`` alone as interrupted."""
        with self._lock:
            open_now = [q for q in self._open.values() if q.tool_call_id == tool_call_id]
        for q in open_now:
            self._settle(q, unanswered(q.asked, "interrupted", "kernel", note))

    # -- inside ---------------------------------------------------------------------------

    def _open_question(
        self, tool_call_id: str, asked: Asked, prompt: str | None = None
    ) -> QuestionState:
        with self._lock:
            deadline = None if self.timeout is None else _epoch_ms(self.timeout)
            q = QuestionState(f"q{next(self._ids)}", tool_call_id, asked, deadline, prompt)
            self._all[q.id] = q
            while len(self._all) > KEEP_SETTLED:
                oldest = next(iter(self._all))
                if oldest in self._open:
                    break
                del self._all[oldest]
            self._open[q.id] = q
            self._show(tool_call_id, q.view())
            if self.interrupted:
                self._settle(q, unanswered(asked, "interrupted", "kernel", "interrupted"))
        return q

    def _await(self, q: QuestionState, nobody: Callable[[], Result]) -> None:
        """Block until ``q`` is settled, deciding it by timeout or ``nobody()`` if needed."""
        opened = time.monotonic()
        deadline = None if self.timeout is None else opened + self.timeout
        presence = self._presence
        try:
            while True:
                self._check(q)
                with self._lock:
                    if q.settled is not None:
                        return
                    if q.checking is not None:
                        continue
                    rendered = self.rendered
                    if rendered:
                        q.wake.clear()
                    shown = self.displayed_at
                if rendered:
                    self._waits_for_person(q, True)
                if rendered and presence is not None:
                    presence.start()
                    presence.tick()
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    self._settle(q, unanswered(q.asked, "expired", "timeout", "no answer in time"))
                    continue
                limit = WAIT_SLICE
                if not rendered:
                    grace_end = (shown if shown is not None else opened) + self.grace
                    if now >= grace_end:
                        self._unattended(q, nobody)
                        continue
                    limit = min(limit, grace_end - now)
                    if presence is not None:  # a view's pong counts as its 'rendered'
                        limit = min(limit, presence.probe())
                elif presence is not None:
                    limit = min(limit, presence.due())
                if deadline is not None:
                    limit = min(limit, deadline - now)
                self._wait(q.wake, max(limit, 0.0))
        except Exception as exc:
            log.error("cannot wait for an answer to %s: %s", q.id, exc)
            decision: Verdict = "deny" if q.kind == "permission" else "no_answer"
            self._settle(q, unanswered(q.asked, decision, "kernel", str(exc)))
        except BaseException:
            self._settle(
                q, unanswered(q.asked, "interrupted", "kernel", "the wait was interrupted")
            )
            raise
        finally:
            self._waits_for_person(q, False)
            with self._lock:
                idle = not self._open
            if idle and presence is not None:
                presence.stop()

    def _waits_for_person(self, q: QuestionState, waits: bool) -> None:
        """Tell ``waiting`` when a question starts or stops waiting for a person who can see it."""
        with self._lock:
            if waits == (q.id in self._for_person):
                return
            if waits:
                self._for_person[q.id] = q
            else:
                del self._for_person[q.id]
            now = list(self._for_person.values())
        if self._on_waiting is not None:
            try:
                self._on_waiting(now)
            except Exception:
                log.exception("telling what waits failed")

    def _unattended(self, q: QuestionState, nobody: Callable[[], Result]) -> None:
        try:
            result = nobody()
        except Exception:
            log.exception("the fallback failed; %s is denied", q.id)
            result = Deny("expired")
        if q.kind == "choice":
            self._settle(q, unanswered(q.asked, "no_answer", "fallback", "nobody to answer"))
            return
        if not isinstance(result, (Allow, Deny)):
            log.error("the fallback returned %r, not Allow or Deny; denied", result)
            result = Deny("expired")
        self._settle(q, decided_by(result, "fallback", _name(self.fallback)))

    def _settle(
        self, q: QuestionState, meaning: Interpretation, by: AnswerMessage | None = None
    ) -> bool:
        """Record the first answer to ``q``; later ones change nothing."""
        with self._lock:
            if q.settled is not None:
                return False
            q.settled, q.settled_by, q.settled_at = meaning, by, time.time()
            q.rejected = None
            self._open.pop(q.id, None)
            try:
                self._show(q.tool_call_id, q.view())
            finally:
                q.wake.set()
        if self._on_settled is not None:
            try:
                self._on_settled(q)
            except Exception:
                log.exception("recording the answer to %s failed", q.id)
        return True


def _nobody_there(fallback: Policy | None, request: Request) -> Allow | Deny:
    """The fallback's decision (no rule: denied as expired); an error in it denies too."""
    decision = None if fallback is None else fallback.decide(request)
    return Deny("expired") if decision is None else decision


def _epoch_ms(seconds_from_now: float) -> int:
    return int((time.time() + seconds_from_now) * 1000)


def _name(policy: object) -> str:
    """A policy as a card names it: its ``repr`` when it has one of its own, else its class."""
    if policy is None:
        return ""
    shown = repr(policy)
    return shown if not shown.startswith("<") else type(policy).__name__
