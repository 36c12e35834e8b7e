"""Codex under the widget in a real kernel: Allow on its card runs the command, a
kernel interrupt stops the turn and leaves none of the agent's processes behind.

The cell runs over the Jupyter protocol while ``tests/kernel/frontend.py`` plays
the widget's frontend; the fake model server runs in the test's process.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import psutil
import pytest
from kernel.frontend import Frontend, kernel_python
from servers.agent_launch import BIN, EXECUTABLES, launch
from servers.agent_models import ResponsesAgentServer, RunCommand

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(180)]

VERSION = "7.4.0"


def agent_group() -> int | None:
    """The process group of the running codex-acp (its own session), if one runs."""
    program = str(BIN.parent / "@zed-industries")
    for proc in psutil.process_iter(["cmdline"]):
        line = " ".join(proc.info["cmdline"] or [])
        if program in line or line.startswith(str(BIN / EXECUTABLES["codex"])):
            try:
                return os.getpgid(proc.pid)
            except ProcessLookupError:
                continue
    return None


def members(group: int) -> list[int]:
    found = []
    for proc in psutil.process_iter(["status"]):
        try:
            if os.getpgid(proc.pid) == group and proc.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except ProcessLookupError:
            continue
    return found


def live(pids: list[int]) -> list[int]:
    found = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                found.append(pid)
        except psutil.NoSuchProcess:
            continue
    return found


def test_a_kernel_interrupt_stops_codex_and_its_command(tmp_path: Path) -> None:
    if not kernel_python(VERSION).exists():
        pytest.fail(f"no kernel environment for ipykernel {VERSION}: run scripts/kernel-envs.sh")
    if not (BIN / EXECUTABLES["codex"]).exists():
        pytest.fail("codex-acp is not installed: run scripts/setup.sh (npm ci in tests/agents)")
    cwd = tmp_path / "work"
    cwd.mkdir()
    pidfile = cwd / "sleeper.pid"
    with ResponsesAgentServer(
        RunCommand(f"echo $$ > {pidfile}; exec sleep 60"), cwd=str(cwd)
    ) as server:
        start = launch("codex", server.url, tmp_path)
        fe = Frontend(VERSION, tmp_path, subshell=True)
        try:
            fe.responder = lambda card: {"decision": "allow"}
            code = (
                "import json\n"
                "from mead_notebook import NotebookInteraction\n"
                "from mead_notebook.adapters import acp\n"
                f"spec = acp.agent('codex', executable={str(BIN / EXECUTABLES['codex'])!r},"
                f" env=json.loads({json.dumps(start.env)!r}))\n"
                "result = acp.run(spec, 'Sleep', cwd="
                f"{str(cwd)!r}, interaction=NotebookInteraction(timeout=60, grace=30))\n"
            )
            msg_id = fe.execute(code)
            fe.drive(
                lambda: pidfile.exists() and bool(pidfile.read_text().strip()), 60, "the command"
            )
            sleeper = int(pidfile.read_text())
            group = agent_group()
            assert group is not None, "no codex-acp process while its command runs"
            # Codex starts a command in a process group of its own.
            started = [*members(group), sleeper]
            [widget] = fe.widgets.values()
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
