"""OpenCode (``opencode acp``, npm ``opencode-ai``): the configuration that makes it ask.

OpenCode runs every tool its configuration does not say ``ask`` (or ``deny``) for. The
preset writes a configuration of its own, in a folder of its own (``OPENCODE_CONFIG``),
that asks before every tool but those that only read, and writes it again before each
start. OpenCode merges, in order: the person's global config (``~/.config/opencode``),
``OPENCODE_CONFIG``, the project's ``opencode.json`` files and ``.opencode/`` folders
(their config, agents, commands and plugins, which run code), ``OPENCODE_CONFIG_CONTENT``
and ``OPENCODE_PERMISSION``; an agent's own ``permission`` (``agent.build.permission``)
applies after the top-level one. With ``settings="user"``, ``OPENCODE_DISABLE_PROJECT_CONFIG``
keeps the project's files and folders (and its ``AGENTS.md``) out; with ``"project"`` they
load after the preset's file, so a project can allow what it asks about, as OpenCode does on
its own.

``opencode acp`` serves its API on 127.0.0.1 for its own ACP side, unauthenticated unless
``OPENCODE_SERVER_PASSWORD`` is set: any local process could otherwise answer its permission
questions or run commands through it. The preset sets a random password.
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

__all__ = ["ASKING", "LATE_QUESTION", "PACKAGE", "opencode_env"]

PACKAGE: Final = "opencode-ai"

LATE_QUESTION: Final = 10.0
"""How long a call OpenCode reports running waits for its question before it counts as run
on OpenCode's own rules (seconds): its ``bash`` reports the command running, then parses
it and asks; the first parse of a process loads a grammar, measured at up to 5 s on a
loaded machine."""

READS: Final[tuple[str, ...]] = ("glob", "grep", "list", "lsp", "todoread", "todowrite")
"""OpenCode's tools that only read (or keep its to-do list): they run unasked."""

ASKING: Final[Mapping[str, Any]] = {
    "*": "ask",
    "edit": "ask",
    "bash": "ask",
    "webfetch": "ask",
    "websearch": "ask",
    "codesearch": "ask",
    "task": "ask",
    "skill": "ask",
    "external_directory": "ask",
    "doom_loop": "ask",
    # OpenCode's own default for reading: ask before secrets in .env files.
    "read": {"*": "allow", "*.env": "ask", "*.env.*": "ask", "*.env.example": "allow"},
    **dict.fromkeys(READS, "allow"),
}
"""The preset's ``permission``: OpenCode takes the last rule that matches a call, so ``*``
comes first and the reads after it."""

PROJECT_CONFIG: Final = "OPENCODE_DISABLE_PROJECT_CONFIG"
CONFIG: Final = "OPENCODE_CONFIG"
PASSWORD: Final = "OPENCODE_SERVER_PASSWORD"


def opencode_env(env: dict[str, str], settings: str, name: str) -> Callable[[str], tuple[str, ...]]:
    """Set in ``env`` what makes OpenCode ask (its configuration file, the server's
    password, the project's settings off for ``settings="user"``); return the check run
    before each start, which writes the configuration again."""
    if CONFIG in env:
        raise ValueError(
            f"{name}: env sets {CONFIG}, which the opencode preset sets to a file of its own "
            "that makes OpenCode ask; put your settings in ~/.config/opencode/opencode.json"
        )
    if settings == "user":
        if env.get(PROJECT_CONFIG, "1") != "1":
            raise ValueError(
                f"{name}: env sets {PROJECT_CONFIG}={env[PROJECT_CONFIG]!r}, which "
                "settings='user' sets to '1'; pass settings='project' to let OpenCode load "
                "the project's settings"
            )
        env[PROJECT_CONFIG] = "1"
    folder = tempfile.mkdtemp(prefix="mead-opencode-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = Path(folder) / "opencode.json"
    content = json.dumps(
        {"$schema": "https://opencode.ai/config.json", "permission": ASKING}, indent=2
    )
    env[CONFIG] = str(path)
    env.setdefault(PASSWORD, Hidden(secrets.token_urlsafe(32)))

    def write(cwd: str) -> tuple[str, ...]:
        _write(path, content)
        return ()

    write("")
    return write


class Hidden(str):
    """A secret that its ``repr`` does not show (an agent shown in a notebook's output shows
    its ``env``)."""

    def __repr__(self) -> str:
        return "'<hidden>'"


def _write(path: Path, content: str) -> None:
    """Write ``content`` to ``path`` (in a folder only this user may enter), replacing
    whatever is there: a file changed or removed since would let OpenCode run unasked."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    os.chmod(path.parent, 0o700)
    fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(content)
    os.replace(temporary, path)
