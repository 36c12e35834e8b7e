#!/usr/bin/env python3
"""Write the frontend's copy of the widget protocol from its one source, ``notebook/protocol.py``.

- ``js/src/protocol.gen.d.ts``: every shape and union of the protocol (and of the
  contract's values it carries) as TypeScript, built from the Python type hints;
  the synced traits as the ``Model`` interface.
- ``js/src/constants.gen.js``: the protocol version, the limits and the words of
  ``notebook/labels.py``.

``npm run build`` runs it; ``tests/notebook/test_protocol.py`` runs it again and
fails when a committed file differs. ``--check`` exits 1 instead of writing.
``--if-importable`` (what the build passes) keeps the committed files, and says
so, where the package's dependencies cannot be imported (a wheel built from a
copy of the sources, without the project's environment).
"""

from __future__ import annotations

import json
import os
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

ROOT = Path(__file__).resolve().parents[1]
TYPES_FILE = ROOT / "js" / "src" / "protocol.gen.d.ts"
CONSTANTS_FILE = ROOT / "js" / "src" / "constants.gen.js"
HEADER = (
    "// Written by scripts/gen_protocol.py from mead_notebook/notebook/protocol.py: do not edit.\n"
)


def _import() -> tuple[Any, Any, Any, Any, Any]:
    sys.path.insert(0, str(ROOT))
    try:
        from mead_notebook import interaction
        from mead_notebook.notebook import labels, protocol, reveal, synced
    except ImportError as exc:
        venv = ROOT / ".venv"
        if (venv / "bin" / "python").exists() and Path(sys.prefix).resolve() != venv.resolve():
            python = str(venv / "bin" / "python")
            os.execv(python, [python, *sys.argv])
        if "--if-importable" in sys.argv:
            print(f"gen_protocol: kept the committed files ({exc})", file=sys.stderr)
            raise SystemExit(0) from exc
        raise
    return interaction, protocol, labels, synced, reveal


interaction, protocol, labels, synced, reveal = _import()

NAMED: list[tuple[str, Any]] = [
    ("CallStatus", interaction.Status),
    ("ToolClass", interaction.ToolClass),
    ("ToolKind", interaction.ToolKind),
    ("Outcome", interaction.Outcome),
    ("DecidedBy", interaction.DecidedBy),
    ("TurnStatus", protocol.TurnStatus),
    ("Verdict", protocol.Verdict),
    ("Scope", protocol.Scope),
    ("TextBlock", interaction.TextBlock),
    ("DiffBlock", interaction.DiffBlock),
    ("TerminalBlock", interaction.TerminalBlock),
    ("CodeBlock", interaction.CodeBlock),
    ("OutputName", interaction.OutputName),
    ("OutputBlock", interaction.OutputBlock),
    ("HtmlBlock", interaction.HtmlBlock),
    ("ImageType", interaction.ImageType),
    ("ImageBlock", interaction.ImageBlock),
    ("ContentBlock", interaction.ContentBlock),
    ("Location", interaction.Location),
    ("PlanEntry", interaction.PlanEntry),
    ("UsageInfo", interaction.UsageInfo),
    ("AgentInfo", interaction.AgentInfo),
    ("TypedAnswer", interaction.TypedAnswer),
    ("DiffSign", protocol.DiffSign),
    ("DiffRow", protocol.DiffRow),
    ("CardText", protocol.CardText),
    ("CardDiff", protocol.CardDiff),
    ("CardTerminal", protocol.CardTerminal),
    ("CardCode", protocol.CardCode),
    ("CardOutput", protocol.CardOutput),
    ("CardHtml", protocol.CardHtml),
    ("CardImage", protocol.CardImage),
    ("CardBlock", protocol.CardBlock),
    ("Settlement", protocol.Settlement),
    ("ScopeOffer", protocol.ScopeOffer),
    ("ChoiceOption", protocol.ChoiceOption),
    ("Question", protocol.Question),
    ("Card", protocol.Card),
    ("HistoryText", protocol.HistoryText),
    ("HistoryCard", protocol.HistoryCard),
    ("HistoryItem", protocol.HistoryItem),
    ("TextMessage", protocol.TextMessage),
    ("ThoughtMessage", protocol.ThoughtMessage),
    ("PlanMessage", protocol.PlanMessage),
    ("CallMessage", protocol.CallMessage),
    ("PingMessage", protocol.PingMessage),
    ("KernelMessage", protocol.KernelMessage),
    ("RenderedMessage", protocol.RenderedMessage),
    ("AnswerMessage", protocol.AnswerMessage),
    ("CancelMessage", protocol.CancelMessage),
    ("PongMessage", protocol.PongMessage),
    ("GoneMessage", protocol.GoneMessage),
    ("NeedFrontendMessage", protocol.NeedFrontendMessage),
    ("FrontendMessage", protocol.FrontendMessage),
]
"""Every type the frontend sees, by its TypeScript name."""

FROM_FRONTEND_REQUIRED = {"type", "question_id", "tool_call_id"}
"""In a message a view sends, every other field may be left out: ``protocol.parse``
reads a missing field as null (or an empty note)."""
FROM_FRONTEND = {
    "RenderedMessage",
    "AnswerMessage",
    "CancelMessage",
    "PongMessage",
    "GoneMessage",
    "NeedFrontendMessage",
}

TRAITS: dict[str, str] = {
    "prompt": "string",
    "status": "TurnStatus",
    "stop_reason": "string",
    "error": "string",
    "text": "string",
    "thoughts": "string",
    "plan": "PlanEntry[]",
    "protocol_version": "number",
    "calls": "Record<string, Card>",
    "order": "string[]",
    "agent": "AgentInfo",
    "history": "HistoryItem[]",
    "history_hidden": "number",
    "keyboard": "boolean",
    "_frontend": "string",
    "_widget_id": "string",
}
"""The TypeScript type of each synced trait of ``NotebookInteraction``."""

CONSTANTS = [
    ("PROTOCOL_VERSION", protocol.PROTOCOL_VERSION, "number"),
    ("MAX_NOTE", protocol.MAX_NOTE, "number"),
    ("MAX_ID", protocol.MAX_ID, "number"),
    ("MAX_TEXT", protocol.MAX_TEXT, "number"),
    ("MAX_OPTIONS", protocol.MAX_OPTIONS, "number"),
    ("MAX_ARGUMENTS", protocol.MAX_ARGUMENTS, "number"),
    ("MAX_NAME", protocol.MAX_NAME, "number"),
    ("MAX_DIFF_ROWS", protocol.MAX_DIFF_ROWS, "number"),
    ("MAX_ROW_TEXT", protocol.MAX_ROW_TEXT, "number"),
    ("INVISIBLE_FILLERS", [list(r) for r in reveal.FILLERS], "readonly (readonly number[])[]"),
    ("NEWLINE_MARK", reveal.NEWLINE, "string"),
    ("READ_KINDS", sorted(interaction.READ_KINDS), "readonly string[]"),
    ("DESTRUCTIVE_KINDS", sorted(interaction.DESTRUCTIVE_KINDS), "readonly string[]"),
    ("OUTCOME_LABEL", labels.OUTCOME_LABEL, "Readonly<Record<string, string>>"),
    ("STATUS_LABEL", labels.STATUS_LABEL, "Readonly<Record<string, string>>"),
    ("BY_LABEL", labels.BY, "Readonly<Record<string, string>>"),
    ("BY_NAME", labels.BY_NAME, "string"),
    ("BY_OTHER_VIEW", labels.BY_OTHER_VIEW, "string"),
    ("TOO_LATE", labels.TOO_LATE, "string"),
    ("TOO_LATE_SETTLED", labels.TOO_LATE_SETTLED, "string"),
    ("VERDICT_DONE", labels.VERDICT_DONE, "Readonly<Record<string, string>>"),
    ("DECISION_LABEL", labels.DECISION, "Readonly<Record<string, string>>"),
    ("UNMADE", list(labels.UNMADE), "readonly string[]"),
    ("STOP_REASON", labels.STOP_REASON, "Readonly<Record<string, string>>"),
    ("TURN_STATUS", labels.TURN_STATUS, "Readonly<Record<string, string>>"),
    ("CLASS_HINT", labels.CLASS_HINT, "Readonly<Record<string, string>>"),
    ("KIND_HINT", labels.KIND_HINT, "Readonly<Record<string, string>>"),
    ("PLAN_GLYPH", labels.PLAN_GLYPH, "Readonly<Record<string, string>>"),
    ("TYPED_LABEL", labels.TYPED_LABEL, "Readonly<Record<string, string>>"),
    ("HISTORY_SUMMARY", labels.HISTORY_SUMMARY, "string"),
    ("AGENT_DECIDED", labels.AGENT_DECIDED, "string"),
    ("NOT_EDITABLE", labels.NOT_EDITABLE, "string"),
    ("INVISIBLE_WARNING", labels.INVISIBLE_WARNING, "string"),
    ("INCOMPLETE_WARNING", labels.INCOMPLETE_WARNING, "string"),
    ("NOT_SHOWN", labels.NOT_SHOWN, "string"),
    ("UNSHOWN_ONE", labels.UNSHOWN_ONE, "Readonly<Record<string, string>>"),
    ("UNSHOWN_MANY", labels.UNSHOWN_MANY, "Readonly<Record<string, string>>"),
    ("NO_NEWLINE", labels.NO_NEWLINE, "string"),
    ("OUTPUT_LABEL", labels.OUTPUT_LABEL, "Readonly<Record<string, string>>"),
    ("RICH_NOT_SHOWN", labels.RICH_NOT_SHOWN, "string"),
    ("KERNEL_GONE", labels.KERNEL_GONE, "string"),
    ("KERNEL_GONE_NOTE", labels.KERNEL_GONE_NOTE, "string"),
    ("KERNEL_GONE_STATUS", labels.KERNEL_GONE_STATUS, "string"),
    ("NOT_CONNECTED_NOTE", labels.NOT_CONNECTED_NOTE, "string"),
]


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def _name_of(tp: Any, own: str | None) -> str | None:
    for name, named in NAMED:
        if name == own:
            continue
        if named is tp or (
            get_origin(tp) is Literal and get_origin(named) is Literal and tp == named
        ):
            return name
    return None


def ts(tp: Any, own: str | None = None) -> str:
    """The TypeScript spelling of one Python type hint."""
    name = _name_of(tp, own)
    if name is not None:
        return name
    origin = get_origin(tp)
    if tp is type(None):
        return "null"
    if tp is str:
        return "string"
    if tp is bool:
        return "boolean"
    if tp in (int, float):
        return "number"
    if tp is Any:
        return "unknown"
    if origin is Literal:
        return " | ".join(json.dumps(a) for a in get_args(tp))
    if origin in (Union, types.UnionType):
        parts: list[str] = []
        for arg in get_args(tp):
            spelled = ts(arg)
            if spelled not in parts:
                parts.append(spelled)
        return " | ".join(parts)
    if origin is list:
        (item,) = get_args(tp)
        inner = ts(item)
        return f"({inner})[]" if " | " in inner else f"{inner}[]"
    if origin is dict:
        key, value = get_args(tp)
        if key is not str:
            raise TypeError(f"only string keys travel as JSON: {tp!r}")
        return f"Record<string, {ts(value)}>"
    raise TypeError(f"no TypeScript spelling for {tp!r}")


def _doc(obj: Any, indent: str = "") -> str:
    text = (getattr(obj, "__doc__", None) or "").strip()
    if not text or text.startswith(("dict(", "Create a", "A generic")):
        return ""
    first = " ".join(text.split("\n\n")[0].split()).replace("*/", "* /")
    return f"{indent}/** {first} */\n"


def interface(name: str, tp: Any) -> str:
    hints = get_type_hints(tp)
    optional = set(getattr(tp, "__optional_keys__", ()))
    lines = [_doc(tp), f"export interface {name} {{\n"]
    for field, hint in hints.items():
        loose = field in optional or (name in FROM_FRONTEND and field not in FROM_FRONTEND_REQUIRED)
        lines.append(f"  {field}{'?' if loose else ''}: {ts(hint)};\n")
    lines.append("}\n")
    return "".join(lines)


def types_file() -> str:
    out = [
        HEADER,
        "// The shapes and unions of the widget protocol (docs/widget-protocol.md), and the\n",
        "// synced traits of NotebookInteraction as `Model`.\n\n",
    ]
    for name, tp in NAMED:
        if _is_typeddict(tp):
            out.append(interface(name, tp))
        else:
            out.append(f"export type {name} = {ts(tp, own=name)};\n")
        out.append("\n")
    traits = set(synced.SyncedTurn.class_traits(sync=True)) - set(
        synced.LoadsFrontend.__mro__[1].class_traits(sync=True)
    )
    traits |= {"_frontend"}
    traits -= {"_esm", "_css", "_anywidget_id"}
    if traits != set(TRAITS):
        raise SystemExit(
            f"gen_protocol: the synced traits {sorted(traits)} differ from TRAITS {sorted(TRAITS)}"
        )
    out.append("/** The synced traits of one NotebookInteraction. */\nexport interface Model {\n")
    for trait, spelled in TRAITS.items():
        out.append(f"  {trait}: {spelled};\n")
    out.append("}\n")
    return "".join(out)


def constants_file() -> str:
    out = [HEADER, "// The protocol's version, limits and words, shared with the kernel.\n\n"]
    for name, value, spelled in CONSTANTS:
        text = json.dumps(value, ensure_ascii=False, indent=2)
        frozen = f"Object.freeze({text})" if isinstance(value, (dict, list)) else text
        out.append(f"/** @type {{{spelled}}} */\nexport const {name} = {frozen};\n")
    return "".join(out)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for path, text in ((TYPES_FILE, types_file()), (CONSTANTS_FILE, constants_file())):
        if path.exists() and path.read_text("utf-8") == text:
            continue
        if check:
            stale.append(path)
        else:
            path.write_text(text, "utf-8")
    for path in stale:
        print(
            f"gen_protocol: {path.relative_to(ROOT)} is not what protocol.py says", file=sys.stderr
        )
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
