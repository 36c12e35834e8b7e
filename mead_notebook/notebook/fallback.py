"""What a page that cannot draw the widget shows while a question waits for a person.

JupyterLab draws no widget in an output it does not trust: a collaborator who
opened the notebook before the cell ran sees only text. While a question waits
for a person who can see it, the widget's transcript output (``outputs.py``)
says what waits and what to do, as ``text/plain`` and as ``text/html`` whose own
style hides it wherever the notebook is trusted (there the widget asks). An
untrusted page's sanitizer drops the ``<style>``, so it shows there. At most two
updates per question (it starts and stops waiting), none for a question answered
within ``outputs.SAY_AFTER``; the end of the turn replaces it with the transcript.
"""

from __future__ import annotations

import html
from typing import Any, Final

from .protocol import Card
from .questions import QuestionState

__all__ = ["MAX_LISTED", "bundle", "waiting_text"]

MAX_LISTED: Final = 5
"""Most questions named; the rest are counted."""
WHAT_TO_DO: Final = (
    "The live widget asks this where the notebook is trusted: trust the notebook "
    "(JupyterLab: the command “Trust Notebook”) to answer here, "
    "or answer in the view that shows the widget."
)
NOTHING_WAITS: Final = "NotebookInteraction: no question waits for a person now."


def _asked(q: QuestionState, card: Card | None) -> str:
    if q.kind == "choice":
        return f"answer “{q.prompt or 'a question'}”"
    tool = card["tool"] if card is not None and card["tool"] else "a tool"
    server = f" on {card['server']}" if card is not None and card["server"] else ""
    return f"allow {tool}{server}?"


def waiting_text(asked: list[tuple[QuestionState, Card | None]]) -> str:
    """The text: what waits for a person, and what to do; or that nothing waits."""
    if not asked:
        return NOTHING_WAITS
    named = [_asked(q, card) for q, card in asked[:MAX_LISTED]]
    more = len(asked) - len(named)
    listed = "; ".join(named) + (f"; and {more} more" if more else "")
    return f"NotebookInteraction: waiting for a person: {listed}\n{WHAT_TO_DO}"


def bundle(key: str, text: str) -> dict[str, Any]:
    """The output's data: ``text/plain``, and ``text/html`` that hides itself where trusted."""
    token = "".join(c for c in key if c.isalnum() or c in "-_")
    lines = "".join(f"<p>{html.escape(line)}</p>" for line in text.split("\n"))
    hide = (
        f'.jp-OutputArea-child:has([data-mead-waiting="{token}"]),'
        f'[data-mead-waiting="{token}"]{{display:none}}'
    )
    return {
        "text/plain": text,
        "text/html": (
            f"<style>{hide}</style>"
            f'<div class="mead-waiting" data-mead-waiting="{token}" role="status">{lines}</div>'
        ),
    }
