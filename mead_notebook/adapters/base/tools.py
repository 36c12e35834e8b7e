"""What every adapter declares the same way: its extra, the ask_user tool, a tool's kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast, get_args

from pydantic import BaseModel

from mead_notebook.interaction import ToolKind, kind_of_class

__all__ = ["ASK_USER_MARK", "AskUserOption", "ask_user_arguments", "declared_kind", "missing_extra"]

ASK_USER_MARK = "mead_ask_user"
"""The metadata key of a framework's ``ask_user`` tool, whose question the adapter asks itself."""

_KINDS: frozenset[str] = frozenset(get_args(ToolKind))


class AskUserOption(BaseModel):
    """One option of an ``ask_user`` question, as a framework's tool takes it."""

    id: str
    label: str


def ask_user_arguments(
    prompt: str, options: list[AskUserOption], multiple: bool = False
) -> dict[str, Any]:
    """The arguments of ``ask_user`` (``mead_notebook.ask_user.parse_choice`` reads them)."""
    arguments: dict[str, Any] = {"prompt": prompt, "options": [o.model_dump() for o in options]}
    if multiple:
        arguments["multiple"] = True
    return arguments


def declared_kind(metadata: Mapping[str, Any] | None) -> ToolKind:
    """A tool's kind from its metadata: ``kind`` if it names one, else ``read`` for ``read_only``.

    A tool that declares neither is ``other`` (class ``effect``).
    """
    given = (metadata or {}).get("kind")
    if isinstance(given, str) and given in _KINDS:
        return cast(ToolKind, given)
    return kind_of_class("read" if (metadata or {}).get("read_only") is True else "effect")


def missing_extra(module: str, extra: str) -> str:
    """The message of an adapter imported without its framework."""
    return (
        f"mead_notebook.adapters.{module} needs its framework: pip install 'mead-notebook[{extra}]'"
    )
