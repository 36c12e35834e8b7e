"""The transcript of a turn: text and cards in order, as HTML, Markdown and a summary.

A saved notebook keeps it next to the live widget (see :mod:`.outputs`), so a
notebook opened without its kernel, or rendered by nbconvert, still shows the
text and every call with its decision and outcome. The layout is the live
view's (``js/src/transcript.js``): the text is cut at each card's
``text_offset``. Markdown is rendered by markdown-it-py with raw HTML off and
sanitised by nh3; every other field is escaped. Nothing here depends on time
or ids, so a turn that runs the same way writes the same transcript.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
from collections.abc import Callable
from typing import Any, Final, TypedDict

from ..interaction import AgentInfo, PlanEntry
from .agent_info import agent_text, ran_by_agent, ran_by_agent_text
from .labels import (
    AGENT_DECIDED,
    BY,
    DECISION,
    INCOMPLETE_WARNING,
    INVISIBLE_WARNING,
    OUTCOME_LABEL,
    OUTPUT_LABEL,
    RICH_NOT_SHOWN,
    STATUS_LABEL,
    UNMADE,
    beside,
    not_shown,
)
from .protocol import Card, CardBlock, CardDiff, Question
from .reveal import reveal
from .text import utf16_len

__all__ = [
    "TurnState",
    "decision_text",
    "is_choice",
    "layout",
    "left_out",
    "status_label",
    "summary",
    "to_markdown",
    "to_text",
    "warnings",
]


class _TurnFields(TypedDict):
    prompt: str
    status: str
    stop_reason: str
    error: str
    text: str
    calls: dict[str, Card]
    order: list[str]


class TurnState(_TurnFields, total=False):
    """The synced traits a transcript is made from (``thoughts`` and ``plan`` since version 2;
    ``agent`` where the turn's source described it)."""

    thoughts: str
    plan: list[PlanEntry]
    agent: AgentInfo


ONE_LINE_MAX: Final = 300
"""Longest one-line arguments in a card's summary line, in characters."""


# -- layout ----------------------------------------------------------------------------


def layout(text: str, calls: dict[str, Card], order: list[str]) -> list[str | list[Card]]:
    """Text and cards in the order they happened: stretches of text, and lists of cards.

    The text is cut at each card's ``text_offset`` (UTF-16 code units, clamped to
    the text; a card without one goes at the end); cards at one offset keep their
    order in ``order``, and cards missing from ``order`` come after the others.
    """
    length = utf16_len(text)
    ids = [i for i in dict.fromkeys(order) if isinstance(calls.get(i), dict)]
    listed = set(ids)
    ids += [i for i, c in calls.items() if isinstance(c, dict) and i not in listed]
    placed = sorted(
        ((_place(calls[i], length), n, calls[i]) for n, i in enumerate(ids)),
        key=lambda p: (p[0], p[1]),
    )
    index = _indexer(text)
    items: list[str | list[Card]] = []
    position = 0
    for at, _n, card in placed:
        if at > position:
            items.append(text[index(position) : index(at)])
            position = at
        last = items[-1] if items else None
        if isinstance(last, list) and _place(last[0], length) == at:
            last.append(card)
        else:
            items.append([card])
    if length > position:
        items.append(text[index(position) :])
    return items


def _place(card: Card, length: int) -> int:
    offset = card.get("text_offset")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        return length
    return min(offset, length)


def _indexer(text: str) -> Callable[[int], int]:
    """A function from UTF-16 offsets in ``text`` to string indexes (rounded up to a character)."""
    if utf16_len(text) == len(text):
        return lambda offset: offset
    ends = list(itertools.accumulate((2 if ord(ch) > 0xFFFF else 1 for ch in text), initial=0))
    return lambda offset: bisect.bisect_left(ends, offset)


# -- words -----------------------------------------------------------------------------


def question_of(card: Card) -> Question | None:
    question = card.get("question")
    return question if isinstance(question, dict) else None


def is_choice(card: Card) -> bool:
    """Whether the card is a question to the person (``ask_user``), not a tool call."""
    question = question_of(card)
    return question is not None and question.get("kind") == "choice"


def status_label(card: Card) -> str:
    """The card's outcome ("Denied", "Timed out"...), else its status, as the live view says it."""
    outcome = card.get("outcome")
    if isinstance(outcome, str) and outcome in OUTCOME_LABEL:
        return OUTCOME_LABEL[outcome]
    question = question_of(card)
    if card.get("status") == "pending" and question is not None and question.get("answer") is None:
        return "Waiting for you"
    if card.get("status") == "completed" and is_choice(card):
        return "Answered"
    return STATUS_LABEL.get(str(card.get("status")), "Unknown")


def decision_text(card: Card) -> str:
    """How the card's question was settled ("Denied by you: note"), or "" if it has none."""
    question = question_of(card)
    answer = question.get("answer") if question is not None else None
    if card.get("decided_by") == "agent":
        return AGENT_DECIDED
    if question is None or not isinstance(answer, dict):
        return ""
    decision, by_key = str(answer.get("decision") or ""), str(answer.get("by") or "")
    by = f" {BY[by_key]}" if by_key in BY else ""
    rule = answer.get("rule")
    rule = rule_label(rule) if isinstance(rule, str) and rule else ""
    picked = picked_ids(question)
    labels = {o["id"]: o["label"] for o in question.get("options") or []}
    if isinstance(answer.get("text"), str) and answer["text"]:
        text = f"Answered “{answer['text']}”{by}"
    elif picked:
        text = "Chose " + ", ".join(f"“{labels.get(p, p)}”" for p in picked) + by
    elif decision == "allow" and by_key == "rule":
        text = f"Allowed{by} for {rule}" if rule else f"Allowed{by}"
    elif decision == "allow" and rule:
        text = f"Allowed{by}, and always from now on for {rule}"
    elif decision == "deny" and by_key == "rule":
        text = f"Denied by your “Deny always” rule for {rule}" if rule else "Denied by a rule"
    elif decision == "deny" and rule:
        text = f"Denied{by}, and always from now on for {rule}"
    elif decision in DECISION:
        text = DECISION[decision] if decision in UNMADE else DECISION[decision] + by
    else:
        text = "Settled"
    note = answer.get("note")
    note = note.strip() if isinstance(note, str) else ""
    return f"{text}: {note}" if note else text


def rule_label(rule: str) -> str:
    """A rule in words: the kernel names it by what it covers; state saved by protocol 4
    and older named it by scope and value ("tool delete_file": "the tool delete_file")."""
    scope, _, value = rule.partition(" ")
    if scope == "tool" and value:
        return f"the tool {value}"
    if scope == "server" and value:
        return f"every tool on {value}"
    if scope == "class" and value:
        return "every read tool" if value == "read" else f"every {value} tool"
    return rule


def picked_ids(question: Question) -> list[str]:
    """The ids of the options a settled choice picked."""
    answer = question.get("answer")
    if not isinstance(answer, dict):
        return []
    if isinstance(answer.get("option_ids"), list):
        return [p for p in answer["option_ids"] or [] if isinstance(p, str)]
    option_id = answer.get("option_id")
    return [option_id] if isinstance(option_id, str) else []


def _state(card: Card) -> str:
    label = status_label(card)
    more = beside(label, decision_text(card))
    return f"{label} · {more}" if more else label


def one_line(value: Any) -> str:
    text = json.dumps(value if value is not None else {}, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= ONE_LINE_MAX else text[: ONE_LINE_MAX - 1] + "…"


def summary(status: str, calls: list[Card], chars: int) -> str:
    """One line: the turn's status, its calls by outcome, and how much text it has."""
    counts: dict[str, int] = {}
    for card in calls:
        kind = str(card.get("outcome") or card.get("status"))
        counts[kind] = counts.get(kind, 0) + 1
    detail = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    noun = "call" if len(calls) == 1 else "calls"
    described = f"{len(calls)} tool {noun}" + (f" ({detail})" if detail else "")
    unasked = ran_by_agent(calls)
    if unasked:
        described += f", {unasked} run under the agent's own rules"
    return f"NotebookInteraction: {status}, {described}, {chars} characters of text"


def state_summary(state: TurnState) -> str:
    """:func:`summary` of a whole state."""
    return summary(state["status"], list(state["calls"].values()), len(state["text"]))


# -- Markdown (what Copy gives, and the static transcript's text/plain) -----------------


def _inline_code(text: str) -> str:
    flat = " ".join(text.split())
    longest = max((len(run) for run in re.findall("`+", flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if not flat or flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def _code_block(text: str, info: str = "") -> str:
    longest = max((len(run) for run in re.findall("`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _escape_md(text: str) -> str:
    flat = " ".join(text.split())
    return "".join(f"\\{c}" if c in "\\`*_[]<>|~&!" else c for c in flat)


def card_markdown(card: Card) -> str:
    """One card as Markdown: a line naming it and its outcome, its arguments, result or error.

    Invisible characters show as ``⟨U+XXXX⟩`` and line breaks in names as ⏎; a
    card that has them, or that does not show everything, says so first.
    """
    state = reveal(_state(card), one_line=True)
    question = question_of(card)
    warned = [f"**Warning:** {_escape_md(w)}" for w in warnings(card)]
    if question is not None and is_choice(card):
        prompt = reveal(question.get("prompt") or "Choose an option", one_line=True)
        parts = [f"**Question:** {_escape_md(prompt)} ({_escape_md(state)})", *warned]
        picked = set(picked_ids(question))
        options = [
            f"- [{'x' if o['id'] in picked else ' '}] {_option_md(o['label'])}"
            for o in question.get("options") or []
        ]
        if options:
            parts.append("\n".join(options))
        return "\n\n".join(parts)
    tool = reveal(card.get("tool") or card.get("tool_call_id") or "?", one_line=True)
    server = reveal(card.get("server") or "", one_line=True)
    on = f" on {_inline_code(server)}" if server else ""
    parts = [f"**Tool call** {_inline_code(tool)}{on}: {_escape_md(state)}", *warned]
    parts.append(_code_block(reveal(_json(card.get("arguments"))), "json"))
    parts.extend(content_markdown(card))
    approved = card.get("approved_arguments")
    if isinstance(approved, dict):
        edited = _code_block(reveal(_json(approved)), "json")
        parts.append(f"Ran with edited arguments:\n\n{edited}")
    for name, value in (("Result", card.get("result")), ("Error", card.get("error"))):
        if isinstance(value, str) and value:
            parts.append(f"{name}:\n\n{_code_block(reveal(value), 'text')}")
    return "\n\n".join(parts)


def _option_md(label: str) -> str:
    return _escape_md(reveal(label, one_line=True))


def warnings(card: Card) -> list[str]:
    """What a card says before anything else: invisible characters, parts not shown."""
    said = []
    if card.get("invisible"):
        said.append(INVISIBLE_WARNING)
    if card.get("incomplete"):
        said.append(INCOMPLETE_WARNING)
    return said


def left_out(block: CardBlock) -> list[str]:
    """What a block does not show, as sentences ("312 more changed lines not shown")."""
    said = []
    if block["type"] == "diff" and block.get("hidden"):
        said.append(not_shown(block["hidden"], "line"))
    rich = rich_left_out(block)
    if rich:
        said.append(rich)
    elif block.get("cut"):
        said.append(not_shown(block["cut"], "character"))
    return said


def rich_left_out(block: CardBlock) -> str:
    """What a rich output's block says when the kernel did not keep its HTML or image."""
    if block["type"] == "html" and block["html"] is None:
        what = "HTML"
    elif block["type"] == "image" and not block["data"]:
        what = block["mime_type"]
    else:
        return ""
    return RICH_NOT_SHOWN.format(what=what, n=f"{block['cut']:,}")


def card_left_out(card: Card) -> list[str]:
    """The blocks and locations a card does not show, as sentences."""
    said = []
    if card.get("blocks_hidden"):
        said.append(not_shown(card["blocks_hidden"], "block"))
    if card.get("locations_hidden"):
        said.append(not_shown(card["locations_hidden"], "location"))
    return said


def location_text(location: Any) -> str:
    """A location as ``path:line`` (or the path alone)."""
    if not isinstance(location, dict) or not isinstance(location.get("path"), str):
        return ""
    line = location.get("line")
    return f"{location['path']}:{line}" if isinstance(line, int) else location["path"]


def diff_text(block: CardDiff) -> str:
    """A diff block as a unified diff (``---``/``+++`` headers, hunks); a cut line ends in …."""
    path = reveal(block["path"], one_line=True)
    old = "/dev/null" if block["new_file"] else f"a/{path}"
    lines = [f"--- {old}", f"+++ b/{path}"]
    for row in block["rows"]:
        text = row["text"] if row["sign"] == "@" else reveal(row["text"])
        prefix = "" if row["sign"] == "@" else "\\ " if row["sign"] == "\\" else row["sign"]
        lines.append(prefix + text + ("…" if row["cut"] else ""))
    return "\n".join(lines)


def content_markdown(card: Card) -> list[str]:
    """A card's content blocks and locations as Markdown paragraphs, and what they leave out."""
    parts: list[str] = []
    for block in card.get("content") or []:
        if block["type"] == "text":
            parts.append(_code_block(reveal(block["text"]), "text"))
        elif block["type"] == "diff":
            path = _inline_code(reveal(block["path"], one_line=True))
            diff = _code_block(diff_text(block), "diff") if block["rows"] else "No change."
            parts.append(f"Diff of {path}:\n\n{diff}")
        elif block["type"] == "terminal":
            cwd = block.get("cwd")
            where = f" in {_inline_code(reveal(cwd, one_line=True))}" if cwd else ""
            command = _code_block("$ " + reveal(block["command"]), "console")
            parts.append(f"Command{where}:\n\n{command}")
            code = block.get("exit_code")
            output = block.get("output")
            if output or code is not None:
                ended = f" (exit code {code})" if code is not None else ""
                parts.append(f"Output{ended}:\n\n{_code_block(reveal(output or ''), 'text')}")
        elif block["type"] == "code":
            parts.append(_code_block(reveal(block["code"]), block["language"]))
        elif block["type"] == "output":
            label = OUTPUT_LABEL.get(block["name"], block["name"])
            parts.append(f"{label}:\n\n{_code_block(reveal(block['text']), 'text')}")
        elif block["type"] == "html":
            if block["text"]:
                parts.append(f"Shown as HTML:\n\n{_code_block(reveal(block['text']), 'text')}")
            else:
                parts.append("Shown as HTML.")
        elif block["type"] == "image":
            alt = reveal(block["alt"], one_line=True)
            parts.append(_escape_md(f"Image ({block['mime_type']}){': ' + alt if alt else ''}."))
        said = left_out(block)
        if said:
            parts.append(_escape_md("; ".join(said) + "."))
    places = [reveal(location_text(loc), one_line=True) for loc in card.get("locations") or []]
    if any(places):
        parts.append("Locations: " + ", ".join(_inline_code(p) for p in places if p))
    said = card_left_out(card)
    if said:
        parts.append(_escape_md("; ".join(said) + "."))
    return parts


def plan_markdown(plan: list[PlanEntry]) -> str:
    """The plan as a Markdown checklist: done entries ticked, the running one marked."""
    lines = ["**Plan**", ""]
    for entry in plan:
        mark = "x" if entry["status"] == "completed" else " "
        doing = " (in progress)" if entry["status"] == "in_progress" else ""
        lines.append(f"- [{mark}] {_escape_md(entry['content'])}{doing}")
    return "\n".join(lines)


def thoughts_markdown(thoughts: str) -> str:
    """The agent's thoughts as a quote under a label, apart from the answer."""
    quoted = "\n".join(f"> {line}" if line else ">" for line in thoughts.strip().split("\n"))
    return f"**Thoughts**\n\n{quoted}"


def _json(value: Any) -> str:
    return json.dumps(
        value if value is not None else {}, ensure_ascii=False, separators=(",", ":"), default=str
    )


def to_markdown(state: TurnState) -> str:
    """The turn as Markdown: the prompt quoted, then text and calls in order, then any error."""
    parts = []
    if state["prompt"]:
        parts.append("\n".join(f"> {line}" for line in state["prompt"].split("\n")))
    agent = agent_text(state.get("agent"))
    if agent:
        parts.append(f"**Agent:** {_escape_md(agent)}")
    if state.get("plan"):
        parts.append(plan_markdown(state.get("plan") or []))
    if (state.get("thoughts") or "").strip():
        parts.append(thoughts_markdown(state.get("thoughts") or ""))
    for item in layout(state["text"], state["calls"], state["order"]):
        if isinstance(item, str):
            if item.strip():
                parts.append(item.strip())
        else:
            parts.extend(card_markdown(card) for card in item)
    unasked = ran_by_agent_text(ran_by_agent(state["calls"].values()))
    if unasked:
        parts.append(f"*{_escape_md(unasked)}.*")
    if state["error"]:
        parts.append(f"**Error:** {_escape_md(state['error'])}")
    return "\n\n".join(parts) + "\n"


def to_text(state: TurnState) -> str:
    """The static transcript's text/plain: the summary line, then the Markdown."""
    return f"{state_summary(state)}\n\n{to_markdown(state)}"
