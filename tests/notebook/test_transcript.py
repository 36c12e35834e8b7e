"""The static transcript: layout, escaping, sanitising, the final summary, where it goes."""

from __future__ import annotations

import copy
import json
import re
from html import escape as html_escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from mead_notebook.notebook import static, transcript
from mead_notebook.notebook.blocks import content_of
from mead_notebook.notebook.cards import new_card
from mead_notebook.notebook.labels import AGENT_DECIDED
from mead_notebook.notebook.protocol import Card, Question, Settlement
from mead_notebook.notebook.reveal import has_invisible
from mead_notebook.notebook.transcript import TurnState

PAYLOADS = [
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "<script>window.__pwned = 'script'</script>",
    "[click me](javascript:window.__pwned='link')",
    "<a href=\"javascript:window.__pwned='a'\">html link</a>",
    "<svg onload=\"window.__pwned='svg'\"></svg>",
    "<iframe src=\"javascript:parent.__pwned='iframe'\"></iframe>",
    "![x](javascript:window.__pwned='md-image')",
    "<details open ontoggle=\"window.__pwned='toggle'\">x</details>",
    '"><script>window.__pwned="attr"</script>',
    "<style>*{background:url(javascript:alert(1))}</style>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "s = '''\u2067''' ;return <b onmouseover=alert(1)>\u202e</b>",
    "rm\u200b -rf ~\u2060\ufeff<script>alert(1)</script>",
]
"""Markup that would run if it ever were markup; the last two with invisible and
bidirectional characters that would reorder or hide text if they ever were shown."""
LIVE_TAGS = {"script", "img", "iframe", "svg", "math", "object", "embed", "form", "input"}
LIVE_TAGS |= {"button", "textarea", "select", "link", "meta", "base", "video", "audio"}


def answer(decision: str, by: str = "person", **fields: Any) -> Settlement:
    found: dict[str, Any] = {
        "decision": decision,
        "option_id": None,
        "option_ids": None,
        "text": None,
        "arguments": None,
        "rule": None,
        "by": by,
        "note": "",
        **fields,
    }
    return found  # type: ignore[return-value]


def question(kind: str = "permission", **fields: Any) -> Question:
    found: dict[str, Any] = {
        "id": "q1",
        "kind": kind,
        "prompt": None,
        "options": None,
        "multiple": False,
        "scopes": [],
        "schema": None,
        "deadline": None,
        "rejected": None,
        "answer": None,
        **fields,
    }
    return found  # type: ignore[return-value]


def card(tool_call_id: str = "call_1", offset: int | None = 0, **fields: Any) -> Card:
    """A card with ``fields``; ``content`` in the contract's blocks, made as the kernel makes it."""
    found = new_card(tool_call_id, text_offset=offset or 0)
    found.update(
        {"title": "write_file", "tool": "write_file", "server": "local", "class": "effect"}
    )
    if "content" in fields:
        fields["content"], fields["blocks_hidden"] = content_of(fields["content"])
    found.update(fields)  # type: ignore[typeddict-item]
    if offset is None:
        del found["text_offset"]  # type: ignore[misc]
    return found


def state(text: str, *cards: Card, **fields: Any) -> TurnState:
    found: dict[str, Any] = {
        "prompt": "",
        "status": "done",
        "stop_reason": "end_turn",
        "error": "",
        "text": text,
        "calls": {c["tool_call_id"]: c for c in cards},
        "order": [c["tool_call_id"] for c in cards],
        **fields,
    }
    return found  # type: ignore[return-value]


def shape(items: list[str | list[Card]]) -> list[str]:
    return [
        item if isinstance(item, str) else "|".join(c["tool_call_id"] for c in item)
        for item in items
    ]


# -- layout ----------------------------------------------------------------------------


def test_the_text_is_cut_at_each_cards_offset() -> None:
    text = "Let me read. Two items. Done."
    turn = state(text, card("a", 13), card("b", 24))
    assert shape(transcript.layout(text, turn["calls"], turn["order"])) == [
        "Let me read. ",
        "a",
        "Two items. ",
        "b",
        "Done.",
    ]


def test_cards_at_one_offset_keep_their_order_and_offsets_count_utf16_units() -> None:
    text = "🙂 ok🙂!"  # each 🙂 is two UTF-16 code units
    turn = state(text, card("z", 5), card("y", 0), card("x", 5), card("w", 99))
    assert shape(transcript.layout(text, turn["calls"], turn["order"])) == [
        "y",
        "🙂 ok",
        "z|x",
        "🙂!",
        "w",
    ]


def test_a_card_without_an_offset_goes_at_the_end() -> None:
    turn = state("all text", card("old", None))
    assert shape(transcript.layout(turn["text"], turn["calls"], turn["order"])) == [
        "all text",
        "old",
    ]


def test_cards_missing_from_the_order_come_last_and_unknown_ids_are_skipped() -> None:
    turn = state("ab", card("x", 1), card("y", 1))
    items = transcript.layout(turn["text"], turn["calls"], ["ghost", "y", "y"])
    assert shape(items) == ["a", "y|x", "b"]


# -- words -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "label", "decision"),
    [
        (
            {"status": "completed", "question": question(answer=answer("allow"))},
            "Completed",
            "Allowed by you",
        ),
        (
            {
                "status": "failed",
                "outcome": "denied",
                "question": question(answer=answer("deny", note=" no ")),
            },
            "Denied",
            "Denied by you: no",
        ),
        (
            {
                "status": "completed",
                "question": question(answer=answer("allow", "rule", rule="tool x")),
            },
            "Completed",
            "Allowed by your “Allow always” rule for the tool x",
        ),
        (
            {
                "status": "completed",
                "question": question(answer=answer("allow", rule="server files")),
            },
            "Completed",
            "Allowed by you, and always from now on for every tool on files",
        ),
        (
            {
                "status": "failed",
                "outcome": "denied",
                "question": question(answer=answer("deny", "fallback")),
            },
            "Denied",
            "Denied by the fallback (nobody to answer)",
        ),
        (
            {
                "status": "failed",
                "outcome": "expired",
                "question": question(answer=answer("expired", "timeout")),
            },
            "Expired",
            "Expired",
        ),
        ({"status": "failed", "outcome": "timeout"}, "Timed out", ""),
        ({"status": "failed", "outcome": "invalid_arguments"}, "Invalid arguments", ""),
        ({"status": "pending", "question": question()}, "Waiting for you", ""),
        (
            {
                "status": "completed",
                "question": question(
                    "choice",
                    prompt="Which?",
                    options=[{"id": "a", "label": "A"}, {"id": "b", "label": "B"}],
                    answer=answer("picked", option_id="a", option_ids=["a", "b"]),
                ),
            },
            "Answered",
            "Chose “A”, “B” by you",
        ),
        (
            {
                "status": "completed",
                "question": question(
                    "choice", prompt="?", options=[], answer=answer("picked", text="my own")
                ),
            },
            "Answered",
            "Answered “my own” by you",
        ),
    ],
)
def test_labels_and_decisions(fields: dict[str, Any], label: str, decision: str) -> None:
    found = card(**fields)
    assert transcript.status_label(found) == label
    assert transcript.decision_text(found) == decision


def test_the_summary_counts_calls_by_outcome() -> None:
    calls = [
        card("a", status="completed"),
        card("b", status="failed", outcome="denied"),
        card("c", status="failed", outcome="denied"),
    ]
    assert transcript.summary("done", calls, 12) == (
        "NotebookInteraction: done, 3 tool calls (1 completed, 2 denied), 12 characters of text"
    )
    assert transcript.summary("running", [], 0) == (
        "NotebookInteraction: running, 0 tool calls, 0 characters of text"
    )


# -- Markdown --------------------------------------------------------------------------


COPY_TURN = json.loads((Path(__file__).parents[1] / "shared" / "copy-turn.json").read_text())
"""A turn and its Markdown, shared with the frontend's Copy test (js/test/transcript.test.js)."""


def copy_example() -> TurnState:
    state: TurnState = copy.deepcopy(COPY_TURN["state"])
    return state


def test_markdown_is_the_frontends_copy() -> None:
    assert transcript.to_markdown(copy_example()) == COPY_TURN["markdown"]


def test_the_plain_text_starts_with_the_final_summary() -> None:
    example = copy_example()
    text = transcript.to_text(example)
    first, rest = text.split("\n\n", 1)
    assert first == "NotebookInteraction: done, 2 tool calls (2 completed), 34 characters of text"
    assert rest == transcript.to_markdown(example)


# -- HTML --------------------------------------------------------------------------------


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text outside <style>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if not self._in_style:
            self.text.append(data)


def parse(html: str) -> Tags:
    found = Tags()
    found.feed(html)
    found.close()
    return found


def assert_inert(html: str) -> Tags:
    found = parse(html)
    names = [tag for tag, _ in found.tags]
    assert not LIVE_TAGS & set(names), names
    assert names.count("style") == 1, "only the transcript's own style"
    for tag, attrs in found.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            if name in ("href", "src"):
                assert (value or "").startswith(("http://", "https://", "mailto:")), value
    return found


def hostile() -> TurnState:
    evil = "\n\n".join(PAYLOADS)
    ask = question(
        "choice",
        prompt=PAYLOADS[0],
        options=[{"id": "x", "label": PAYLOADS[1]}, {"id": "y", "label": PAYLOADS[4]}],
        answer=answer("picked", option_id="x", option_ids=["x"], note=PAYLOADS[8]),
    )
    deny = question(answer=answer("deny", note=PAYLOADS[5], text=PAYLOADS[3]))
    calls = [
        card(
            "a",
            5,
            title=PAYLOADS[0],
            tool=PAYLOADS[1],
            server=PAYLOADS[4],
            arguments={"html": PAYLOADS[0], "list": PAYLOADS},
            approved_arguments={"x": PAYLOADS[8]},
            status="completed",
            result=PAYLOADS[1],
            question=question(answer=answer("allow", arguments={"x": PAYLOADS[8]})),
        ),
        card("b", 9, status="failed", outcome="error", error=PAYLOADS[9], current_step=PAYLOADS[2]),
        card("c", 9, status="failed", outcome="denied", error=PAYLOADS[3], question=deny),
        card("d", 20, tool="ask_user", status="completed", question=ask),
        card(
            "e",
            20,
            status="completed",
            kind="execute",
            decided_by="agent",
            content=[
                {"type": "diff", "path": PAYLOADS[2], "old_text": evil, "new_text": PAYLOADS[5]},
                {"type": "diff", "path": PAYLOADS[3], "old_text": None, "new_text": evil},
                {
                    "type": "terminal",
                    "command": PAYLOADS[6],
                    "cwd": PAYLOADS[7],
                    "output": evil,
                    "exit_code": 1,
                },
                {"type": "text", "text": evil},
            ],
            locations=[{"path": PAYLOADS[9], "line": 4}],
        ),
    ]
    plan = [{"content": p, "status": "in_progress"} for p in PAYLOADS]
    return state(
        evil,
        *calls,
        prompt=PAYLOADS[1],
        error=PAYLOADS[0],
        stop_reason=PAYLOADS[8],
        plan=plan,
        thoughts=evil,
    )


def test_payloads_in_every_field_stay_text() -> None:
    html = static.to_html(hostile(), 7)
    found = assert_inert(html)
    text = "".join(found.text)
    for payload in (PAYLOADS[0], PAYLOADS[1], PAYLOADS[4], PAYLOADS[8]):
        assert payload in text, payload
    for payload in (PAYLOADS[2], PAYLOADS[5], PAYLOADS[7], PAYLOADS[9]):
        assert payload in text, payload  # diff paths and lines, the cwd, a location
    assert f"$ {PAYLOADS[6]}" in text
    assert "window.__pwned='link'" in text  # the Markdown link is shown, not linked
    for each in hostile()["calls"].values():
        shown = static.card_html(each) + transcript.card_markdown(each)
        assert not has_invisible(shown.replace("\n", "")), each["tool_call_id"]
    assert "⟨U+2067⟩" in text
    keyed = [attrs for _tag, attrs in found.tags if "data-mead-for" in attrs]
    assert keyed == [{"class": "mead-static", "data-mead-for": "7"}]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_is_rendered_then_sanitised(payload: str) -> None:
    assert_inert(f"<style></style>{static.render_markdown(payload)}")


def test_markdown_renders_and_links_are_safe() -> None:
    html = static.render_markdown(
        "# Plan\n\nSome **bold**, `code`, [docs](https://example.org) and ![a cat](https://x.org/c.png)\n\n"
        "| a | b |\n|---|--:|\n| 1 | 2 |\n"
    )
    found = parse(html)
    tags = [tag for tag, _ in found.tags]
    assert tags[:2] == ["h1", "p"]
    assert {"strong", "code", "table", "td"} <= set(tags)
    links = [attrs for tag, attrs in found.tags if tag == "a"]
    assert links[0] == {
        "href": "https://example.org",
        "target": "_blank",
        "rel": "noopener noreferrer nofollow",
    }
    assert links[1]["href"] == "https://x.org/c.png"
    assert "image: a cat" in "".join(found.text)
    assert "img" not in tags


def test_the_html_shows_text_and_calls_in_order_with_decisions_and_outcomes() -> None:
    html = static.to_html(copy_example(), 3)
    found = parse(html)
    text = " ".join(" ".join(found.text).split())
    order = [
        "write a note",
        "Let me write it.",
        'write_file {"path":"a.txt","text":"use ```fences```"} Completed (allowed by you)',
        "Question Which colour? Answered (chose “Red” by you)",
        "Done: see a.txt",
        "Finished",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions), text
    assert [attrs.get("class") for tag, attrs in found.tags if tag == "details"] == [
        "mead-static-card mead-static-completed",
        "mead-static-card mead-static-completed",
    ]
    style = html[html.index("<style>") : html.index("</style>")]
    assert (
        '.jp-OutputArea:has(.mead-key-3 .mead-turn) > .jp-OutputArea-child:has([data-mead-for="3"])'
        in style
    )


def test_the_same_turn_writes_the_same_transcript() -> None:
    assert static.to_html(copy_example(), 1) == static.to_html(copy_example(), 1)
    assert "call_" not in static.to_html(copy_example(), 1)


def test_the_stylesheet_ships_with_the_package() -> None:
    css = Path(static.__file__).with_name("transcript.css")
    assert css.exists()
    assert ".mead-static" in static.STYLE
    assert "/*" not in static.STYLE


def test_arguments_are_shown_whole_and_the_line_is_short() -> None:
    long = {"text": "x" * 1000}
    html = static.card_html(card(status="completed", arguments=long))
    summary = html[html.index("<summary>") : html.index("</summary>")]
    assert len(summary) < transcript.ONE_LINE_MAX + 200
    assert html_escape(json.dumps(long, indent=2)) in html


# -- where a real kernel publishes it ---------------------------------------------------

KERNEL_SETUP = '''
import threading
from mead_notebook import NotebookInteraction, Router, ScriptedModel, ToolCall, tool
from mead_notebook.policies import AllowAll

gate = threading.Event()

@tool
def write_note(text: str) -> str:
    """Write a note."""
    return f"wrote {text}"

@tool(read_only=True)
def wait_gate() -> str:
    """Wait until the gate opens."""
    return "open" if gate.wait(30) else "closed"

def router(*replies):
    return Router(ScriptedModel([list(r) for r in replies]), [write_note, wait_gate])
'''


@pytest.fixture(scope="module", params=["6.29.5", "7.4.0"])
def kernel(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from kernel.frontend import Frontend

    fe = Frontend(request.param, tmp_path_factory.mktemp(f"transcript-{request.param}"))
    try:
        reply, out = fe.run(KERNEL_SETUP, timeout=60)
        assert reply["status"] == "ok", (reply, out)
        yield fe
    finally:
        fe.close()


def displays(fe: Any, *msg_ids: str) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(type, parent msg_id, display_id, data) of every display message of these cells."""
    return [
        (
            m["msg_type"],
            m["parent_header"].get("msg_id", ""),
            (m["content"].get("transient") or {}).get("display_id", ""),
            m["content"]["data"],
        )
        for m in fe.iopub
        if m["msg_type"] in ("display_data", "update_display_data")
        and m["parent_header"].get("msg_id") in msg_ids
    ]


@pytest.mark.kernel
def test_a_turn_in_a_cell_adds_its_transcript_and_brings_the_summary_up_to_date(
    kernel: Any,
) -> None:
    cell = kernel.execute(
        "w = NotebookInteraction(policy=AllowAll())\n"
        'r = router(["Writing.", ToolCall("write_note", {"text": "hi"})], ["Done."])\n'
        'r.run("note it", interaction=w)\n'
        "None"
    )
    reply = kernel.wait_reply(cell)
    assert reply["content"]["status"] == "ok", reply
    shown = displays(kernel, cell)
    assert [(kind, parent) for kind, parent, _d, _data in shown] == [
        ("display_data", cell),
        ("display_data", cell),
        ("update_display_data", cell),
    ]
    (_, _, widget_id, first), (_, _, transcript_id, static_data), (_, _, updated_id, final) = shown
    assert first["text/plain"] == "NotebookInteraction: running, 0 tool calls, 0 characters of text"
    assert "application/vnd.jupyter.widget-view+json" in first
    summary = "NotebookInteraction: done, 1 tool call (1 completed), 13 characters of text"
    assert updated_id == widget_id
    assert final["text/plain"] == summary
    assert (
        final["application/vnd.jupyter.widget-view+json"]
        == first["application/vnd.jupyter.widget-view+json"]
    )
    assert "text/html" not in final
    assert transcript_id not in ("", widget_id)
    assert static_data["text/plain"].startswith(summary + "\n\n> note it\n\nWriting.\n\n")
    text = " ".join(" ".join(parse(static_data["text/html"]).text).split())
    assert text.index("Writing.") < text.index("write_note") < text.index("Done.")
    assert "Completed (allowed by policy: AllowAll())" in text


@pytest.mark.kernel
def test_a_later_turn_of_the_same_widget_updates_its_transcript(kernel: Any) -> None:
    first = kernel.execute(
        "w2 = NotebookInteraction(policy=AllowAll())\n"
        'router(["One."]).run("first", interaction=w2)\n'
        "None"
    )
    kernel.wait_reply(first)
    second = kernel.execute('router(["Two."]).run("second", interaction=w2)\nNone')
    kernel.wait_reply(second)
    (_, _, transcript_id, data) = displays(kernel, first)[1]
    assert "One." in data["text/plain"]
    later = displays(kernel, second)
    assert [(kind, display_id) for kind, _p, display_id, _d in later] == [
        ("update_display_data", transcript_id),
        ("update_display_data", displays(kernel, first)[0][2]),
    ]
    assert "> second\n\nTwo." in later[0][3]["text/plain"]


@pytest.mark.kernel
def test_a_turn_that_outlives_its_cell_never_writes_into_another_cell(kernel: Any) -> None:
    start = kernel.execute(
        "gate.clear()\n"
        "w3 = NotebookInteraction(policy=AllowAll())\n"
        'turn = router([ToolCall("wait_gate", {})], ["Gate passed."]).start("go", interaction=w3)\n'
        "None"
    )
    kernel.wait_reply(start)
    later = kernel.execute("gate.set()\nturn.result(timeout=30)\nNone")
    kernel.wait_reply(later)
    ended = [d for d in displays(kernel, start, later) if "Gate passed." in str(d[3])]
    assert ended, "the transcript was not published"
    widget_id = displays(kernel, start)[0][2]
    for kind, parent, display_id, data in ended:
        # A new output goes to the cell that shows the widget; elsewhere only the
        # widget's own output (by its display id) may carry the transcript.
        assert (kind, parent) == ("display_data", start) or (
            kind == "update_display_data" and display_id == widget_id and "text/html" in data
        ), (kind, parent == start, display_id == widget_id)
    kinds = [
        (kind, parent == start, display_id == widget_id) for kind, parent, display_id, _ in ended
    ]
    if kernel.version.startswith("7."):
        # ipykernel 7 keeps the cell's parent in the turn's thread: its own output there.
        assert kinds == [("display_data", True, False)]
    else:
        # ipykernel 6 sends it with the running cell's parent: it rides on the widget output.
        assert kinds == [("update_display_data", False, True)]


@pytest.mark.kernel
def test_a_headless_run_saves_the_final_transcript(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nbformat
    from nbclient import NotebookClient

    cell = """
from mead_notebook import NotebookInteraction, Router, ScriptedModel, ToolCall, tool

@tool
def write_note(text: str) -> str:
    \"\"\"Write a note.\"\"\"
    return text

model = ScriptedModel([["Let me **write**.", ToolCall("write_note", {"text": "hi"})], ["Done."]])
Router(model, tools=[write_note]).run("note", interaction=NotebookInteraction(grace=0.2))
None
"""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    NotebookClient(nb, timeout=120, kernel_name="python3").execute(cwd=str(tmp_path))
    path = tmp_path / "headless.ipynb"
    nbformat.write(nb, path)
    outputs = nbformat.read(path, as_version=4).cells[0].outputs
    assert [sorted(o.data) for o in outputs] == [
        ["application/vnd.jupyter.widget-view+json", "text/plain"],
        ["text/html", "text/plain"],
    ]
    summary = "NotebookInteraction: done, 1 tool call (1 expired), 22 characters of text"
    assert outputs[0].data["text/plain"] == summary
    assert outputs[1].data["text/plain"].startswith(summary + "\n\n> note\n\nLet me **write**.")
    text = " ".join(" ".join(parse(outputs[1].data["text/html"]).text).split())
    assert text.index("Let me write") < text.index('write_note {"text":"hi"} Expired')
    assert text.endswith("Done. Finished")


# -- what a call will do, plan and thoughts ---------------------------------------------

EDIT = {"type": "diff", "path": "src/app.py", "old_text": "a\nb\nc\n", "new_text": "a\nB\nc\nd\n"}
SHELL = {"type": "terminal", "command": "pytest -q", "cwd": "/repo", "output": "1 passed"}


def rows_of(html: str) -> list[list[str]]:
    """The cells of every diff row in ``html``, as text."""
    rows = re.findall(r'<tr class="mead-diff-\w+">(.*?)</tr>', html)
    return [list(re.findall(r"<td[^>]*>(.*?)</td>", row)) for row in rows]


def test_a_diff_is_a_unified_diff_with_line_numbers_in_the_html() -> None:
    html = static.card_html(card(content=[EDIT], locations=[{"path": "src/app.py", "line": 2}]))
    assert rows_of(html) == [
        ["", "", "", "@@ -1,3 +1,4 @@"],
        ["1", "1", " ", "a"],
        ["2", "", "-", "b"],
        ["", "2", "+", "B"],
        ["3", "3", " ", "c"],
        ["", "4", "+", "d"],
    ]
    kinds = re.findall(r'<tr class="mead-diff-(\w+)"', html)
    assert kinds == ["hunk", "ctx", "del", "add", "ctx", "add"]
    assert "<code>src/app.py:2</code>" in html


def test_a_long_diff_folds_after_a_screenful_in_the_html() -> None:
    old = "".join(f"old {i}\n" for i in range(60))
    new = "".join(f"new {i}\n" for i in range(60))
    html = static.card_html(card(content=[{**EDIT, "old_text": old, "new_text": new}]))
    shown, _, folded = html.partition('<details class="mead-static-more">')
    assert len(rows_of(shown)) == static.DIFF_FOLD
    assert f"Show {121 - static.DIFF_FOLD} more lines" in folded
    assert len(rows_of(folded)) == 121 - static.DIFF_FOLD


def test_a_command_shows_as_dollar_command_with_its_cwd_and_output() -> None:
    html = static.card_html(card(content=[{**SHELL, "exit_code": 0}]))
    assert '<pre class="mead-static-command">$ pytest -q</pre>' in html
    assert "in <code>/repo</code>" in html
    assert "Output (exit code 0):" in html


def test_markdown_keeps_content_blocks_and_locations() -> None:
    markdown = transcript.card_markdown(
        card(content=[EDIT, SHELL], locations=[{"path": "src/app.py", "line": 2}])
    )
    assert (
        "Diff of `src/app.py`:\n\n```diff\n--- a/src/app.py\n+++ b/src/app.py\n"
        "@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n```"
    ) in markdown
    assert "Command in `/repo`:\n\n```console\n$ pytest -q\n```" in markdown
    assert "Output:\n\n```text\n1 passed\n```" in markdown
    assert "Locations: `src/app.py:2`" in markdown


def test_a_new_file_diffs_from_dev_null() -> None:
    block = {"type": "diff", "path": "n.txt", "old_text": None, "new_text": "x\n"}
    (shown,), _ = content_of([block])
    assert shown["type"] == "diff"
    assert transcript.diff_text(shown) == "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,1 @@\n+x"


def test_a_call_the_agent_allowed_says_so_everywhere() -> None:
    agent = card(status="completed", decided_by="agent", result="ok")
    assert transcript.decision_text(agent) == AGENT_DECIDED
    assert "by you" not in transcript.card_markdown(agent)
    assert AGENT_DECIDED in static.card_html(agent)


def test_plan_and_thoughts_are_kept_apart_from_the_answer() -> None:
    plan = [
        {"content": "Read it", "status": "completed"},
        {"content": "Fix it", "status": "in_progress"},
        {"content": "Test it", "status": "pending"},
    ]
    turn = state("The answer.", plan=plan, thoughts="Maybe *this*.\n\nOr that.")
    markdown = transcript.to_markdown(turn)
    assert "**Plan**\n\n- [x] Read it\n- [ ] Fix it (in progress)\n- [ ] Test it" in markdown
    assert "**Thoughts**\n\n> Maybe *this*.\n>\n> Or that." in markdown
    assert markdown.index("Thoughts") < markdown.index("The answer.")
    html = static.to_html(turn, 1)
    thoughts = html.split('<details class="mead-static-thoughts">', 1)[1].split("</details>", 1)[0]
    assert "<em>this</em>" in thoughts
    assert "The answer." not in thoughts
    assert re.findall(r'<span aria-hidden="true">(.)</span>', html) == ["●", "◐", "○"]


def test_a_state_saved_before_plans_and_thoughts_still_renders() -> None:
    old = state("Hi.")
    assert "plan" not in old
    assert transcript.to_markdown(old) == "Hi.\n"
    assert 'class="mead-static-plan"' not in static.to_html(old, 1)


@pytest.mark.parametrize(
    ("label", "decision", "shown"),
    [
        ("No answer", "No answer: nobody to answer", "nobody to answer"),
        ("Expired", "Expired", None),
        ("Completed", "Allowed by you", "Allowed by you"),
        ("Denied", None, None),
        ("No answer", "No answers here", "No answers here"),
    ],
)
def test_a_decision_beside_its_label_says_only_what_the_label_does_not(
    label: str, decision: str | None, shown: str | None
) -> None:
    from mead_notebook.notebook.labels import beside

    assert beside(label, decision) == shown
