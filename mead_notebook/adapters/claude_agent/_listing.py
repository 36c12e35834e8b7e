"""Claude Code's earlier conversations in a folder (``claude_agent.sessions``).

Claude Code keeps each conversation as ``<config>/projects/<folder>/<id>.jsonl``,
where ``<config>`` is ``CLAUDE_CONFIG_DIR`` or ``~/.claude``. The SDK's
``list_sessions`` reads them, from this process's config folder: options whose
``env`` points the CLI at another one are refused rather than answered from the
wrong folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from claude_agent_sdk import ClaudeAgentOptions, list_sessions

__all__ = ["SessionEntry", "config_dir", "list_conversations"]


@dataclass(frozen=True)
class SessionEntry:
    """One earlier conversation of Claude Code: its ``id`` (for ``session(..., resume=id)``),
    its folder, its title (Claude Code's, else the first prompt) and when it last changed
    (ISO 8601)."""

    id: str
    cwd: str
    title: str | None = None
    updated_at: str | None = None


def config_dir(env: Mapping[str, str]) -> Path:
    """The folder Claude Code keeps its conversations in, under ``env``."""
    given = env.get("CLAUDE_CONFIG_DIR")
    if given:
        return Path(given).absolute()
    home = env.get("HOME")
    return (Path(home) if home else Path.home()).absolute() / ".claude"


def list_conversations(options: ClaudeAgentOptions) -> list[SessionEntry]:
    """The conversations Claude Code keeps for ``options.cwd`` (default: the current
    directory), newest first."""
    folder = os.path.abspath(os.fspath(options.cwd) if options.cwd is not None else os.getcwd())
    if not os.path.isdir(folder):
        raise NotADirectoryError(f"cwd {folder!r} is not a directory")
    if options.session_store is not None:
        raise ValueError(
            "claude_agent.sessions lists the conversations on this machine; those of a "
            "session_store are listed by claude_agent_sdk.list_sessions_from_store"
        )
    here = config_dir(os.environ)
    cli = config_dir({**os.environ, **(options.env or {})})
    if here != cli:
        raise ValueError(
            f"options.env points Claude Code at {cli}, but the SDK lists the conversations in "
            f"this process's {here}: set CLAUDE_CONFIG_DIR in the kernel's environment instead"
        )
    return [
        SessionEntry(
            info.session_id,
            info.cwd or folder,
            info.custom_title or info.first_prompt or info.summary or None,
            datetime.fromtimestamp(info.last_modified / 1000, timezone.utc).isoformat(),
        )
        for info in list_sessions(folder, include_worktrees=False)
    ]
