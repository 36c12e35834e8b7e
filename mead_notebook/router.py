"""The router: runs turns of a model against a hub of tools, asking an interaction."""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Iterable, Sequence

from .ask_user import ASK_USER
from .driver import TurnDriver
from .model import Message, Model
from .runner import TurnRunner
from .tools import Tool, split_tools
from .turn import Turn, TurnResult

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["Router"]


class Router:
    """Runs turns of a model against tools, asking an interaction around each call.

    ``tools`` holds ``@tool`` functions, plain functions, any ``Tool`` and
    ``ToolSource`` objects (MCP servers), opened before the first turn.
    """

    def __init__(
        self,
        model: Model,
        tools: Iterable[object] = (),
        *,
        max_rounds: int = 10,
        system: str | None = None,
        tool_timeout: float = 300.0,
    ) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        if tool_timeout <= 0:
            raise ValueError("tool_timeout must be positive")
        self.model = model
        self.max_rounds = max_rounds
        self.system = system
        self.tool_timeout = tool_timeout
        self._own_tools, self._sources = split_tools(tools)
        self._tools: dict[str, Tool] | None = None
        self._open_lock = threading.Lock()
        self._ids = itertools.count(1)
        if not self._sources:
            self._tools = self._index(self._own_tools)

    def __enter__(self) -> Router:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def tools(self) -> dict[str, Tool]:
        """The tools by name, opening tool sources first if needed."""
        return dict(self._open())

    def close(self) -> None:
        """Close every tool source (MCP server)."""
        with self._open_lock:
            for source in self._sources:
                try:
                    source.close()
                except Exception:
                    log.exception("closing %s failed", source.name)
            if self._sources:
                self._tools = None

    def run(
        self,
        prompt: str,
        *,
        interaction: object = None,
        history: Sequence[Message] | None = None,
    ) -> TurnResult:
        """Run one turn in this thread and return its result.

        ``interaction`` is an ``Interaction``, an ``(interaction, context)`` pair or
        ``None`` (tools run unasked). A model failure raises ``TurnError``.
        """
        return self._runner(interaction).run(prompt, history)

    def start(
        self,
        prompt: str,
        *,
        interaction: object = None,
        history: Sequence[Message] | None = None,
    ) -> Turn[TurnResult]:
        """Start a turn in a background thread and return its handle at once."""
        runner = self._runner(interaction)
        return Turn(lambda: runner.run(prompt, history), driver=runner.driver, cancel=runner.cancel)

    async def arun(
        self,
        prompt: str,
        *,
        interaction: object = None,
        history: Sequence[Message] | None = None,
    ) -> TurnResult:
        """Run a turn in a worker thread and await it (for async cells)."""
        return await self.start(prompt, interaction=interaction, history=history)

    def _runner(self, interaction: object) -> TurnRunner:
        driver = TurnDriver(interaction)
        return TurnRunner(self, self._open(), driver)

    def _open(self) -> dict[str, Tool]:
        with self._open_lock:
            if self._tools is None:
                tools = list(self._own_tools)
                for source in self._sources:
                    tools.extend(source.open())
                self._tools = self._index(tools)
            return self._tools

    @staticmethod
    def _index(tools: Sequence[Tool]) -> dict[str, Tool]:
        index: dict[str, Tool] = {}
        for t in tools:
            if t.name == ASK_USER:
                raise ValueError(f"{ASK_USER!r} is the router's own tool; rename yours")
            if t.name in index:
                other = index[t.name]
                raise ValueError(
                    f"two tools are named {t.name!r} (servers {other.server!r} and {t.server!r})"
                )
            index[t.name] = t
        return index

    def _next_id(self) -> str:
        return f"call_{next(self._ids)}"
