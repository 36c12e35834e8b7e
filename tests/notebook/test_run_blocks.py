"""Code and what running it produced, on a card: kept safe, bounded, and shown in every view."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from test_transcript import PAYLOADS, card, parse, state

from mead_notebook.notebook import highlight, static, transcript
from mead_notebook.notebook.blocks import content_of
from mead_notebook.notebook.cards import new_card, updated
from mead_notebook.notebook.protocol import MAX_BLOCK_TEXT, MAX_HTML, MAX_IMAGE, MAX_RICH

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40).decode()
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0" + b"\x00" * 40).decode()
SVG = base64.b64encode(b"<svg onload=alert(1)></svg>").decode()
CODE = 'import os\ndef f(x):\n    """Doc."""\n    return print(x + 1.5, True)  # note\n'


def kept(*blocks: dict[str, Any]) -> list[Any]:
    found, hidden = content_of(list(blocks))
    assert hidden == 0
    return list(found)


def test_code_and_outputs_are_kept_as_sent_with_what_is_cut_counted() -> None:
    big = "x" * (MAX_BLOCK_TEXT + 7)
    assert kept(
        {"type": "code", "language": "python", "code": CODE},
        {"type": "code", "language": "Python; rm -rf", "code": big},
        {"type": "output", "name": "stderr", "text": "warn\n"},
        {"type": "output", "name": "nonsense", "text": "dropped"},
        {"type": "code", "code": 5},
    ) == [
        {"type": "code", "language": "python", "code": CODE, "cut": 0},
        {"type": "code", "language": "text", "code": "x" * MAX_BLOCK_TEXT, "cut": 7},
        {"type": "output", "name": "stderr", "text": "warn\n", "cut": 0},
    ]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_html_is_sanitised_in_the_kernel(payload: str) -> None:
    [block] = kept(
        {"type": "html", "html": f"<table><tr><td>{payload}</td></tr></table>", "text": "t"}
    )
    html = block["html"]
    names = [tag for tag, _ in parse(html).tags]
    assert set(names) <= {"table", "tbody", "tr", "td", "a", "p"}, names
    for _, attrs in parse(html).tags:
        assert not any(n.startswith("on") for n in attrs), attrs
        assert not (attrs.get("href") or "http").lower().startswith("javascript"), attrs


def test_a_dataframes_table_keeps_its_cells_and_loses_its_style() -> None:
    frame = (
        "<div><style scoped>.dataframe tbody tr th {vertical-align: top}</style>"
        '<table border="1" class="dataframe"><thead><tr style="text-align: right;">'
        "<th></th><th>a</th></tr></thead><tbody><tr><th>0</th><td>1</td></tr></tbody></table></div>"
    )
    [block] = kept({"type": "html", "html": frame, "text": "   a\n0  1"})
    assert block["html"] == (
        "<table><thead><tr><th></th><th>a</th></tr></thead>"
        "<tbody><tr><th>0</th><td>1</td></tr></tbody></table>"
    )
    assert block["text"] == "   a\n0  1"


def test_rich_output_past_its_limits_shows_as_text() -> None:
    [html] = kept({"type": "html", "html": "<p>" + "y" * MAX_HTML + "</p>", "text": "short"})
    assert (html["html"], html["text"]) == (None, "short")
    assert html["cut"] == MAX_HTML + len("<p></p>")
    per = MAX_IMAGE - (MAX_IMAGE % 4)
    big = (PNG + "A" * per)[:per]
    images = kept(
        *[
            {"type": "image", "mime_type": "image/png", "data": big, "alt": str(n)}
            for n in range(MAX_RICH // per + 1)
        ]
    )
    assert [bool(i["data"]) for i in images] == [True] * (MAX_RICH // per) + [False]
    assert images[-1]["cut"] == per


@pytest.mark.parametrize(
    ("mime", "data", "shown"),
    [
        ("image/png", PNG, True),
        ("image/jpeg", JPEG, True),
        ("image/png", JPEG, False),
        ("image/png", SVG, False),
        ("image/png", PNG + "!", False),
        ("image/png", "data:image/png;base64," + PNG, False),
    ],
)
def test_an_image_is_kept_only_when_it_is_what_it_says(mime: str, data: str, shown: bool) -> None:
    [block] = kept({"type": "image", "mime_type": mime, "data": data, "alt": "a plot"})
    assert (block["data"] == data, block["cut"] == 0) == (shown, shown)


def test_an_image_of_another_type_is_no_block() -> None:
    assert kept({"type": "image", "mime_type": "image/svg+xml", "data": SVG, "alt": "x"}) == []


def test_the_code_makes_a_card_incomplete_or_invisible_and_its_outputs_do_not() -> None:
    def flags(*blocks: dict[str, Any], status: str = "pending") -> tuple[bool, bool]:
        made = updated(new_card("c1"), {"status": status, "content": list(blocks)})  # type: ignore[typeddict-item]
        return made["incomplete"], made["invisible"]

    assert flags({"type": "code", "language": "python", "code": "rm\u200b = 1"}) == (False, True)
    assert flags({"type": "code", "language": "python", "code": "x" * (MAX_BLOCK_TEXT + 1)}) == (
        True,
        False,
    )
    assert flags(
        {"type": "code", "language": "python", "code": "print(1)"},
        {"type": "output", "name": "stdout", "text": "\u202e" + "x" * (MAX_BLOCK_TEXT + 1)},
        status="completed",
    ) == (False, False)


def test_the_static_code_is_highlighted_and_reads_exactly_as_it_runs() -> None:
    html = highlight.code_html(CODE, "python")
    assert '<span class="mead-tok-keyword">import</span>' in html
    assert '<span class="mead-tok-def">f</span>' in html
    assert '<span class="mead-tok-comment"># note</span>' in html
    assert '<span class="mead-tok-number">1.5</span>' in html
    assert "".join(parse(html).text) == CODE
    lone_cr = "x = 1\ry = 2"
    shown = highlight.code_html(lone_cr, "python")
    assert "".join(parse(shown).text) == "x = 1⟨U+000D⟩y = 2"
    assert "mead-tok" not in shown
    assert highlight.code_html("a\u202eb", "python").count("⟨U+202E⟩") == 1
    assert highlight.code_html("<b>", "sql") == "&lt;b&gt;"


def hostile_run() -> dict[str, Any]:
    evil = "\n".join(PAYLOADS)
    return card(
        "r",
        0,
        tool="run_python",
        status="completed",
        content=[
            {"type": "code", "language": "python", "code": evil},
            {"type": "output", "name": "stdout", "text": evil},
            {"type": "output", "name": "error", "text": evil},
            {"type": "html", "html": evil, "text": evil},
            {"type": "image", "mime_type": "image/png", "data": PNG, "alt": evil},
            {"type": "image", "mime_type": "image/png", "data": SVG, "alt": evil},
        ],
    )


def test_payloads_in_code_and_outputs_stay_text_in_the_static_transcript() -> None:
    html = static.to_html(state("", hostile_run()), 3)
    found = parse(html)
    names = {tag for tag, _ in found.tags}
    assert not names & {"script", "iframe", "svg", "math", "object", "embed", "form", "input"}
    images = [attrs for tag, attrs in found.tags if tag == "img"]
    assert [sorted(i) for i in images] == [["alt", "class", "src"]]
    assert images[0]["src"] == f"data:image/png;base64,{PNG}"
    assert "\n".join(PAYLOADS).startswith(images[0]["alt"] or "?")
    for tag, attrs in found.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            if name == "href":
                assert (value or "").startswith(("http://", "https://", "mailto:")), value
    text = "".join(found.text)
    assert PAYLOADS[1] in text
    assert "⟨U+2067⟩" in text


def test_every_view_shows_the_code_and_its_outputs() -> None:
    ran = card(
        "r",
        0,
        tool="run_python",
        status="completed",
        content=[
            {"type": "code", "language": "python", "code": "df.head()"},
            {"type": "output", "name": "stdout", "text": "hello\n"},
            {"type": "html", "html": "<table><tr><td>1</td></tr></table>", "text": "   a\n0  1"},
            {
                "type": "image",
                "mime_type": "image/png",
                "data": PNG,
                "alt": "<Figure size 640x480>",
            },
            {"type": "output", "name": "error", "text": "Traceback ...\nValueError: no"},
        ],
    )
    markdown = transcript.card_markdown(ran)
    assert "```python\ndf.head()\n```" in markdown
    assert "Output:\n\n```text\nhello\n\n```" in markdown
    assert "Shown as HTML:\n\n```text\n   a\n0  1\n```" in markdown
    assert "Image (image/png): \\<Figure size 640x480\\>." in markdown
    assert "Traceback:\n\n```text\nTraceback ...\nValueError: no\n```" in markdown
    html = static.card_html(ran)
    assert '<pre class="mead-static-code" data-language="python"><code>df' in html
    assert (
        '<div class="mead-static-html"><table><tbody><tr><td>1</td></tr></tbody></table></div>'
        in html
    )
    assert f'src="data:image/png;base64,{PNG}"' in html
    assert "mead-static-output-error" in html


def test_a_rich_output_not_kept_says_so_in_every_view() -> None:
    ran = card(
        "r",
        0,
        content=[{"type": "image", "mime_type": "image/png", "data": SVG, "alt": "x"}],
    )
    said = f"image/png not shown ({len(SVG)} characters: over the card's limit, or not valid)."
    assert said.replace("'", "&#x27;") in static.card_html(ran)
    assert transcript.card_markdown(ran).endswith(said.replace("(", "(").replace("'", "'"))


RUN_TURN = json.loads((Path(__file__).parents[1] / "shared" / "copy-turn-run.json").read_text())
"""A turn with code and what it produced, and its Markdown: js/test/run.test.js checks the
page's Copy against the same."""


def test_markdown_of_code_and_outputs_is_the_frontends_copy() -> None:
    assert transcript.to_markdown(copy.deepcopy(RUN_TURN["state"])) == RUN_TURN["markdown"]


def test_the_audit_keeps_the_code_and_an_image_by_its_digest(tmp_path: Path) -> None:
    from mead_notebook.notebook.auditing import Auditor

    ran = card(
        "r",
        0,
        tool="run_python",
        status="completed",
        content=[
            {"type": "code", "language": "python", "code": "plot(df)"},
            {"type": "image", "mime_type": "image/png", "data": PNG, "alt": "a figure"},
        ],
    )
    Auditor(tmp_path / "audit.jsonl", "w1").ended(ran)
    [line] = (tmp_path / "audit.jsonl").read_text().splitlines()
    content = json.loads(line)["content"]
    assert content[0] == {"type": "code", "language": "python", "code": "plot(df)", "cut": 0}
    assert content[1] == {
        "type": "image",
        "mime_type": "image/png",
        "alt": "a figure",
        "base64_chars": len(PNG),
        "sha256": hashlib.sha256(PNG.encode()).hexdigest(),
        "cut": 0,
    }
    assert PNG not in line


def test_a_card_before_its_end_never_shows_what_the_call_produced() -> None:
    """An image or a table on a pending card could pass for anything (a status, a button):
    only an ended call has produced something."""
    produced = [
        {"type": "code", "language": "python", "code": "x = 1"},
        {"type": "image", "mime_type": "image/png", "data": PNG, "alt": "Allowed by you"},
        {"type": "html", "html": "<p>Completed</p>", "text": "Completed"},
        {"type": "output", "name": "stdout", "text": "ok"},
    ]
    pending = updated(new_card("c1"), {"status": "pending", "content": produced})  # type: ignore[typeddict-item]
    assert [b["type"] for b in pending["content"]] == ["code"]
    assert (pending["blocks_hidden"], pending["incomplete"]) == (3, True)
    ended = updated(pending, {"status": "completed", "content": produced})  # type: ignore[typeddict-item]
    assert [b["type"] for b in ended["content"]] == ["code", "image", "html", "output"]
    assert (ended["blocks_hidden"], ended["incomplete"]) == (0, False)
