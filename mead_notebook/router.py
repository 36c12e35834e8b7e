"""The router: runs turns of a model against a hub of tools, asking an interaction."""

from __future__ import annotations

import itertools
import logging
import sys
import threading
import warnings
from collections.abc import Iterable, Sequence

from .ask_user import ASK_USER
from .driver import TurnDriver
from .model import Message, Model
from .runner import TurnRunner
from .tools import Tool, split_tools
from .turn import Turn, TurnResult, one_line_interrupt

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["UNASKED", "Router", "UnaskedWarning"]

UNASKED = (
    "this turn has no interaction, so its tools run without asking anyone: pass "
    "interaction=NotebookInteraction() to be asked first (said once per kernel)"
)
"""What a notebook's first turn without an interaction says."""


class UnaskedWarning(UserWarning):
    """A turn in a notebook runs its tools without asking anyone (no interaction)."""


_unasked_said = False
_unasked_lock = threading.Lock()


def _in_a_kernel() -> bool:
    """Whether this runs in a Jupyter kernel (where a person could have been asked)."""
    if "ipykernel" not in sys.modules or "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


def _say_unasked(stacklevel: int) -> None:
    """Warn, once per kernel and only in one, that a turn's tools run unasked."""
    global _unasked_said
    with _unasked_lock:
        if _unasked_said or not _in_a_kernel():
            return
        _unasked_said = True
    warnings.warn(UNASKED, UnaskedWarning, stacklevel=stacklevel + 1)


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
        ``None`` (tools run unasked; in a notebook the first such turn says so, once
        per kernel). A model failure raises ``TurnError``; an interrupt re-raises
        ``KeyboardInterrupt``, which a notebook shows as one line saying what stopped.
        """
        runner = self._runner(interaction, stacklevel=3)
        try:
            return runner.run(prompt, history)
        except KeyboardInterrupt as exc:
            one_line_interrupt(exc, runner.driver.result)
            raise

    def start(
        self,
        prompt: str,
        *,
        interaction: object = None,
        history: Sequence[Message] | None = None,
    ) -> Turn[TurnResult]:
        """Start a turn in a background thread and return its handle at once."""
        runner = self._runner(interaction, stacklevel=3)
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

    def _runner(self, interaction: object, *, stacklevel: int) -> TurnRunner:
        driver = TurnDriver(interaction)
        if driver.interaction is None:
            _say_unasked(stacklevel)
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
