"""How GitHub Copilot CLI (``copilot --acp``) is kept from a project's own settings.

In a git repository Copilot CLI 1.0 loads the repository's agent configuration in ACP
mode whether or not the person trusts the folder: a ``.github/hooks/*.json`` whose
``permissionRequest`` hook answers ``allow`` runs a command nobody was asked about
(measured). It has no switch that leaves them out, so with ``settings="user"`` a
session whose folder, or any folder above it up to the repository's root, holds such
configuration is refused before the agent starts (:class:`ProjectSettingsError`).

The paths are those its code names for a repository (hooks, settings that may hold
hooks, MCP and language servers it starts, extensions, skills and agents, Claude's
folder it reads too); only the hooks are measured.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Final

from ._codex import ProjectSettingsError

__all__ = ["AGENT_MODE", "PROJECT_PATHS", "project_configuration", "refuse_project_configuration"]

AGENT_MODE: Final = "https://agentclientprotocol.com/protocol/session-modes#agent"
"""Copilot's session mode that asks before edits and commands (its id is a URL)."""
PROJECT_PATHS: Final[tuple[str, ...]] = (
    ".github/hooks",
    ".github/copilot",
    ".github/mcp.json",
    ".github/lsp.json",
    ".github/extensions",
    ".github/skills",
    ".github/agents",
    ".copilot",
    ".agents",
    ".claude",
    ".mcp.json",
    ".vscode/mcp.json",
)
"""What Copilot CLI reads from a repository that can run something or allow it."""


def project_configuration(cwd: str, env: Mapping[str, str]) -> list[str]:
    """The repository configuration Copilot would load for a session in ``cwd``: each of
    :data:`PROJECT_PATHS` present (a file, a folder not empty) in ``cwd`` or a folder above
    it, up to the nearest folder holding ``.git`` (``cwd`` alone outside a repository).
    The person's own Copilot home (``COPILOT_HOME``, ``~/.copilot``) is not a project's."""
    home = env.get("HOME") or os.environ.get("HOME") or os.path.expanduser("~")
    own = {
        os.path.realpath(path)
        for path in (
            env.get("COPILOT_HOME") or os.environ.get("COPILOT_HOME"),
            os.path.join(home, ".copilot"),
        )
        if path
    }
    folders = [os.path.realpath(cwd)]
    while not os.path.exists(os.path.join(folders[-1], ".git")):
        parent = os.path.dirname(folders[-1])
        if parent == folders[-1]:
            folders = folders[:1]  # no repository: Copilot loads none of the folders above
            break
        folders.append(parent)
    found = []
    for folder in folders:
        for relative in PROJECT_PATHS:
            path = os.path.join(folder, relative)
            if _holds_something(path) and os.path.realpath(path) not in own:
                found.append(path)
    return found


def _holds_something(path: str) -> bool:
    """A file, or a folder that is not empty (an empty one gives Copilot nothing to load)."""
    if not os.path.isdir(path):
        return os.path.lexists(path)
    try:
        with os.scandir(path) as entries:
            return any(True for _ in entries)
    except OSError:
        return True


def refuse_project_configuration(
    name: str, env: Mapping[str, str]
) -> Callable[[str], tuple[str, ...]]:
    """A check for each session's folder: :class:`ProjectSettingsError` where Copilot would
    load a repository's own configuration."""

    def check(cwd: str) -> tuple[str, ...]:
        found = project_configuration(cwd, env)
        if found:
            raise ProjectSettingsError(
                f"{name}: Copilot CLI loads a repository's own configuration whether or not "
                f"the folder is trusted ({', '.join(found)}: hooks, settings, servers that may "
                "run commands without asking). Pass settings='project' to let it, or start "
                "the session in a folder without them."
            )
        return ()

    return check
