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

from markdown_it import MarkdownIt

from ..interaction import PlanEntry
from .agent_info import agent_text, ran_by_agent, ran_by_agent_text
from .highlight import code_html
from .labels import OUTPUT_LABEL, PLAN_GLYPH, STOP_REASON, beside
from .protocol import Card, CardBlock, CardDiff
from .reveal import reveal_html
from .sanitize import clean_html
from .transcript import (
    TurnState,
    card_left_out,
    decision_text,
    is_choice,
    layout,
    left_out,
    location_text,
    one_line,
    picked_ids,
    question_of,
    status_label,
    warnings,
)

__all__ = ["card_html", "render_markdown", "to_html"]

_markdown = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def _image_as_link(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """Images become links, as in the live view: a remote image could leak data."""
    token = tokens[idx]
    label = self.renderInlineAsText(token.children or [], options, env)
    src = html.escape(str(token.attrGet("src") or ""))
    return f'<a href="{src}">{html.escape(f"image: {label}" if label else "image")}</a>'


_markdown.add_render_rule("image", _image_as_link)


def render_markdown(text: str) -> str:
    """Markdown to sanitised HTML: raw HTML in ``text`` shows as text."""
    return clean_html(_markdown.render(text))


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


def _v(value: Any) -> str:
    """Untrusted text of many lines, escaped, each invisible character a marked ``⟨U+XXXX⟩``."""
    return reveal_html(str(value))


def _v1(value: Any) -> str:
    """Untrusted text of one line (a name, a path), escaped and marked; line breaks as ⏎."""
    return reveal_html(str(value), one_line=True)


def _not_shown(said: list[str]) -> str:
    return f'<p class="mead-static-notshown">{_e("; ".join(said) + ".")}</p>' if said else ""


def card_html(card: Card) -> str:
    """One card as a ``<details>``: a line (tool, arguments, outcome, decision), then the rest.

    Every field from the agent is escaped, its invisible characters shown as
    ``⟨U+XXXX⟩``; the card's warnings come first in its body.
    """
    label, decision = status_label(card), decision_text(card)
    question = question_of(card)
    status = card.get("status")
    css = "completed" if status == "completed" else "failed" if status == "failed" else "open"
    more = beside(label, decision)
    aside = (
        f' <span class="mead-static-muted">({_v1(more[:1].lower() + more[1:])})</span>'
        if more
        else ""
    )
    body: list[str] = [
        f'<p class="mead-static-warning" role="note">{_e(w)}</p>' for w in warnings(card)
    ]
    if question is not None and is_choice(card):
        prompt = question.get("prompt") or "Choose an option"
        line = f"<strong>Question</strong> {_v1(prompt)} <strong>{_e(label)}</strong>"
        picked = set(picked_ids(question))
        items = "".join(
            f"<li>✓ <strong>{_v1(o['label'])}</strong> (picked)</li>"
            if o["id"] in picked
            else f"<li>{_v1(o['label'])}</li>"
            for o in question.get("options") or []
        )
        body.append(f"<p>{_v(prompt)}</p><ul>{items}</ul>")
    else:
        tool = card.get("tool") or card.get("tool_call_id") or "?"
        line = (
            f"<strong>{_v1(card.get('title') or tool)}</strong> "
            f"<code>{_v1(one_line(card.get('arguments')))}</code> <strong>{_e(label)}</strong>"
        )
        where = " · ".join(_v1(x) for x in (tool, card.get("server"), card.get("class")) if x)
        body.append(f'<p class="mead-static-muted">{where}</p>')
        arguments = json.dumps(
            card.get("arguments") or {}, indent=2, ensure_ascii=False, default=str
        )
        body.append(f"<pre>{_v(arguments)}</pre>")
        body.extend(content_html(b) for b in card.get("content") or [])
        places = [location_text(loc) for loc in card.get("locations") or []]
        if any(places):
            items = "".join(f"<li><code>{_v1(p)}</code></li>" for p in places if p)
            body.append(f'<ul class="mead-static-locations" aria-label="Locations">{items}</ul>')
        body.append(_not_shown(card_left_out(card)))
        approved = card.get("approved_arguments")
        if isinstance(approved, dict):
            edited = _v(json.dumps(approved, indent=2, ensure_ascii=False, default=str))
            body.append(f"<p>Ran with edited arguments:</p><pre>{edited}</pre>")
    if decision:
        body.append(f"<p>{_v(decision)}</p>")
    if card.get("result") and not is_choice(card):
        body.append(f'<p class="mead-static-result">Result: {_v(card["result"])}</p>')
    if card.get("error") and not (is_choice(card) and card.get("outcome") == "no_answer"):
        body.append(f'<p class="mead-static-error">Error: {_v(card["error"])}</p>')
    return (
        f'<details class="mead-static-card mead-static-{css}">'
        f"<summary>{line}{aside}</summary>{''.join(body)}</details>"
    )


DIFF_FOLD: Final = 40
"""Rows of a diff shown before the rest folds (one click away, in a ``<details>``)."""


def diff_html(block: CardDiff) -> str:
    """A diff block as a table: old and new line numbers, sign, text; long diffs fold.

    The rows are the kernel's (the whole texts compared); what they leave out is said.
    """
    rows = []
    for row in block["rows"]:
        sign = row["sign"]
        css = {"+": "add", "-": "del", "@": "hunk", "\\": "note"}.get(sign, "ctx")
        text = _e(row["text"]) if sign in ("@", "\\") else _v(row["text"])
        if row["cut"]:
            text += '<span class="mead-static-cut">…</span>'
        rows.append(
            f'<tr class="mead-diff-{css}"><td class="mead-diff-num">{_e(row["old"] or "")}</td>'
            f'<td class="mead-diff-num">{_e(row["new"] or "")}</td>'
            f'<td class="mead-diff-sign">{_e(sign if sign in "+- " else "")}</td>'
            f'<td class="mead-diff-text">{text}</td></tr>'
        )
    new_file = " (new file)" if block["new_file"] else ""
    stat = f" +{block['added']} \N{MINUS SIGN}{block['removed']}"
    head = (
        f'<p class="mead-static-muted">Diff of <code>{_v1(block["path"])}</code>{new_file}'
        f"{_e(stat)}</p>"
    )
    if not rows:
        return f'{head}<p class="mead-static-muted">No change.</p>{_not_shown(left_out(block))}'
    shown = "".join(rows[:DIFF_FOLD])
    table = f'<table class="mead-static-diff">{shown}</table>'
    if len(rows) > DIFF_FOLD:
        rest = "".join(rows[DIFF_FOLD:])
        table += (
            f'<details class="mead-static-more"><summary>Show {len(rows) - DIFF_FOLD} more lines'
            f'</summary><table class="mead-static-diff">{rest}</table></details>'
        )
    return head + table + _not_shown(left_out(block))


def content_html(block: CardBlock) -> str:
    """One content block: text, a diff, a terminal command with its cwd and output,
    code, or what running code produced."""
    if block["type"] == "text":
        return f'<pre class="mead-static-block">{_v(block["text"])}</pre>' + _not_shown(
            left_out(block)
        )
    if block["type"] == "diff":
        return diff_html(block)
    if block["type"] != "terminal":
        return run_html(block) + _not_shown(left_out(block))
    cwd = block.get("cwd")
    where = f' <span class="mead-static-muted">in <code>{_v1(cwd)}</code></span>' if cwd else ""
    parts = [f'<pre class="mead-static-command">$ {_v(block["command"])}</pre>{where}']
    code = block.get("exit_code")
    if block.get("output") or code is not None:
        ended = f" (exit code {_e(code)})" if code is not None else ""
        parts.append(f"<p>Output{ended}:</p><pre>{_v(block.get('output') or '')}</pre>")
    parts.append(_not_shown(left_out(block)))
    return "".join(parts)


_BASE64: Final = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif"})


def run_html(block: CardBlock) -> str:
    """Code (highlighted in the theme's editor colours), or one output of running it:
    printed text, a value, a traceback, sanitised HTML, an image."""
    if block["type"] == "code":
        language = _e(block["language"])
        return (
            f'<pre class="mead-static-code" data-language="{language}">'
            f"<code>{code_html(block['code'], block['language'])}</code></pre>"
        )
    if block["type"] == "output":
        name = block["name"]
        label = OUTPUT_LABEL.get(name, name)
        return (
            f'<p class="mead-static-muted">{_e(label)}</p>'
            f'<pre class="mead-static-output mead-static-output-{_e(name)}">'
            f"{_v(block['text'])}</pre>"
        )
    if block["type"] == "html":
        if block["html"] is not None:
            return f'<div class="mead-static-html">{clean_html(block["html"])}</div>'
        return f'<pre class="mead-static-output">{_v(block["text"])}</pre>'
    if block["type"] == "image":
        data, mime = block["data"], block["mime_type"]
        if not data or mime not in _IMAGE_TYPES or _BASE64.fullmatch(data) is None:
            return ""
        return (
            f'<img class="mead-static-image" src="data:{mime};base64,{data}" '
            f'alt="{_e(block["alt"])}">'
        )
    return ""


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
        f'<span class="mead-static-muted">{_e(status.capitalize())}</span>',
    ]
    agent = agent_text(state.get("agent"))
    if agent:
        parts.append(f'<p class="mead-static-agent mead-static-muted">Agent: {_e(agent)}</p>')
    parts.append("</div>")
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
    unasked = ran_by_agent_text(ran_by_agent(state["calls"].values()))
    if unasked:
        parts.append(f'<p class="mead-static-agent-ran">{_e(unasked)}.</p>')
    stop = state["stop_reason"]
    if stop:
        ended = STOP_REASON.get(stop, f"Stopped: {stop}")
        parts.append(f'<p class="mead-static-end">{_e(ended)}</p>')
    if state["error"]:
        parts.append(f'<p class="mead-static-failure">{_e(state["error"])}</p>')
    parts.append("</div>")
    return "".join(parts)
