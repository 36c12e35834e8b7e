"""The real coding agents through the ACP adapter: Claude Code, Codex, Gemini CLI, OpenCode,
Qwen Code, GitHub Copilot CLI and Cline.


Each agent (installed by ``scripts/setup.sh`` from ``tests/agents/package.json``)
runs against a fake model server of its provider on 127.0.0.1, in a fresh home.
The model asks to write a file and to run a command; the test's interaction
records what each permission request showed and answers Allow or Deny. Cancel
stops a running command and leaves none of the agent's processes behind. A
read-only command runs under the agent's own rules (``decided_by="agent"``), an
expired question answers ``cancelled``, and an agent killed mid-turn fails the
turn with an error naming it.

A project's own agent settings (``.claude/``, ``.gemini/``, ``.codex/``,
``opencode.json`` and ``.opencode/``, ``.qwen/``, ``.github/hooks/``) that allow ``touch``
are not loaded unless ``settings="project"``, even where the person trusts the folder;
``strict=True`` stops a turn at a command the agent runs under such rules. Codex runs its
commands in its sandbox (bubblewrap, as ``scripts/setup.sh`` installs it), and
refuses to start where bubblewrap is missing or does not work.

"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest
from servers.agent_launch import AGENTS, BIN, EXECUTABLES, GEMINI_MODEL, launch, plugin_installed
from servers.agent_models import (
    AgentModelServer,
    AnthropicAgentServer,
    ChatCompletionsAgentServer,
    ClineAgentServer,
    CopilotAgentServer,
    GeminiAgentServer,
    OpenCodeAgentServer,
    ResponsesAgentServer,
    RunCommand,
    Say,
    Step,
    UseTool,
    WriteFile,
)

from mead_notebook import TurnError
from mead_notebook.adapters import acp
from mead_notebook.adapters.claude_agent.scripted import ScriptedServer, Text, Think, Use
from mead_notebook.calls import Call
from mead_notebook.interaction import (
    Allow,
    Answered,
    Choice,
    Deny,
    Picked,
    Request,
    Unanswered,
    Update,
)
from mead_notebook.notebook import NotebookInteraction
from mead_notebook.policies import AllowAll

pytestmark = [pytest.mark.timeout(120)]

SERVERS: dict[str, type[AgentModelServer]] = {
    "claude": AnthropicAgentServer,
    "codex": ResponsesAgentServer,
    "gemini": GeminiAgentServer,
    "opencode": OpenCodeAgentServer,
    "qwen": ChatCompletionsAgentServer,
    "copilot": CopilotAgentServer,
    "cline": ClineAgentServer,
}
COPILOT_AGENT_MODE = "https://agentclientprotocol.com/protocol/session-modes#agent"
REFUSED = {"codex": ".codex", "copilot": ".github/hooks", "cline": ".clinerules"}
"""The agents whose preset refuses a folder holding the project's settings, and what it
names."""


@dataclass
class Person:
    """An interaction that answers each request with ``decide`` and records everything."""

    decide: Callable[[Request], Allow | Deny]

    def __post_init__(self) -> None:
        self.requests: list[Request] = []
        self.updates: list[Update] = []
        self.asked = threading.Event()

    def tool_updated(self, context: Any, update: Update) -> None:
        self.updates.append(dict(update))  # type: ignore[arg-type]

    def request_permission(self, context: Any, request: Request) -> Allow | Deny:
        self.requests.append(dict(request))  # type: ignore[arg-type]
        self.asked.set()
        return self.decide(request)

    def register_call(self, context: Any, tool_call_id: str, call: Call) -> None:
        return None

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Answered | Unanswered:
        return Unanswered()

    def text_delta(self, context: Any, text: str) -> None:
        return None


@dataclass
class Rig:
    """One agent, its fake model and a fresh working directory."""

    name: str
    root: Path

    def __post_init__(self) -> None:
        self.cwd = self.root / "work"
        self.cwd.mkdir()

    def server(self, *steps: Step, think: float = 0.0) -> AgentModelServer:
        return SERVERS[self.name](*steps, cwd=str(self.cwd), think=think)

    def agent(self, server: AgentModelServer, *more: str, **options: Any) -> Any:
        start = launch(self.name, server.url, self.root)
        args = ("-m", GEMINI_MODEL) if self.name == "gemini" else ()
        return acp.agent(
            self.name,
            executable=str(BIN / EXECUTABLES[self.name]),
            env=start.env,
            args=(*args, *more),
            **options,
        )

    def allow_touch_in_the_project(self) -> None:
        """The project pre-allows ``touch`` in its own agent settings (Claude's with a hook
        that allows it), and the person trusts the folder as each agent asks it to be
        trusted."""
        home = self.root / "home"
        if self.name == "claude":
            # Claude Code (2.1.318) still asks before a command a project's allow rule
            # lists; its hook's "allow" runs it unasked.
            allowed = {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
            said = json.dumps({"hookSpecificOutput": allowed})
            hook = {"type": "command", "command": f"touch {self.cwd / 'hooked.txt'}; echo '{said}'"}
            settings = {
                "permissions": {"allow": ["Bash"]},
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]},
            }
            (self.cwd / ".claude").mkdir()
            (self.cwd / ".claude" / "settings.json").write_text(json.dumps(settings))
        elif self.name == "opencode":
            # Its config allows touch; a plugin of its own (code run at start) leaves a mark.
            allowed = {"permission": {"bash": {"touch *": "allow"}}}
            (self.cwd / "opencode.json").write_text(json.dumps(allowed))
            plugins = self.cwd / ".opencode" / "plugins"
            plugins.mkdir(parents=True)
            mark = json.dumps(str(self.cwd / "hooked.txt"))
            plugin = (
                'import fs from "fs";\n'
                f'export default async () => {{ fs.writeFileSync({mark}, ""); return {{}} }};\n'
            )
            (plugins / "mark.js").write_text(plugin)
            plugin_installed(self.cwd / ".opencode")
        elif self.name == "gemini":
            allowed = {"tools": {"allowed": ["run_shell_command(touch)"]}}
            (self.cwd / ".gemini").mkdir()
            (self.cwd / ".gemini" / "settings.json").write_text(json.dumps(allowed))
            (home / ".gemini").mkdir(parents=True, exist_ok=True)
            trusted = {str(self.cwd): "TRUST_FOLDER"}
            (home / ".gemini" / "trustedFolders.json").write_text(json.dumps(trusted))
        elif self.name == "copilot":
            # In a git repository its hooks load whether or not the folder is trusted.
            subprocess.run(["git", "init", "-q", str(self.cwd)], check=True, timeout=30)
            allowed = json.dumps({"behavior": "allow"})
            hooks = {
                "preToolUse": [{"type": "command", "bash": f"touch {self.cwd / 'hooked.txt'}"}],
                "permissionRequest": [{"type": "command", "bash": f"echo '{allowed}'"}],
            }
            (self.cwd / ".github" / "hooks").mkdir(parents=True)
            (self.cwd / ".github" / "hooks" / "allow.json").write_text(
                json.dumps({"version": 1, "hooks": hooks})
            )
        elif self.name == "cline":
            # A hook it runs before every call (it has no project rule that allows one).
            hook = self.cwd / ".clinerules" / "hooks" / "PreToolUse"
            hook.parent.mkdir(parents=True)
            hook.write_text(f"#!/bin/sh\ntouch {self.cwd / 'hooked.txt'}\necho '{{}}'\n")
            hook.chmod(0o755)
        elif self.name == "qwen":
            # Folder trust off (its default) trusts every folder; the person's settings
            # say so outright, and trust this one besides.
            hook = {"type": "command", "command": f"touch {self.cwd / 'hooked.txt'}"}
            settings = {
                "permissions": {"allow": ["run_shell_command(touch)"]},
                "hooks": {"PreToolUse": [{"matcher": "run_shell_command", "hooks": [hook]}]},
            }
            (self.cwd / ".qwen").mkdir()
            (self.cwd / ".qwen" / "settings.json").write_text(json.dumps(settings))
            self.trust_in_qwen = True
        else:
            (self.cwd / ".codex" / "rules").mkdir(parents=True)
            rule = 'prefix_rule(pattern=["touch"], decision="allow")\n'
            (self.cwd / ".codex" / "rules" / "default.rules").write_text(rule)
            self.trust_in_codex = True

    trust_in_codex = False
    trust_in_qwen = False

    def launched(self, server: AgentModelServer, *more: str, **options: Any) -> Any:
        """:meth:`agent`, with the person's Codex or Qwen config trusting the folder when
        asked."""
        spec = self.agent(server, *more, **options)
        if self.trust_in_codex:
            config = self.root / "home" / ".codex" / "config.toml"
            trusted = f'\n[projects."{self.cwd}"]\ntrust_level = "trusted"\n'
            config.write_text(config.read_text() + trusted)
        if self.trust_in_qwen:
            qwen = self.root / "home" / ".qwen"
            settings = json.loads((qwen / "settings.json").read_text())
            settings["security"]["folderTrust"] = {"enabled": False}
            (qwen / "settings.json").write_text(json.dumps(settings))
            trusted = {str(self.cwd): "TRUST_FOLDER"}
            (qwen / "trustedFolders.json").write_text(json.dumps(trusted))
        return spec


ASKS_BEFORE_EVERY_CALL = ("cline",)
"""Agents that run nothing on rules of their own (Cline in act mode asks before reading a
file too) and read no project rule that allows a call (Cline's project hooks cannot)."""
WITH_RULES = [name for name in AGENTS if name not in ASKS_BEFORE_EVERY_CALL]


@pytest.fixture(params=AGENTS)
def rig(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Rig:
    name: str = request.param
    if not (BIN / EXECUTABLES[name]).exists():
        pytest.fail(f"{name} is not installed: run scripts/setup.sh (npm ci in tests/agents)")
    if name == "claude":
        # As in some containers: the claude preset must keep it from the agent.
        monkeypatch.setenv("IS_SANDBOX", "yes")
    return Rig(name, tmp_path)


def allow(request: Request) -> Allow | Deny:
    return Allow()


def deny(request: Request) -> Allow | Deny:
    return Deny()


def shows_diff(request: Request, path: Path, text: str) -> bool:
    diffs = [b for b in request.get("content") or [] if b.get("type") == "diff"]
    return any(b["path"] == str(path) and b["new_text"] == text for b in diffs)  # type: ignore[typeddict-item]


def terminal_shows(request: Request, command: str) -> bool:
    """The command is on the card as a terminal block."""
    blocks = request.get("content") or []
    shown = [b["command"] for b in blocks if b.get("type") == "terminal"]  # type: ignore[typeddict-item]
    return any(command in c for c in shown)


def shows_command(request: Request, command: str) -> bool:
    """The command is on the card: a terminal block, its title or the call's name.

    Gemini's permission request carries no input: the command is only its title.
    """
    named = (request.get("title") or "", request["tool"])
    return terminal_shows(request, command) or any(command in n for n in named)


def shows_the_write(rig: Rig, request: Request, path: Path, text: str) -> bool:
    """The write is on the card: its diff, or for Cline (whose ``apply_patch`` is of kind
    ``other`` and sends no diff) the patch that is its input."""
    if rig.name == "cline":
        patch = (request.get("arguments") or {}).get("input", "")
        return f"*** Add File: {path.name}\n+{text}" in patch
    return shows_diff(request, path, text)


def test_allow_writes_the_file_after_showing_its_diff(rig: Rig) -> None:
    target = rig.cwd / "hello.txt"
    person = Person(allow)
    with rig.server(WriteFile("hello.txt", "hello\n")) as server:
        result = acp.run(rig.agent(server), "Write hello.txt", interaction=person, cwd=rig.cwd)
    assert result.stop_reason == "end_turn", result
    [asked] = person.requests
    kind = "other" if rig.name == "cline" else "edit"
    assert asked.get("kind") == kind, asked
    assert shows_the_write(rig, asked, target, "hello\n"), asked
    if rig.name != "cline":  # Cline names no location
        assert [loc["path"] for loc in asked.get("locations") or []] == [str(target)], asked
    assert asked.get("editable") is False, asked
    # Cline's apply_patch writes the last line without its newline.
    assert target.read_text() == ("hello" if rig.name == "cline" else "hello\n")
    [call] = result.calls
    assert (call.status, call.kind) == ("completed", kind), call
    assert result.text.endswith("Done."), result.text  # the model's last words, streamed


def test_deny_leaves_the_file_unwritten(rig: Rig) -> None:
    target = rig.cwd / "hello.txt"
    person = Person(deny)
    with rig.server(WriteFile("hello.txt", "hello\n")) as server:
        result = acp.run(rig.agent(server), "Write hello.txt", interaction=person, cwd=rig.cwd)
    [asked] = person.requests
    assert shows_the_write(rig, asked, target, "hello\n"), asked
    assert not target.exists()
    call, *again = result.calls
    assert call.status in ("denied", "failed"), call
    assert call.outcome == "denied", call
    assert_announced_again_only_by_cline(rig, again)


def assert_announced_again_only_by_cline(rig: Rig, again: list[Call]) -> None:
    """Cline announces a call it was refused once more after its end (a ``tool_call`` for
    the ended id): a call of its own that never runs."""
    if rig.name != "cline":
        assert again == [], again
    assert all(c.status != "completed" for c in again), again


def test_allow_runs_the_command_after_showing_it(rig: Rig) -> None:
    command = "touch ran.txt"
    person = Person(allow)
    with rig.server(RunCommand(command)) as server:
        result = acp.run(rig.agent(server), "Run it", interaction=person, cwd=rig.cwd)
    assert result.stop_reason == "end_turn", result
    [asked] = person.requests
    assert asked.get("kind") == "execute", asked
    assert shows_command(asked, command), repr(list(asked.items()))
    if rig.name != "copilot":  # Copilot's title is the description its model wrote
        assert command in (asked.get("title") or ""), repr(list(asked.items()))
    if rig.name != "gemini":  # Gemini's request carries no input to make a terminal from
        assert terminal_shows(asked, command), repr(list(asked.items()))
    assert (rig.cwd / "ran.txt").exists()


def test_deny_leaves_the_command_unrun(rig: Rig) -> None:
    command = "touch ran.txt"
    person = Person(deny)
    with rig.server(RunCommand(command)) as server:
        result = acp.run(rig.agent(server), "Run it", interaction=person, cwd=rig.cwd)
    [asked] = person.requests
    assert shows_command(asked, command), repr(list(asked.items()))
    assert not (rig.cwd / "ran.txt").exists()
    call, *again = result.calls
    assert call.outcome == "denied", call
    assert_announced_again_only_by_cline(rig, again)


def group_of(pid: int) -> list[psutil.Process]:
    """The live processes whose process group is ``pid``'s (the agent's own session)."""
    found = []
    for proc in psutil.process_iter(["pid", "status"]):
        try:
            if os.getpgid(proc.pid) == pid and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except (ProcessLookupError, psutil.NoSuchProcess):
            continue
    return found


def sleeping(pid: int, within: float = 10.0) -> list[int]:
    """The pids of the ``sleep 60`` commands among ``pid``'s descendants, once there is one."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = []
        for proc in psutil.Process(pid).children(recursive=True):
            try:
                if proc.cmdline()[:2] == ["sleep", "60"]:
                    found.append(proc.pid)
            except psutil.Error:
                continue
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("the command's sleep never showed among the agent's descendants")


def gone(pids: list[int], within: float = 10.0) -> list[int]:
    deadline = time.monotonic() + within
    left = pids
    while left and time.monotonic() < deadline:
        left = [p for p in left if psutil.pid_exists(p) and _alive(p)]
        time.sleep(0.05)
    return left


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_cancel_stops_a_running_command_and_leaves_no_process(rig: Rig) -> None:
    pidfile = rig.cwd / "sleeper.pid"
    person = Person(allow)
    with rig.server(RunCommand(f"echo $$ > {pidfile}; exec sleep 60")) as server:
        conversation = acp.session(rig.agent(server), cwd=rig.cwd)
        try:
            turn = conversation.start("Sleep", interaction=person)
            deadline = time.monotonic() + 60
            while not pidfile.exists() or not pidfile.read_text().strip():
                assert time.monotonic() < deadline, "the command never started"
                assert not turn.done(), turn.result()
                time.sleep(0.05)
            assert conversation.process is not None
            agent_pid = conversation.process.pid
            # The command's pid as the host sees it: in Codex's sandbox (a pid namespace
            # of its own) ``$$`` is not, and bubblewrap starts it in a session of its own.
            sleepers = sleeping(agent_pid)
            group = [p.pid for p in group_of(agent_pid)]
            assert agent_pid in group
            began = time.monotonic()
            turn.cancel()
            result = turn.result(30)
            stopped = time.monotonic() - began
        finally:
            conversation.close()
    assert result.stop_reason == "interrupted", result
    assert gone(sleepers) == [], "the command outlived the cancel"
    assert gone(group) == [], "a process of the agent outlived the cancel"
    assert stopped < 30


@pytest.mark.parametrize("rig", WITH_RULES, indirect=True)
def test_a_command_the_agent_runs_without_asking_says_agent(rig: Rig) -> None:
    """``ls`` is read-only: each agent's own rules run it without a question. OpenCode's
    preset asks before every command (``test_opencode_asks_before_any_command_or_fetch``):
    its ``read`` runs unasked instead. Copilot CLI asks before every command; reading a file
    with its ``view`` tool it does unasked. Cline asks before every call
    (:data:`ASKS_BEFORE_EVERY_CALL`)."""
    person = Person(allow)
    (rig.cwd / "seen.txt").write_text("x")
    step: Step = RunCommand("ls", sandboxed=True)
    if rig.name == "opencode":
        step = UseTool("read", {"filePath": str(rig.cwd / "seen.txt")})
    if rig.name == "copilot":
        step = UseTool("view", {"path": str(rig.cwd / "seen.txt")})
    with rig.server(step) as server:
        result = acp.run(rig.agent(server), "List", interaction=person, cwd=rig.cwd)
    assert person.requests == []
    [call] = result.calls
    assert (call.status, call.decided_by) == ("completed", "agent"), call
    # Codex reports a listing as a read, OpenCode and Copilot a file they read.
    reads = ("codex", "opencode", "copilot")
    assert call.kind == ("read" if rig.name in reads else "execute"), call
    ran = [u for u in person.updates if u.get("status") == "in_progress"]
    assert [u.get("decided_by") for u in ran] == ["agent"], ran


def test_an_expired_question_answers_cancelled_and_nothing_runs(rig: Rig) -> None:
    person = Person(lambda request: Deny("expired"))
    with rig.server(RunCommand("touch ran.txt")) as server:
        result = acp.run(rig.agent(server), "Run it", interaction=person, cwd=rig.cwd)
    assert len(person.requests) == 1
    assert not (rig.cwd / "ran.txt").exists()
    call, *again = result.calls
    assert call.status != "completed", call
    assert call.outcome in ("expired", "interrupted"), call
    assert_announced_again_only_by_cline(rig, again)


def test_an_agent_killed_mid_turn_fails_the_turn_naming_it(rig: Rig) -> None:
    conversation: Any = None

    def kill_the_agent(request: Request) -> Allow | Deny:
        os.killpg(conversation.process.pid, signal.SIGKILL)
        time.sleep(0.5)
        return Allow()

    person = Person(kill_the_agent)
    with rig.server(RunCommand("touch ran.txt")) as server:
        conversation = acp.session(rig.agent(server), cwd=rig.cwd)
        try:
            with pytest.raises(TurnError) as raised:
                conversation.run("Run it", interaction=person)
        finally:
            conversation.close()
    message = str(raised.value)
    assert f"{rig.name} exited with code -9 during the turn" in message, message
    assert not (rig.cwd / "ran.txt").exists()


def test_claudes_thinking_and_to_do_list_are_thoughts_and_plan(tmp_path: Path) -> None:
    """Claude's thinking streams as thoughts (never in the text) and its TodoWrite is the plan."""
    if not (BIN / EXECUTABLES["claude"]).exists():
        pytest.fail("claude is not installed: run scripts/setup.sh (npm ci in tests/agents)")
    cwd = tmp_path / "work"
    cwd.mkdir()
    todos = [
        {"content": "Write the file", "status": "in_progress", "activeForm": "Writing"},
        {"content": "Check it", "status": "pending", "activeForm": "Checking"},
    ]
    replies = [[Think("Let me plan ", "this."), Use("t1", "TodoWrite", {"todos": todos})]]
    with ScriptedServer([*replies, [Text("All planned.")]]) as server:
        start = launch("claude", server.url, tmp_path)
        spec = acp.agent("claude", executable=str(BIN / EXECUTABLES["claude"]), env=start.env)
        person = Person(allow)
        result = acp.run(spec, "Plan it", interaction=person, cwd=cwd)
    assert result.thoughts == "Let me plan this.", result
    assert result.text == "All planned.", result
    # claude-agent-acp names a task in progress by its activeForm.
    assert [(e["content"], e["status"]) for e in result.plan] == [
        ("Writing", "in_progress"),
        ("Check it", "pending"),
    ]
    assert result.calls == [], result
    assert person.requests == []


# -- the agent's own rules -----------------------------------------------------------------


def test_a_projects_own_settings_are_not_loaded_unless_asked(rig: Rig) -> None:
    """A cloned repository's agent settings allow ``touch``: it is still asked about.

    codex-acp 2.x trusts every session folder itself, so Codex would load them: the
    session is refused before the agent starts, naming the folder.
    """
    rig.allow_touch_in_the_project()
    person = Person(allow)
    if rig.name in REFUSED:
        with rig.server(RunCommand("touch ran.txt")) as server:
            with pytest.raises(acp.ProjectSettingsError, match="settings='project'") as refused:
                acp.run(rig.launched(server), "Run it", interaction=person, cwd=rig.cwd)
            assert server.turns == []
        assert str(rig.cwd / REFUSED[rig.name]) in str(refused.value)
        assert not (rig.cwd / "ran.txt").exists()
        return
    with rig.server(RunCommand("touch ran.txt")) as server:
        result = acp.run(rig.launched(server), "Run it", interaction=person, cwd=rig.cwd)
    assert len(person.requests) == 1, person.requests
    assert shows_command(person.requests[0], "touch ran.txt")
    assert (rig.cwd / "ran.txt").exists()
    [call] = result.calls
    assert call.decided_by is None, call
    assert not (rig.cwd / "hooked.txt").exists(), "the project's hook ran"
    assert result.agent is not None
    assert result.agent.get("settings") == "user"


@pytest.mark.parametrize("rig", WITH_RULES, indirect=True)
def test_a_projects_own_settings_are_honoured_when_asked(rig: Rig) -> None:
    rig.allow_touch_in_the_project()
    person = Person(deny)
    with rig.server(RunCommand("touch ran.txt")) as server:
        spec = rig.launched(server, settings="project")
        result = acp.run(spec, "Run it", interaction=person, cwd=rig.cwd)
    assert person.requests == []
    assert (rig.cwd / "ran.txt").exists()
    [call] = result.calls
    assert (call.status, call.decided_by) == ("completed", "agent"), call
    if rig.name in ("claude", "opencode", "copilot"):
        assert (rig.cwd / "hooked.txt").exists(), "the project's hook did not run"
    assert result.agent is not None
    assert result.agent.get("settings") == "project"


@pytest.mark.parametrize("rig", WITH_RULES, indirect=True)
def test_strict_stops_the_turn_at_a_command_run_under_the_projects_rules(rig: Rig) -> None:
    rig.allow_touch_in_the_project()
    person = Person(deny)
    # The model takes a moment before its next step, as a real one does: OpenCode asks it
    # again within milliseconds of the first command's end, before a cancel can land.
    steps = (RunCommand("touch ran.txt"), RunCommand("touch second.txt"))
    with rig.server(*steps, think=2.0) as server:
        spec = rig.launched(server, settings="project")
        result = acp.run(spec, "Run it", interaction=person, cwd=rig.cwd, strict=True)
    assert result.stop_reason == "interrupted", result
    assert person.requests == []
    call, *later = result.calls
    assert (call.status, call.outcome, call.decided_by) == ("failed", "interrupted", "agent")
    assert "ran without asking (strict)" in (call.error or ""), call
    assert result.stopped == call.error
    # On a loaded machine the agent may report its next call before the cancel reaches
    # it: that call never completes, and its command never runs.
    assert all(c.status != "completed" for c in later), later
    assert not (rig.cwd / "second.txt").exists()


def test_the_turn_says_the_agents_mode_sandbox_and_settings(rig: Rig) -> None:
    person = Person(allow)
    with rig.server(Say("Hello.")) as server:
        result = acp.run(rig.agent(server), "Hi", interaction=person, cwd=rig.cwd)
    assert result.agent is not None
    described = {k: v for k, v in result.agent.items() if k not in ("model", "usage")}
    expected: dict[str, Any] = {
        "claude": {"agent": "claude", "mode": "default", "settings": "user"},
        "codex": {
            "agent": "codex",
            "mode": "read-only",
            "sandbox": "read-only",
            "settings": "user",
        },
        "gemini": {"agent": "gemini", "mode": "default", "settings": "user"},
        # Its modes are its agents, offered as a session option only.
        "opencode": {"agent": "opencode", "mode": "build", "settings": "user"},
        "qwen": {"agent": "qwen", "mode": "default", "settings": "user"},
        "copilot": {"agent": "copilot", "mode": COPILOT_AGENT_MODE, "settings": "user"},
        "cline": {"agent": "cline", "mode": "act", "settings": "user"},
    }
    assert described == expected[rig.name], result.agent


# -- Codex's sandbox -----------------------------------------------------------------------


def codex_rig(tmp_path: Path) -> Rig:
    if not (BIN / EXECUTABLES["codex"]).exists():
        pytest.fail("codex is not installed: run scripts/setup.sh (npm ci in tests/agents)")
    return Rig("codex", tmp_path)


def test_codex_runs_its_commands_in_its_sandbox(tmp_path: Path) -> None:
    """A command Codex runs on its own runs in bubblewrap's namespaces (its read-only mode's
    sandbox); in ``agent-full-access`` mode, in the kernel's, and the header says so."""
    rig = codex_rig(tmp_path)
    command = "readlink /proc/self/ns/net"
    ours = os.readlink("/proc/self/ns/net")
    person = Person(allow)
    with rig.server(RunCommand(command, sandboxed=True)) as server:
        result = acp.run(rig.agent(server), "Run it", interaction=person, cwd=rig.cwd)
        [said] = server.tool_outputs(server.turns[-1].body)
    assert result.agent is not None
    assert result.agent.get("sandbox") == "read-only"
    assert person.requests == []
    [inside] = [w for w in said.split() if w.startswith("net:[")]
    assert inside != ours, "the command ran in the kernel's network namespace"
    with rig.server(RunCommand(command, sandboxed=True)) as server:
        bare = rig.agent(server, mode="agent-full-access")
        result = acp.run(bare, "Run it", interaction=Person(allow), cwd=rig.cwd)
        [said] = server.tool_outputs(server.turns[-1].body)
    assert result.agent is not None
    assert result.agent.get("sandbox") == "danger-full-access"
    assert ours in said


def test_codex_session_options_reach_its_model_and_its_commands_are_listed(
    tmp_path: Path,
) -> None:
    """``session.configure`` changes what the model server is asked (the model, the
    reasoning effort); ``session.commands`` are Codex's own; its usage is in the result."""
    rig = codex_rig(tmp_path)
    person = Person(allow)
    with rig.server(Say("Hello.")) as server:
        with acp.session(rig.agent(server), cwd=rig.cwd) as session:
            offered = session.configure()
            model = offered["model"]
            assert model.category == "model"
            chosen = next(v for v in model.allowed if v != model.current)
            with pytest.raises(acp.OptionError, match="reasoning_effort"):
                session.configure(reasoning_effort="enormous")
            session.configure(model=chosen, reasoning_effort="high")
            assert session.options["model"].current == chosen
            deadline = time.monotonic() + 10
            while not session.commands and time.monotonic() < deadline:
                time.sleep(0.05)
            names = {c.name for c in session.commands}
            result = session.run("Hi", interaction=person)
        asked = server.turns[-1].body
    assert asked["model"] == chosen
    assert asked["reasoning"]["effort"] == "high"
    assert {"review", "compact"} <= names
    assert result.agent is not None
    assert result.agent.get("model") == chosen
    assert result.usage is not None
    assert result.usage.size is not None
    assert result.usage.size > 0


def test_codex_refuses_to_start_where_bubblewrap_is_missing_or_broken(tmp_path: Path) -> None:
    """Without bubblewrap on PATH Codex uses the one it ships with (checked too); one on
    PATH that does not work is refused."""
    rig = codex_rig(tmp_path)
    with rig.server(Say("Hello.")) as server:
        env = launch("codex", server.url, rig.root).env
    executable = str(BIN / EXECUTABLES["codex"])
    shipped = acp.agent("codex", executable=executable, env={**env, "PATH": str(BIN)})
    assert shipped.sandbox == "read-only"
    broken = tmp_path / "broken"
    broken.mkdir()
    failing = "#!/bin/sh\necho 'setting up uid map: Permission denied' >&2\nexit 1\n"
    (broken / "bwrap").write_text(failing)
    (broken / "bwrap").chmod(0o755)
    with pytest.raises(acp.SandboxError, match="uid map: Permission denied") as refused:
        acp.agent("codex", executable=executable, env={**env, "PATH": f"{broken}:{env['PATH']}"})
    assert "sandbox='danger-full-access'" in str(refused.value)
    unchecked = acp.agent(
        "codex",
        executable=executable,
        env={**env, "PATH": f"{broken}:{env['PATH']}"},
        sandbox="danger-full-access",
    )
    assert unchecked.mode == "read-only"


# -- OpenCode's preset ----------------------------------------------------------------------


def opencode_rig(tmp_path: Path) -> Rig:
    if not (BIN / EXECUTABLES["opencode"]).exists():
        pytest.fail("opencode is not installed: run scripts/setup.sh (npm ci in tests/agents)")
    return Rig("opencode", tmp_path)


def test_opencode_asks_before_any_command_or_fetch(tmp_path: Path) -> None:
    """OpenCode runs what its configuration does not say to ask about: the preset's asks
    before every command, ``ls`` too, and before a fetch, which denied reaches no URL."""
    rig = opencode_rig(tmp_path)
    person = Person(lambda request: Allow() if request.get("kind") == "execute" else Deny())
    with rig.server(RunCommand("ls")) as server:
        page = f"{server.url}/page"
        server.steps.append(UseTool("webfetch", {"url": page, "format": "text"}))
        result = acp.run(rig.agent(server), "Look", interaction=person, cwd=rig.cwd)
    listed, fetched = person.requests
    assert (listed.get("kind"), fetched.get("kind")) == ("execute", "fetch"), person.requests
    assert shows_command(listed, "ls"), listed
    # Its title is the URL, unless the call's first report (titled ``webfetch``) lands after
    # the question, as OpenCode's two event queues sometimes deliver them.
    assert (fetched.get("arguments") or {}).get("url") == page, repr(list(fetched.items()))
    assert [s.path for s in server.side if s.path.startswith("/page")] == []
    assert [(c.kind, c.outcome, c.decided_by) for c in result.calls] == [
        ("execute", None, None),
        ("fetch", "denied", None),
    ], result.calls


def test_opencodes_own_server_answers_only_with_its_password(tmp_path: Path) -> None:
    """``opencode acp`` serves its API (sessions, permission answers, commands) on
    127.0.0.1; the preset's password keeps every other local process out."""
    rig = opencode_rig(tmp_path)
    with rig.server(Say("Hello.")) as server:
        spec = rig.agent(server)
        with acp.session(spec, cwd=rig.cwd) as session:
            session.configure()
            assert session.process is not None
            agent = psutil.Process(session.process.pid)
            [address] = [
                c.laddr
                for proc in (agent, *agent.children(recursive=True))
                for c in proc.net_connections("tcp")
                if c.status == psutil.CONN_LISTEN
            ]
            url = f"http://{address.ip}:{address.port}/permission"
            password = spec.env["OPENCODE_SERVER_PASSWORD"]
            token = base64.b64encode(f"opencode:{password}".encode()).decode()
            with urllib.request.urlopen(
                urllib.request.Request(url, headers={"Authorization": f"Basic {token}"}),
                timeout=10,
            ) as answered:
                assert answered.status == 200
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(url, timeout=10)
    assert refused.value.code == 401


# -- a session that outlives its agent ---------------------------------------------------


def later_minute(home: Path) -> None:
    """Stand for a session resumed in a later minute than it was written (as a kernel started
    again later would): Gemini CLI 0.61 names a session's record by the minute it started,
    and a process that loads the session within that same minute first writes its own start
    into that record, then finds no conversation in it and answers "Internal error"."""
    for record in (home / ".gemini" / "tmp").rglob("session-*.json*"):
        rest = record.name[len("session-2000-01-01T00-00") :]
        assert rest.startswith("-"), record.name
        record.rename(record.with_name(f"session-2000-01-01T00-00{rest}"))


def test_a_session_resumed_by_id_continues_the_conversation(rig: Rig) -> None:
    """A session's ``id``, given to ``acp.session(..., resume=)`` with a new agent process
    (as in a kernel started again): the model sees the first turn's words; ``acp.sessions``
    lists it. Gemini CLI 0.61, Copilot CLI and Cline offer ``session/load`` only: its replay
    of the first turn is the resumed turn's history (in the widget above it), never its
    text."""
    with rig.server(Say("Noted.")) as server:
        first = acp.session(rig.agent(server), cwd=rig.cwd)
        with first:
            said = first.run("The word is PINEAPPLE. Say noted.", interaction=Person(allow))
            session_id = first.id
        assert said.text.endswith("Noted."), said
        assert session_id
        assert first.process is None  # its agent is gone
        if rig.name in ("gemini", "cline"):
            with pytest.raises(acp.AgentError, match="does not list its sessions"):
                acp.sessions(rig.agent(server), cwd=rig.cwd)
            later_minute(rig.root / "home")
        else:
            listed = acp.sessions(rig.agent(server), cwd=rig.cwd)
            assert session_id in [entry.id for entry in listed], listed
        widget = NotebookInteraction(display=False, policy=AllowAll(), grace=0.1)
        again = acp.session(rig.agent(server), cwd=rig.cwd, resume=session_id)
        with again:
            assert again.id == session_id
            try:
                result = again.run("What was the word?", interaction=widget)
            finally:
                widget.close()
        assert result.text == "Noted.", result  # the model's answer alone, no replayed words
        assert result.calls == []
        assert again.id == session_id
        loads = ("gemini", "copilot", "cline")  # none offers session/resume
        assert again.resumed_by == ("session/load" if rig.name in loads else "session/resume")
        request = json.dumps(server.turns[-1].body)
    assert "PINEAPPLE" in request, "the resumed turn's request lacks the first turn"
    assert "What was the word?" in request
    if rig.name not in loads:
        assert result.history == [] == widget.history  # session/resume replays nothing
        return
    # session/load replays the first turn. Gemini replays its own session context and the
    # prompt as two chunks of the person's, without message ids: one prompt entry, ending
    # with what the person said.
    said_before = [(e["type"], e["text"]) for e in result.history if e["type"] != "call"]
    assert [kind for kind, _ in said_before] == ["prompt", "text"], result.history
    assert said_before[0][1].endswith("The word is PINEAPPLE. Say noted."), said_before
    assert said_before[1][1] == "Noted."
    shown = [(e["type"], e["text"]) for e in widget.history if e["type"] != "call"]
    assert shown == said_before, widget.history


def test_an_unknown_session_is_not_resumed_with_a_new_one(rig: Rig) -> None:
    with rig.server(Say("Noted.")) as server:
        spec = rig.agent(server)
        gone = acp.session(spec, cwd=rig.cwd, resume="no-such-session")
        with gone, pytest.raises(TurnError, match="no new session was started"):
            gone.run("Hello?", interaction=Person(allow))
        assert server.turns == []
