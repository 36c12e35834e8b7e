"""Which agent to start: a preset (claude, codex, gemini, opencode, qwen, copilot, cline) or a
command.

A preset starts its agent under rules that make it ask before edits and
commands: its asking mode (OpenCode: a configuration of the preset's own,
:mod:`._opencode`), the person's own settings only (not a project's, which a
cloned repository writes: they may allow commands or add hooks) unless
``settings="project"`` (Qwen Code: :mod:`._qwen`; Copilot CLI and Cline:
:mod:`._repository`), and for Codex a sandbox that works (:mod:`._sandbox`).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

from mead_notebook.errors import MeadError
from mead_notebook.interaction import AgentInfo

from ._codex import (
    CURRENT_MODE,
    CURRENT_PACKAGE,
    MODE_SANDBOXES,
    CodexRelease,
    ProjectSettingsError,
    codex_release,
    refuse_project_settings,
)
from ._opencode import LATE_QUESTION as OPENCODE_LATE_QUESTION
from ._opencode import PACKAGE as OPENCODE_PACKAGE
from ._opencode import opencode_env
from ._qwen import untrusted
from ._repository import CLINE, COPILOT, refuse_configuration
from ._sandbox import NO_SANDBOX, SandboxError, codex_sandbox

__all__ = [
    "PRESETS",
    "SETTINGS",
    "AgentNotFoundError",
    "AgentSpec",
    "Preset",
    "ProjectSettingsError",
    "SandboxError",
    "Settings",
    "agent",
    "scripted_agent",
]

COPILOT_AGENT_MODE: Final = "https://agentclientprotocol.com/protocol/session-modes#agent"
"""Copilot CLI's session mode that asks before edits and commands (its mode ids are URLs)."""

Settings = Literal["user", "project"]
"""Which of its own settings a preset's agent loads: ``user`` (the person's own:
Claude's ``~/.claude``, Codex's ``CODEX_HOME``, Gemini's ``~/.gemini``, OpenCode's
``~/.config/opencode``, Qwen's ``~/.qwen``) or ``project`` (the project's too, as the agent
does on its own)."""
SETTINGS: Final[tuple[str, ...]] = get_args(Settings)


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
    late_input: float = LATE_INPUT
    """How long a question without the call's input waits for it (0: the agent never
    sends it, as Gemini CLI's questions)."""
    policy: str | None = None
    """The asking policy it starts with when it has no session modes (Codex)."""
    sandboxed: bool = False
    """Whether it runs its commands in a sandbox of its own (Codex)."""


def _claude_settings(settings: Settings) -> dict[str, Any]:
    """``_meta`` of ``session/new``: the Claude Agent SDK's ``settingSources``.

    claude-agent-acp loads ``user``, ``project`` and ``local`` unless told.
    """
    sources = ["user"] if settings == "user" else ["user", "project", "local"]
    return {"claudeCode": {"options": {"settingSources": sources}}}


def _gemini_settings(settings: Settings) -> dict[str, str]:
    """Gemini CLI reads a workspace's ``.gemini/settings.json`` (and ``.env``) only in a
    folder it trusts; ``GEMINI_CLI_TRUST_WORKSPACE=false`` trusts none."""
    return {"GEMINI_CLI_TRUST_WORKSPACE": "false"} if settings == "user" else {}


def codex_untrusted(cwd: str) -> tuple[str, ...]:
    """Arguments that keep Codex from loading the project's ``.codex`` (config, hooks,
    rules that allow commands) in ``cwd``: the folder and every one above it untrusted.

    Codex loads a project's layers from its root (``.git``) down to ``cwd`` when
    the person's config trusts the folder or its root; these entries win over that.
    """
    folders: list[str] = []
    for start in dict.fromkeys((os.path.abspath(cwd), os.path.realpath(cwd))):
        folder = start
        while folder not in folders:
            folders.append(folder)
            folder = os.path.dirname(folder)
    table = ",".join(f'{json.dumps(f)}={{trust_level="untrusted"}}' for f in folders)
    return ("-c", f"projects={{{table}}}")


PRESETS: dict[str, Preset] = {
    # Its default mode may be ``auto`` (commands run without asking): ask for ``default``.
    # ``IS_SANDBOX`` (set in some containers) makes it offer a bypass mode as root, which
    # Claude Code then refuses unless the value is exactly "1": session/new fails.
    "claude": Preset(
        "claude-agent-acp",
        "@agentclientprotocol/claude-agent-acp",
        mode="default",
        unset=("IS_SANDBOX",),
    ),
    # With default settings Codex runs commands without asking anyone.
    "codex": Preset(
        "codex-acp",
        CURRENT_PACKAGE,
        args=("-c", 'approval_policy="untrusted"'),
        policy="untrusted",
        sandboxed=True,
    ),
    # Its questions never carry the call's input (the command is in the title).
    "gemini": Preset(
        "gemini", "@google/gemini-cli", args=("--acp",), mode="default", late_input=0.0
    ),
    # It asks only where its configuration says so: the preset writes one of its own.
    # It reports a command running, then parses it (seconds, the first time) and asks.
    "opencode": Preset(
        "opencode",
        OPENCODE_PACKAGE,
        args=("acp",),
        unset=("OPENCODE_DISABLE_PROJECT_CONFIG", "OPENCODE_CONFIG"),
        late_input=OPENCODE_LATE_QUESTION,
    ),
    # Its default mode is ``auto``: a model of its own allows the calls it deems safe.
    "qwen": Preset("qwen", "@qwen-code/qwen-code", args=("--acp",), mode="default"),
    # Its agent mode asks before edits and commands (reads of files it runs unasked).
    "copilot": Preset("copilot", "@github/copilot", args=("--acp",), mode=COPILOT_AGENT_MODE),
    # Its act mode asks when it does not approve every call itself (its CLI does by default).
    "cline": Preset("cline", "cline", args=("--acp", "--auto-approve", "false"), mode="act"),
}
"""The presets of :func:`agent`; each asks before edits and commands."""

CLINE_LOCAL: Final[Mapping[str, str]] = {"CLINE_SESSION_BACKEND_MODE": "local"}
"""Cline runs its sessions in its own process: by default it starts a hub daemon in a
session of its own, which outlives the agent and what ends it."""


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
    settings: Settings | None = None
    """Which of its own settings a preset's agent loads (None: a command, its own way)."""
    sandbox: str | None = None
    """Codex's ``sandbox_mode`` (None: the agent has no sandbox of its own we know of)."""
    policy: str | None = None
    """The asking policy it starts with when it has no session modes (Codex)."""
    session_meta: Mapping[str, Any] = field(default_factory=dict)
    """``_meta`` of ``session/new`` (Claude: which settings it loads)."""
    in_folder: Callable[[str], tuple[str, ...]] | None = None
    """More arguments for the session's folder (Codex: its project layers untrusted); it may
    raise to refuse the folder."""
    mode_sandboxes: Mapping[str, str] = field(default_factory=dict)
    """The sandbox each session mode runs commands in, for an agent whose mode is its
    sandbox too (codex-acp 2.x)."""

    def environment(self) -> dict[str, str]:
        """The agent's environment: the kernel's less :attr:`unset`, plus :attr:`env`."""
        inherited = {k: v for k, v in os.environ.items() if k not in self.unset}
        return {**inherited, **self.env}

    def command_in(self, cwd: str) -> tuple[str, ...]:
        """The command that starts the agent for a session in ``cwd``."""
        return (*self.command, *(self.in_folder(cwd) if self.in_folder else ()))

    def info(self, mode: str | None = None, model: str | None = None) -> AgentInfo:
        """What the turn's header says of the agent, in ``mode`` (its session mode)."""
        details = AgentInfo(agent=self.name, mode=mode or self.policy)
        sandbox = self.mode_sandboxes.get(mode or "", self.sandbox)
        if sandbox is not None:
            details["sandbox"] = sandbox
        if self.settings is not None:
            details["settings"] = self.settings
        if model:
            details["model"] = model
        return details


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
    settings: Settings = "user",
    sandbox: str | None = None,
) -> AgentSpec:
    """An agent to run: a preset (``"claude"``, ``"codex"``, ``"gemini"``, ``"opencode"``,
    ``"qwen"``, ``"copilot"``, ``"cline"``) or ``command``.

    ``executable`` replaces the preset's program (a path, or a name on ``PATH``);
    ``args`` come after the preset's own. ``mode`` replaces the preset's session
    mode (pass a bypass or auto mode only if you mean it); a mode the agent does
    not offer, or will not take, fails its start with :class:`AgentError`.
    ``settings="project"`` lets a preset's agent load the project's own settings
    too (a repository's ``.claude/``, ``.gemini/``, ``.codex/``, ``opencode.json``,
    ``.opencode/``, ``.qwen/``, ``.github/``, ``.clinerules/`` may allow commands or add
    hooks); by default it loads the person's own only (Codex 2.x, Copilot CLI and Cline,
    which would load them, refuse such a folder).
    ``sandbox`` (Codex only) is its ``sandbox_mode``: by default ``workspace-write`` once
    bubblewrap shows it works, else :class:`SandboxError`;
    ``"danger-full-access"`` runs Codex without a sandbox, knowingly. A program
    that cannot be found raises :class:`AgentNotFoundError` naming the npm
    package to install.
    """
    extra = dict(env or {})
    if (preset is None) == (command is None):
        raise TypeError("acp.agent takes a preset name or command=[...], not both or neither")
    if settings not in SETTINGS:
        raise ValueError(f"settings must be one of {', '.join(SETTINGS)}, not {settings!r}")
    if command is not None:
        if sandbox is not None:
            raise TypeError("sandbox= is for the codex preset; pass your agent's own arguments")
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
    label = name or str(preset)
    if preset == "codex":
        release = codex_release(found, extra)
        if release.current:
            return _current_codex(
                label, found, known, extra, mode, args, forward_always, settings, sandbox, release
            )
    given = _config_overrides(args)
    if "sandbox_mode" in given:
        raise TypeError(f"{preset}: pass sandbox={given['sandbox_mode']!r}, not -c sandbox_mode=")
    chosen: tuple[str, ...] = ()
    mode_of_sandbox: str | None = None
    if known.sandboxed:
        box = codex_sandbox(found, extra, sandbox, name=label)
        mode_of_sandbox = box.mode
        chosen = ("-c", f'sandbox_mode="{box.mode}"')
        if box.path_first is not None:
            extra["PATH"] = os.pathsep.join(
                [box.path_first, extra.get("PATH", os.environ.get("PATH", os.defpath))]
            )
    elif sandbox is not None:
        raise TypeError(f"sandbox= is for the codex preset; {preset} has no sandbox setting")
    meta: dict[str, Any] = {}
    in_folder: Callable[[str], tuple[str, ...]] | None = None
    if preset == "claude":
        meta = _claude_settings(settings)
    elif preset == "gemini":
        _force(extra, _gemini_settings(settings), preset)
    elif preset == "qwen" and settings == "user":
        variables, in_folder = untrusted(extra, label)
        extra.update(variables)
    elif preset == "copilot" and settings == "user":
        in_folder = refuse_configuration(label, COPILOT, extra)
    elif preset == "cline":
        _force(extra, CLINE_LOCAL, preset, "its sessions outside the agent's process")
        if settings == "user":
            in_folder = refuse_configuration(label, CLINE, extra)
    elif preset == "codex" and settings == "user":
        in_folder = codex_untrusted
    elif preset == "opencode":
        in_folder = opencode_env(extra, settings, label)
    return AgentSpec(
        label,
        (found, *known.args, *chosen, *(str(a) for a in args)),
        extra,
        mode if mode is not None else known.mode,
        forward_always,
        known.package,
        known.unset,
        known.late_input,
        settings=settings,
        sandbox=mode_of_sandbox,
        policy=given.get("approval_policy", known.policy) if known.policy else None,
        session_meta=meta,
        in_folder=in_folder,
    )


def _current_codex(
    label: str,
    found: str,
    known: Preset,
    env: dict[str, str],
    mode: str | None,
    args: Sequence[str],
    forward_always: bool,
    settings: Settings,
    sandbox: str | None,
    release: CodexRelease,
) -> AgentSpec:
    """``@agentclientprotocol/codex-acp`` (2.x): its ``read-only`` mode asks; its sandbox is
    its mode's, checked to work unless ``sandbox="danger-full-access"``; it trusts every
    session folder, so with ``settings="user"`` a project's ``.codex`` refuses the start."""
    if sandbox not in (None, NO_SANDBOX):
        raise TypeError(
            f"{label}: {release.said} runs its commands in its session mode's sandbox: pass "
            f"mode= ({', '.join(MODE_SANDBOXES)}), or sandbox={NO_SANDBOX!r} to start it "
            "without checking bubblewrap"
        )
    wanted = mode if mode is not None else CURRENT_MODE
    codex = env.get("CODEX_PATH") or os.environ.get("CODEX_PATH") or found
    box = codex_sandbox(codex, env, sandbox, name=label)
    if box.path_first is not None:
        env["PATH"] = os.pathsep.join(
            [box.path_first, env.get("PATH", os.environ.get("PATH", os.defpath))]
        )
    env["INITIAL_AGENT_MODE"] = wanted
    return AgentSpec(
        label,
        (found, *(str(a) for a in args)),
        env,
        wanted,
        forward_always,
        CURRENT_PACKAGE,
        known.unset,
        known.late_input,
        settings=settings,
        sandbox=MODE_SANDBOXES.get(wanted),
        mode_sandboxes=MODE_SANDBOXES,
        in_folder=refuse_project_settings(label, release.said, env) if settings == "user" else None,
    )


def _config_overrides(args: Sequence[str]) -> dict[str, str]:
    """The ``-c key=value`` (``--config``) overrides among ``args``, the last one winning."""
    found: dict[str, str] = {}
    items = [str(a) for a in args]
    for flag, value in itertools.pairwise(items):
        if flag in ("-c", "--config") and "=" in value:
            key, _, setting = value.partition("=")
            found[key.strip()] = setting.strip().strip("\"'")
    return found


def _force(
    env: dict[str, str], forced: Mapping[str, str], preset: str, runs: str | None = None
) -> None:
    """Set what the preset needs in ``env``; a different value given is an error.

    ``runs``: what the value would let the agent run (None: the project's settings,
    which ``settings="project"`` lets it load).
    """
    for key, value in forced.items():
        if env.get(key, value) != value:
            why = (
                f"the preset sets it to {value!r}: another would run {runs}"
                if runs
                else f"settings='user' sets it to {value!r}; pass settings='project' to let "
                "the agent load the project's settings"
            )
            raise ValueError(f"{preset}: env sets {key}={env[key]!r}, which {why}")
        env[key] = value


def start_hint(spec: AgentSpec) -> str:
    """What a preset knows of why ``spec``'s agent failed to start, to add to its error
    (``""``: nothing).

    Claude's agent run as root with ``IS_SANDBOX`` set to anything but ``1`` (some
    containers set it) takes a mode that bypasses its permissions, which Claude Code then
    refuses: ``session/new`` fails with an internal error. The preset leaves the variable
    out; an agent started with ``command=`` inherits it.
    """
    claude = PRESETS["claude"].executable
    if not any(claude in os.path.basename(part) for part in spec.command):
        return ""
    value = spec.environment().get("IS_SANDBOX")
    if value is None or value == "1" or not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return ""
    return (
        f"; IS_SANDBOX={value!r} is in its environment: as root, Claude Code then starts in a "
        "mode that bypasses its permissions and refuses it unless the value is exactly '1'. "
        "acp.agent('claude') leaves IS_SANDBOX out (env= sets it anyway)"
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
