"""Remembered decisions: "Allow always" for one tool, one server, or every read tool.

A rule only ever allows, and only as wide as the person chose; there is no rule
that allows everything. ``class`` rules exist for ``read`` alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jsonschema

from ..interaction import Request
from .protocol import Scope

__all__ = ["Rule", "check_arguments", "rule_for", "scopes_for"]


@dataclass(frozen=True)
class Rule:
    """Allow every request whose ``scope`` (tool, server or class) is ``value``."""

    scope: Scope
    value: str

    def __str__(self) -> str:
        return f"{self.scope} {self.value}"

    def matches(self, request: Request) -> bool:
        """Whether this rule answers ``request``."""
        field = "class" if self.scope == "class" else self.scope
        return str(request.get(field, "")) == self.value


def scopes_for(request: Request) -> list[Scope]:
    """The scopes "Allow always" may take for ``request``."""
    scopes: list[Scope] = ["tool"]
    if request.get("server"):
        scopes.append("server")
    if request.get("class") == "read":
        scopes.append("class")
    return scopes


def rule_for(request: Request, scope: Scope) -> Rule | None:
    """The rule of ``scope`` made from ``request``, or None if that scope is not offered."""
    if scope not in scopes_for(request):
        return None
    field = "class" if scope == "class" else scope
    return Rule(scope, str(request.get(field, "")))


def check_arguments(schema: dict[str, Any] | None, arguments: dict[str, Any]) -> str | None:
    """Why ``arguments`` break ``schema``, or None when they fit (or there is no schema)."""
    if schema is None:
        return None
    try:
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(schema).iter_errors(arguments)
        )
    except jsonschema.exceptions.SchemaError as exc:
        return f"the tool's schema cannot be checked: {exc.message}"
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message
