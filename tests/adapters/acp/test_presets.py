"""The presets: what makes each agent ask, which settings it loads, and Codex's sandbox."""

from __future__ import annotations

import json
import os
import platform
import stat
from pathlib import Path

import pytest

from mead_notebook.adapters import acp
from mead_notebook.adapters.acp import _presets, _sandbox

ELF = b"\x7fELF" + b"\0" * 60


def program(folder: Path, name: str, text: str = "#!/bin/sh\n", data: bytes | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if data is not None:
        path.write_bytes(data)
    else:
        path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def bwrap(folder: Path, *, works: bool = True, argv0: bool = True, hangs: bool = False) -> Path:
    """A stand-in for bubblewrap: it records its arguments, and works or fails as told."""
    help_text = "    --argv0 VALUE    Set argv[0]" if argv0 else "    --chdir DIR"
    failing = "echo 'No permissions to create new namespace' >&2; exit 1"
    run = "sleep 30" if hangs else ("exit 0" if works else failing)
    return program(
        folder,
        "bwrap",
        f'#!/bin/sh\necho "$@" >> "{folder}/bwrap.log"\n'
        f'if [ "$1" = "--help" ]; then echo "{help_text}"; exit 0; fi\n{run}\n',
    )


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    """A PATH holding the three agents' programs and the shell tools a probe needs."""
    folder = tmp_path / "bin"
    for name in ("claude-agent-acp", "codex-acp", "gemini"):
        program(folder, name)
    for name in ("sh", "echo", "sleep", "true"):
        found = [Path(p) / name for p in [*os.defpath.split(os.pathsep), "/usr/bin", "/bin"]]
        source = next(p for p in found if p.exists())
        (folder / name).symlink_to(source)
    return folder


def test_presets_ask_before_edits_and_commands(tools: Path) -> None:
    bwrap(tools)
    env = {"PATH": str(tools)}
    claude, codex, gemini = (acp.agent(n, env=env) for n in ("claude", "codex", "gemini"))
    assert (claude.command, claude.mode) == ((str(tools / "claude-agent-acp"),), "default")
    assert codex.command == (
        str(tools / "codex-acp"),
        "-c",
        'approval_policy="untrusted"',
        "-c",
        'sandbox_mode="workspace-write"',
    )
    assert (gemini.command[1:], gemini.mode) == (("--acp",), "default")
    assert not any(s.forward_always for s in (claude, codex, gemini))
    own = acp.agent(command=["gemini", "--acp", "-m", "x"], env=env, name="mine")
    assert (own.name, own.command[1:], own.mode, own.settings) == (
        "mine",
        ("--acp", "-m", "x"),
        None,
        None,
    )
    assert acp.agent("claude", env=env, mode="acceptEdits").mode == "acceptEdits"
    # Gemini's questions never carry the call's input: they do not wait for it.
    assert (claude.late_input, codex.late_input, gemini.late_input) == (
        acp._client.LATE_INPUT,
        acp._client.LATE_INPUT,
        0.0,
    )
    assert own.late_input == acp._client.LATE_INPUT


def test_the_header_says_each_presets_mode_sandbox_and_settings(tools: Path) -> None:
    bwrap(tools)
    env = {"PATH": str(tools)}
    claude = acp.agent("claude", env=env)
    codex = acp.agent("codex", env=env)
    assert claude.info("default") == {"agent": "claude", "mode": "default", "settings": "user"}
    # Codex has no session modes: its approval policy is its asking mode.
    assert codex.info(None, "gpt-5.5") == {
        "agent": "codex",
        "mode": "untrusted",
        "sandbox": "workspace-write",
        "settings": "user",
        "model": "gpt-5.5",
    }
    bare = acp.agent("codex", env=env, sandbox="danger-full-access", settings="project")
    assert (bare.info()["sandbox"], bare.info()["settings"]) == ("danger-full-access", "project")
    told = acp.agent("codex", env=env, args=["-c", 'approval_policy="on-request"'])
    assert told.info()["mode"] == "on-request"
    own = acp.agent(command=["gemini"], env=env)
    assert own.info("yolo") == {"agent": "gemini", "mode": "yolo"}


# -- which settings each agent loads ------------------------------------------------------


def test_claude_loads_the_persons_settings_only_unless_asked(tools: Path) -> None:
    env = {"PATH": str(tools)}
    assert acp.agent("claude", env=env).session_meta == {
        "claudeCode": {"options": {"settingSources": ["user"]}}
    }
    assert acp.agent("claude", env=env, settings="project").session_meta == {
        "claudeCode": {"options": {"settingSources": ["user", "project", "local"]}}
    }


def test_gemini_trusts_no_workspace_unless_asked(
    tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A kernel started with the variable set must not hand the trust to the agent.
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    env = {"PATH": str(tools)}
    assert acp.agent("gemini", env=env).environment()["GEMINI_CLI_TRUST_WORKSPACE"] == "false"
    assert (
        acp.agent("gemini", env=env, settings="project").environment()["GEMINI_CLI_TRUST_WORKSPACE"]
        == "true"
    )
    with pytest.raises(ValueError, match="settings='project'"):
        acp.agent("gemini", env={**env, "GEMINI_CLI_TRUST_WORKSPACE": "true"})


def test_codex_trusts_neither_the_folder_nor_any_above_it_unless_asked(
    tools: Path, tmp_path: Path
) -> None:
    bwrap(tools)
    env = {"PATH": str(tools)}
    work = tmp_path / "repo" / "work"
    work.mkdir(parents=True)
    user = acp.agent("codex", env=env)
    flag, value = user.command_in(str(work))[-2:]
    assert flag == "-c"
    for folder in (work, work.parent, tmp_path, Path("/")):
        assert f'"{folder}"={{trust_level="untrusted"}}' in value, value
    assert value.startswith("projects={")
    assert value.endswith("}")
    project = acp.agent("codex", env=env, settings="project")
    assert project.command_in(str(work)) == project.command


def test_a_folder_with_quotes_stays_one_toml_key() -> None:
    [_, value] = _presets.codex_untrusted('/tmp/a"b\\c')
    assert '"/tmp/a\\"b\\\\c"={trust_level="untrusted"}' in value


def test_bad_settings_and_sandbox_arguments_are_errors(tools: Path) -> None:
    bwrap(tools)
    env = {"PATH": str(tools)}
    with pytest.raises(ValueError, match="settings must be one of user, project"):
        acp.agent("claude", env=env, settings="all")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="codex preset"):
        acp.agent("claude", env=env, sandbox="danger-full-access")
    with pytest.raises(TypeError, match="codex preset"):
        acp.agent(command=["gemini"], env=env, sandbox="workspace-write")
    with pytest.raises(TypeError, match="pass sandbox='danger-full-access'"):
        acp.agent("codex", env=env, args=["-c", 'sandbox_mode="danger-full-access"'])


# -- Codex's sandbox ----------------------------------------------------------------------


def test_codex_refuses_to_start_without_bubblewrap(tools: Path) -> None:
    with pytest.raises(acp.SandboxError) as refused:
        acp.agent("codex", env={"PATH": str(tools)})
    message = str(refused.value)
    assert "bubblewrap" in message
    assert "not on the agent's PATH" in message
    assert "apt-get install bubblewrap" in message
    assert "sandbox='danger-full-access'" in message


def test_codex_refuses_a_bubblewrap_that_does_not_work(tools: Path) -> None:
    bwrap(tools, works=False)
    with pytest.raises(acp.SandboxError, match="No permissions to create new namespace") as refused:
        acp.agent("codex", env={"PATH": str(tools)})
    assert "sandbox='danger-full-access'" in str(refused.value)
    # It was asked for the namespaces Codex makes.
    probe = (tools / "bwrap.log").read_text().splitlines()[0]
    assert "--unshare-user" in probe
    assert "--unshare-net" in probe


def test_a_bubblewrap_that_hangs_is_refused_within_the_bound(
    tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bwrap(tools, hangs=True)
    monkeypatch.setattr(_sandbox, "PROBE_TIMEOUT", 0.5)
    with pytest.raises(acp.SandboxError, match=r"did not finish within 0\.5 s"):
        acp.agent("codex", env={"PATH": str(tools)})


def test_without_a_sandbox_codex_starts_only_when_asked(tools: Path) -> None:
    bare = acp.agent("codex", env={"PATH": str(tools)}, sandbox="danger-full-access")
    assert bare.command[-2:] == ("-c", 'sandbox_mode="danger-full-access"')
    assert bare.sandbox == "danger-full-access"


def test_codex_is_sandboxed_where_bubblewrap_works(tools: Path) -> None:
    bwrap(tools)
    sandboxed = acp.agent("codex", env={"PATH": str(tools)}, args=["-m", "x"])
    assert sandboxed.command[3:] == ("-c", 'sandbox_mode="workspace-write"', "-m", "x")
    assert sandboxed.env["PATH"] == str(tools)  # bubblewrap 0.9+: no helper link needed


def test_an_older_bubblewrap_gets_codexs_helper_on_path(tools: Path, tmp_path: Path) -> None:
    """bubblewrap before 0.9 has no --argv0: Codex then starts its helper by name."""
    bwrap(tools, argv0=False)
    native = program(tmp_path / "native", "codex-acp", data=ELF)
    agent = acp.agent("codex", env={"PATH": str(tools)}, executable=str(native))
    first, _, rest = agent.env["PATH"].partition(os.pathsep)
    assert rest == str(tools)
    helper = Path(first) / "codex-linux-sandbox"
    assert helper.is_symlink()
    assert os.path.realpath(helper) == str(native)
    assert agent.sandbox == "workspace-write"


def test_the_helper_links_to_the_binary_behind_npms_launcher(tools: Path, tmp_path: Path) -> None:
    bwrap(tools, argv0=False)
    scope = tmp_path / "node_modules" / "@zed-industries"
    launcher = program(scope / "codex-acp" / "bin", "codex-acp.js", "#!/usr/bin/env node\n")
    arch = _sandbox._ARCH[platform.machine().lower()]
    native = program(scope / f"codex-acp-linux-{arch}" / "bin", "codex-acp", data=ELF)
    (tools / "codex-acp").unlink()
    (tools / "codex-acp").symlink_to(launcher)
    agent = acp.agent("codex", env={"PATH": str(tools)})
    helper = Path(agent.env["PATH"].split(os.pathsep)[0]) / "codex-linux-sandbox"
    assert os.path.realpath(helper) == str(native)


def test_an_older_bubblewrap_without_codexs_binary_is_refused(tools: Path) -> None:
    bwrap(tools, argv0=False)
    with pytest.raises(acp.SandboxError, match=r"predates 0\.9") as refused:
        acp.agent("codex", env={"PATH": str(tools)})
    assert "apt-get install bubblewrap" in str(refused.value)


# -- today's codex-acp (@agentclientprotocol/codex-acp 2.x) --------------------------------


def current_codex(tools: Path, tmp_path: Path) -> Path:
    """An npm install of codex-acp 2.x whose launcher is on ``PATH`` (it never runs)."""
    package = tmp_path / "node_modules" / "@agentclientprotocol" / "codex-acp"
    launcher = program(package / "dist", "index.js", "#!/usr/bin/env node\nexit 1\n")
    described = '{"name": "@agentclientprotocol/codex-acp", "version": "2.6.0"}'
    (package / "package.json").write_text(described)
    (tools / "codex-acp").unlink()
    (tools / "codex-acp").symlink_to(launcher)
    return launcher


def test_todays_codex_is_known_by_its_package_and_starts_in_its_asking_mode(
    tools: Path, tmp_path: Path
) -> None:
    """No ``-c`` arguments (2.x reads none): its ``read-only`` mode, set at start and at
    ``session/new``, whose sandbox the header names."""
    bwrap(tools)
    current_codex(tools, tmp_path)
    codex = acp.agent("codex", env={"PATH": str(tools)})
    assert codex.command == (str(tools / "codex-acp"),)
    assert (codex.mode, codex.env["INITIAL_AGENT_MODE"]) == ("read-only", "read-only")
    assert codex.package == "@agentclientprotocol/codex-acp"
    assert codex.info("read-only")["sandbox"] == "read-only"
    assert codex.info("agent-full-access")["sandbox"] == "danger-full-access"
    with pytest.raises(TypeError, match="session mode's sandbox"):
        acp.agent("codex", env={"PATH": str(tools)}, sandbox="workspace-write")


def test_todays_codex_refuses_a_folder_whose_project_settings_it_would_load(
    tools: Path, tmp_path: Path
) -> None:
    """codex-acp 2.x trusts every session folder: a project's ``.codex`` (from ``cwd`` up to
    its git root) refuses the session with ``settings="user"``."""
    bwrap(tools)
    current_codex(tools, tmp_path)
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    (project / ".codex" / "rules").mkdir(parents=True)
    (project / ".codex" / "rules" / "default.rules").write_text('prefix_rule(pattern=["rm"])\n')
    inner = project / "src"
    inner.mkdir()
    codex = acp.agent("codex", env={"PATH": str(tools), "HOME": str(tmp_path / "home")})
    with pytest.raises(acp.ProjectSettingsError, match="settings='project'") as refused:
        acp.session(codex, cwd=inner)
    assert str(project / ".codex") in str(refused.value)
    assert acp.agent("codex", env={"PATH": str(tools)}, settings="project").in_folder is None
    (project / ".codex" / "rules" / "default.rules").unlink()
    (project / ".codex" / "rules").rmdir()
    acp.session(codex, cwd=inner).close()  # an empty .codex holds nothing to load


# -- Qwen Code ---------------------------------------------------------------------------

SYSTEM, DEFAULTS, TRUSTED = (
    "QWEN_CODE_SYSTEM_SETTINGS_PATH",
    "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
    "QWEN_CODE_TRUSTED_FOLDERS_PATH",
)


def test_qwen_asks_in_its_default_mode_and_names_its_package_when_missing(
    tools: Path, tmp_path: Path
) -> None:
    program(tools, "qwen")
    qwen = acp.agent("qwen", env={"PATH": str(tools), SYSTEM: str(tmp_path / "none.json")})
    assert (qwen.command, qwen.mode) == ((str(tools / "qwen"), "--acp"), "default")
    assert qwen.late_input == acp._client.LATE_INPUT
    assert qwen.info("default") == {"agent": "qwen", "mode": "default", "settings": "user"}
    with pytest.raises(acp.AgentNotFoundError, match="npm install -g @qwen-code/qwen-code"):
        acp.agent("qwen", env={"PATH": str(tmp_path / "nowhere")})


def test_qwen_trusts_no_folder_unless_asked_and_keeps_the_machines_settings(
    tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Folder trust on in its system settings (which win over the person's own), no folder
    trusted; the machine's system settings and defaults stay in force."""
    program(tools, "qwen")
    machine = tmp_path / "etc" / "settings.json"
    machine.parent.mkdir()
    said = {
        "security": {"folderTrust": {"enabled": False}, "auth": {"enforcedType": "openai"}},
        "ide": {"enabled": True},
        "model": {"name": "qwen3-coder-plus"},
    }
    machine.write_text("\ufeff" + json.dumps(said), encoding="utf-8")
    monkeypatch.setenv(SYSTEM, str(machine))  # as the kernel was started
    monkeypatch.delenv(DEFAULTS, raising=False)
    env = acp.agent("qwen", env={"PATH": str(tools)}).environment()
    assert json.loads(Path(env[SYSTEM]).read_text()) == {
        "security": {"folderTrust": {"enabled": True}, "auth": {"enforcedType": "openai"}},
        "ide": {"enabled": False},
        "model": {"name": "qwen3-coder-plus"},
    }
    assert json.loads(Path(env[TRUSTED]).read_text()) == {"/": "DO_NOT_TRUST"}
    assert env[DEFAULTS] == str(machine.parent / "system-defaults.json")
    assert Path(env[SYSTEM]).parent != machine.parent

    project = acp.agent("qwen", env={"PATH": str(tools)}, settings="project").environment()
    assert (project[SYSTEM], project.get(TRUSTED)) == (str(machine), None)


def test_what_qwen_wrote_to_its_trusted_folders_is_gone_before_its_next_start(
    tools: Path, tmp_path: Path
) -> None:
    program(tools, "qwen")
    qwen = acp.agent("qwen", env={"PATH": str(tools), SYSTEM: str(tmp_path / "none.json")})
    trusted = Path(qwen.environment()[TRUSTED])
    trusted.write_text(json.dumps({str(tmp_path): "TRUST_FOLDER"}))
    Path(qwen.environment()[SYSTEM]).write_text("{}")
    assert qwen.command_in(str(tmp_path)) == (str(tools / "qwen"), "--acp")
    assert json.loads(trusted.read_text()) == {"/": "DO_NOT_TRUST"}
    assert json.loads(Path(qwen.environment()[SYSTEM]).read_text()) == {
        "security": {"folderTrust": {"enabled": True}},
        "ide": {"enabled": False},
    }


@pytest.mark.parametrize(
    "text",
    ['{\n  // folder trust stays off\n  "security": {}\n}', "[]", '{"security": true}'],
)
def test_qwen_refuses_system_settings_it_cannot_add_folder_trust_to(
    tools: Path, tmp_path: Path, text: str
) -> None:
    program(tools, "qwen")
    machine = tmp_path / "settings.json"
    machine.write_text(text)
    env = {"PATH": str(tools), SYSTEM: str(machine)}
    with pytest.raises(acp.ProjectSettingsError, match="settings='project'") as refused:
        acp.agent("qwen", env=env)
    assert str(machine) in str(refused.value)
    assert acp.agent("qwen", env=env, settings="project").environment()[SYSTEM] == str(machine)


def test_qwen_refuses_trusted_folders_of_the_callers_own(tools: Path, tmp_path: Path) -> None:
    program(tools, "qwen")
    env = {"PATH": str(tools), TRUSTED: str(tmp_path / "mine.json")}
    with pytest.raises(ValueError, match="settings='project'"):
        acp.agent("qwen", env=env)
    assert acp.agent("qwen", env=env, settings="project").environment()[TRUSTED] == env[TRUSTED]


# -- GitHub Copilot CLI ------------------------------------------------------------------


def test_copilot_asks_in_its_agent_mode_and_names_its_package_when_missing(
    tools: Path, tmp_path: Path
) -> None:
    program(tools, "copilot")
    copilot = acp.agent("copilot", env={"PATH": str(tools)})
    agent_mode = "https://agentclientprotocol.com/protocol/session-modes#agent"
    assert (copilot.command, copilot.mode) == ((str(tools / "copilot"), "--acp"), agent_mode)
    assert copilot.info(agent_mode)["settings"] == "user"
    with pytest.raises(acp.AgentNotFoundError, match="npm install -g @github/copilot"):
        acp.agent("copilot", env={"PATH": str(tmp_path / "nowhere")})


@pytest.mark.parametrize(
    "path", [".github/hooks/allow.json", ".github/copilot/settings.json", ".mcp.json", ".claude"]
)
def test_copilot_refuses_a_repository_whose_configuration_it_would_load(
    tools: Path, tmp_path: Path, path: str
) -> None:
    """Anywhere from the session's folder up to the repository's root; the repository's
    own configuration, never the person's home."""
    program(tools, "copilot")
    home = tmp_path / "home"
    repo = home / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text("{}")
    below = repo / "src" / "pkg"
    below.mkdir(parents=True)
    (home / ".copilot").mkdir()
    env = {"PATH": str(tools), "HOME": str(home)}
    copilot = acp.agent("copilot", env=env)
    for cwd in (repo, below):
        with pytest.raises(acp.ProjectSettingsError, match="settings='project'") as refused:
            copilot.command_in(str(cwd))
        assert str(repo / Path(path).parts[0]) in str(refused.value)
    assert acp.agent("copilot", env=env, settings="project").command_in(str(below))
    clean = home / "other"
    (clean / ".git").mkdir(parents=True)
    assert copilot.command_in(str(clean)) == (str(tools / "copilot"), "--acp")
    assert copilot.command_in(str(home)) == (str(tools / "copilot"), "--acp")


def test_copilot_looks_no_higher_than_the_repositorys_root(tools: Path, tmp_path: Path) -> None:
    program(tools, "copilot")
    (tmp_path / ".github" / "hooks" / "allow.json").parent.mkdir(parents=True)
    (tmp_path / ".github" / "hooks" / "allow.json").write_text("{}")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / ".claude").mkdir()  # empty: nothing to load
    copilot = acp.agent("copilot", env={"PATH": str(tools), "HOME": str(tmp_path / "home")})
    assert copilot.command_in(str(tmp_path / "repo")) == (str(tools / "copilot"), "--acp")


# -- Cline -------------------------------------------------------------------------------


def test_cline_asks_in_its_act_mode_with_its_sessions_in_its_own_process(
    tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cline's CLI approves every call unless told not to; by default it runs sessions in a
    hub daemon of its own that outlives the agent."""
    program(tools, "cline")
    monkeypatch.setenv("CLINE_SESSION_BACKEND_MODE", "hub")  # as a kernel was started
    cline = acp.agent("cline", env={"PATH": str(tools)})
    assert cline.command == (str(tools / "cline"), "--acp", "--auto-approve", "false")
    assert cline.mode == "act"
    assert cline.environment()["CLINE_SESSION_BACKEND_MODE"] == "local"
    project = acp.agent("cline", env={"PATH": str(tools)}, settings="project")
    assert project.environment()["CLINE_SESSION_BACKEND_MODE"] == "local"
    with pytest.raises(ValueError, match="outside the agent's process"):
        acp.agent("cline", env={"PATH": str(tools), "CLINE_SESSION_BACKEND_MODE": "hub"})
    with pytest.raises(acp.AgentNotFoundError, match="npm install -g cline"):
        acp.agent("cline", env={"PATH": str(tmp_path / "nowhere")})


@pytest.mark.parametrize("path", [".clinerules/hooks/PreToolUse", ".cline/plugins/x.js", ".agents"])
def test_cline_refuses_a_workspace_whose_configuration_it_would_load(
    tools: Path, tmp_path: Path, path: str
) -> None:
    program(tools, "cline")
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / path).parent.mkdir(parents=True, exist_ok=True)
    (work / path).write_text("#!/bin/sh\n")
    env = {"PATH": str(tools), "HOME": str(tmp_path / "home")}
    with pytest.raises(acp.ProjectSettingsError, match="settings='project'") as refused:
        acp.agent("cline", env=env).command_in(str(work))
    assert str(work / Path(path).parts[0]) in str(refused.value)
    assert acp.agent("cline", env=env, settings="project").command_in(str(work))
