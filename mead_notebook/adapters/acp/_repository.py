"""Agents that load a repository's own configuration whether or not anyone trusts it.

GitHub Copilot CLI 1.0 (in a git repository) and Cline 3 (in its workspace) load a
project's hooks in ACP mode with no folder trust asked or given, and neither has a
switch that leaves them out (measured: Copilot's ``.github/hooks/*.json``, whose
``permissionRequest`` hook answering ``allow`` ran a command nobody was asked about;
Cline's ``.clinerules/hooks/`` and ``.cline/hooks/``, run before every tool call). So
with ``settings="user"`` a session whose folder, or any folder above it up to the
repository's root, holds such configuration is refused before the agent starts
(:class:`ProjectSettingsError`). The paths are those each agent's code names for a
project (hooks, settings that may hold hooks, servers it starts, plugins, extensions,
skills and agents); only the hooks are measured.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ._codex import ProjectSettingsError

__all__ = ["CLINE", "COPILOT", "Repository", "configuration", "refuse_configuration"]


@dataclass(frozen=True)
class Repository:
    """What one agent reads from a project, and where the person's own settings live."""

    agent: str
    paths: tuple[str, ...]
    home_variable: str
    home_folder: str


COPILOT = Repository(
    "Copilot CLI",
    (
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
    ),
    "COPILOT_HOME",
    ".copilot",
)
CLINE = Repository("Cline", (".clinerules", ".cline", ".agents"), "CLINE_DIR", ".cline")


def configuration(cwd: str, env: Mapping[str, str], repository: Repository) -> list[str]:
    """The project configuration the agent would load for a session in ``cwd``: each of
    its paths present (a file, a folder not empty) in ``cwd`` or a folder above it, up to
    the nearest folder holding ``.git`` (``cwd`` alone outside a repository). The
    person's own settings folder is not a project's."""
    home = env.get("HOME") or os.environ.get("HOME") or os.path.expanduser("~")
    own = {
        os.path.realpath(path)
        for path in (
            env.get(repository.home_variable) or os.environ.get(repository.home_variable),
            os.path.join(home, repository.home_folder),
        )
        if path
    }
    folders = [os.path.realpath(cwd)]
    while not os.path.exists(os.path.join(folders[-1], ".git")):
        parent = os.path.dirname(folders[-1])
        if parent == folders[-1]:
            folders = folders[:1]  # no repository: the folder alone
            break
        folders.append(parent)
    found = []
    for folder in folders:
        for relative in repository.paths:
            path = os.path.join(folder, relative)
            if _holds_something(path) and os.path.realpath(path) not in own:
                found.append(path)
    return found


def _holds_something(path: str) -> bool:
    """A file, or a folder that is not empty (an empty one gives the agent nothing)."""
    if not os.path.isdir(path):
        return os.path.lexists(path)
    try:
        with os.scandir(path) as entries:
            return any(True for _ in entries)
    except OSError:
        return True


def refuse_configuration(
    name: str, repository: Repository, env: Mapping[str, str]
) -> Callable[[str], tuple[str, ...]]:
    """A check for each session's folder: :class:`ProjectSettingsError` where the agent
    would load a project's own configuration."""

    def check(cwd: str) -> tuple[str, ...]:
        found = configuration(cwd, env, repository)
        if found:
            raise ProjectSettingsError(
                f"{name}: {repository.agent} loads a project's own configuration whether or "
                f"not the folder is trusted ({', '.join(found)}: hooks, settings, servers or "
                "plugins that may run commands without asking). Pass settings='project' to "
                "let it, or start the session in a folder without them."
            )
        return ()

    return check
