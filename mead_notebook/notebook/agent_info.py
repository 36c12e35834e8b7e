"""The agent that runs a turn, in words: the header's line and the count of the calls it ran
under its own rules (``js/src/agent.js`` says the same in the live view)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

from ..interaction import AgentInfo, UsageInfo

__all__ = [
    "FIELDS",
    "agent_of",
    "agent_text",
    "ran_by_agent",
    "ran_by_agent_text",
    "usage_of",
    "usage_text",
]

FIELDS: Final = ("agent", "mode", "sandbox", "settings", "model")
"""The fields of :class:`~mead_notebook.interaction.AgentInfo` a view shows, in order."""
MAX_CHARS: Final = 200
"""Longest value of one field kept (characters)."""
MAX_COUNT: Final = 2**53 - 1
"""Largest token count or cost kept (a view's numbers are exact up to here)."""
MAX_CURRENCY: Final = 8
"""Longest currency code kept (characters)."""
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
        usage = usage_of(value.get("usage"))
        if usage is not None:
            found["usage"] = usage  # type: ignore[assignment]
    return cast(AgentInfo, found)


def _count(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT
    return cast(int, value) if ok else None


def usage_of(value: Any) -> UsageInfo | None:
    """The well-formed figures of a usage (others None), or None when it gives none."""
    if not isinstance(value, Mapping):
        return None
    cost = value.get("cost")
    amount: float | None = None
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        amount = float(cost) if math.isfinite(cost) and 0 <= cost <= MAX_COUNT else None
    currency = value.get("currency")
    code = currency[:MAX_CURRENCY] if isinstance(currency, str) and currency else None
    usage = UsageInfo(
        used=_count(value.get("used")),
        size=_count(value.get("size")),
        cost=amount,
        currency=code if amount is not None else None,
    )
    return usage if any(v is not None for v in usage.values()) else None


def _tokens(count: int) -> str:
    """``950``, ``12.3k``, ``200k``, ``1.5M`` (tenths rounded half up, in integers)."""
    if count < 1000:
        return str(count)
    unit, scale = ("k", 1000) if count < 999_950 else ("M", 1_000_000)
    tenths = (count * 10 + scale // 2) // scale
    whole, tenth = divmod(tenths, 10)
    return f"{whole}{unit}" if tenth == 0 else f"{whole}.{tenth}{unit}"


def usage_text(value: Any) -> str:
    """The header's words for a usage: ``12.3k / 200k tokens · $0.04`` ("" when unknown).
    A figure the agent did not give is ``?``, never 0."""
    usage = usage_of(value)
    if usage is None:
        return ""
    parts = []
    used, size = usage["used"], usage["size"]
    if size is not None:
        parts.append(f"{'?' if used is None else _tokens(used)} / {_tokens(size)} tokens")
    elif used is not None:
        parts.append(f"{_tokens(used)} tokens")
    cost = usage["cost"]
    if cost is not None:
        cents = math.floor(cost * 100 + 0.5)
        amount = f"{cents // 100}.{cents % 100:02d}"
        currency = usage["currency"]
        if currency == "USD":
            parts.append(f"${amount}")
        else:
            parts.append(f"{amount} {currency}" if currency else f"cost {amount}")
    return " · ".join(parts)


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
    used = usage_text(details.get("usage"))
    if used:
        parts.append(used)
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
