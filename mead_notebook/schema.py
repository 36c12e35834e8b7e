"""A tool's arguments checked against its JSON schema: one checker, one way to say why not.

Every source checks with :func:`check` (the model's arguments before anyone is
asked, the person's edited arguments before the tool runs), so a card, the
model and an error all read the same: ``path: message`` for the error that
best explains the rest (``jsonschema.exceptions.best_match``), the message
alone at the top level. A schema that is itself invalid fails closed: nothing
can be checked against it, so nothing passes.

``jsonschema`` is imported on the first check, not with this module: its import
builds a grammar for IRIs when ``rfc3987-syntax`` is installed (as Jupyter's own
dependencies install it), a second or more that a notebook importing the widget
would otherwise wait for. :func:`warm` imports it in the background once a person
is asked, so that their edited arguments are not checked after that wait either.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["check", "parse", "schema_problem", "warm"]

_warming: threading.Thread | None = None
_warming_lock = threading.Lock()


def warm() -> threading.Thread:
    """Import ``jsonschema`` in a thread of its own (once per process); that thread."""
    global _warming
    with _warming_lock:
        if _warming is None:
            _warming = threading.Thread(target=_import, name="mead-jsonschema-import", daemon=True)
            _warming.start()
        return _warming


def _import() -> None:
    try:
        import jsonschema  # noqa: F401
    except Exception:  # the first check raises it again, where it is reported
        log.debug("jsonschema could not be imported ahead of a check", exc_info=True)


def _validator_class(schema: dict[str, Any]) -> type[jsonschema.protocols.Validator]:
    import jsonschema

    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` is not a JSON schema arguments can be checked against, or None."""
    import jsonschema

    cls = _validator_class(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        return f"the tool's schema cannot be checked: {exc.message}"
    return None


def check(arguments: Any, schema: dict[str, Any] | None) -> str | None:
    """Why ``arguments`` break ``schema``, or None when they fit (or there is no schema)."""
    if not isinstance(arguments, dict):
        return f"the arguments must be an object, not {type(arguments).__name__}"
    if not schema:
        return None
    problem = schema_problem(schema)
    if problem is not None:
        return problem
    import jsonschema

    error = jsonschema.exceptions.best_match(
        _validator_class(schema)(schema).iter_errors(arguments)
    )
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def parse(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """The arguments a model sent as JSON text, or why they are not a JSON object."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        return None, f"the arguments are not valid JSON ({exc})"
    if not isinstance(value, dict):
        return None, "the arguments are not a JSON object"
    return value, None
