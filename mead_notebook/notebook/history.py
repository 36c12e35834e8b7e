"""The earlier conversation a turn continues, as every view shows it: read-only.

Each entry is made safe the way the turn's own are: text cleaned of lone
surrogates and cut at :data:`~.protocol.MAX_HISTORY_TEXT` characters, each call
a card built from its last update alone (:mod:`.cards`). A card here has ended
(one still open ends ``interrupted``), asks nothing and cannot be cancelled,
whatever its update said. The latest :data:`~.protocol.MAX_HISTORY` entries are
kept; the earlier ones are counted.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..interaction import FINAL_STATUSES, HistoryEntry
from . import cards
from .protocol import (
    MAX_HISTORY,
    MAX_HISTORY_TEXT,
    Card,
    HistoryCard,
    HistoryItem,
    HistoryText,
    clean_text,
)

__all__ = ["history_of"]


def history_of(entries: Sequence[HistoryEntry]) -> tuple[list[HistoryItem], int]:
    """The entries a view shows (the latest ones) and how many earlier ones it does not."""
    items = [item for item in (_item(e) for e in entries) if item is not None]
    hidden = max(0, len(items) - MAX_HISTORY)
    return items[hidden:], hidden


def _item(entry: object) -> HistoryItem | None:
    if not isinstance(entry, dict):
        return None
    kind = entry.get("type")
    if kind in ("prompt", "text"):
        text = clean_text(str(entry.get("text") or ""))
        cut = max(0, len(text) - MAX_HISTORY_TEXT)
        return HistoryText(type=kind, text=text[:MAX_HISTORY_TEXT], cut=cut)
    update = entry.get("update")
    if kind != "call" or not isinstance(update, dict) or not update.get("tool_call_id"):
        return None
    card = cards.updated(cards.new_card(str(update["tool_call_id"])), update)  # type: ignore[arg-type]
    return HistoryCard(type="call", card=_ended(card))


def _ended(card: Card) -> Card:
    """``card`` as a record: ended, asking nothing, not cancellable."""
    ended = cards.end_open(card) or Card(**card)
    ended["question"] = None
    ended["cancellable"] = False
    if card["status"] not in FINAL_STATUSES and ended["error"] is None:
        ended["error"] = "the earlier turn ended before this call did"
    return ended
