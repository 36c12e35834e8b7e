"""Cards: one dict per tool call, built only from the contract's updates and questions.

Pure functions: each returns a new card, so a card already synced is never
changed in place. Each also says whether the card shows all of what the call
will do (``incomplete``) and whether what it shows before a decision has
invisible or bidirectional characters (``invisible``), so no view has to work
that out for itself. Both are about what the call will do: the outputs of a call
that ran (``output``, ``html`` and ``image`` blocks) are shown with what each
leaves out and its invisible characters marked, but set neither.
"""

from __future__ import annotations

from typing import Any, Final, get_args

from ..driver import short
from ..interaction import FINAL_STATUSES, ToolKind, Update, class_of
from .blocks import PRODUCED, content_of, locations_of
from .protocol import Card, CardBlock, Question, clean_text, clean_value
from .reveal import invisible_in

__all__ = ["KINDS", "end_open", "new_card", "updated", "with_question"]

KINDS: Final = frozenset(get_args(ToolKind))


def new_card(tool_call_id: str, title: str = "", *, text_offset: int = 0) -> Card:
    """A card for a call nothing is known of yet, placed at ``text_offset`` in the text."""
    return Card(
        {
            "tool_call_id": tool_call_id,
            "title": title,
            "tool": title,
            "server": "",
            "class": None,
            "arguments": {},
            "status": "pending",
            "outcome": None,
            "current_step": None,
            "progress": None,
            "cancellable": False,
            "result": None,
            "error": None,
            "question": None,
            "approved_arguments": None,
            "text_offset": text_offset,
            "kind": None,
            "content": [],
            "locations": [],
            "decided_by": None,
            "blocks_hidden": 0,
            "locations_hidden": 0,
            "incomplete": False,
            "invisible": invisible_in([tool_call_id, title]),
        }
    )


def updated(card: Card, update: Update) -> Card:
    """``card`` as ``update`` says it is now."""
    new = Card(**card)
    status = update.get("status") or card["status"]
    title = clean_text(str(update.get("title") or card["title"]))
    new["title"] = title
    new["status"] = status
    new["current_step"] = _text_or_none(update.get("current_step"))
    new["progress"] = _fraction(update.get("progress"))
    new["cancellable"] = bool(update.get("cancellable")) and status == "in_progress"
    if "tool" in update:
        new["tool"] = clean_text(str(update["tool"]))
    elif not new["tool"]:
        new["tool"] = title
    if "server" in update:
        new["server"] = clean_text(str(update["server"]))
    if "class" in update:
        new["class"] = update["class"]
    if "arguments" in update and isinstance(update["arguments"], dict):
        new["arguments"] = clean_value(update["arguments"])
    if update.get("kind") in KINDS:
        new["kind"] = update["kind"]
    if "content" in update:
        ended = status in FINAL_STATUSES
        new["content"], new["blocks_hidden"] = content_of(update["content"], ended=ended)
    if "locations" in update:
        new["locations"], new["locations_hidden"] = locations_of(update["locations"])
    if update.get("decided_by") == "agent":
        new["decided_by"] = "agent"
    if new["class"] is None and new["kind"] is not None:
        new["class"] = class_of(new["kind"])
    if isinstance(update.get("approved_arguments"), dict):
        new["approved_arguments"] = clean_value(update["approved_arguments"])
    if status in FINAL_STATUSES:
        new["outcome"] = update.get("outcome") if status == "failed" else None
        new["result"] = _text_or_none(update.get("result"))
        new["error"] = _text_or_none(update.get("error"))
    return _flagged(new)


def with_question(card: Card, question: Question) -> Card:
    """``card`` with its question (open or answered)."""
    new = Card(**card)
    new["question"] = question
    return _flagged(new)


def _flagged(card: Card) -> Card:
    """``card`` with ``incomplete`` and ``invisible`` saying what its fields now show."""
    card["incomplete"] = (
        card["blocks_hidden"] > 0
        or card["locations_hidden"] > 0
        or any(_left_out(block) for block in card["content"])
    )
    question = card["question"]
    asked = [question["prompt"], question["options"]] if question is not None else []
    card["invisible"] = invisible_in(
        [
            card["tool_call_id"],
            card["title"],
            card["tool"],
            card["server"],
            card["arguments"],
            card["approved_arguments"],
            [block for block in card["content"] if not _produced(block)],
            card["locations"],
            card["current_step"],
            *asked,
        ]
    )
    return card


def _left_out(block: CardBlock) -> bool:
    """Whether a block of what the call will do does not show all of itself.

    What the call produced (its outputs) is not what it will do: a view says what
    each such block leaves out, and the card is not ``incomplete`` for it.
    """
    if _produced(block):
        return False
    return block["cut"] > 0 or (block["type"] == "diff" and block["hidden"] > 0)


def _produced(block: CardBlock) -> bool:
    """Whether a block is what the call produced (an output), not what it will do."""
    return block["type"] in PRODUCED


def end_open(card: Card) -> Card | None:
    """``card`` ended as interrupted if it is still open, else None (for a turn that ended)."""
    if card["status"] in FINAL_STATUSES:
        return None
    new = Card(**card)
    new["status"] = "failed"
    new["outcome"] = "interrupted"
    new["cancellable"] = False
    return new


def _text_or_none(value: Any) -> str | None:
    return None if value is None else clean_text(short(str(value)) or "")


def _fraction(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return min(1.0, max(0.0, float(value))) if value == value else None
