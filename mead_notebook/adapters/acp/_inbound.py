"""The agent's stdout as the SDK reads it, less the notifications it cannot read: a
``session/update`` that does not validate, and a method ACP does not define.

The SDK logs a traceback for each malformed notification (Claude's agent sends
``usage_update`` with ``used: null``) and for each method it has no route for
(Qwen Code sends ``qwen/notify/session/mode-update``, not an ``_``-prefixed
extension); the ACP spec leaves a client free to ignore a notification it cannot
read. Each such line is dropped here with one line in this module's log instead;
a ``usage_update`` goes to :attr:`Inbound.usage` first, to keep the figures it
does give (an absent one is unknown, never 0).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

import pydantic
from acp.meta import CLIENT_METHODS
from acp.schema import SessionNotification

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["Inbound"]

_METHOD = b'"method"'
_ROUTED = frozenset({CLIENT_METHODS["session_update"], CLIENT_METHODS["elicitation_complete"]})
"""The notifications the SDK routes to the client (besides ``_``-prefixed extensions)."""


class Inbound:
    """Copies ``source`` line by line into :attr:`reader`, dropping malformed updates."""

    def __init__(self, source: asyncio.StreamReader, name: str, limit: int) -> None:
        self.name = name
        self.dropped = 0
        self.usage: Callable[[dict[str, Any]], None] | None = None
        """Hears each ``usage_update`` that does not validate (its raw update)."""
        self.reader = asyncio.StreamReader(limit=limit)
        self._source = source
        self._task = asyncio.ensure_future(self._pump())

    async def _pump(self) -> None:
        try:
            while True:
                try:
                    line = await self._source.readline()
                except ValueError:
                    # Longer than the limit: the SDK would fail on it too; end the stream.
                    log.warning("%s sent a line longer than the limit; its output ends", self.name)
                    return
                if not line:
                    return
                if _METHOD in line and not self._readable(line):
                    continue
                self.reader.feed_data(line)
        finally:
            self.reader.feed_eof()

    def _readable(self, line: bytes) -> bool:
        """False for a notification of a method ACP does not define, or a ``session/update``
        whose params do not validate."""
        try:
            message = json.loads(line)
        except ValueError:
            return True
        if not isinstance(message, dict) or "id" in message:
            return True
        method = message.get("method")
        if method != "session/update":
            if not isinstance(method, str) or method.startswith("_") or method in _ROUTED:
                return True
            self.dropped += 1
            log.debug("%s sent a notification ACP does not define (%s); ignored", self.name, method)
            return False
        try:
            SessionNotification.model_validate(message.get("params"))
        except pydantic.ValidationError as exc:
            self.dropped += 1
            params = message.get("params")
            update = params.get("update") if isinstance(params, dict) else None
            what = update.get("sessionUpdate") if isinstance(update, dict) else None
            # Claude's agent sends usage_update with used: null at every turn.
            level = logging.DEBUG if what == "usage_update" else logging.WARNING
            if what == "usage_update" and isinstance(update, dict) and self.usage is not None:
                try:
                    self.usage(update)
                except Exception:
                    log.debug("%s: a usage_update could not be read", self.name, exc_info=True)
            errors = exc.errors()
            where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
            log.log(
                level,
                "%s sent a session/update (%s) that does not validate (%s: %s); ignored",
                self.name,
                what,
                where,
                errors[0]["msg"] if errors else exc.title,
            )
            return False
        return True

    @property
    def pumping(self) -> asyncio.Future[None]:
        """Done once the agent's stdout has ended (or the copy was closed)."""
        return self._task

    def close(self) -> None:
        self._task.cancel()
