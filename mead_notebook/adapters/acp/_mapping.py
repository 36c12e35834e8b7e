"""ACP values in the contract's words: kinds, content blocks, locations, stop reasons."""

from __future__ import annotations

from typing import Any, Literal, cast

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
)
from acp.schema import PlanEntry as AcpPlanEntry

from mead_notebook.interaction import (
    ContentBlock,
    DiffBlock,
    Location,
    PlanEntry,
    TerminalBlock,
    TextBlock,
    ToolKind,
)
from mead_notebook.turn import StopReason

__all__ = [
    "content_of",
    "kind_from_acp",
    "locations_of",
    "option_for",
    "plan_of",
    "result_text",
    "stop_reason_of",
    "tool_name",
]

KINDS: frozenset[str] = frozenset(
    {"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"}
)

STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "max_turn_requests": "max_rounds",
    "refusal": "refusal",
    "cancelled": "interrupted",
}
"""ACP's stop reasons in ours (``max_tokens`` and ``refusal`` keep their names)."""

AcpContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent


def kind_from_acp(kind: str | None) -> ToolKind | None:
    """The contract's kind for ACP's (``switch_mode`` and anything unknown: ``other``)."""
    if kind is None:
        return None
    return cast(ToolKind, kind) if kind in KINDS else "other"


def named(meta: dict[str, Any] | None) -> bool:
    """Whether the agent named the call's tool (``_meta``'s ``toolName``), not only its kind."""
    values = [meta or {}, *(v for v in (meta or {}).values() if isinstance(v, dict))]
    return any(isinstance(v.get("toolName"), str) and v["toolName"] for v in values)


def tool_name(meta: dict[str, Any] | None, title: str | None, kind: str | None) -> str:
    """A call's tool name: from ``_meta`` (Claude: ``claudeCode.toolName``), else its ACP kind.

    ACP has no tool-name field; Codex and Gemini name the call only in its title
    (the command, the file), which stays the call's title. A call of kind
    ``other`` (or none) is named by its title, so a rule made for it matches no
    other kind of call.
    """
    for value in (meta or {}).values():
        if isinstance(value, dict):
            name = value.get("toolName")
            if isinstance(name, str) and name:
                return name
    if isinstance((meta or {}).get("toolName"), str) and (meta or {})["toolName"]:
        return str((meta or {})["toolName"])
    if kind in KINDS and kind != "other":
        return str(kind)
    if title:
        return title
    return kind or "tool"


def arguments_of(raw_input: Any) -> dict[str, Any] | None:
    """A call's arguments from its ``rawInput`` (None: not sent yet)."""
    if raw_input is None:
        return None
    return dict(raw_input) if isinstance(raw_input, dict) else {"input": raw_input}


def content_of(
    items: list[AcpContent] | None, terminals: dict[str, TerminalBlock] | None = None
) -> list[ContentBlock] | None:
    """ACP tool call content as content blocks (None: the update said nothing of it).

    A terminal is known to ACP by id only; ``terminals`` maps the ids this client
    knows to their command, and any other is left out. Images, audio and resources
    are named in text.
    """
    if items is None:
        return None
    blocks: list[ContentBlock] = []
    for item in items:
        if isinstance(item, FileEditToolCallContent):
            blocks.append(
                DiffBlock(
                    type="diff", path=item.path, old_text=item.old_text, new_text=item.new_text
                )
            )
        elif isinstance(item, TerminalToolCallContent):
            # A terminal this client did not create says nothing of its command: the
            # call's input does (Codex 2.x names its command's terminal so).
            known = (terminals or {}).get(item.terminal_id)
            if known is not None:
                blocks.append(known)
        elif isinstance(item.content, TextContentBlock):
            blocks.append(TextBlock(type="text", text=item.content.text))
        else:
            blocks.append(TextBlock(type="text", text=f"[{item.content.type} content]"))
    return blocks


def locations_of(items: list[ToolCallLocation] | None) -> list[Location] | None:
    """ACP locations (``line`` 0-based or absent) as the contract's (1-based or None)."""
    if items is None:
        return None
    return [Location(path=i.path, line=None if i.line is None else i.line + 1) for i in items]


def terminal_of(kind: str | None, arguments: dict[str, Any] | None) -> TerminalBlock | None:
    """The command an ``execute`` call will run, from its input (``command`` or ``cmd``;
    ``commands``, several run one after the other, one a line)."""
    if kind != "execute" or not arguments:
        return None
    command = arguments.get("command", arguments.get("cmd"))
    if isinstance(command, list) and all(isinstance(p, str) for p in command):
        command = " ".join(command)
    several = arguments.get("commands")
    if command is None and isinstance(several, list) and all(isinstance(p, str) for p in several):
        command = "\n".join(several)
    if not isinstance(command, str) or not command:
        return None
    block = TerminalBlock(type="terminal", command=command)
    cwd = arguments.get("cwd", arguments.get("workdir"))
    if isinstance(cwd, str):
        block["cwd"] = cwd
    return block


def finished_content(
    before: list[ContentBlock], reported: list[ContentBlock] | None, output: str, raw_output: Any
) -> list[ContentBlock]:
    """A finished call's content: the diffs and commands it announced (a command with its
    output and exit code), then what it reported."""
    kept: list[ContentBlock] = []
    for block in before:
        if block["type"] == "terminal":
            ran = TerminalBlock(**block)
            if output:
                ran["output"] = output
            code = raw_output.get("exit_code") if isinstance(raw_output, dict) else None
            if isinstance(code, int):
                ran["exit_code"] = code
            kept.append(ran)
        elif block["type"] == "diff":
            kept.append(block)
    new = [b for b in reported or [] if b not in kept]
    return kept + new


def result_text(raw_output: Any, content: list[ContentBlock] | None) -> str:
    """What a finished call produced, as short text: its text blocks, else its raw output."""
    texts = [b["text"] for b in content or [] if b["type"] == "text"]
    outputs = [
        str(b.get("output")) for b in content or [] if b["type"] == "terminal" and b.get("output")
    ]
    if texts or outputs:
        return "\n".join(texts + outputs)
    if raw_output is None:
        return ""
    return raw_output if isinstance(raw_output, str) else repr(raw_output)


def plan_of(entries: list[AcpPlanEntry]) -> list[PlanEntry]:
    """An ACP plan as the contract's entries."""
    return [PlanEntry(content=e.content, status=e.status, priority=e.priority) for e in entries]


def stop_reason_of(reason: str) -> StopReason:
    """Our stop reason for ACP's (a word ACP does not have: ``end_turn``)."""
    return STOP_REASONS.get(reason, "end_turn")


def option_for(
    options: list[PermissionOption], decision: Literal["allow", "reject"], always: bool = False
) -> str | None:
    """The option id that answers ``decision``: the ``*_once`` kind (``allow_always`` if
    ``always``), else the other kind of the same decision; None when the agent offers neither."""
    order = (
        (["allow_always", "allow_once"] if always else ["allow_once", "allow_always"])
        if decision == "allow"
        else ["reject_once", "reject_always"]
    )
    for kind in order:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None
