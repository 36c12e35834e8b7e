"""What an ACP session offers to control: its config options, slash commands and usage.

The agent announces them when the session opens (``configOptions``, legacy
``modes``) and keeps them current with ``config_option_update``,
``current_mode_update``, ``available_commands_update`` and ``usage_update``.
Everything here comes from the agent and is untrusted: names, values and
descriptions are kept as plain text cut to :data:`MAX_TEXT` characters, at most
:data:`MAX_ITEMS` of each list; a malformed update is ignored with a debug log.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from acp.schema import (
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    Cost,
    CurrentModeUpdate,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectGroup,
    SessionModeState,
    UsageUpdate,
)

from mead_notebook.errors import MeadError
from mead_notebook.interaction import UsageInfo

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = [
    "LEGACY_MODE",
    "MAX_ITEMS",
    "MAX_TEXT",
    "Command",
    "Controls",
    "OptionError",
    "OptionValue",
    "SessionOption",
    "Usage",
]

MAX_TEXT = 200
"""Longest name, value or description kept from the agent (characters)."""
MAX_DESCRIPTION = 1000
"""Longest command or option description kept (characters)."""
MAX_ITEMS = 200
"""Most options, values of one option, or commands kept."""
LEGACY_MODE = "mode"
"""The id of the option made from an agent's legacy session ``modes``."""


class OptionError(MeadError, ValueError):
    """An option the session does not offer, or a value the option does not allow."""


@dataclass(frozen=True)
class OptionValue:
    """One value an option allows: ``value`` (what ``configure`` takes) and its ``name``."""

    value: str
    name: str
    description: str | None = None


@dataclass(frozen=True)
class SessionOption:
    """One of the agent's session options, as it last said.

    ``category`` is ACP's (``model``, ``mode``, ``thought_level``, ``model_config``) or
    None; ``kind`` is ``select`` (``current`` is one of ``values``) or ``boolean``;
    ``legacy``: made from the agent's session ``modes`` (set with ``session/set_mode``).
    """

    id: str
    name: str
    current: str | bool
    values: tuple[OptionValue, ...] = ()
    kind: Literal["select", "boolean"] = "select"
    category: str | None = None
    description: str | None = None
    legacy: bool = False

    @property
    def allowed(self) -> tuple[str | bool, ...]:
        """The values ``configure`` accepts for this option."""
        if self.kind == "boolean":
            return (False, True)
        return tuple(v.value for v in self.values)


@dataclass(frozen=True)
class Command:
    """One of the agent's slash commands: ``/name``, what it does, the hint for its input."""

    name: str
    description: str
    hint: str | None = None


@dataclass(frozen=True)
class Usage:
    """The agent's context usage: tokens ``used`` of ``size``, and the session's ``cost`` in
    ``currency`` so far. None: the agent did not say (never read as 0)."""

    used: int | None = None
    size: int | None = None
    cost: float | None = None
    currency: str | None = None

    def info(self) -> UsageInfo:
        """The header's view of it."""
        return UsageInfo(used=self.used, size=self.size, cost=self.cost, currency=self.currency)


def _text(value: object, limit: int = MAX_TEXT) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _count(value: object) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if ok else None  # type: ignore[return-value]


def _option_of(raw: Any) -> SessionOption | None:
    """Our view of one of ACP's config options (None: of a kind not known here)."""
    raw = getattr(raw, "root", raw)
    category = raw.category if isinstance(getattr(raw, "category", None), str) else None
    common: dict[str, Any] = {
        "id": _text(raw.id),
        "name": _text(raw.name) or _text(raw.id),
        "category": _text(category) or None,
        "description": _text(raw.description, MAX_DESCRIPTION) or None,
    }
    if isinstance(raw, SessionConfigOptionBoolean):
        return SessionOption(current=bool(raw.current_value), kind="boolean", **common)
    if not isinstance(raw, SessionConfigOptionSelect):
        return None
    values: list[OptionValue] = []
    for entry in raw.options:
        inner = entry.options if isinstance(entry, SessionConfigSelectGroup) else [entry]
        for value in inner:
            values.append(
                OptionValue(
                    _text(value.value),
                    _text(value.name) or _text(value.value),
                    _text(value.description, MAX_DESCRIPTION) or None,
                )
            )
    return SessionOption(
        current=_text(raw.current_value), values=tuple(values[:MAX_ITEMS]), **common
    )


class Controls:
    """A session's options, commands and usage, kept current from the agent's messages.

    Written on the agent's loop, read from any thread: each view is replaced whole.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._options: Mapping[str, SessionOption] = MappingProxyType({})
        self.commands: tuple[Command, ...] = ()
        """The agent's slash commands, as it last listed them."""
        self.usage: Usage | None = None
        """The context usage the agent last reported (None: none yet)."""

    @property
    def options(self) -> Mapping[str, SessionOption]:
        """The session's options by id (read-only)."""
        return self._options

    def find(self, key: str) -> SessionOption | None:
        """The option named ``key``: its id, else (``model``, ``mode``) its category."""
        options = self._options
        if key in options:
            return options[key]
        return next((o for o in options.values() if o.category == key), None)

    def current(self, category: str) -> str | None:
        """The current value of the option of ``category`` (a select's), if any."""
        option = self.find(category)
        if option is None or option.kind != "select" or not option.current:
            return None
        return str(option.current)

    # -- from the agent -------------------------------------------------------------------

    def reset(self) -> None:
        """A new agent process: nothing is known of its session yet."""
        with self._lock:
            self._options = MappingProxyType({})
        self.commands = ()
        self.usage = None

    def opened(self, config_options: list[Any] | None, modes: SessionModeState | None) -> None:
        """What ``session/new`` (``load``, ``resume``) said."""
        self.set_options(config_options, modes, keep_legacy=False)

    def set_options(
        self,
        config_options: list[Any] | None,
        modes: SessionModeState | None = None,
        *,
        keep_legacy: bool = True,
    ) -> None:
        """The full set of options, as the agent sent it (``modes``: a legacy fallback;
        ``keep_legacy``: the legacy mode known so far stays when the set has no mode)."""
        found: dict[str, SessionOption] = {}
        for raw in (config_options or [])[:MAX_ITEMS]:
            try:
                option = _option_of(raw)
            except Exception as exc:
                log.debug("an option the agent sent is ignored: %r", exc)
                continue
            if option is not None and option.id and option.id not in found:
                found[option.id] = option
        has_mode = any(o.category == "mode" or o.id == LEGACY_MODE for o in found.values())
        legacy = self._options.get(LEGACY_MODE)
        if keep_legacy and modes is None and not has_mode and legacy is not None and legacy.legacy:
            found[LEGACY_MODE] = legacy
        if modes is not None and not has_mode:
            values = tuple(
                OptionValue(_text(m.id), _text(m.name) or _text(m.id), _text(m.description) or None)
                for m in modes.available_modes[:MAX_ITEMS]
            )
            found[LEGACY_MODE] = SessionOption(
                LEGACY_MODE,
                "Mode",
                _text(modes.current_mode_id),
                values,
                category="mode",
                legacy=True,
            )
        with self._lock:
            self._options = MappingProxyType(found)

    def set_current(self, option_id: str, value: str | bool) -> None:
        """One option now has ``value`` (a legacy mode switched, answered without a full set)."""
        with self._lock:
            options = dict(self._options)
            known = options.get(option_id)
            if known is None:
                return
            options[option_id] = SessionOption(
                known.id,
                known.name,
                value if isinstance(value, bool) else _text(value),
                known.values,
                known.kind,
                known.category,
                known.description,
                known.legacy,
            )
            self._options = MappingProxyType(options)

    def update(self, update: Any) -> bool:
        """Take one ``session/update``; True when it changed an option or the usage (what the
        turn's header shows). Malformed content is ignored with a debug log."""
        try:
            return self._update(update)
        except Exception as exc:
            log.debug("a session update the agent sent is ignored: %r", exc)
            return False

    def _update(self, update: Any) -> bool:
        if isinstance(update, ConfigOptionUpdate):
            self.set_options(update.config_options)
            return True
        if isinstance(update, CurrentModeUpdate):
            legacy = self._options.get(LEGACY_MODE)
            if legacy is not None and legacy.legacy:
                self.set_current(LEGACY_MODE, update.current_mode_id)
            return False  # the turn's own mode callback says it
        if isinstance(update, AvailableCommandsUpdate):
            self.commands = tuple(
                Command(
                    _text(c.name),
                    _text(c.description, MAX_DESCRIPTION),
                    _text(getattr(getattr(c.input, "root", None), "hint", None)) or None,
                )
                for c in update.available_commands[:MAX_ITEMS]
                if _text(c.name)
            )
            return False
        if isinstance(update, UsageUpdate):
            self.usage = _usage(update.used, update.size, update.cost)
            return True
        return False

    def partial_usage(self, raw: Mapping[str, Any]) -> bool:
        """A ``usage_update`` that does not validate (Claude's ``used: null``): the figures it
        gives are kept, the others unknown."""
        cost: Cost | None = None
        try:
            cost = Cost.model_validate(raw.get("cost")) if raw.get("cost") is not None else None
        except Exception:
            cost = None
        self.usage = _usage(raw.get("used"), raw.get("size"), cost)
        return True


def _usage(used: object, size: object, cost: Cost | None) -> Usage:
    amount = cost.amount if cost is not None and math.isfinite(cost.amount) else None
    if amount is not None and amount < 0:
        amount = None
    currency = _text(cost.currency, 8) or None if cost is not None and amount is not None else None
    return Usage(_count(used), _count(size), amount, currency)
