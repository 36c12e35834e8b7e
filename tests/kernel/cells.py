"""Cells the kernel tests run, and how to read what they print and show."""

from __future__ import annotations

import json
import time
from typing import Any

from .frontend import Frontend

ALLOW = {"decision": "allow"}
DENY = {"decision": "deny", "note": "not now"}
SYNC_TURN = "report(permission_router().run('go', interaction=widget()))"
"""A sync cell whose turn asks once whether to call ``write_note``."""


def result_of(out: str) -> dict[str, Any]:
    """The ``report(...)`` a cell printed."""
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, out
    parsed: dict[str, Any] = json.loads(lines[0][len("RESULT ") :])
    return parsed


def calls_of(out: str) -> list[tuple[str, str, str | None]]:
    """Each reported call's tool, status and outcome."""
    return [(c["tool"], c["status"], c["outcome"]) for c in result_of(out)["calls"]]


def open_questions(state: dict[str, Any]) -> int:
    """How many cards in a widget's synced state wait for an answer."""
    questions = [card.get("question") for card in state["calls"].values()]
    return sum(1 for q in questions if q and q.get("answer") is None)


def asking(fe: Frontend, cell: str) -> tuple[str, dict[str, Any]]:
    """Run ``cell`` until it asks; return its ``msg_id`` and the card with the question."""
    msg_id = fe.execute(cell)
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    card = fe.open_question()
    assert card is not None
    return msg_id, card


def interrupt(fe: Frontend, msg_id: str, card: dict[str, Any], ename: str, timeout: float) -> None:
    """Interrupt the kernel; the cell ends with ``ename`` and the question as interrupted."""
    fe.km.interrupt_kernel()
    reply = fe.wait_reply(msg_id, timeout)["content"]
    assert (reply["status"], reply.get("ename")) == ("error", ename), reply
    closed = next(iter(fe.widgets.values())).cards[card["tool_call_id"]]
    assert closed["question"]["answer"]["decision"] == "interrupted"


def next_cell_runs(fe: Frontend) -> None:
    """The kernel runs an ordinary cell normally."""
    reply, out = fe.run("print('NEXT', 6 * 7)", timeout=30)
    assert reply["status"] == "ok", reply
    assert out == "NEXT 42\n"


def pause(fe: Frontend, seconds: float) -> None:
    """Keep reading the kernel's messages for ``seconds``."""
    until = time.monotonic() + seconds
    fe.drive(lambda: time.monotonic() >= until, seconds + 5, f"{seconds} s")
