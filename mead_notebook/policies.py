"""Policies: rules that stand in for a person.

A policy is any object with ``decide(request) -> Allow | Deny | None`` (the
:class:`~mead_notebook.Policy` protocol). ``NotebookInteraction`` takes
one as ``policy=`` (settle what it has a rule for, ask the person the rest) and
as ``fallback=`` (decide when nobody is there; ``None`` denies). The classes
here are also complete interactions: standing alone, a request without a rule is
denied and questions go unanswered (``no_answer``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

from . import interaction
from .calls import Call
from .interaction import Allow, Answered, Choice, Deny, Picked, Request, Unanswered, Update
from .testing import Recorded, Recording

__all__ = [
    "AllowAll",
    "AllowList",
    "AllowReads",
    "DenyAll",
    "PolicyInteraction",
    "Recorded",
    "Recording",
]


class PolicyInteraction(interaction.Policy):
    """A policy that is also a complete interaction: subclass it and override ``decide``."""

    def decide(self, request: Request) -> Allow | Deny | None:
        """The decision for ``request``, or ``None`` when the rule has none."""
        return None

    def request_permission(self, context: Any, request: Request) -> Allow | Deny:
        decision = self.decide(request)
        return Deny("rejected") if decision is None else decision

    def tool_updated(self, context: Any, update: Update) -> None:
        return None

    def register_call(self, context: Any, tool_call_id: str, call: Call) -> None:
        return None

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Answered | Unanswered:
        return Unanswered("no_answer")

    def text_delta(self, context: Any, text: str) -> None:
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class AllowAll(PolicyInteraction):
    """Allow every call."""

    def decide(self, request: Request) -> Allow:
        return Allow()


class DenyAll(PolicyInteraction):
    """Deny every call."""

    def decide(self, request: Request) -> Deny:
        return Deny("rejected")


class AllowReads(PolicyInteraction):
    """Allow calls of class ``read``; anything else has no rule (denied when standing alone)."""

    def decide(self, request: Request) -> Allow | None:
        return Allow() if request["class"] == "read" else None


class AllowList(PolicyInteraction):
    """Allow the listed tools and every tool of the listed servers; nothing else."""

    def __init__(self, tools: Iterable[str] = (), servers: Iterable[str] = ()) -> None:
        self.tools = frozenset(tools)
        self.servers = frozenset(servers)

    def decide(self, request: Request) -> Allow | None:
        if request["tool"] in self.tools or request["server"] in self.servers:
            return Allow()
        return None

    def __repr__(self) -> str:
        return f"AllowList(tools={sorted(self.tools)}, servers={sorted(self.servers)})"


def __getattr__(name: str) -> Any:
    if name == "Policy":
        warnings.warn(
            "mead_notebook.policies.Policy is now PolicyInteraction "
            "(mead_notebook.Policy is the protocol every policy fits)",
            DeprecationWarning,
            stacklevel=2,
        )
        return PolicyInteraction
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
