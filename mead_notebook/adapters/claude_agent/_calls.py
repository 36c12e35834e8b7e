"""What a Claude Code tool call will do, as the contract's kind, content and locations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mead_notebook.interaction import ContentBlock, Location, PlanEntry, ToolKind

__all__ = ["KINDS", "claude_kind", "content_of", "locations_of", "plan_of"]

KINDS: dict[str, ToolKind] = {
    "Read": "read",
    "Glob": "search",
    "Grep": "search",
    "LS": "read",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "Write": "edit",
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Bash": "execute",
    "TodoWrite": "think",
}
MAX_SHOWN = 200_000
"""The longest file an edit's diff reads, in characters."""


def claude_kind(tool: str) -> ToolKind:
    """The kind of a Claude Code tool (MCP tools and others: ``other``)."""
    return KINDS.get(tool, "other")


def _old(path: str, cwd: str | None) -> str | None:
    target = Path(path) if Path(path).is_absolute() or cwd is None else Path(cwd) / path
    try:
        if target.is_file() and target.stat().st_size <= MAX_SHOWN:
            return target.read_text(errors="replace")
    except OSError:
        return None
    return None


def content_of(tool: str, given: dict[str, Any], cwd: str | None) -> list[ContentBlock]:
    """``Write``/``Edit`` as a diff, ``Bash`` as its command; nothing for other tools."""
    path = given.get("file_path")
    if tool == "Write" and isinstance(path, str):
        return [
            {
                "type": "diff",
                "path": path,
                "old_text": _old(path, cwd),
                "new_text": str(given.get("content", "")),
            }
        ]
    if tool == "Edit" and isinstance(path, str):
        old = _old(path, cwd)
        before, after = str(given.get("old_string", "")), str(given.get("new_string", ""))
        if old is not None and before in old:
            count = -1 if given.get("replace_all") else 1
            return [
                {
                    "type": "diff",
                    "path": path,
                    "old_text": old,
                    "new_text": old.replace(before, after, count),
                }
            ]
        return [{"type": "diff", "path": path, "old_text": before, "new_text": after}]
    if tool == "Bash" and isinstance(given.get("command"), str):
        return [{"type": "terminal", "command": given["command"], "cwd": cwd}]
    return []


def locations_of(given: dict[str, Any]) -> list[Location]:
    """The file a call names, if it names one."""
    for key in ("file_path", "notebook_path", "path"):
        value = given.get(key)
        if isinstance(value, str) and value:
            return [{"path": value, "line": None}]
    return []


def plan_of(given: dict[str, Any]) -> list[PlanEntry] | None:
    """``TodoWrite``'s to-do list as plan entries (None if it is not one)."""
    todos = given.get("todos")
    if not isinstance(todos, list):
        return None
    entries: list[PlanEntry] = []
    for todo in todos:
        if not isinstance(todo, dict):
            continue
        status = todo.get("status")
        entries.append(
            {
                "content": str(todo.get("content", "")),
                "status": status
                if status in ("pending", "in_progress", "completed")
                else "pending",
            }
        )
    return entries
