"""An edit of a call's arguments is allowed only once its card shows what the edit will do.

The person edits the arguments and clicks Allow: when the tool's preview of the
edited arguments differs from what the card shows, the card shows the new
preview (the question's next version) and the answer is refused, saying so; the
person allows again what they now see, and the finished card shows what ran.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mead_notebook import Allow, Router, ScriptedModel, ToolCall, tool
from mead_notebook.interaction import Request
from mead_notebook.notebook.questions import CHANGED, PREVIEWED
from mead_notebook.policies import AllowAll

pytestmark = pytest.mark.timeout(60)

NOTES: dict[str, str] = {}


def diff_of(path: str, text: str) -> list[dict[str, Any]]:
    return [{"type": "diff", "path": path, "old_text": NOTES.get(path), "new_text": text}]


@tool(kind="edit", preview=diff_of)
def write_file(path: str, text: str) -> str:
    """Write a text file."""
    NOTES[path] = text
    return f"wrote {len(text)} characters to {path}"


@pytest.fixture(autouse=True)
def _notes() -> None:
    NOTES.clear()
    NOTES["todo.txt"] = "milk\n"


def model() -> ScriptedModel:
    call = ToolCall("write_file", {"path": "todo.txt", "text": "milk; call Ada\n"})
    return ScriptedModel([[call], ["done"]])


def added(card: dict[str, Any]) -> list[str]:
    """The lines a card's diff adds."""
    return [
        row["text"]
        for block in card["content"]
        if block["type"] == "diff"
        for row in block["rows"]
        if row["sign"] == "+"
    ]


def question_at(w: Any, version: int, rejections: int = 0) -> dict[str, Any]:
    """The open question of call_1 once it has this version and this many refusals."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        q = (w.calls.get("call_1") or {}).get("question")
        open_now = q is not None and q["answer"] is None
        if open_now and q["version"] == version and q["rejections"] >= rejections:
            return dict(q)
        time.sleep(0.005)
    raise AssertionError(f"no open question at version {version}: {w.calls.get('call_1')}")


def allow(w: Any, q: dict[str, Any], arguments: dict[str, Any] | None = None) -> None:
    answer = {"type": "answer", "question_id": q["id"], "decision": "allow"}
    if arguments is not None:
        answer["arguments"] = arguments
    w.deliver({**answer, "version": q["version"]})


EDITED = {"path": "todo.txt", "text": "milk; call Ada; BOOK DENTIST\n"}


def test_an_edit_is_refused_until_the_card_shows_its_diff_then_runs_and_stays_shown(
    make: Any,
) -> None:
    w, _c = make(timeout=30.0, display=False)
    w.deliver({"type": "rendered"})
    seen: list[dict[str, Any]] = []

    def person() -> None:
        first = question_at(w, 1)
        seen.append(dict(w.calls["call_1"]))
        allow(w, first, EDITED)
        second = question_at(w, 2, rejections=1)
        seen.append(dict(w.calls["call_1"]))
        allow(w, second, EDITED)

    t = threading.Thread(target=person, daemon=True)
    t.start()
    result = Router(model(), [write_file]).run("note it", interaction=w)
    t.join(10)
    before, refused = seen
    assert added(before) == ["milk; call Ada"]
    assert added(refused) == ["milk; call Ada; BOOK DENTIST"]
    assert refused["question"]["rejected"] == PREVIEWED
    assert refused["arguments"] == {"path": "todo.txt", "text": "milk; call Ada\n"}
    assert NOTES["todo.txt"] == EDITED["text"]
    card = w.calls["call_1"]
    assert card["status"] == "completed"
    assert added(card) == ["milk; call Ada; BOOK DENTIST"]
    assert card["approved_arguments"] == EDITED
    record = result.calls[0]
    assert record.approved_arguments == EDITED
    assert [b.get("new_text") for b in record.content] == [EDITED["text"]]


def test_going_back_to_the_models_arguments_shows_their_diff_again(make: Any) -> None:
    w, _c = make(timeout=30.0, display=False)
    w.deliver({"type": "rendered"})
    shown: list[list[str]] = []

    def person() -> None:
        allow(w, question_at(w, 1), EDITED)
        second = question_at(w, 2, rejections=1)
        shown.append(added(w.calls["call_1"]))
        allow(w, second)  # the model's arguments again, with the edit's diff on the card
        third = question_at(w, 3, rejections=2)
        shown.append(added(w.calls["call_1"]))
        assert third["rejected"] == PREVIEWED
        allow(w, third)

    t = threading.Thread(target=person, daemon=True)
    t.start()
    result = Router(model(), [write_file]).run("note it", interaction=w)
    t.join(10)
    assert shown == [["milk; call Ada; BOOK DENTIST"], ["milk; call Ada"]]
    assert NOTES["todo.txt"] == "milk; call Ada\n"
    assert result.calls[0].approved_arguments is None
    assert added(w.calls["call_1"]) == ["milk; call Ada"]


def test_an_allow_made_on_an_older_version_is_refused_not_held(make: Any) -> None:
    w, _c = make(timeout=30.0, display=False)
    w.deliver({"type": "rendered"})

    def person() -> None:
        first = question_at(w, 1)
        allow(w, first, EDITED)
        second = question_at(w, 2, rejections=1)
        allow(w, first, EDITED)  # a second click still on version 1
        assert question_at(w, 2, rejections=2)["rejected"] == CHANGED
        allow(w, second, EDITED)

    t = threading.Thread(target=person, daemon=True)
    t.start()
    Router(model(), [write_file]).run("note it", interaction=w)
    t.join(10)
    assert NOTES["todo.txt"] == EDITED["text"]


def test_an_allow_from_code_with_other_arguments_keeps_what_they_do_in_the_record() -> None:
    asked: list[Request] = []

    class Editor(AllowAll):
        def request_permission(self, context: Any, request: Request) -> Allow:
            asked.append(request)
            return Allow(arguments=EDITED)

    result = Router(model(), [write_file]).run("note it", interaction=Editor())
    assert callable(asked[0].get("preview"))
    record = result.calls[0]
    assert record.status == "completed"
    assert [b.get("new_text") for b in record.content] == [EDITED["text"]]
