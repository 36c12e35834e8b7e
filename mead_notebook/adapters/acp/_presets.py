"""Which agent to start: a preset (claude, codex, gemini) or a command."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from mead_notebook.errors import MeadError

__all__ = [
    "PRESETS",
    "AgentNotFoundError",
    "AgentSpec",
    "Preset",
    "agent",
    "codex_sandbox",
    "scripted_agent",
]


class AgentNotFoundError(MeadError, FileNotFoundError):
    """The agent's executable is not installed (the message says how to install it)."""


LATE_INPUT: Final = 1.0
"""How long a permission question without the call's input waits for it (seconds): some
agents (Claude) send the input just after they ask."""


@dataclass(frozen=True)
class Preset:
    """A known agent: its executable, npm package, arguments and the mode that makes it ask."""

    executable: str
    package: str
    args: tuple[str, ...] = ()
    mode: str | None = None
    unset: tuple[str, ...] = ()
    """Variables of the kernel's environment the agent does not inherit (``env=`` still sets
    them)."""
    settings: Callable[[str | None], tuple[str, ...]] | None = None
    """More arguments, chosen for the agent's ``PATH``."""
    late_input: float = LATE_INPUT
    """How long a question without the call's input waits for it (0: the agent never
    sends it, as Gemini CLI's questions)."""


def codex_sandbox(path: str | None) -> tuple[str, ...]:
    """Codex's ``sandbox_mode`` for this ``PATH``: ``workspace-write`` where bubblewrap
    (``bwrap``, Codex's Linux sandbox) is found, else ``danger-full-access``.

    Without bubblewrap every command Codex runs in its sandbox fails, even once
    allowed. Under the ``untrusted`` approval policy Codex asks before every
    command but the read-only ones it knows (``ls``, ``cat``) in either mode, and
    writes its patches in the session's ``cwd`` in either mode.
    """
    found = shutil.which("bwrap", path=path) is not None
    return ("-c", f'sandbox_mode="{"workspace-write" if found else "danger-full-access"}"')


PRESETS: dict[str, Preset] = {
    # Its default mode may be ``auto`` (commands run without asking): ask for ``default``.
    # ``IS_SANDBOX`` (set in some containers) makes it offer a bypass mode as root, which
    # Claude Code then refuses unless the value is exactly "1": session/new fails.
    "claude": Preset(
        "claude-agent-acp",
        "@zed-industries/claude-agent-acp",
        mode="default",
        unset=("IS_SANDBOX",),
    ),
    # With default settings Codex runs commands without asking anyone.
    "codex": Preset(
        "codex-acp",
        "@zed-industries/codex-acp",
        args=("-c", 'approval_policy="untrusted"'),
        settings=codex_sandbox,
    ),
    # Its questions never carry the call's input (the command is in the title).
    "gemini": Preset(
        "gemini", "@google/gemini-cli", args=("--acp",), mode="default", late_input=0.0
    ),
}
"""The presets of :func:`agent`; each asks before edits and commands."""


@dataclass(frozen=True)
class AgentSpec:
    """How to start one ACP agent: ``command``, extra ``env`` and the session ``mode`` to set.

    The agent sees the kernel's environment, less the names in ``unset``, plus
    ``env``. ``mode`` None leaves the agent's own. ``forward_always`` True answers
    "Allow" with the agent's own allow-always option (which the agent may remember,
    some on disk); by default every Allow answers allow-once and "Allow always"
    stays the widget's rule.
    """

    name: str
    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    mode: str | None = None
    forward_always: bool = False
    package: str | None = None
    unset: tuple[str, ...] = ()
    late_input: float = LATE_INPUT
    """How long a question without the call's input waits for it, in seconds."""

    def environment(self) -> dict[str, str]:
        """The agent's environment: the kernel's less :attr:`unset`, plus :attr:`env`."""
        inherited = {k: v for k, v in os.environ.items() if k not in self.unset}
        return {**inherited, **self.env}


def agent(
    preset: str | None = None,
    *,
    command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    name: str | None = None,
    mode: str | None = None,
    executable: str | None = None,
    args: Sequence[str] = (),
    forward_always: bool = False,
) -> AgentSpec:
    """An agent to run: a preset (``"claude"``, ``"codex"``, ``"gemini"``) or ``command``.

    ``executable`` replaces the preset's program (a path, or a name on ``PATH``);
    ``args`` come after the preset's own. ``mode`` replaces the preset's session
    mode (pass a bypass or auto mode only if you mean it). A program that cannot
    be found raises :class:`AgentNotFoundError` naming the npm package to install.
    """
    extra = dict(env or {})
    if (preset is None) == (command is None):
        raise TypeError("acp.agent takes a preset name or command=[...], not both or neither")
    if command is not None:
        argv = [str(part) for part in command]
        if not argv:
            raise ValueError("command must name the agent's program")
        if executable is not None:
            argv[0] = executable
        argv += [str(a) for a in args]
        found = _which(argv[0], extra)
        if found is None:
            raise AgentNotFoundError(f"the agent's program {argv[0]!r} was not found on PATH")
        return AgentSpec(
            name or os.path.basename(argv[0]),
            (found, *argv[1:]),
            extra,
            mode,
            forward_always,
        )
    known = PRESETS.get(str(preset))
    if known is None:
        raise ValueError(f"unknown agent {preset!r}: use one of {', '.join(PRESETS)} or command=")
    program = executable or known.executable
    found = _which(program, extra)
    if found is None:
        raise AgentNotFoundError(
            f"{preset}: {program!r} was not found on PATH; install it with "
            f"`npm install -g {known.package}` (or pass executable='/path/to/{known.executable}')"
        )
    chosen = known.settings(extra.get("PATH", os.environ.get("PATH"))) if known.settings else ()
    return AgentSpec(
        name or str(preset),
        (found, *known.args, *chosen, *(str(a) for a in args)),
        extra,
        mode if mode is not None else known.mode,
        forward_always,
        known.package,
        known.unset,
        known.late_input,
    )


def _which(program: str, env: Mapping[str, str]) -> str | None:
    path = env.get("PATH", os.environ.get("PATH"))
    return shutil.which(program, path=path)


def scripted_agent(
    turns: Sequence[Sequence[dict[str, Any]]],
    *,
    log: str | os.PathLike[str] | None = None,
    name: str = "scripted",
    mode: str | None = "default",
    env: dict[str, str] | None = None,
    forward_always: bool = False,
) -> AgentSpec:
    """The scripted ACP agent (:mod:`.scripted`) playing ``turns``, one list of steps per prompt.

    ``log``: a file where it writes every answer it receives, one JSON line each.
    """
    script = json.dumps([list(t) for t in turns])
    command = [sys.executable, "-m", "mead_notebook.adapters.acp.scripted", script]
    if log is not None:
        command.append(os.fspath(log))
    return AgentSpec(name, tuple(command), dict(env or {}), mode, forward_always)
