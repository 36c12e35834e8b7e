"""What a page that cannot draw the widget reads while a question waits (fallback.py)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from mead_notebook.notebook.answers import Asked
from mead_notebook.notebook.cards import new_card
from mead_notebook.notebook.fallback import MAX_LISTED, NOTHING_WAITS, bundle, waiting_text
from mead_notebook.notebook.questions import QuestionState

pytestmark = pytest.mark.timeout(120)

SETUP = '''
from mead_notebook import NotebookInteraction, Router, ScriptedModel, ToolCall, tool

@tool
def write_file(path: str) -> str:
    """Write a file."""
    return f"wrote {path}"
'''


def permission(tool: str, n: int) -> tuple[QuestionState, Any]:
    card = {**new_card(f"c{n}", text_offset=0), "tool": tool, "server": "local"}
    return QuestionState(f"q{n}", f"c{n}", Asked("permission"), None), card


def test_the_text_names_what_waits_and_what_to_do() -> None:
    text = waiting_text([permission("write_file", 1)])
    first, second = text.split("\n")
    assert first == "NotebookInteraction: waiting for a person: allow write_file on local?"
    assert "trust the notebook" in second
    assert "answer in the view that shows the widget" in second
    choice = QuestionState("q2", "c2", Asked("choice"), None, prompt="Which file?")
    assert "answer “Which file?”" in waiting_text([(choice, None)])
    assert waiting_text([]) == NOTHING_WAITS


def test_many_questions_are_counted_not_listed() -> None:
    text = waiting_text([permission(f"tool{n}", n) for n in range(MAX_LISTED + 3)])
    assert text.count("allow tool") == MAX_LISTED
    assert "and 3 more" in text


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.styles: list[str] = []
        self.text: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.styles if self._in_style else self.text).append(data)


def test_the_html_hides_itself_by_a_style_and_escapes_the_text() -> None:
    data = bundle('model"<x>', "NotebookInteraction: waiting: allow <b>rm</b>?")
    assert data["text/plain"] == "NotebookInteraction: waiting: allow <b>rm</b>?"
    parsed = _Text()
    parsed.feed(data["text/html"])
    assert "".join(parsed.text) == "NotebookInteraction: waiting: allow <b>rm</b>?"
    (style,) = parsed.styles
    assert '[data-mead-waiting="modelx"]' in style
    assert "display:none" in style
    assert "<b>" not in data["text/html"]


def _displays(fe: Any, msg_id: str) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (
            m["msg_type"],
            (m["content"].get("transient") or {}).get("display_id", ""),
            m["content"]["data"],
        )
        for m in fe.iopub
        if m["msg_type"] in ("display_data", "update_display_data")
        and m["parent_header"].get("msg_id") == msg_id
    ]


@pytest.mark.kernel
@pytest.mark.parametrize("version", ["6.29.5", "7.4.0"])
def test_the_cell_says_what_waits_while_it_waits_then_shows_the_transcript(
    version: str, tmp_path: Path
) -> None:
    from kernel.frontend import Frontend

    fe = Frontend(version, tmp_path)
    try:
        reply, out = fe.run(SETUP, timeout=60)
        assert reply["status"] == "ok", (reply, out)
        cell = fe.execute(
            "w = NotebookInteraction()\n"
            'm = ScriptedModel([[ToolCall("write_file", {"path": "a.txt"})], ["Done."]])\n'
            'Router(m, [write_file]).run("write it", interaction=w)\n'
            "None"
        )
        fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
        fe.drive(lambda: len(_displays(fe, cell)) >= 2, 30, "what waits")
        _widget, (kind, status_id, waiting), *_ = _displays(fe, cell)
        assert kind == "display_data"
        assert waiting["text/plain"].startswith(
            "NotebookInteraction: waiting for a person: allow write_file on local?\n"
        )
        assert "data-mead-waiting" in waiting["text/html"]
        card = fe.open_question()
        assert card is not None
        widget_id = next(iter(fe.widgets))
        fe.answer(
            widget_id,
            {"type": "answer", "question_id": card["question"]["id"], "decision": "allow"},
        )
        assert fe.wait_reply(cell)["content"]["status"] == "ok"
        later = [(k, d, data["text/plain"]) for k, d, data in _displays(fe, cell)[2:]]
        assert later[0] == ("update_display_data", status_id, NOTHING_WAITS)
        transcript = [text for k, d, text in later if d == status_id][-1]
        assert transcript.startswith("NotebookInteraction: done, 1 tool call (1 completed)")
    finally:
        fe.close()
