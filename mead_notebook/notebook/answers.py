"""What a view's answer means: the decision, result and rule for one question.

Pure functions over a question's facts and a parsed :class:`AnswerMessage`; a
string back means the answer is refused (and why). Nothing here settles anything.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ..driver import short
from ..interaction import (
    Allow,
    Answered,
    DecidedBy,
    Deny,
    Picked,
    Policy,
    Request,
    TypedAnswer,
    Unanswered,
)
from ..schema import check
from .protocol import AnswerMessage, ScopeOffer, Settlement, Verdict
from .rules import Rule, offers_for, rule_for

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = [
    "Asked",
    "Interpretation",
    "Result",
    "ask_policy",
    "by_rule",
    "decided_by",
    "interpret",
    "make_answer",
    "unanswered",
]

Result = Allow | Deny | Picked | Answered | Unanswered


@dataclass
class Asked:
    """What was asked: a permission's request, or a choice's options."""

    kind: Literal["permission", "choice"]
    request: Request | None = None
    options: dict[str, str] = field(default_factory=dict)
    multiple: bool = False
    typed: TypedAnswer = "other"
    """What a choice's answer in words is: beside its options, or the answer itself."""

    @property
    def scopes(self) -> list[ScopeOffer]:
        """What "Allow always" and "Deny always" may cover for this request."""
        return offers_for(self.request) if self.request is not None else []

    @property
    def schema(self) -> dict[str, Any] | None:
        return None if self.request is None else self.request.get("parameters")

    @property
    def editable(self) -> bool:
        """Whether the source takes edited arguments and a denial message (a choice: always)."""
        return self.request is None or self.request.get("editable") is not False


@dataclass(frozen=True)
class Interpretation:
    """A valid answer: what the view shows, what the turn gets, the rule it makes."""

    answer: Settlement
    result: Result
    rule: Rule | None = None


def make_answer(
    decision: Verdict,
    by: DecidedBy,
    note: str = "",
    *,
    option_ids: list[str] | None = None,
    text: str | None = None,
    arguments: dict[str, Any] | None = None,
    rule: Rule | None = None,
    person: AnswerMessage | None = None,
) -> Settlement:
    """A :class:`~.protocol.Settlement` with every field set; ``person``: the answer
    whose view's claimed user and page it records."""
    return Settlement(
        decision=decision,
        option_id=option_ids[0] if option_ids else None,
        option_ids=option_ids,
        text=text,
        arguments=arguments,
        rule=None if rule is None else rule.label,
        by=by,
        note=short(note) or "",
        username=None if person is None else person.get("username"),
        display_name=None if person is None else person.get("display_name"),
        page=None if person is None else person.get("page"),
    )


def interpret(asked: Asked, message: AnswerMessage) -> Interpretation | str:
    """The meaning of ``message`` for ``asked``, or why it is refused."""
    if asked.kind == "permission":
        return _permission(asked, message)
    return _choice(asked, message)


def _permission(asked: Asked, message: AnswerMessage) -> Interpretation | str:
    decision, note = message["decision"], message["note"]
    if decision is None:
        return "a permission needs allow or deny"
    if not asked.editable:
        note = ""
    request = asked.request
    rule = None
    if message["remember"] is not None:
        rule = rule_for(request, message["remember"], decision) if request is not None else None
        if rule is None:
            return f"'{decision.title()} always' for this {message['remember']} is not offered here"
    if decision == "deny":
        answer = make_answer("deny", "person", note, rule=rule, person=message)
        return Interpretation(answer, Deny("rejected", note), rule)
    edited = message["arguments"]
    if edited is not None and not asked.editable:
        return "this call's source cannot take edited arguments"
    if edited is not None and request is not None and edited == request["arguments"]:
        edited = None
    if edited is not None:
        problem = check(edited, asked.schema)
        if problem is not None:
            return f"the edited arguments do not fit the tool: {problem}"
    answer = make_answer("allow", "person", note, arguments=edited, rule=rule, person=message)
    return Interpretation(answer, Allow(arguments=edited), rule)


def _choice(asked: Asked, message: AnswerMessage) -> Interpretation | str:
    note, text, picked = message["note"], message["text"], message["option_ids"]
    if text is not None:
        answer = make_answer("picked", "person", note, text=text, person=message)
        return Interpretation(answer, Answered(text))
    if not picked:
        return "a choice needs options or an Other text"
    unknown = [o for o in picked if o not in asked.options]
    if unknown:
        return f"unknown options {unknown}"
    if len(picked) > 1 and not asked.multiple:
        return "this question takes one option"
    answer = make_answer("picked", "person", note, option_ids=picked, person=message)
    return Interpretation(answer, Picked(picked[0], tuple(picked[1:])))


def ask_policy(policy: Policy | None, request: Request) -> Allow | Deny | None:
    """``policy``'s decision for ``request`` (None: no rule); a failing policy denies."""
    if policy is None:
        return None
    try:
        decision = policy.decide(request)
    except Exception:
        log.exception("the policy failed on %s; the call is denied", request.get("tool"))
        return Deny("rejected", "the policy failed")
    if decision is None or isinstance(decision, (Allow, Deny)):
        return decision
    log.error("the policy returned %r, not Allow, Deny or None; denied", decision)
    return Deny("rejected", "the policy gave no valid decision")


def decided_by(result: Allow | Deny, by: DecidedBy, name: str = "") -> Interpretation:
    """A permission settled by ``by`` (a policy or the fallback) without a person.

    ``name`` says which policy (its ``repr``); an Allow gives it as the note, so the
    card and the audit say which rule let the call run.
    """
    if isinstance(result, Allow):
        return Interpretation(make_answer("allow", by, name), result)
    decision: Verdict = "expired" if result.reason == "expired" else "deny"
    return Interpretation(make_answer(decision, by, result.message), result)


def by_rule(rule: Rule) -> Interpretation:
    """A permission settled by a remembered "Allow always" or "Deny always" rule."""
    if rule.effect == "deny":
        told = f"Denied by the person's rule for {rule.label}"
        return Interpretation(make_answer("deny", "rule", rule=rule), Deny("rejected", told))
    return Interpretation(make_answer("allow", "rule", rule=rule), Allow(), rule)


_UNANSWERED: Final[dict[Verdict, Literal["expired", "interrupted", "no_answer"]]] = {
    "expired": "expired",
    "interrupted": "interrupted",
}
"""Why an unanswered question ended, by verdict; any other verdict: ``no_answer``.
A permission's :class:`Deny` takes the same reason, ``no_answer`` read as ``rejected``."""


def unanswered(asked: Asked, decision: Verdict, by: DecidedBy, note: str) -> Interpretation:
    """How ``asked`` ends when nobody answers (expired, interrupted, no view, kernel)."""
    answer = make_answer(decision, by, note)
    reason = _UNANSWERED.get(decision, "no_answer")
    if asked.kind == "choice":
        return Interpretation(answer, Unanswered(reason))
    if reason == "no_answer":
        return Interpretation(answer, Deny("rejected", note if by == "kernel" else ""))
    return Interpretation(answer, Deny(reason, "" if reason == "expired" else note))
