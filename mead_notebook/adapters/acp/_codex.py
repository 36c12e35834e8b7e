"""Which codex-acp is installed, and how each release is made to ask.

Two programs answer to the name ``codex-acp``:

- ``@agentclientprotocol/codex-acp`` (2.x, what a person installs today): a Node
  program that drives the Codex app server (``@openai/codex``). It has session
  modes (``read-only``, ``workspace-write``, ``agent``, ``agent-full-access``):
  each is an approval policy and a sandbox. ``read-only`` asks before every edit
  and before any command that leaves its read-only sandbox; commands that only
  read run in the sandbox without asking. It reads no ``-c`` arguments, and it
  trusts every session folder itself (``projects.<cwd>.trust_level =
  "trusted"``), so Codex loads a project's ``.codex/`` (config, hooks, rules)
  whatever the person's config says.
- ``@zed-industries/codex-acp`` (0.16 and before): a Rust program that takes
  Codex's ``-c key=value`` arguments and has no modes for an untrusted folder.

:func:`codex_release` tells them apart by ``codex-acp --version``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from mead_notebook.errors import MeadError

__all__ = [
    "CURRENT_MODE",
    "CURRENT_PACKAGE",
    "MODE_SANDBOXES",
    "VERSION_TIMEOUT",
    "CodexRelease",
    "ProjectSettingsError",
    "codex_release",
    "project_settings",
    "refuse_project_settings",
]

CURRENT_PACKAGE: Final = "@agentclientprotocol/codex-acp"
"""The npm package of today's codex-acp."""
CURRENT_MODE: Final = "read-only"
"""The session mode that makes codex-acp 2.x ask before edits and commands that write."""
MODE_SANDBOXES: Final[Mapping[str, str]] = {
    "read-only": "read-only",
    "workspace-write": "workspace-write",
    "agent": "workspace-write",
    "agent-full-access": "danger-full-access",
}
"""Where codex-acp 2.x runs its commands in each of its session modes."""
VERSION_TIMEOUT = 10.0
"""How long ``codex-acp --version`` may take (seconds)."""


class ProjectSettingsError(MeadError, RuntimeError):
    """The agent would load a project's own settings that ``settings="user"`` leaves out."""


@dataclass(frozen=True)
class CodexRelease:
    """What ``codex-acp --version`` said: the package and version, and whether it is 2.x."""

    current: bool
    said: str = ""


def codex_release(program: str, env: Mapping[str, str]) -> CodexRelease:
    """Which codex-acp ``program`` is: ``@agentclientprotocol/codex-acp`` (``current``) or an
    earlier one (``@zed-industries/codex-acp``, or a program that does not say).

    An npm install says it in the ``package.json`` above the program's real path, read
    without running anything; any other program is asked ``--version``.
    """
    installed = _npm_package(program)
    if installed is not None:
        name, version = installed
        return CodexRelease(name == CURRENT_PACKAGE, f"{name} {version}".strip())
    try:
        shown = subprocess.run(
            [program, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return CodexRelease(False)
    said = shown.stdout.strip().splitlines()[-1] if shown.stdout.strip() else ""
    return CodexRelease(said.startswith(CURRENT_PACKAGE), said)


def _npm_package(program: str) -> tuple[str, str] | None:
    """The name and version of the codex-acp npm package ``program`` is the launcher of."""
    folder = os.path.dirname(os.path.realpath(program))
    for _ in range(3):  # the launcher is at most in <package>/dist/bin/
        try:
            with open(os.path.join(folder, "package.json"), encoding="utf-8") as file:
                described = json.load(file)
        except (OSError, ValueError):
            folder = os.path.dirname(folder)
            continue
        name = described.get("name") if isinstance(described, dict) else None
        if isinstance(name, str) and name.endswith("/codex-acp"):
            return name, str(described.get("version", ""))
        return None
    return None


def project_settings(cwd: str, env: Mapping[str, str]) -> list[str]:
    """The project ``.codex`` folders (not empty) Codex would load for a session in ``cwd``.

    Codex loads them from the project's root (the nearest folder above holding
    ``.git``) down to ``cwd``; without a root, every folder above is looked at.
    The person's own Codex home (``CODEX_HOME``, ``~/.codex``) is not a project's.
    """
    own = {
        os.path.realpath(path)
        for path in (
            env.get("CODEX_HOME") or os.environ.get("CODEX_HOME"),
            os.path.join(env.get("HOME") or os.path.expanduser("~"), ".codex"),
        )
        if path
    }
    found: list[str] = []
    folder = os.path.realpath(cwd)
    while True:
        candidate = os.path.join(folder, ".codex")
        if _holds_anything(candidate) and os.path.realpath(candidate) not in own:
            found.append(candidate)
        if os.path.exists(os.path.join(folder, ".git")):
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return found


def _holds_anything(folder: str) -> bool:
    try:
        with os.scandir(folder) as entries:
            return any(True for _ in entries)
    except OSError:
        return False


def refuse_project_settings(
    name: str, version: str, env: Mapping[str, str]
) -> Callable[[str], tuple[str, ...]]:
    """A check for each session's folder: :class:`ProjectSettingsError` when codex-acp 2.x
    would load a project's ``.codex`` there (it trusts every session folder itself)."""

    def check(cwd: str) -> tuple[str, ...]:
        found = project_settings(cwd, env)
        if found:
            raise ProjectSettingsError(
                f"{name}: {version or CURRENT_PACKAGE} trusts every session folder, so Codex "
                f"would load this project's own settings ({', '.join(found)}: config, hooks and "
                "rules that may run commands without asking). Pass settings='project' to let "
                "it, or start the session in a folder without them."
            )
        return ()

    return check
