"""ACP elicitations as the person's questions: a form's fields, a URL, and what is sent back.

A form becomes one multiple-choice question per field, in order. A field of
choices (``enum``/``oneOf``, a multi-select, a boolean) offers them; a typed
field (free text, a number) is answered in the person's own words. An optional
field of choices ``<name>`` beside an optional free-text field
``<name>_custom`` (claude-agent-acp's ``AskUserQuestion``: ``question_<n>`` and
its "Other", ``question_<n>_custom``) is one question: its options, and the
person's own words, which fill the free-text field instead. Every
answer is checked against its field's schema (``jsonschema``, formats
included) before anything is sent: an answer that does not fit is asked
again. An optional field offers "Leave empty"; a typed field offers its
default and "Decline". A form this client cannot check (a ``pattern``, whose
check could run without bound, a format it cannot check, a kind of field ACP
does not define) is declined without asking.

A URL is never opened from here: its question shows the URL's host in ASCII
(IDNA), the whole URL as text, and asks for the person's consent to open it
themselves. Only ``https`` (or ``http`` to this machine) is asked at all.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Literal

from acp.schema import (
    ElicitationBooleanPropertySchema,
    ElicitationIntegerPropertySchema,
    ElicitationMultiSelectPropertySchema,
    ElicitationNumberPropertySchema,
    ElicitationSchema,
    ElicitationStringPropertySchema,
    StringMultiSelectItems,
    TitledMultiSelectItems,
)

from mead_notebook.interaction import Answered, Choice, Option, Picked, TypedAnswer

if TYPE_CHECKING:
    import jsonschema
    from pydantic import AnyUrl

__all__ = [
    "DECLINE",
    "DEFAULT",
    "EMPTY",
    "MAX_TRIES",
    "OTHER_SUFFIX",
    "Field",
    "FieldKind",
    "Special",
    "check_form",
    "entries_of",
    "fields_of",
    "refused_url",
    "url_prompt",
    "value_of",
]

MAX_TRIES: Final = 3
"""How many answers one field gets before the form is cancelled."""

OTHER_SUFFIX: Final = "_custom"
"""The key suffix of the free-text "Other" field beside a field of choices."""


class Special(enum.Enum):
    """An answer that is no value of its field (never equal to one a form allows)."""

    EMPTY = "empty"
    DEFAULT = "default"
    DECLINE = "decline"


EMPTY: Final = Special.EMPTY
DEFAULT: Final = Special.DEFAULT
DECLINE: Final = Special.DECLINE
_SPECIAL_IDS: Final[dict[str, Special]] = {
    "mead-empty": EMPTY,
    "mead-default": DEFAULT,
    "mead-decline": DECLINE,
}
_SPECIAL_LABELS: Final[dict[Special, str]] = {
    EMPTY: "Leave empty",
    DEFAULT: "Use the default",
    DECLINE: "Decline (send nothing back)",
}
_TRUE = frozenset({"yes", "y", "true"})
_FALSE = frozenset({"no", "n", "false"})
LOOPBACK: Final = frozenset({"localhost", "127.0.0.1", "[::1]"})
"""The hosts a URL may reach over plain ``http``."""

FieldKind = Literal["choice", "boolean", "text", "number", "integer"]


@dataclass(frozen=True)
class Field:
    """One field of a form, as the question that asks it."""

    name: str
    kind: FieldKind
    choice: Choice
    values: dict[str, Any]
    """Option id -> the value it stands for (the special options are not here)."""
    schema: dict[str, Any]
    """The field's own JSON schema, which every answer must fit."""
    required: bool
    default: Any = None
    other: Field | None = None
    """The free-text field the person's own words fill, when this field has one."""

    @property
    def multiple(self) -> bool:
        return bool(self.choice.get("multiple"))


def _validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    import jsonschema

    cls = jsonschema.Draft202012Validator
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _problem(value: Any, schema: dict[str, Any]) -> str | None:
    import jsonschema

    error = jsonschema.exceptions.best_match(_validator(schema).iter_errors(value))
    return None if error is None else error.message


def check_form(content: dict[str, Any], schema: ElicitationSchema) -> str | None:
    """Why ``content`` does not fit the whole form, or None."""
    return _problem(content, _dumped(schema))


def _dumped(model: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


def _uncheckable(name: str, prop: Any) -> str | None:
    """Why a field cannot be asked here, or None."""
    if getattr(prop, "pattern", None) is not None:
        return f"field {name!r} has a pattern, which cannot be checked here with a bound on time"
    fmt = getattr(prop, "format", None)
    if fmt is not None:
        import jsonschema

        if fmt not in jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers:
            return f"field {name!r} has the format {fmt!r}, which cannot be checked here"
    return None


def fields_of(question_id: str, message: str, schema: ElicitationSchema) -> list[Field] | str:
    """A question per field of ``schema``, in order (a field's "Other" asked on that field's
    card); or why the form cannot be asked."""
    properties = schema.properties or {}
    required = set(schema.required or [])
    unknown = required - set(properties)
    if unknown:
        return f"the form requires fields it does not define: {', '.join(sorted(unknown))}"
    for name, prop in properties.items():
        why = _uncheckable(name, prop)
        if why is not None:
            return why
    others = _others(properties, required)
    several = len(properties) - len(others) > 1
    found: list[Field] = []
    for name, prop in properties.items():
        if name in others.values():
            continue  # asked on the card of its field of choices
        field = _field(question_id, message, name, prop, name in required, several)
        if field is None:
            kind = getattr(prop, "type", "?")
            return f"field {name!r} is of a kind ACP does not define ({kind!r})"
        if name in others:
            other = others[name]
            words = _field(question_id, message, other, properties[other], False, several)
            field = replace(field, other=words)
        found.append(field)
    return found


def _others(properties: dict[str, Any], required: set[str]) -> dict[str, str]:
    """Each optional field of choices that has an optional free-text ``<name>_custom`` beside
    it, by name: the name of that "Other" field."""
    found: dict[str, str] = {}
    for name, prop in properties.items():
        other = name + OTHER_SUFFIX
        if name in required or other in required or other not in properties:
            continue
        words = properties[other]
        free = isinstance(words, ElicitationStringPropertySchema) and not (
            words.one_of or words.enum
        )
        chosen = isinstance(prop, ElicitationMultiSelectPropertySchema) or (
            isinstance(prop, ElicitationStringPropertySchema) and bool(prop.one_of or prop.enum)
        )
        if free and chosen:
            found[name] = other
    return found


def _field(
    question_id: str, message: str, name: str, prop: Any, required: bool, several: bool
) -> Field | None:
    pairs: list[tuple[Any, str]] = []
    kind: FieldKind
    multiple = False
    if isinstance(prop, ElicitationStringPropertySchema) and (prop.one_of or prop.enum):
        kind = "choice"
        pairs = [(o.const, o.title) for o in prop.one_of or []]
        pairs += [(v, v) for v in prop.enum or []]
    elif isinstance(prop, ElicitationMultiSelectPropertySchema):
        kind, multiple = "choice", True
        if isinstance(prop.items, TitledMultiSelectItems):
            pairs = [(o.const, o.title) for o in prop.items.any_of]
        elif isinstance(prop.items, StringMultiSelectItems):
            pairs = [(v, v) for v in prop.items.enum]
        else:
            return None
    elif isinstance(prop, ElicitationBooleanPropertySchema):
        kind, pairs = "boolean", [(True, "Yes"), (False, "No")]
    elif isinstance(prop, ElicitationStringPropertySchema):
        kind = "text"
    elif isinstance(prop, ElicitationIntegerPropertySchema):
        kind = "integer"
    elif isinstance(prop, ElicitationNumberPropertySchema):
        kind = "number"
    else:
        return None
    default = prop.default
    options, values = _options(pairs, default, multiple)
    typed = kind in ("text", "number", "integer")
    if typed and default is not None:
        options.append(Option(id="mead-default", label=f"Use the default: {_shown(default)}"))
    if not required:
        options.append(Option(id="mead-empty", label=_SPECIAL_LABELS[EMPTY]))
    if typed:
        options.append(Option(id="mead-decline", label=_SPECIAL_LABELS[DECLINE]))
    in_words: TypedAnswer = "answer" if typed else "other"
    choice = Choice(
        tool_call_id=f"{question_id}/{name}",
        prompt=_prompt(message, name, prop, kind, required, several),
        options=options,
        typed=in_words,
    )
    if multiple:
        choice["multiple"] = True
    return Field(name, kind, choice, values, _dumped(prop), required, default)


def _options(
    pairs: list[tuple[Any, str]], default: Any, multiple: bool
) -> tuple[list[Option], dict[str, Any]]:
    """The options of a field's values: ids are the values, unless one cannot be an id."""
    texts = [v if isinstance(v, str) else ("yes" if v else "no") for v, _ in pairs]
    plain = len(set(texts)) == len(texts) and not any(t in _SPECIAL_IDS or not t for t in texts)
    ids = texts if plain else [f"option-{i + 1}" for i in range(len(pairs))]
    defaults = default if multiple and isinstance(default, list) else [default]
    options = [
        Option(id=i, label=f"{label} (default)" if value in defaults else label)
        for i, (value, label) in zip(ids, pairs, strict=True)
    ]
    return options, {i: value for i, (value, _) in zip(ids, pairs, strict=True)}


def _prompt(
    message: str, name: str, prop: Any, kind: FieldKind, required: bool, several: bool
) -> str:
    lines = [message]
    title = prop.title or name
    about = f"{title}: {prop.description}" if prop.description else title
    if several:
        lines.append(about)
    elif prop.description:
        lines.append(prop.description)
    hint = _hint(prop, kind)
    if hint:
        lines.append(f"Type your answer as your own words: {hint}.")
    if not required:
        lines.append("(optional)")
    return "\n".join(lines)


def _hint(prop: Any, kind: FieldKind) -> str:
    """What a typed answer must be, in words."""
    if kind == "text":
        parts = ["text"]
        low, high = prop.min_length, prop.max_length
        if low is not None and high is not None:
            parts.append(f"of {low} to {high} characters")
        elif low is not None:
            parts.append(f"of at least {low} characters")
        elif high is not None:
            parts.append(f"of at most {high} characters")
        if prop.format:
            parts.append(f"in the format {prop.format}")
        return " ".join(parts)
    if kind in ("number", "integer"):
        what = "a whole number" if kind == "integer" else "a number"
        low, high = prop.minimum, prop.maximum
        if low is not None and high is not None:
            return f"{what} from {_shown(low)} to {_shown(high)}"
        if low is not None:
            return f"{what} of at least {_shown(low)}"
        if high is not None:
            return f"{what} of at most {_shown(high)}"
        return what
    return ""


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# -- answers ------------------------------------------------------------------------------


def entries_of(
    field: Field, answer: Picked | Answered
) -> tuple[dict[str, Any] | Special | None, str | None]:
    """What an answer puts in the form (``{name: value}``; the person's own words on a
    field with an "Other": ``{other: text}``), a :class:`Special`, or why it does not fit."""
    if field.other is not None and isinstance(answer, Answered):
        text = answer.text.strip()
        if not text:
            return None, "the answer is empty"
        problem = _problem(text, field.other.schema)
        return (None, problem) if problem is not None else ({field.other.name: text}, None)
    value, problem = value_of(field, answer)
    if problem is not None:
        return None, problem
    return value if isinstance(value, Special) else {field.name: value}, None


def value_of(field: Field, answer: Picked | Answered) -> tuple[Any, str | None]:
    """The value an answer gives the field (or a :class:`Special`), or why it does not fit."""
    if isinstance(answer, Picked):
        ids = answer.option_ids
        specials = [_SPECIAL_IDS[i] for i in ids if i in _SPECIAL_IDS]
        if specials:
            if len(ids) != 1:
                return None, f"{_SPECIAL_LABELS[specials[0]]!r} is an answer of its own"
            special = specials[0]
            if special == EMPTY and field.required:
                return None, "this field is required"
            if special == DEFAULT and field.default is None:
                return None, "this field has no default"
            return (field.default if special == DEFAULT else special), None
        if not ids or len(set(ids)) != len(ids) or not all(i in field.values for i in ids):
            return None, "that is not one of the options"
        if not field.multiple and len(ids) != 1:
            return None, "pick one option"
        value: Any = [field.values[i] for i in ids] if field.multiple else field.values[ids[0]]
    else:
        value, problem = _typed(field, answer.text.strip())
        if problem is not None:
            return None, problem
    problem = _problem(value, field.schema)
    return (None, problem) if problem is not None else (value, None)


def _typed(field: Field, text: str) -> tuple[Any, str | None]:
    """The value of an answer typed in the person's own words."""
    if not text:
        return None, "the answer is empty"
    if field.kind == "text":
        return text, None
    if field.kind in ("number", "integer"):
        return _number(text, field.kind == "integer")
    if field.kind == "boolean":
        if text.lower() in _TRUE:
            return True, None
        if text.lower() in _FALSE:
            return False, None
        return None, f"{text!r} is not yes or no"
    one = _option_named(field, text)
    if one is not None:
        return ([one[0]] if field.multiple else one[0]), None
    if not field.multiple:
        return None, f"{text!r} is not one of the options"
    picked = [_option_named(field, part.strip()) for part in text.split(",")]
    if not all(picked):
        return None, f"{text!r} does not name options, separated by commas"
    return [p[0] for p in picked if p is not None], None


def _option_named(field: Field, text: str) -> tuple[Any] | None:
    """The value of the option whose value or label is ``text`` (case aside)."""
    wanted = text.casefold()
    for option in field.choice["options"]:
        value = field.values.get(option["id"])
        if option["id"] not in field.values:
            continue
        label = option["label"].removesuffix(" (default)")
        if wanted in (str(value).casefold(), label.casefold()):
            return (value,)
    return None


def _number(text: str, integer: bool) -> tuple[Any, str | None]:
    try:
        return int(text), None
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None, f"{text!r} is not {'a whole number' if integer else 'a number'}"
    if not math.isfinite(number):
        return None, f"{text!r} is not a finite number"
    if integer:
        if not number.is_integer():
            return None, f"{text!r} is not a whole number"
        return int(number), None
    return number, None


# -- URLs ---------------------------------------------------------------------------------


def refused_url(url: AnyUrl) -> str | None:
    """Why a URL is declined without asking anyone, or None."""
    if url.scheme == "http" and url.host in LOOPBACK:
        return None
    if url.scheme != "https":
        return f"its scheme is {url.scheme!r}, not https"
    if not url.host:
        return "it names no host"
    if url.username is not None or url.password is not None:
        return "it carries a user name or password before its host"
    return None


def url_prompt(who: str, message: str, url: AnyUrl) -> str:
    """The question a URL elicitation asks: the host, the whole URL, and that nothing opens."""
    host = str(url.host)
    lines = [
        f"{who} asks you to open a page outside the notebook.",
        message,
        f"Host: {host}",
    ]
    if any(label.startswith("xn--") for label in host.split(".")):
        lines.append("(an internationalised name, in its ASCII form: it may imitate another)")
    lines += [
        f"URL: {url}",
        "Nothing is opened from here: if you agree, open it yourself.",
    ]
    return "\n".join(lines)
