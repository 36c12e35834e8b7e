"""The gate's invariants over every source, on tool calls a model makes up (Hypothesis).

Each example plays a made-up model (calls to real, unknown and misused tools,
ids given again, in one reply or across replies) through one adapter's harness,
under a real ``NotebookInteraction`` with an audit file and a person who answers
in the widget: Allow, Deny, edit the arguments, "Allow always" for the tool,
"Deny always" for the tool, or nothing (the question expires). Whatever the
framework does with such a model, after the run:

- every tool body that ran matches one Allow (the person's, or a rule's) made for
  exactly the tool and arguments the card showed when it was decided, each Allow
  used once; nothing ran that was denied, expired or never asked;
- each card was decided at most once in the audit, and a call that completed was
  allowed, a call that was refused never completed;
- each call of the turn has a card of its own.

A call the agent runs under its own rules (the ACP harness's ``u1``) is not
asked: it must say so (``decided_by`` ``agent``) to count as allowed.
"""

from __future__ import annotations

import collections
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mead_notebook import NotebookInteraction, ToolCall, TurnError
from mead_notebook.adapters.base import AgentResult

from .conformance import Harness, Replies
from .test_conformance import HARNESSES, _load

pytestmark = pytest.mark.timeout(600)

TOOLS = {"read": "read_file", "write": "write_file", "delete": "delete_file"}
"""What each tool's ``ran`` entry starts with (``read a.txt``), by its name."""
PATHS = ["a.txt", "b.txt", "important.db"]
WAIT = 0.6
"""How long a question the person leaves unanswered waits (seconds)."""


@st.composite
def tool_calls(draw: st.DrawFn) -> ToolCall:
    name = draw(st.sampled_from(["read_file", "write_file", "delete_file", "wipe_disk"]))
    arguments: dict[str, Any] = {"path": draw(st.sampled_from(PATHS))}
    if name == "write_file":
        arguments["text"] = draw(st.sampled_from(["hi", "rm -rf ~"]))
    misuse = draw(st.sampled_from(["none", "none", "none", "missing", "wrong type"]))
    if misuse == "missing":
        del arguments["path"]
    elif misuse == "wrong type":
        arguments["path"] = 7
    return ToolCall(name, arguments, draw(st.sampled_from(["x", "y", "z", "x", "y", "z", "u1"])))


DECISIONS = ["allow", "deny", "edit", "always", "never", "silent"]
"""What the person does with a card: by (tool, path) shown, drawn per example."""


@st.composite
def plans(draw: st.DrawFn) -> tuple[Replies, dict[tuple[str, str], str]]:
    rounds = draw(st.lists(st.lists(tool_calls(), min_size=1, max_size=3), min_size=1, max_size=3))
    replies: list[list[str | ToolCall]] = [[*r] for r in rounds]
    replies.append(["done"])
    keys = [(t, p) for t in ("read_file", "write_file", "delete_file", "wipe_disk") for p in PATHS]
    choices = draw(st.lists(st.sampled_from(DECISIONS), min_size=len(keys), max_size=len(keys)))
    return replies, dict(zip(keys, choices, strict=True))


class Person:
    """Answers every open question in the widget as ``plan`` says, by what the card shows."""

    def __init__(self, w: NotebookInteraction, plan: dict[tuple[str, str], str], edits: bool):
        self.w, self.plan, self.edits = w, plan, edits
        self.answered: set[str] = set()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stop.is_set():
            for card in list(self.w.calls.values()):
                question = card.get("question")
                if not question or question["answer"] is not None:
                    continue
                key = f"{question['id']}@{question.get('version', 1)}"
                if key in self.answered:
                    continue
                self.answered.add(key)
                self._answer(card, question)
            time.sleep(0.005)

    def _answer(self, card: dict[str, Any], question: dict[str, Any]) -> None:
        arguments = card.get("arguments") or {}
        decision = self.plan.get((card["tool"], str(arguments.get("path"))), "deny")
        message: dict[str, Any] = {
            "type": "answer",
            "question_id": question["id"],
            "version": question.get("version", 1),
        }
        if question["kind"] != "permission" or decision == "silent":
            return
        offered = [o["scope"] for o in question.get("scopes") or []]
        if decision in ("allow", "deny"):
            message["decision"] = decision
        elif decision == "edit" and self.edits and question.get("editable", True):
            message.update(decision="allow", arguments={**arguments, "path": "edited.txt"})
        elif decision in ("always", "never") and "tool" in offered:
            message.update(decision="allow" if decision == "always" else "deny", remember="tool")
        else:
            message["decision"] = "allow"
        self.w.deliver(message)


def ran_as_calls(ran: list[str]) -> collections.Counter[tuple[str, str]]:
    """``harness.ran`` as (tool, path) pairs: ``write a.txt`` is ``("write_file", "a.txt")``."""
    found: collections.Counter[tuple[str, str]] = collections.Counter()
    for entry in ran:
        verb, _, path = entry.partition(" ")
        if verb in TOOLS:
            found[(TOOLS[verb], path)] += 1
    return found


def decided(path: Path) -> list[dict[str, Any]]:
    """Every ``decided`` line of the audit, as written."""
    if not path.exists():
        return []
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e for e in lines if e.get("event") == "decided"]


def check(harness: Harness, result: AgentResult | None, audit_path: Path) -> None:
    decisions = decided(audit_path)
    ids = [d["tool_call_id"] for d in decisions]
    assert len(ids) == len(set(ids)), f"a card decided twice: {ids}"
    allowed: collections.Counter[tuple[str, str]] = collections.Counter()
    for d in decisions:
        if d["decision"] != "allow":
            continue
        shown = d["approved_arguments"] or d["arguments"] or {}
        allowed[(d["tool"], str(shown.get("path")))] += 1
    if result is not None:
        for call in result.calls:
            if call.decided_by == "agent":
                allowed[(call.tool, str(call.arguments.get("path")))] += 1
    ran = ran_as_calls(harness.ran)
    unallowed = ran - allowed
    assert not unallowed, f"ran without an Allow for exactly that call: {unallowed}"
    if result is None:
        return
    cards = [c.tool_call_id for c in result.calls]
    assert len(cards) == len(set(cards)), f"two calls share a card: {cards}"
    verdicts = {d["tool_call_id"]: d["decision"] for d in decisions}
    for call in result.calls:
        if call.status == "completed" and call.tool != "ask_user" and call.decided_by != "agent":
            assert verdicts.get(call.tool_call_id) == "allow", f"completed unallowed: {call}"
        if verdicts.get(call.tool_call_id) in ("deny", "expired", "interrupted"):
            assert call.status == "failed", f"refused, yet {call.status}: {call}"
        if call.outcome in ("denied", "expired") or (
            call.status == "completed" and call.decided_by is None and call.tool != "ask_user"
        ):
            assert call.tool_call_id in verdicts, f"not in the audit: {call}"


@pytest.mark.parametrize(
    "harness_name", HARNESSES, ids=[h.removeprefix("harness_") for h in HARNESSES]
)
def test_nothing_runs_past_the_person(
    harness_name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    examples = 6 if harness_name == "harness_claude_agent" else 20

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(plans())
    def run(plan: tuple[Replies, dict[tuple[str, str], str]]) -> None:
        replies, decisions = plan
        harness = _load(harness_name)
        audit_path = tmp_path_factory.mktemp("audit") / "calls.jsonl"
        w = NotebookInteraction(display=False, timeout=WAIT, grace=30, audit=audit_path)
        w.deliver({"type": "rendered"})
        person = Person(w, decisions, harness.capabilities.edited_arguments)
        result: AgentResult | None = None
        try:
            result = harness.start(replies, w).result(timeout=120)
        except TurnError as refused:
            result = refused.result if isinstance(refused.result, AgentResult) else None
        finally:
            person.stop.set()
            person.thread.join(5)
            w.close()
        check(harness, result, audit_path)

    run()
