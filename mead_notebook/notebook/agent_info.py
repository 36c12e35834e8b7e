"""The agent that runs a turn, in words: the header's line and the count of the calls it ran
under its own rules (``js/src/agent.js`` says the same in the live view)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

from ..interaction import AgentInfo

__all__ = ["FIELDS", "agent_of", "agent_text", "ran_by_agent", "ran_by_agent_text"]

FIELDS: Final = ("agent", "mode", "sandbox", "settings", "model")
"""The fields of :class:`~mead_notebook.interaction.AgentInfo` a view shows, in order."""
MAX_CHARS: Final = 200
"""Longest value of one field kept (characters)."""
SETTINGS_TEXT: Final = {
    "user": "its user settings only",
    "project": "its user and project settings",
}


def agent_of(value: Any) -> AgentInfo:
    """The well-formed fields of ``value`` (strings, cut to :data:`MAX_CHARS`); others dropped."""
    found: dict[str, str] = {}
    if isinstance(value, Mapping):
        for key in FIELDS:
            field = value.get(key)
            if isinstance(field, str) and field:
                found[key] = field[:MAX_CHARS]
    return cast(AgentInfo, found)


def agent_text(value: Any) -> str:
    """The header's line: ``claude · mode default · sandbox … · its user settings only``
    ("" when nothing is known)."""
    details = agent_of(value)
    parts = [details.get("agent") or "the agent"] if details else []
    if details.get("mode"):
        parts.append(f"mode {details['mode']}")
    sandbox = details.get("sandbox")
    if sandbox == "danger-full-access":
        parts.append("no sandbox (danger-full-access)")
    elif sandbox:
        parts.append(f"sandbox {sandbox}")
    settings = details.get("settings")
    if settings:
        parts.append(SETTINGS_TEXT.get(settings, f"settings {settings}"))
    if details.get("model"):
        parts.append(f"model {details['model']}")
    return " · ".join(parts)


def ran_by_agent(calls: Iterable[Mapping[str, Any]]) -> int:
    """How many of the turn's cards ran under the agent's own rules (``decided_by: agent``)."""
    return sum(1 for card in calls if card.get("decided_by") == "agent")


def ran_by_agent_text(count: int) -> str:
    """The summary's words for ``count`` calls the agent ran without asking ("" for none)."""
    if count <= 0:
        return ""
    calls = "1 call" if count == 1 else f"{count} calls"
    return f"{calls} ran under the agent's own rules, without asking anyone here"
