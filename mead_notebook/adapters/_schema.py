"""Arguments checked against a tool's JSON schema, with the reason the model is told."""

from __future__ import annotations

import json
from typing import Any

import jsonschema

__all__ = ["check", "parse"]


def parse(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """The arguments a model sent as JSON text, or why they are not a JSON object."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        return None, f"the arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return None, "the arguments are not a JSON object"
    return value, None


def check(arguments: dict[str, Any], schema: dict[str, Any] | None) -> str | None:
    """Why ``arguments`` break ``schema`` (the first error, with its path), or None."""
    if not schema:
        return None
    try:
        validator = jsonschema.validators.validator_for(schema)(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    except jsonschema.exceptions.SchemaError:
        return None
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{error.message} (at {where})" if where else error.message
