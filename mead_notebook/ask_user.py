"""The built-in ``ask_user`` tool: a multiple-choice question put to the person.

It is reported like any other call (``pending``, then ``completed`` with the
answer or ``failed`` with outcome ``no_answer``, ``expired`` or
``interrupted``), but instead of ``request_permission`` its question goes to
``ask_choice``: asking is what it does. The model receives JSON: ``{"option_id",
"label"}`` for one option, ``{"option_ids", "labels"}`` when ``multiple`` is
true, ``{"answer": text}`` for the person's own words ("Other").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .driver import TurnDriver
from .interaction import Answered, Choice, Option, Picked, Unanswered
from .model import ToolSpec
from .turn import CallRecord

__all__ = ["ASK_USER", "ASK_USER_SPEC", "Settled", "ask", "parse_choice", "settle"]

ASK_USER = "ask_user"
SERVER = "local"
ASK_USER_SPEC = ToolSpec(
    name=ASK_USER,
    description=(
        "Ask the user a multiple-choice question and wait for the answer. "
        "Use it when you need the user to decide between a few options. "
        "The user may also answer in their own words."
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
            "multiple": {
                "type": "boolean",
                "description": "Whether the user may pick several options (default false).",
            },
        },
        "required": ["prompt", "options"],
    },
)


@dataclass(frozen=True)
class Settled:
    """How one question was settled.

    ``text`` is what the model receives (the answer as JSON, or why there is
    none); ``option_ids`` the options picked, in order; ``own_words`` the
    person's own answer ("Other"). ``answered`` is false when there is no valid
    answer (the call has then ended ``failed``).
    """

    text: str
    answered: bool
    option_ids: tuple[str, ...] = ()
    own_words: str | None = None


def ask(driver: TurnDriver, tool_call_id: str, arguments: object) -> tuple[str, bool]:
    """Run one ``ask_user`` call through ``driver``; return (what the model receives, is_error)."""
    given = arguments if isinstance(arguments, dict) else {}
    record = driver.begin(tool_call_id, ASK_USER, SERVER, "read", given)
    try:
        choice = parse_choice(record.tool_call_id, arguments)
    except ValueError as exc:
        message = f"Invalid ask_user arguments: {exc}"
        driver.fail(record, "invalid_arguments", message)
        return message, True
    settled = settle(driver, record, choice)
    return settled.text, not settled.answered


def settle(driver: TurnDriver, record: CallRecord, choice: Choice) -> Settled:
    """Put ``choice`` to ``ask_choice`` and end ``record`` with the answer.

    The one path every question takes (``ask_user``, and a framework's own
    questions through its adapter): picked options, several of a ``multiple``
    choice, or the person's own words complete the call; anything else fails it
    (``no_answer``, or the reason given).
    """
    if choice["tool_call_id"] == record.source_id:
        choice = {**choice, "tool_call_id": record.tool_call_id}
    answer = driver.choice(choice)
    result = _result(choice, answer)
    if result is not None:
        driver.complete(record, result)
        if isinstance(answer, Answered):
            return Settled(result, True, own_words=answer.text)
        ids = answer.option_ids if isinstance(answer, Picked) else ()
        return Settled(result, True, option_ids=ids)
    reason = answer.reason if isinstance(answer, Unanswered) else "no_answer"
    message = f"The user gave no answer ({reason})."
    driver.fail(record, reason, message)
    return Settled(message, False)


def _result(choice: Choice, answer: object) -> str | None:
    """What the model receives for a valid answer, or None for no (valid) answer."""
    if isinstance(answer, Answered) and answer.text.strip():
        return json.dumps({"answer": answer.text}, ensure_ascii=False)
    if not isinstance(answer, Picked):
        return None
    labels = {o["id"]: o["label"] for o in choice["options"]}
    ids = answer.option_ids
    if not all(i in labels for i in ids) or len(set(ids)) != len(ids):
        return None
    if choice.get("multiple"):
        picked = {"option_ids": list(ids), "labels": [labels[i] for i in ids]}
        return json.dumps(picked, ensure_ascii=False)
    if len(ids) != 1:
        return None
    return json.dumps({"option_id": ids[0], "label": labels[ids[0]]}, ensure_ascii=False)


def parse_choice(tool_call_id: str, arguments: object) -> Choice:
    """The question in ``ask_user``'s arguments; ``ValueError`` says what is wrong."""
    if not isinstance(arguments, dict):
        raise ValueError("arguments must be an object with prompt and options")
    prompt: Any = arguments.get("prompt")
    options: Any = arguments.get("options")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("prompt must be a non-empty string")
    if not isinstance(options, list) or not options:
        raise ValueError("options must be a non-empty list of {id, label}")
    parsed: list[Option] = []
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
        parsed.append(Option(id=oid, label=label))
    multiple = arguments.get("multiple", False)
    if not isinstance(multiple, bool):
        raise ValueError("multiple must be true or false")
    choice = Choice(tool_call_id=tool_call_id, prompt=prompt, options=parsed)
    if multiple:
        choice["multiple"] = True
    return choice
