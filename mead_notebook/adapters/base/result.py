"""What a framework's run produced."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mead_notebook.turn import TurnResult

__all__ = ["AgentResult"]


@dataclass(repr=False)
class AgentResult(TurnResult):
    """What a framework's run produced: ``text`` and ``calls`` as for ``Router``, and ``output``.

    ``output`` is what the framework's own run returned (LangGraph: the final
    state; pydantic-ai: the ``AgentRunResult``), ``None`` when the run was
    interrupted. ``stop_reason`` is ``end_turn``, ``interrupted``, ``paused``
    (the graph waits on a question nobody answered; ``output`` holds its state
    and, under ``__interrupt__``, what it asked) or ``max_rounds`` (the graph
    kept asking after ``MAX_RESUMES`` answers).
    """

    output: Any = None

    def __repr__(self) -> str:
        turn = super().__repr__().removeprefix("TurnResult(").removesuffix(")")
        return f"AgentResult({turn}, output={type(self.output).__name__})"
