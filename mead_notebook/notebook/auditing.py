"""What the widget writes to its audit log: one line per decision, one per ended call.

Text is kept exactly as the call had it (invisible characters included), code
among it; an image a call showed is kept as its type, size and SHA-256. Each line
also says whether the card showed ``invisible`` characters and whether it was
``incomplete`` (it did not show all the call would do), as the person saw it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from typing import Any

from ..audit import AuditLog
from .protocol import Card, CardBlock
from .questions import QuestionState

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["Auditor"]


class Auditor:
    """Writes the audit lines of one interaction (``interaction``: its widget id)."""

    def __init__(self, path: str | os.PathLike[str], interaction: str) -> None:
        self.log = AuditLog(path)
        self.interaction = interaction
        self.turn = 0

    def decided(self, card: Card, q: QuestionState) -> None:
        """A question was settled: who decided what, when, with which arguments."""
        if q.settled is None:
            return
        answer = q.settled.answer
        fields = self._call(card)
        fields.update(
            kind=q.kind,
            prompt=q.prompt,
            asked_at=q.opened_at,
            decided_at=q.settled_at,
            decided_by=answer["by"],
            decision=answer["decision"],
            approved_arguments=answer["arguments"],
            rule=answer["rule"],
            note=answer["note"],
            username=answer.get("username"),
            display_name=answer.get("display_name"),
            page=answer.get("page"),
            answer={"option_ids": answer["option_ids"], "text": answer["text"]}
            if q.kind == "choice"
            else None,
        )
        self._write("decided", fields)

    def by_agent(self, card: Card) -> None:
        """A call the agent ran under its own rules: a decision nobody here made."""
        if card["decided_by"] != "agent":
            return
        fields = self._call(card)
        fields.update(
            kind="permission",
            prompt=None,
            asked_at=None,
            decided_at=time.time(),
            decided_by="agent",
            decision="allow",
            approved_arguments=None,
            rule=None,
            note="",
            answer=None,
        )
        self._write("decided", fields)

    def ended(self, card: Card) -> None:
        """A call ended: its status and outcome."""
        fields = self._call(card)
        fields.update(
            approved_arguments=card["approved_arguments"],
            ended_at=time.time(),
            status=card["status"],
            outcome=card["outcome"],
            error=card["error"],
        )
        self._write("ended", fields)

    def _call(self, card: Card) -> dict[str, Any]:
        return {
            "interaction": self.interaction,
            "turn": self.turn,
            "tool_call_id": card["tool_call_id"],
            "tool": card["tool"],
            "server": card["server"],
            "class": card["class"],
            "tool_kind": card.get("kind"),
            "arguments": card["arguments"],
            "content": _content(card.get("content") or []) or None,
            "locations": card.get("locations") or None,
            "invisible": card.get("invisible", False),
            "incomplete": card.get("incomplete", False),
        }

    def _write(self, event: str, fields: dict[str, Any]) -> None:
        try:
            self.log.write(event, fields)
        except OSError:
            log.exception("the audit log %s could not be written", self.log.path)


def _content(blocks: list[CardBlock]) -> list[dict[str, Any]]:
    """The card's blocks as the audit keeps them: an image by its type, size and SHA-256
    (what it showed, without its bytes); every other block as it is."""
    kept: list[dict[str, Any]] = []
    for block in blocks:
        if block["type"] == "image":
            data = block["data"].encode("ascii", "replace")
            kept.append(
                {
                    "type": "image",
                    "mime_type": block["mime_type"],
                    "alt": block["alt"],
                    "base64_chars": len(data),
                    "sha256": hashlib.sha256(data).hexdigest() if data else None,
                    "cut": block["cut"],
                }
            )
        else:
            kept.append(dict(block))
    return kept
