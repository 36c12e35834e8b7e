"""How Qwen Code is kept from a project's own settings (``settings="user"``).

Qwen Code (``qwen --acp``) reads a workspace's ``.qwen/settings.json`` (its permission
rules, hooks, MCP servers, ``env``) and its ``.env`` files only in a folder it trusts,
and with folder trust off (its default) it trusts every folder. Its merged system
settings decide whether folder trust is on; its trusted-folders file decides which
folders it trusts. So the preset points both elsewhere, through the variables Qwen
Code reads (``QWEN_CODE_SYSTEM_SETTINGS_PATH``, ``QWEN_CODE_TRUSTED_FOLDERS_PATH``):

- system settings: the machine's own (``/etc/qwen-code/settings.json`` or the file the
  variable names), copied with ``security.folderTrust.enabled`` true. System settings
  win over the person's own, so a ``false`` there does not undo it. ``ide.enabled`` is
  false too: an IDE's workspace trust would override the trusted-folders file. The
  machine's system defaults stay where they were (``QWEN_CODE_SYSTEM_DEFAULTS_PATH``).
- trusted folders: ``{"/": "DO_NOT_TRUST"}``, so no folder is trusted.

An untrusted folder also connects no MCP server (so no ``tools=``) and takes no mode
but ``default`` and ``plan``. The files live in a private folder, written anew before
each start and removed at exit.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping
from typing import Any, Final

from ._codex import ProjectSettingsError

__all__ = [
    "DEFAULTS_VARIABLE",
    "SYSTEM_VARIABLE",
    "TRUSTED_VARIABLE",
    "system_settings_path",
    "untrusted",
]

SYSTEM_VARIABLE: Final = "QWEN_CODE_SYSTEM_SETTINGS_PATH"
DEFAULTS_VARIABLE: Final = "QWEN_CODE_SYSTEM_DEFAULTS_PATH"
TRUSTED_VARIABLE: Final = "QWEN_CODE_TRUSTED_FOLDERS_PATH"
NO_FOLDER_TRUSTED: Final[Mapping[str, str]] = {"/": "DO_NOT_TRUST"}
"""Qwen Code's trusted-folders rules that trust no folder (the deepest rule wins)."""

_folders: list[str] = []


def system_settings_path(env: Mapping[str, str]) -> str:
    """Where Qwen Code reads its system settings, as it finds them in ``env`` (then the
    kernel's environment)."""
    given = env.get(SYSTEM_VARIABLE) or os.environ.get(SYSTEM_VARIABLE)
    if given:
        return given
    if sys.platform == "darwin":
        return "/Library/Application Support/QwenCode/settings.json"
    if sys.platform == "win32":
        return "C:\\ProgramData\\qwen-code\\settings.json"
    return "/etc/qwen-code/settings.json"


def untrusted(
    env: Mapping[str, str], name: str = "qwen"
) -> tuple[dict[str, str], Callable[[str], tuple[str, ...]]]:
    """The variables that make Qwen Code trust no folder, its system settings kept, and
    what to call before each start (``AgentSpec.in_folder``): it writes both files anew,
    so nothing Qwen Code wrote to them in an earlier run (a folder it was told to trust)
    carries over.

    Raises :class:`ProjectSettingsError` when the machine's system settings cannot be
    read as JSON (comments included): folder trust could not be added to them; and
    ``ValueError`` when ``env`` names trusted folders of its own.
    """
    if env.get(TRUSTED_VARIABLE):
        raise ValueError(
            f"{name}: env sets {TRUSTED_VARIABLE}, which settings='user' replaces by a file "
            "that trusts no folder; pass settings='project' to let Qwen Code load the "
            "project's settings"
        )
    source = system_settings_path(env)
    defaults = env.get(DEFAULTS_VARIABLE) or os.environ.get(DEFAULTS_VARIABLE)
    defaults = defaults or os.path.join(os.path.dirname(source), "system-defaults.json")
    system = json.dumps(_with_folder_trust(_read(source, name), source, name), indent=2)
    folder = tempfile.mkdtemp(prefix="mead-qwen-")
    _folders.append(folder)

    def write_files(cwd: str) -> tuple[str, ...]:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        _write(os.path.join(folder, "settings.json"), system)
        _write(os.path.join(folder, "trustedFolders.json"), json.dumps(NO_FOLDER_TRUSTED))
        return ()

    write_files(folder)
    variables = {
        SYSTEM_VARIABLE: os.path.join(folder, "settings.json"),
        DEFAULTS_VARIABLE: defaults,
        TRUSTED_VARIABLE: os.path.join(folder, "trustedFolders.json"),
    }
    return variables, write_files


def _read(path: str, name: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8-sig") as file:
            text = file.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise _unreadable(path, name, str(exc)) from exc
    try:
        settings = json.loads(text)
    except ValueError as exc:
        raise _unreadable(path, name, f"not plain JSON: {exc}") from exc
    if not isinstance(settings, dict):
        raise _unreadable(path, name, "not a JSON object")
    return settings


def _with_folder_trust(settings: dict[str, Any], path: str, name: str) -> dict[str, Any]:
    merged = dict(settings)
    security = merged.get("security", {})
    trust = security.get("folderTrust", {}) if isinstance(security, dict) else None
    ide = merged.get("ide", {})
    if not isinstance(trust, dict) or not isinstance(ide, dict):
        raise _unreadable(path, name, "its 'security', 'folderTrust' or 'ide' is not an object")
    merged["security"] = {**security, "folderTrust": {**trust, "enabled": True}}
    merged["ide"] = {**ide, "enabled": False}
    return merged


def _unreadable(path: str, name: str, why: str) -> ProjectSettingsError:
    return ProjectSettingsError(
        f"{name}: Qwen Code's system settings {path} cannot be read ({why}), so "
        "settings='user' cannot turn folder trust on to keep a project's .qwen/settings.json "
        "out; fix the file, or pass settings='project' to let Qwen Code load the project's "
        "settings"
    )


def _write(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` at once (a starting agent never reads half a file)."""
    partial = f"{path}.{os.getpid()}.partial"
    with open(partial, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(partial, path)


@atexit.register
def _remove_folders() -> None:
    for folder in _folders:
        shutil.rmtree(folder, ignore_errors=True)
