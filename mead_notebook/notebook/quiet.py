"""Assigning synced traits without syncing them, for state that travels another way."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import ipywidgets

__all__ = ["QuietSync"]


class QuietSync(ipywidgets.Widget):  # type: ignore[misc]
    """A widget whose ``_quiet(*names)`` assigns those traits, in this thread, unsynced.

    The text and cards of a turn travel as small custom messages; their traits are
    kept current quietly and synced in full once, when the turn ends.
    """

    _quiet_local = threading.local()

    @contextmanager
    def _quiet(self, *names: str) -> Iterator[None]:
        """Assign the named traits in this thread without syncing them to the frontend."""
        key = id(self)
        quiet: dict[int, frozenset[str]] = self._quiet_names()
        previous = quiet.get(key, frozenset())
        quiet[key] = previous | frozenset(names)
        try:
            yield
        finally:
            if previous:
                quiet[key] = previous
            else:
                quiet.pop(key, None)

    def _should_send_property(self, key: str, value: Any) -> bool:
        if key in self._quiet_names().get(id(self), ()):
            return False
        result: bool = super()._should_send_property(key, value)
        return result

    @classmethod
    def _quiet_names(cls) -> dict[int, frozenset[str]]:
        local = QuietSync._quiet_local
        names: dict[int, frozenset[str]] | None = getattr(local, "names", None)
        if names is None:
            names = local.names = {}
        return names
