"""The static transcript as HTML: what a saved notebook shows where the live view cannot.

Text is rendered by markdown-it-py with raw HTML off (raw HTML shows as text)
and sanitised by nh3, images become links as in the live view; every card field
is escaped. The HTML carries its own scoped style and, for JupyterLab and
Notebook 7, the rule that lets the live view of its widget hide it.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any, Final

import nh3
from markdown_it import MarkdownIt

from ..interaction import ContentBlock, DiffBlock, PlanEntry
from .blocks import unified_diff
from .labels import PLAN_GLYPH, STOP_REASON
from .protocol import Card
from .transcript import (
    TurnState,
    decision_text,
    is_choice,
    layout,
    location_text,
    one_line,
    picked_ids,
    question_of,
    status_label,
)

__all__ = ["card_html", "render_markdown", "to_html"]

_markdown = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_cleaner = nh3.Cleaner(
    tags={
        *("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "s", "del"),
        *("code", "pre", "blockquote", "ul", "ol", "li", "a"),
        *("table", "thead", "tbody", "tr", "th", "td"),
    },
    attributes={"a": {"href", "title"}, "ol": {"start"}},
    url_schemes={"http", "https", "mailto"},
    link_rel="noopener noreferrer nofollow",
    set_tag_attribute_values={"a": {"target": "_blank"}},
)


def _image_as_link(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """Images become links, as in the live view: a remote image could leak data."""
    token = tokens[idx]
    label = self.renderInlineAsText(token.children or [], options, env)
    src = html.escape(str(token.attrGet("src") or ""))
    return f'<a href="{src}">{html.escape(f"image: {label}" if label else "image")}</a>'


_markdown.add_render_rule("image", _image_as_link)


def render_markdown(text: str) -> str:
    """Markdown to sanitised HTML: raw HTML in ``text`` shows as text."""
    return str(_cleaner.clean(_markdown.render(text)))


STYLE: Final = " ".join(
    re.sub(
        r"/\*.*?\*/", "", (Path(__file__).parent / "transcript.css").read_text("utf-8"), flags=re.S
    ).split()
)
"""The static transcript's own look, scoped to ``.mead-static``."""

_HIDE: Final = (
    ".jp-OutputArea:has(.mead-key-{key} .mead-turn)"
    ' > .jp-OutputArea-child:has([data-mead-for="{key}"]){{display:none}}\n'
    '.jp-OutputArea:has([data-mead-for="{key}"]):not(:has(.mead-turn))'
    " > .jp-OutputArea-child:has(> .jp-OutputArea-output.jupyter-widgets)"
    ':has(~ .jp-OutputArea-child [data-mead-for="{key}"]){{display:none}}\n'
)
"""In JupyterLab and Notebook 7: the live view of widget ``key`` hides this copy, and
where no live view is, a widget output before it that JupyterLab marked as failed
(``jupyter-widgets`` on the output itself: "model not found") is hidden instead.
``:has()`` cannot nest, hence the class rather than a test of the output's content."""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def card_html(card: Card) -> str:
    """One card as a ``<details>``: a line (tool, arguments, outcome, decision), then the rest."""
    label, decision = status_label(card), decision_text(card)
    question = question_of(card)
    status = card.get("status")
    css = "completed" if status == "completed" else "failed" if status == "failed" else "open"
    aside = (
        f' <span class="mead-static-muted">({_e(decision[:1].lower() + decision[1:])})</span>'
        if decision and decision != label
        else ""
    )
    body: list[str] = []
    if question is not None and is_choice(card):
        prompt = question.get("prompt") or "Choose an option"
        line = f"<strong>Question</strong> {_e(prompt)} <strong>{_e(label)}</strong>"
        picked = set(picked_ids(question))
        items = "".join(
            f"<li>✓ <strong>{_e(o['label'])}</strong> (picked)</li>"
            if o["id"] in picked
            else f"<li>{_e(o['label'])}</li>"
            for o in question.get("options") or []
        )
        body.append(f"<p>{_e(prompt)}</p><ul>{items}</ul>")
    else:
        tool = card.get("tool") or card.get("tool_call_id") or "?"
        line = (
            f"<strong>{_e(card.get('title') or tool)}</strong> "
            f"<code>{_e(one_line(card.get('arguments')))}</code> <strong>{_e(label)}</strong>"
        )
        where = " · ".join(_e(x) for x in (tool, card.get("server"), card.get("class")) if x)
        body.append(f'<p class="mead-static-muted">{where}</p>')
        arguments = json.dumps(
            card.get("arguments") or {}, indent=2, ensure_ascii=False, default=str
        )
        body.append(f"<pre>{_e(arguments)}</pre>")
        body.extend(content_html(b) for b in card.get("content") or [])
        places = [location_text(loc) for loc in card.get("locations") or []]
        if any(places):
            items = "".join(f"<li><code>{_e(p)}</code></li>" for p in places if p)
            body.append(f'<ul class="mead-static-locations" aria-label="Locations">{items}</ul>')
        approved = card.get("approved_arguments")
        if isinstance(approved, dict):
            edited = _e(json.dumps(approved, indent=2, ensure_ascii=False, default=str))
            body.append(f"<p>Ran with edited arguments:</p><pre>{edited}</pre>")
    if decision:
        body.append(f"<p>{_e(decision)}</p>")
    if card.get("result") and not is_choice(card):
        body.append(f'<p class="mead-static-result">Result: {_e(card["result"])}</p>')
    if card.get("error") and not (is_choice(card) and card.get("outcome") == "no_answer"):
        body.append(f'<p class="mead-static-error">Error: {_e(card["error"])}</p>')
    return (
        f'<details class="mead-static-card mead-static-{css}">'
        f"<summary>{line}{aside}</summary>{''.join(body)}</details>"
    )


DIFF_FOLD: Final = 40
"""Rows of a diff shown before the rest folds (one click away, in a ``<details>``)."""


def diff_html(block: DiffBlock) -> str:
    """A diff block as a table: old and new line numbers, sign, text; long diffs fold."""
    rows = []
    for sign, old, new, text in unified_diff(block):
        css = {"+": "add", "-": "del", "@": "hunk"}.get(sign, "ctx")
        rows.append(
            f'<tr class="mead-diff-{css}"><td class="mead-diff-num">{_e(old or "")}</td>'
            f'<td class="mead-diff-num">{_e(new or "")}</td>'
            f'<td class="mead-diff-sign">{_e(sign if sign != "@" else "")}</td>'
            f'<td class="mead-diff-text">{_e(text)}</td></tr>'
        )
    new_file = " (new file)" if block["old_text"] is None else ""
    head = f'<p class="mead-static-muted">Diff of <code>{_e(block["path"])}</code>{new_file}</p>'
    if not rows:
        return f'{head}<p class="mead-static-muted">No change.</p>'
    shown = "".join(rows[:DIFF_FOLD])
    table = f'<table class="mead-static-diff">{shown}</table>'
    if len(rows) > DIFF_FOLD:
        rest = "".join(rows[DIFF_FOLD:])
        table += (
            f'<details class="mead-static-more"><summary>Show {len(rows) - DIFF_FOLD} more lines'
            f'</summary><table class="mead-static-diff">{rest}</table></details>'
        )
    return head + table


def content_html(block: ContentBlock) -> str:
    """One content block: text, a diff, or a terminal command with its cwd and output."""
    if block["type"] == "text":
        return f'<pre class="mead-static-block">{_e(block["text"])}</pre>'
    if block["type"] == "diff":
        return diff_html(block)
    cwd = block.get("cwd")
    where = f' <span class="mead-static-muted">in <code>{_e(cwd)}</code></span>' if cwd else ""
    parts = [f'<pre class="mead-static-command">$ {_e(block["command"])}</pre>{where}']
    code = block.get("exit_code")
    if block.get("output") or code is not None:
        ended = f" (exit code {_e(code)})" if code is not None else ""
        parts.append(f"<p>Output{ended}:</p><pre>{_e(block.get('output') or '')}</pre>")
    return "".join(parts)


def plan_html(plan: list[PlanEntry]) -> str:
    """The plan as a checklist, a glyph per status."""
    items = "".join(
        f'<li class="mead-plan-{_e(entry["status"])}"><span aria-hidden="true">'
        f"{_e(PLAN_GLYPH.get(entry['status'], '?'))}</span> {_e(entry['content'])}"
        f'<span class="mead-static-muted"> ({_e(entry["status"].replace("_", " "))})</span></li>'
        for entry in plan
    )
    return f'<div class="mead-static-plan"><strong>Plan</strong><ul>{items}</ul></div>'


def to_html(state: TurnState, key: int) -> str:
    """The static transcript: prompt, text and cards in order, how the turn ended.

    ``key`` ties it to its widget's live view (``mead-key-<key>``), which hides it.
    """
    status = state["status"]
    parts = [
        f'<div class="mead-static" data-mead-for="{int(key)}">',
        f"<style>{STYLE}{_HIDE.format(key=int(key))}</style>",
        '<div class="mead-static-header">',
        f'<p class="mead-static-prompt">{_e(state["prompt"])}</p>' if state["prompt"] else "",
        f'<span class="mead-static-muted">{_e(status.capitalize())}</span></div>',
    ]
    if state.get("plan"):
        parts.append(plan_html(state.get("plan") or []))
    thoughts = state.get("thoughts") or ""
    if thoughts.strip():
        parts.append(
            '<details class="mead-static-thoughts"><summary>Thoughts</summary>'
            f"{render_markdown(thoughts)}</details>"
        )
    for item in layout(state["text"], state["calls"], state["order"]):
        if isinstance(item, str):
            if item.strip():
                parts.append(f'<div class="mead-static-text">{render_markdown(item)}</div>')
        else:
            parts.extend(card_html(card) for card in item)
    stop = state["stop_reason"]
    if stop:
        ended = STOP_REASON.get(stop, f"Stopped: {stop}")
        parts.append(f'<p class="mead-static-end">{_e(ended)}</p>')
    if state["error"]:
        parts.append(f'<p class="mead-static-failure">{_e(state["error"])}</p>')
    parts.append("</div>")
    return "".join(parts)
