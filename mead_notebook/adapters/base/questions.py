"""A framework's own questions, offered as a multiple choice and answered in its own form."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mead_notebook.ask_user import Settled, parse_choice
from mead_notebook.interaction import Choice

__all__ = ["NO_ANSWER", "FrameworkQuestion", "question_from"]

NO_ANSWER: Any = object()
"""What :meth:`FrameworkQuestion.value` gives for a question nobody answered."""

_PROMPT_KEYS = ("prompt", "question", "description", "message")
_OPTION_KEYS = ("options", "choices")


@dataclass(frozen=True)
class FrameworkQuestion:
    """A question a framework asks, as the ``choice`` put to the person.

    ``values`` maps each option id to what the framework is answered with when
    that option is picked.
    """

    choice: Choice
    values: Mapping[str, Any]

    def value(self, settled: Settled) -> Any:
        """The framework's answer: the picked option's value, a list of them for a
        ``multiple`` choice, the person's own words as a string; ``NO_ANSWER`` for none.
        """
        if not settled.answered:
            return NO_ANSWER
        if settled.own_words is not None:
            return settled.own_words
        picked = [self.values[i] for i in settled.option_ids]
        return picked if self.choice.get("multiple") else picked[0]


def question_from(tool_call_id: str, value: object) -> FrameworkQuestion | None:
    """The multiple-choice question a framework's value offers, if it offers one.

    ``value`` is a mapping with a prompt (``prompt``, ``question``, ``description``
    or ``message``), ``options`` (or ``choices``): strings, or mappings with an
    ``id`` (or ``value``) and a ``label``; and optionally ``multiple: true``. An
    option answers with the string itself, or the mapping's ``value`` (else ``id``).
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
    arguments: dict[str, Any] = {"prompt": prompt, "options": options}
    if value.get("multiple") is True:
        arguments["multiple"] = True
    try:
        return FrameworkQuestion(parse_choice(tool_call_id, arguments), answers)
    except ValueError:
        return None
