"""Elicitations, against the scripted ACP agent: forms of every field kind, URLs, and questions
that come as permission requests."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from adapters.helpers import Person
from mead_notebook import Answered, Picked, Unanswered
from mead_notebook.adapters import acp
from mead_notebook.interaction import Choice
from mead_notebook.policies import AllowAll

from .conftest import Script

pytestmark = pytest.mark.timeout(60)


class Answers(Person):
    """Allows every call; answers each question with the next of ``answers`` (then: none)."""

    def __init__(self, *answers: Picked | Answered | Unanswered) -> None:
        super().__init__()
        self.answers = list(answers)
        self.choices: list[Choice] = []

    def ask_choice(self, context: Any, choice: Choice) -> Any:
        self.choices.append(choice)
        return self.answers.pop(0) if self.answers else Unanswered("no_answer")


def form(**fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": fields}


def ask(
    script: Script,
    tmp_path: Path,
    person: Any,
    message: str = "Tell me",
    **spec: Any,
) -> tuple[dict[str, Any], acp.AgentResult]:
    """Run one elicitation step; return what the agent was answered and the run's result."""
    turn = [{"ask": {"message": message, **spec}}]
    result = acp.run(script.agent([turn]), "go", interaction=person, cwd=tmp_path)
    [event] = script.events("elicitation")
    return event["answer"], result


def test_the_client_says_it_takes_forms_and_urls(script: Script, tmp_path: Path) -> None:
    acp.run(script.agent([[{"text": "hi"}]]), "go", interaction=Answers(), cwd=tmp_path)
    [event] = script.events("initialize")
    assert event["elicitation"]["form"] is not None
    assert event["elicitation"]["url"] is not None


FRUIT = {"type": "string", "title": "Fruit", "enum": ["apple", "banana"]}
TITLED = {
    "type": "string",
    "oneOf": [{"const": "a", "title": "Apple"}, {"const": "b", "title": "Banana"}],
}
SEVERAL = {
    "type": "array",
    "items": {"anyOf": [{"const": "a", "title": "Apple"}, {"const": "b", "title": "Banana"}]},
}
PLAIN_SEVERAL = {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}}


@pytest.mark.parametrize(
    ("prop", "answer", "value"),
    [
        (FRUIT, Picked("banana"), "banana"),
        (FRUIT, Answered("Banana"), "banana"),
        (TITLED, Picked("b"), "b"),
        (TITLED, Answered("apple"), "a"),
        (SEVERAL, Picked("a", ("b",)), ["a", "b"]),
        (SEVERAL, Answered("Apple, banana"), ["a", "b"]),
        (PLAIN_SEVERAL, Picked("z"), ["z"]),
        ({"type": "boolean"}, Picked("no"), False),
        ({"type": "boolean"}, Answered("yes"), True),
        ({"type": "string", "minLength": 2, "maxLength": 5}, Answered("Ada"), "Ada"),
        ({"type": "string", "format": "email"}, Answered("ada@example.org"), "ada@example.org"),
        ({"type": "string", "format": "date"}, Answered("2025-06-18"), "2025-06-18"),
        ({"type": "integer", "minimum": 1, "maximum": 10}, Answered("7"), 7),
        ({"type": "number", "minimum": 0}, Answered("2.5"), 2.5),
        ({"type": "string", "default": "Ada"}, Picked("mead-default"), "Ada"),
        ({"type": "integer", "default": 3}, Picked("mead-default"), 3),
    ],
    ids=[
        "enum",
        "enum-typed",
        "oneOf",
        "oneOf-typed-label",
        "multi-select",
        "multi-select-typed",
        "multi-select-enum",
        "boolean",
        "boolean-typed",
        "text",
        "email",
        "date",
        "integer",
        "number",
        "text-default",
        "integer-default",
    ],
)
def test_every_kind_of_field_is_answered(
    script: Script, tmp_path: Path, prop: dict[str, Any], answer: Any, value: Any
) -> None:
    person = Answers(answer)
    schema = {**form(f=prop), "required": ["f"]}
    answered, result = ask(script, tmp_path, person, schema=schema)
    assert answered == {"action": "accept", "content": {"f": value}}
    [choice] = person.choices
    assert choice["options"], "the widget asks only a question that has options"
    assert "mead-empty" not in [o["id"] for o in choice["options"]], "required: never empty"
    [record] = result.calls
    assert (record.status, record.server, record.title) == (
        "completed",
        "scripted",
        "scripted asks",
    )


def test_a_form_asks_each_field_in_order_and_an_optional_one_may_be_left_empty(
    script: Script, tmp_path: Path
) -> None:
    schema = {
        **form(
            name={"type": "string", "title": "Your name"},
            age={"type": "integer", "title": "Age", "description": "in years", "minimum": 0},
            tea={"type": "boolean", "title": "Tea?"},
        ),
        "required": ["name"],
    }
    person = Answers(Answered("Ada"), Picked("mead-empty"), Picked("yes"))
    answered, result = ask(script, tmp_path, person, message="About you", schema=schema)
    assert answered == {"action": "accept", "content": {"name": "Ada", "tea": True}}
    prompts = [c["prompt"] for c in person.choices]
    assert [p.split("\n")[:2] for p in prompts] == [
        ["About you", "Your name"],
        ["About you", "Age: in years"],
        ["About you", "Tea?"],
    ]
    assert "a whole number of at least 0" in prompts[1]
    assert "(optional)" in prompts[1]
    assert "(optional)" not in prompts[0]
    assert [o["id"] for o in person.choices[0]["options"]] == ["mead-decline"]
    assert [o["id"] for o in person.choices[2]["options"]] == ["yes", "no", "mead-empty"]
    assert [(c.tool_call_id, c.status) for c in result.calls] == [
        ("question-1/name", "completed"),
        ("question-1/age", "completed"),
        ("question-1/tea", "completed"),
    ]


@pytest.mark.parametrize(
    ("prop", "answer", "options", "multiple", "content"),
    [
        (FRUIT, Picked("banana"), ["apple", "banana"], False, "banana"),
        (TITLED, Picked("b"), ["Apple", "Banana"], False, "b"),
        (SEVERAL, Picked("a", ("b",)), ["Apple", "Banana"], True, ["a", "b"]),
        (FRUIT, Answered("banana"), ["apple", "banana"], False, "banana"),
    ],
    ids=["enum", "oneOf", "array", "other"],
)
def test_an_elicitation_is_a_choice(
    script: Script,
    tmp_path: Path,
    prop: dict[str, Any],
    answer: Any,
    options: list[str],
    multiple: bool,
    content: Any,
) -> None:
    person = Answers(answer)
    answered, result = ask(script, tmp_path, person, "Which fruit?", schema=form(fruit=prop))
    [choice] = person.choices
    assert choice["prompt"] == "Which fruit?\n(optional)"
    assert [o["label"] for o in choice["options"]] == [*options, "Leave empty"]
    assert bool(choice.get("multiple")) is multiple
    assert answered == {"action": "accept", "content": {"fruit": content}}
    assert result.calls[0].status == "completed"


NUMBER = {"type": "integer", "minimum": 1, "maximum": 10}


@pytest.mark.parametrize(
    ("prop", "bad", "good", "value"),
    [
        (NUMBER, "eleven", Answered("10"), 10),
        (NUMBER, "11", Answered("1"), 1),
        ({"type": "integer"}, "2.5", Answered("2"), 2),
        ({"type": "number"}, "nan", Answered("-1.5"), -1.5),
        ({"type": "string", "maxLength": 3}, "Adalbert", Answered("Ada"), "Ada"),
        ({"type": "string", "format": "email"}, "not an address", Answered("a@b.org"), "a@b.org"),
        (FRUIT, "cherry", Picked("banana"), "banana"),
        (SEVERAL, "apple, cherry", Picked("a"), ["a"]),
        ({"type": "boolean"}, "perhaps", Picked("yes"), True),
    ],
    ids=["word", "too-big", "not-whole", "nan", "too-long", "email", "enum", "multi", "bool"],
)
def test_an_answer_that_breaks_its_field_is_asked_again_never_sent(
    script: Script, tmp_path: Path, prop: dict[str, Any], bad: str, good: Any, value: Any
) -> None:
    person = Answers(Answered(bad), good)
    schema = {**form(f=prop), "required": ["f"]}
    answered, result = ask(script, tmp_path, person, schema=schema)
    assert answered == {"action": "accept", "content": {"f": value}}
    first, again = result.calls
    assert (first.status, first.outcome) == ("failed", "invalid_arguments")
    assert "asked again" in str(first.error)
    assert again.status == "completed"
    assert "Not sent:" in person.choices[1]["prompt"]


def test_no_fitting_answer_after_three_tries_cancels(
    script: Script, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    person = Answers(*[Answered("many")] * 5)
    schema = {**form(n={"type": "integer"}), "required": ["n"]}
    answered, result = ask(script, tmp_path, person, schema=schema)
    assert answered == {"action": "cancel"}
    assert len(person.choices) == 3
    assert [c.outcome for c in result.calls] == ["invalid_arguments"] * 3
    assert "no answer that fits field 'n' after 3 tries" in caplog.text


def test_a_required_field_left_empty_is_asked_again(script: Script, tmp_path: Path) -> None:
    person = Answers(Picked("mead-empty"), Answered("Ada"))
    schema = {**form(name={"type": "string"}), "required": ["name"]}
    answered, _ = ask(script, tmp_path, person, schema=schema)
    assert answered == {"action": "accept", "content": {"name": "Ada"}}
    assert "this field is required" in person.choices[1]["prompt"]


def test_the_persons_decline_declines_the_form(script: Script, tmp_path: Path) -> None:
    person = Answers(Picked("mead-decline"))
    answered, _ = ask(script, tmp_path, person, schema=form(name={"type": "string"}))
    assert answered == {"action": "decline"}


@pytest.mark.parametrize(
    "person",
    [Answers(Unanswered("expired")), Answers(Unanswered("no_answer")), AllowAll()],
    ids=["timeout", "nobody", "policy"],
)
def test_nobody_answering_cancels_never_accepts(
    script: Script, tmp_path: Path, person: Any
) -> None:
    schema = form(name={"type": "string", "default": "Ada"}, fruit=FRUIT)
    answered, result = ask(script, tmp_path, person, schema=schema)
    assert answered == {"action": "cancel"}
    assert [c.status for c in result.calls] == ["failed"]


class WaitsForInterrupt(Answers):
    """Leaves its question open until the turn is interrupted."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = threading.Event()
        self.closed = threading.Event()

    def ask_choice(self, context: Any, choice: Choice) -> Any:
        self.choices.append(choice)
        self.asked.set()
        self.closed.wait(30)
        return Unanswered("interrupted")

    def interrupt(self, context: Any) -> None:
        super().interrupt(context)
        self.closed.set()


def test_an_interrupt_cancels_the_open_form(script: Script, tmp_path: Path) -> None:
    person = WaitsForInterrupt()
    schema = form(name={"type": "string"}, age={"type": "integer"})
    steps = [{"ask": {"message": "Who?", "schema": schema}}, {"text": "after"}]
    turn = acp.start(script.agent([steps]), "go", interaction=person, cwd=tmp_path)
    assert person.asked.wait(20)
    turn.cancel()
    result = turn.result(timeout=10)
    assert result.stop_reason == "interrupted"
    assert len(person.choices) == 1, "no field is asked after an interrupt"
    assert [(c.status, c.outcome) for c in result.calls] == [("failed", "interrupted")]
    assert all(e["answer"] == {"action": "cancel"} for e in script.events("elicitation"))


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "pattern": "^(a+)+$"},
        {"type": "string", "format": "no-such-format"},
        {"type": "object"},
    ],
    ids=["pattern", "format", "unknown-kind"],
)
def test_a_form_that_cannot_be_checked_is_declined_unasked(
    script: Script, tmp_path: Path, prop: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    person = Answers(Answered("aaa"))
    answered, result = ask(script, tmp_path, person, schema=form(f=prop))
    assert answered == {"action": "decline"}
    assert person.choices == []
    assert result.calls == []
    assert "cannot be asked here" in caplog.text


def test_a_form_without_fields_is_accepted_or_declined(script: Script, tmp_path: Path) -> None:
    answered, _ = ask(script, tmp_path, Answers(Picked("accept")), schema=form())
    assert answered == {"action": "accept", "content": {}}


# -- URLs ---------------------------------------------------------------------------------


URL = "https://auth.example.com/login?next=/done&x=<b>"


def test_a_url_is_shown_and_accepted_on_consent_opening_nothing(
    script: Script, tmp_path: Path
) -> None:
    person = Answers(Picked("open"))
    answered, result = ask(script, tmp_path, person, message="Sign in to Example", url=URL)
    assert answered == {"action": "accept"}
    [choice] = person.choices
    prompt = choice["prompt"]
    assert "scripted asks you to open a page" in prompt
    assert "Sign in to Example" in prompt
    assert "Host: auth.example.com" in prompt
    assert "URL: https://auth.example.com/login?next=/done&x=%3Cb%3E" in prompt
    assert "Nothing is opened from here" in prompt
    assert [o["id"] for o in choice["options"]] == ["open", "decline"]
    [record] = result.calls
    assert record.status == "completed"
    assert "open https://auth.example.com/login" in str(record.result)
    assert "yourself" in str(record.result)
    assert record.arguments["host"] == "auth.example.com"


@pytest.mark.parametrize(
    ("answer", "action"),
    [
        (Picked("decline"), "decline"),
        (Answered("sure, go ahead"), "decline"),
        (Unanswered("expired"), "cancel"),
        (Unanswered("no_answer"), "cancel"),
    ],
    ids=["refused", "words", "timeout", "nobody"],
)
def test_a_url_without_consent_is_declined_or_cancelled(
    script: Script, tmp_path: Path, answer: Any, action: str
) -> None:
    answered, _ = ask(script, tmp_path, Answers(answer), url=URL)
    assert answered == {"action": action}


def test_a_policy_never_consents_to_a_url(script: Script, tmp_path: Path) -> None:
    answered, _ = ask(script, tmp_path, AllowAll(), url=URL)
    assert answered == {"action": "cancel"}


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<script>alert(1)</script>",
        "http://example.com/login",
        "https://example.com@evil.example/login",
    ],
    ids=["javascript", "file", "data", "plain-http", "user-in-url"],
)
def test_a_url_that_is_not_https_is_declined_unasked(
    script: Script, tmp_path: Path, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    person = Answers(Picked("open"))
    answered, result = ask(script, tmp_path, person, url=url)
    assert answered == {"action": "decline"}
    assert person.choices == []
    assert result.calls == []
    assert "declined without asking" in caplog.text


def test_http_to_this_machine_is_asked(script: Script, tmp_path: Path) -> None:
    person = Answers(Picked("open"))
    answered, _ = ask(script, tmp_path, person, url="http://localhost:8765/callback")
    assert answered == {"action": "accept"}
    assert "Host: localhost" in person.choices[0]["prompt"]


def test_a_look_alike_host_is_shown_in_ascii(script: Script, tmp_path: Path) -> None:
    person = Answers(Unanswered("no_answer"))
    ask(script, tmp_path, person, url="https://\u0430pple.com/login")
    prompt = person.choices[0]["prompt"]
    assert "Host: xn--pple-43d.com" in prompt
    assert "URL: https://xn--pple-43d.com/login" in prompt
    assert "\u0430" not in prompt
    assert "may imitate another" in prompt


# -- permission requests that are questions -------------------------------------------------


def switch(**more: Any) -> dict[str, Any]:
    return {
        "call": {
            "id": "m1",
            "title": "Ready to code?",
            "kind": "switch_mode",
            "input": {"plan": "1. write it"},
            "ask": True,
            **more,
        }
    }


@pytest.mark.parametrize(
    "call",
    [switch(), switch(kind="other", meta={"claudeCode": {"toolName": "ExitPlanMode"}})],
    ids=["switch_mode", "ExitPlanMode"],
)
def test_a_mode_switch_is_never_allowed_by_a_policy(
    script: Script, tmp_path: Path, call: dict[str, Any]
) -> None:
    agent = script.agent([[{"mode": "default"}, call]])
    acp.run(agent, "go", interaction=AllowAll(), cwd=tmp_path)
    [event] = script.events("permission")
    assert (event["outcome"], event["option"]) == ("cancelled", None)


def test_a_mode_switch_is_the_persons_pick_of_the_agents_options(
    script: Script, tmp_path: Path
) -> None:
    person = Answers(Picked("never"))
    agent = script.agent([[{"mode": "default"}, switch()]])
    result = acp.run(agent, "go", interaction=person, cwd=tmp_path)
    [choice] = person.choices
    assert choice["prompt"] == "scripted asks: Ready to code?"
    assert [o["label"] for o in choice["options"]] == ["Allow", "Always allow", "Reject", "Never"]
    [event] = script.events("permission")
    assert event["option"] == "never"
    assert result.calls[0].status == "completed"


# -- Claude's AskUserQuestion: a question and its "Other" ------------------------------------

# What claude-agent-acp 0.101.0 sends for AskUserQuestion (askUserQuestionsToCreateRequest in
# its dist/elicitation.js, for a client that is not JetBrains AIR): each question a field
# `question_<n>` of choices, then its optional free-text "Other", `question_<n>_custom`.
ONE_QUESTION = {
    "message": "Which store should the cache use?",
    "schema": {
        "type": "object",
        "properties": {
            "question_0": {
                "type": "string",
                "title": "Storage",
                "oneOf": [
                    {"const": "Redis", "title": "Redis", "description": "In memory, fast"},
                    {"const": "Postgres", "title": "Postgres", "description": "On disk, durable"},
                ],
            },
            "question_0_custom": {
                "type": "string",
                "title": "Other",
                "description": (
                    "Type your own answer, or add a note to the option you chose above (optional)."
                ),
            },
        },
    },
}
TWO_QUESTIONS = {
    "message": "Please answer the following questions.",
    "schema": {
        "type": "object",
        "properties": {
            "question_0": {
                "type": "string",
                "title": "Storage",
                "description": "Which store should the cache use?",
                "oneOf": [
                    {"const": "Redis", "title": "Redis", "description": "In memory, fast"},
                    {"const": "Postgres", "title": "Postgres", "description": "On disk, durable"},
                ],
            },
            "question_0_custom": {
                "type": "string",
                "title": "Other",
                "description": (
                    "Type your own answer, or add a note to the option you chose above (optional)."
                ),
            },
            "question_1": {
                "type": "array",
                "title": "Editors",
                "description": "Which editors do you use?",
                "items": {
                    "anyOf": [
                        {"const": "Vim", "title": "Vim", "description": "modal"},
                        {"const": "Emacs", "title": "Emacs", "description": "extensible"},
                    ]
                },
            },
            "question_1_custom": {
                "type": "string",
                "title": "Other",
                "description": "Type your own answer to add to your selection above (optional).",
            },
        },
    },
}


def test_claudes_questions_are_one_card_each_with_its_other_on_it(
    script: Script, tmp_path: Path
) -> None:
    person = Answers(Picked("Redis"), Answered("Helix"))
    answered, result = ask(script, tmp_path, person, **TWO_QUESTIONS)
    assert answered == {
        "action": "accept",
        "content": {"question_0": "Redis", "question_1_custom": "Helix"},
    }
    first, second = person.choices
    assert [o["label"] for o in first["options"]] == ["Redis", "Postgres", "Leave empty"]
    assert [o["label"] for o in second["options"]] == ["Vim", "Emacs", "Leave empty"]
    assert second.get("multiple") is True
    assert first["prompt"].split("\n")[:2] == [
        "Please answer the following questions.",
        "Storage: Which store should the cache use?",
    ]
    assert (first.get("typed"), second.get("typed")) == ("other", "other")
    assert [(c.tool_call_id, c.status) for c in result.calls] == [
        ("question-1/question_0", "completed"),
        ("question-1/question_1", "completed"),
    ]
    assert result.calls[1].arguments["other"] == "question_1_custom"


@pytest.mark.parametrize(
    ("answer", "content"),
    [
        (Picked("Postgres"), {"question_0": "Postgres"}),
        (Answered("  Memcached "), {"question_0_custom": "Memcached"}),
        (Answered("Redis"), {"question_0_custom": "Redis"}),
        (Picked("mead-empty"), {}),
    ],
    ids=["option", "own-words", "own-words-naming-an-option", "skipped"],
)
def test_one_claude_question_takes_an_option_or_its_other(
    script: Script, tmp_path: Path, answer: Any, content: dict[str, Any]
) -> None:
    person = Answers(answer)
    answered, result = ask(script, tmp_path, person, **ONE_QUESTION)
    assert answered == {"action": "accept", "content": content}
    [choice] = person.choices
    assert choice["prompt"] == "Which store should the cache use?\n(optional)"
    assert [record.status for record in result.calls] == ["completed"]


def test_a_pick_that_is_no_option_of_a_claude_question_is_asked_again(
    script: Script, tmp_path: Path
) -> None:
    person = Answers(Picked("question_0_custom"), Picked("Redis"))
    answered, result = ask(script, tmp_path, person, **ONE_QUESTION)
    assert answered == {"action": "accept", "content": {"question_0": "Redis"}}
    assert [c.outcome for c in result.calls] == ["invalid_arguments", None]
    assert "Not sent:" in person.choices[1]["prompt"]


@pytest.mark.parametrize(
    "person",
    [Answers(Unanswered("expired")), AllowAll()],
    ids=["timeout", "policy"],
)
def test_nobody_answering_a_claude_question_cancels(
    script: Script, tmp_path: Path, person: Any
) -> None:
    answered, _ = ask(script, tmp_path, person, **TWO_QUESTIONS)
    assert answered == {"action": "cancel"}


def test_an_other_field_that_is_required_or_not_free_text_is_a_card_of_its_own(
    script: Script, tmp_path: Path
) -> None:
    """Only an optional free-text ``<name>_custom`` beside an optional field of choices is
    that field's "Other"."""
    properties = ONE_QUESTION["schema"]["properties"]  # type: ignore[index]
    required = {"type": "object", "properties": properties, "required": ["question_0_custom"]}
    person = Answers(Picked("Redis"), Answered("a note"))
    answered, _ = ask(script, tmp_path, person, schema=required)
    assert answered == {
        "action": "accept",
        "content": {"question_0": "Redis", "question_0_custom": "a note"},
    }
    assert len(person.choices) == 2
    assert person.choices[1].get("typed") == "answer"


# -- what an answer in words is --------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "typed"),
    [
        ({"type": "string"}, "answer"),
        ({"type": "integer"}, "answer"),
        ({"type": "number", "default": 2}, "answer"),
        (FRUIT, "other"),
        ({"type": "boolean"}, "other"),
        (SEVERAL, "other"),
    ],
    ids=["text", "integer", "number", "enum", "boolean", "multi-select"],
)
def test_a_field_asked_in_words_says_so(
    script: Script, tmp_path: Path, prop: dict[str, Any], typed: str
) -> None:
    person = Answers(Unanswered("no_answer"))
    ask(script, tmp_path, person, schema=form(f=prop))
    [choice] = person.choices
    assert choice.get("typed") == typed


@pytest.mark.parametrize(
    ("prop", "answer", "value"),
    [
        ({"type": "string", "enum": ["decline", "keep"]}, Picked("decline"), "decline"),
        ({"type": "string", "enum": ["empty", "full"]}, Answered("empty"), "empty"),
        ({"type": "string"}, Answered("decline"), "decline"),
        ({"type": "string"}, Answered("empty"), "empty"),
    ],
    ids=["option-decline", "option-empty", "words-decline", "words-empty"],
)
def test_a_value_that_reads_like_decline_or_empty_is_that_value(
    script: Script, tmp_path: Path, prop: dict[str, Any], answer: Any, value: str
) -> None:
    person = Answers(answer)
    schema = {**form(f=prop), "required": ["f"]}
    answered, _ = ask(script, tmp_path, person, schema=schema)
    assert answered == {"action": "accept", "content": {"f": value}}
