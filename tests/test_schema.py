"""One checker for every tool's arguments: one message format; an invalid schema fails closed."""

from __future__ import annotations

from typing import Any

import pytest

from mead_notebook.schema import check, parse

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "width": {"type": "integer"}},
    "required": ["path"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"path": "a.png"}, None),
        ({"path": "a.png", "width": "wide"}, "width: 'wide' is not of type 'integer'"),
        ({}, "'path' is a required property"),
        ({"path": "a", "rm": True}, "Additional properties are not allowed ('rm' was unexpected)"),
        (["path"], "the arguments must be an object, not list"),
    ],
)
def test_one_message_format(arguments: Any, problem: str | None) -> None:
    assert check(arguments, SCHEMA) == problem


def test_an_invalid_schema_lets_nothing_through() -> None:
    problem = check({"path": "a"}, {"type": "object", "properties": {"path": {"type": 5}}})
    assert problem is not None
    assert problem.startswith("the tool's schema cannot be checked")


def test_no_schema_checks_only_that_it_is_an_object() -> None:
    assert check({"anything": 1}, None) is None
    assert check("text", None) == "the arguments must be an object, not str"


def test_the_models_json_text() -> None:
    assert parse('{"a": 1}') == ({"a": 1}, None)
    assert parse("") == ({}, None)
    assert parse("[1]") == (None, "the arguments are not a JSON object")
    assert parse("{")[1] is not None
