"""A framework's own questions to the person, put through ``ask_choice``; result text."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mead_notebook import Choice, Picked, Unanswered
from mead_notebook.ask_user import parse_choice

from ._session import Session

__all__ = ["as_text", "ask", "choice_from"]

_PROMPT_KEYS = ("prompt", "question", "description", "message")
_OPTION_KEYS = ("options", "choices")


def choice_from(tool_call_id: str, value: object) -> tuple[Choice, dict[str, Any]] | None:
    """The multiple-choice question a framework's value offers, if it offers one.

    ``value`` is a mapping with a prompt (``prompt``, ``question``, ``description``
    or ``message``) and ``options`` (or ``choices``): strings, or mappings with an
    ``id`` (or ``value``) and a ``label``. Returns the question and, by option id,
    the value to answer with (the string itself, or the mapping's ``value``/``id``).
    """
    if not isinstance(value, Mapping):
        return None
    prompt = next((value[k] for k in _PROMPT_KEYS if isinstance(value.get(k), str)), None)
    items = next((value[k] for k in _OPTION_KEYS if isinstance(value.get(k), list)), None)
    if prompt is None or not items:
        return None
    options: list[dict[str, str]] = []
    answers: dict[str, Any] = {}
    for item in items:
        if isinstance(item, str):
            option_id, label, answer = item, item, item
        elif isinstance(item, Mapping):
            key = item.get("id", item.get("value"))
            if key is None:
                return None
            option_id = str(key)
            label = str(item.get("label", option_id))
            answer = item.get("value", key)
        else:
            return None
        options.append({"id": option_id, "label": label})
        answers[option_id] = answer
    try:
        return parse_choice(tool_call_id, {"prompt": prompt, "options": options}), answers
    except ValueError:
        return None


def ask(
    session: Session, choice: Choice, tool: str, server: str, arguments: Any
) -> tuple[str | None, str]:
    """Put ``choice`` to the person as one call (on the callback thread).

    Returns the picked option id (``None`` when unanswered) and the text a model
    would be told: the picked option as JSON, or why there is no answer.
    """
    tool_call_id = choice["tool_call_id"]
    record = session.record(tool_call_id) or session.begin(
        tool_call_id, tool, server, "read", arguments
    )
    answer = session.driver.choice(choice)
    labels = {o["id"]: o["label"] for o in choice["options"]}
    if isinstance(answer, Picked) and answer.option_id in labels:
        text = json.dumps(
            {"option_id": answer.option_id, "label": labels[answer.option_id]}, ensure_ascii=False
        )
        session.driver.complete(record, text)
        return answer.option_id, text
    reason = answer.reason if isinstance(answer, Unanswered) else "no_answer"
    message = f"The user gave no answer ({reason})."
    session.driver.fail(record, reason, message)
    return None, message


def as_text(value: object) -> str:
    """A tool's result as the text a card shows."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)
