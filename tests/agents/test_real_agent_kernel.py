"""Each real agent under the widget in a real kernel: Allow on its card runs the
command, a kernel interrupt stops the turn and leaves none of the agent's processes
behind (Codex starts a command in a process group of its own). A session made in one
kernel is continued by its id in the next.

The cell runs over the Jupyter protocol while ``tests/kernel/frontend.py`` plays
the widget's frontend; the fake model server runs in the test's process.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import psutil
import pytest
from kernel.frontend import Frontend, kernel_python
from servers.agent_launch import AGENTS, BIN, EXECUTABLES, GEMINI_MODEL, launch
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
)

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180)]

VERSION = "7.4.0"
SERVERS: dict[str, type[AgentModelServer]] = {
    "claude": AnthropicAgentServer,
    "codex": ResponsesAgentServer,
    "gemini": GeminiAgentServer,
    "opencode": OpenCodeAgentServer,
    "qwen": ChatCompletionsAgentServer,
    "copilot": CopilotAgentServer,
    "cline": ClineAgentServer,
}


def descendants(pid: int) -> list[int]:
    """The live processes below ``pid`` (the kernel): the agent, its helpers, its command."""
    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def sleeping(pid: int, within: float = 10.0) -> list[int]:
    """``pid``'s descendants, once the command's ``sleep 60`` is among them."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = descendants(pid)
        for child in found:
            try:
                if psutil.Process(child).cmdline()[:2] == ["sleep", "60"]:
                    return found
            except psutil.Error:
                continue
        time.sleep(0.05)
    raise AssertionError(f"the command's sleep never showed below the kernel: {found}")


def live(pids: list[int]) -> list[int]:
    found = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                found.append(pid)
        except psutil.NoSuchProcess:
            continue
    return found


@pytest.mark.parametrize("name", AGENTS)
def test_a_kernel_interrupt_stops_the_agent_and_its_command(tmp_path: Path, name: str) -> None:
    if not kernel_python(VERSION).exists():
        pytest.fail(f"no kernel environment for ipykernel {VERSION}: run scripts/kernel-envs.sh")
    if not (BIN / EXECUTABLES[name]).exists():
        pytest.fail(f"{name} is not installed: run scripts/setup.sh (npm ci in tests/agents)")
    cwd = tmp_path / "work"
    cwd.mkdir()
    pidfile = cwd / "sleeper.pid"
    with SERVERS[name](RunCommand(f"echo $$ > {pidfile}; exec sleep 60"), cwd=str(cwd)) as server:
        start = launch(name, server.url, tmp_path)
        args = ("-m", GEMINI_MODEL) if name == "gemini" else ()
        fe = Frontend(VERSION, tmp_path, subshell=True)
        try:
            fe.responder = lambda card: {"decision": "allow"}
            code = (
                "import json\n"
                "from mead_notebook import NotebookInteraction\n"
                "from mead_notebook.adapters import acp\n"
                f"spec = acp.agent({name!r}, executable={str(BIN / EXECUTABLES[name])!r},"
                f" env=json.loads({json.dumps(start.env)!r}), args={args!r})\n"
                "result = acp.run(spec, 'Sleep', cwd="
                f"{str(cwd)!r}, interaction=NotebookInteraction(timeout=60, grace=30))\n"
            )
            msg_id = fe.execute(code)
            fe.drive(
                lambda: pidfile.exists() and bool(pidfile.read_text().strip()), 60, "the command"
            )
            # The command as the host sees it: in Codex's sandbox (a pid namespace of its
            # own) ``$$`` is not its pid.
            started = sleeping(fe.pid)
            [widget] = fe.widgets.values()
            # The agent runs the command as soon as the kernel answers it, which can be
            # before this frontend has read the card's answered state.
            fe.drive(
                lambda: any((c.get("question") or {}).get("answer") for c in widget.cards.values()),
                30,
                "the card's answer",
            )
            [card] = widget.cards.values()
            assert card["question"]["answer"]["by"] == "person", card
            fe.km.interrupt_kernel()
            reply = fe.wait_reply(msg_id, 30)["content"]
            assert (reply["status"], reply.get("ename")) == ("error", "KeyboardInterrupt"), reply
            deadline = time.monotonic() + 10
            while live(started) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert live(started) == [], "a process of the agent outlived the interrupt"
            fe.drive(lambda: widget.state.get("status") == "interrupted", 10, "the turn's end")
            reply, out = fe.run("print('NEXT', 6 * 7)", timeout=30)
            assert (reply["status"], out) == ("ok", "NEXT 42\n")
        finally:
            fe.close()


@pytest.mark.parametrize("name", ["claude", "copilot"])  # session/resume; session/load
def test_a_session_outlives_its_kernel(tmp_path: Path, name: str) -> None:
    """A session made in one kernel is continued by its id in the next (the first shut down
    as a restart does): the model sees the first turn's words; a loaded session's replay is
    the resumed turn's history."""
    cwd = tmp_path / "work"
    cwd.mkdir()
    with SERVERS[name](Say("Noted."), cwd=str(cwd)) as server:
        start = launch(name, server.url, tmp_path)
        spec = (
            "import json\n"
            "from mead_notebook import NotebookInteraction\n"
            "from mead_notebook.adapters import acp\n"
            f"spec = acp.agent({name!r}, executable={str(BIN / EXECUTABLES[name])!r},"
            f" env=json.loads({json.dumps(start.env)!r}))\n"
        )
        first = Frontend(VERSION, tmp_path, subshell=True)
        try:
            reply, out = first.run(
                spec + f"with acp.session(spec, cwd={str(cwd)!r}) as session:\n"
                "    said = session.run('The word is PINEAPPLE. Say noted.',"
                " interaction=NotebookInteraction(timeout=60, grace=30))\n"
                "print('ID', session.id, said.text == 'Noted.')\n",
                timeout=120,
            )
        finally:
            first.close()
        assert reply["status"] == "ok", reply
        session_id, noted = out.split()[1:3]
        assert noted == "True", out
        second = Frontend(VERSION, tmp_path, subshell=True)
        try:
            reply, out = second.run(
                spec + f"with acp.session(spec, cwd={str(cwd)!r}, resume={session_id!r}) as s:\n"
                "    again = s.run('What was the word?',"
                " interaction=NotebookInteraction(timeout=60, grace=30))\n"
                "print(json.dumps([s.id, s.resumed_by, again.text,"
                " [e['type'] for e in again.history]]))\n",
                timeout=120,
            )
        finally:
            second.close()
        assert reply["status"] == "ok", reply
        resumed_id, how, text, history = json.loads(out.strip().splitlines()[-1])
        request = json.dumps(server.turns[-1].body)
    assert resumed_id == session_id
    assert text == "Noted."
    assert "PINEAPPLE" in request, "the resumed turn's request lacks the first kernel's turn"
    if name == "copilot":
        assert how == "session/load"
        assert history[:2] == ["prompt", "text"], history
    else:
        assert (how, history) == ("session/resume", [])
