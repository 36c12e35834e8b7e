"""How long an ACP agent and its session live: an interrupt during start, bad calls, stderr."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from adapters.helpers import Person, recorded
from mead_notebook.adapters import acp
from mead_notebook.adapters.acp._process import AgentProcess

from .conftest import Script

pytestmark = pytest.mark.timeout(60)

SLOW_AGENT = Path(__file__).with_name("slow_agent.py")
START_DELAY = 3.0
"""How long the slow agent takes to answer ``initialize`` (seconds)."""


def slow_agent(
    script: Script, turns: Sequence[Sequence[dict[str, Any]]], *, stubborn: bool = False
) -> acp.AgentSpec:
    """The scripted agent behind :mod:`slow_agent`: it opens its session after a delay."""
    command = [sys.executable, str(SLOW_AGENT), json.dumps(turns), str(script.log)]
    command += [str(START_DELAY)] + (["stubborn"] if stubborn else [])
    return dataclasses.replace(script.agent(turns), command=tuple(command))


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def started_pid(script: Script, timeout: float = 20.0) -> int:
    """The agent's pid, once it has received ``initialize``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = script.events("initialize")
        if found:
            return int(found[0]["pid"])
        time.sleep(0.05)
    raise AssertionError("the agent never received initialize")


def gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


# -- an interrupt while the agent starts -------------------------------------------------


@pytest.mark.parametrize(
    ("how", "stubborn"),
    [("session", False), ("one turn", False), ("session", True)],
    ids=["session", "one-turn", "session-ignoring-sigterm"],
)
def test_an_interrupt_while_the_agent_starts_stops_it_before_the_prompt(
    script: Script, tmp_path: Path, how: str, stubborn: bool
) -> None:
    agent = slow_agent(script, [[{"text": "played"}]], stubborn=stubborn)
    rec, _ = recorded()
    conversation = acp.session(agent, cwd=tmp_path) if how == "session" else None
    try:
        if conversation is not None:
            turn = conversation.start("go", interaction=rec)
        else:
            turn = acp.start(agent, "go", interaction=rec, cwd=tmp_path)
        pid = started_pid(script)
        began = time.monotonic()
        turn.cancel()
        result = turn.result(timeout=10)
        assert time.monotonic() - began < 6
        assert result.stop_reason == "interrupted"
        assert gone(pid), "the agent outlived the interrupt of its start"
        # Past the moment the agent would have opened its session and played the prompt.
        time.sleep(START_DELAY + 1.0)
        assert script.events("prompt") == []
        assert script.events("new_session") == []
        assert "played" not in result.text
        assert not [e for e in rec.events if e.name == "text"]
        if conversation is not None:
            # The session is free: the next turn starts a new agent and plays.
            again = conversation.run("again", interaction=Person())
            assert again.text == "played"
            assert [e["text"] for e in script.events("prompt")] == ["again"]
    finally:
        if conversation is not None:
            conversation.close()


def test_a_kernel_interrupt_while_the_agent_starts_stops_it(script: Script, tmp_path: Path) -> None:
    """Ctrl-C (SIGINT in the thread that waits on ``acp.run``) while the agent starts."""
    agent = slow_agent(script, [[{"text": "played"}]])
    interrupted: list[float] = []

    def interrupt_once_started() -> None:
        started_pid(script)
        interrupted.append(time.monotonic())
        signal.raise_signal(signal.SIGINT)

    threading.Thread(target=interrupt_once_started, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        acp.run(agent, "go", interaction=Person(), cwd=tmp_path)
    assert interrupted, "the interrupt came before the agent started"
    assert time.monotonic() - interrupted[0] < 6
    pid = started_pid(script)
    assert gone(pid), "the agent outlived the kernel interrupt of its start"
    time.sleep(START_DELAY + 1.0)
    assert script.events("prompt") == []


def test_cancelling_an_awaited_turn_while_the_agent_starts_stops_it(
    script: Script, tmp_path: Path
) -> None:
    agent = slow_agent(script, [[{"text": "played"}]])

    async def cancel_once_started() -> None:
        task = asyncio.ensure_future(acp.arun(agent, "go", interaction=Person(), cwd=tmp_path))
        while not script.events("initialize"):
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)

    asyncio.run(cancel_once_started())
    assert gone(started_pid(script)), "the agent outlived the cancelled await of its start"
    time.sleep(START_DELAY + 1.0)
    assert script.events("prompt") == []


def test_closing_a_session_while_its_agent_starts_ends_the_agent(
    script: Script, tmp_path: Path
) -> None:
    agent = slow_agent(script, [[{"text": "played"}]])
    conversation = acp.session(agent, cwd=tmp_path)
    turn = conversation.start("go", interaction=Person())
    pid = started_pid(script)
    conversation.close()
    assert gone(pid), "the agent outlived its session's close"
    assert turn.result(timeout=10).stop_reason == "interrupted"
    time.sleep(START_DELAY + 1.0)
    assert script.events("prompt") == []


def test_an_interrupt_the_agent_answers_at_once_still_ends_it(
    script: Script, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent's ``cancelled`` answer to ``session/cancel`` can reach the turn before the
    interrupt does: the agent is ended all the same, and the next turn starts a new one."""
    from mead_notebook.adapters.base import AgentTurn

    cancel = AgentTurn.cancel

    def late_cancel(self: AgentTurn) -> None:
        # The agent has answered by now: its log says it got session/cancel.
        deadline = time.monotonic() + 10
        while not script.events("cancel") and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)
        cancel(self)

    monkeypatch.setattr(AgentTurn, "cancel", late_cancel)
    # Each agent plays this file's steps at every prompt: a long pause, then a short turn.
    steps = tmp_path / "steps.json"
    steps.write_text(json.dumps([{"sleep": 30}]))
    agent = script.agent([])
    agent = dataclasses.replace(agent, command=(*agent.command[:-2], f"@{steps}", str(script.log)))
    with acp.session(agent, cwd=tmp_path) as session:
        turn = session.start("go", interaction=Person())
        pid = started_pid(script)
        while not script.events("prompt"):
            time.sleep(0.02)
        turn.cancel()
        assert turn.result(timeout=20).stop_reason == "interrupted"
        assert gone(pid), "the agent outlived an interrupt it answered at once"
        steps.write_text(json.dumps([{"text": "played"}]))
        assert session.run("again", interaction=Person()).stop_reason == "end_turn"
    assert len(script.events("new_session")) == 2


# -- bad arguments -----------------------------------------------------------------------


def test_a_bad_call_to_run_leaves_the_session_free_for_the_next_turn(
    script: Script, tmp_path: Path
) -> None:
    with acp.session(script.agent([[{"text": "hello"}]]), cwd=tmp_path) as session:
        with pytest.raises(TypeError, match="interaction must be an Interaction"):
            session.run("go", interaction=object())
        with pytest.raises(TypeError, match="interaction must be an Interaction"):
            session.start("go", interaction=("not", "an interaction"))
        with pytest.raises(TypeError, match="prompt must be a string"):
            session.run(42, interaction=Person())  # type: ignore[arg-type]
        result = session.run("go", interaction=Person())
    assert result.text == "hello"


def test_a_bad_call_between_turns_keeps_the_running_agent(script: Script, tmp_path: Path) -> None:
    agent = script.agent([[{"text": "one"}], [{"text": "two"}]])
    with acp.session(agent, cwd=tmp_path) as session:
        assert session.run("first", interaction=Person()).text == "one"
        assert session.process is not None
        pid = session.process.pid
        with pytest.raises(TypeError, match="interaction must be an Interaction"):
            session.run("go", interaction=object())
        with pytest.raises(TypeError, match="prompt must be a string"):
            session.start(None, interaction=Person())  # type: ignore[arg-type]
        assert session.run("second", interaction=Person()).text == "two"
        assert session.process is not None
        assert session.process.pid == pid
    assert len(script.events("initialize")) == 1


def new_threads(before: set[threading.Thread], timeout: float = 5.0) -> list[str]:
    """The threads started since ``before`` that are still alive after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        left = [t.name for t in threading.enumerate() if t not in before and t.is_alive()]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def test_start_with_a_bad_argument_leaves_no_thread_behind(script: Script, tmp_path: Path) -> None:
    agent = script.agent([[{"text": "hello"}]])
    before = set(threading.enumerate())
    for _ in range(3):
        with pytest.raises(TypeError, match="interaction must be an Interaction"):
            acp.start(agent, "go", interaction=object(), cwd=tmp_path)
        with pytest.raises(TypeError, match="interaction must be an Interaction"):
            acp.run(agent, "go", interaction="a person", cwd=tmp_path)
        with pytest.raises(TypeError, match="prompt must be a string"):
            acp.start(agent, b"go", interaction=Person(), cwd=tmp_path)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="interaction must be an Interaction"):
            asyncio.run(acp.arun(agent, "go", interaction=42, cwd=tmp_path))
        with pytest.raises(NotADirectoryError):
            acp.start(agent, "go", interaction=Person(), cwd=tmp_path / "missing")
        with pytest.raises(TypeError, match="expected an agent"):
            acp.start("claude", "go", interaction=Person(), cwd=tmp_path)  # type: ignore[arg-type]
    assert new_threads(before) == []
    assert script.events() == [], "an agent was started for a call that failed"


def test_a_closed_session_refuses_a_turn_and_keeps_no_thread(
    script: Script, tmp_path: Path
) -> None:
    before = set(threading.enumerate())
    session = acp.session(script.agent([[{"text": "hello"}]]), cwd=tmp_path)
    session.close()
    with pytest.raises(acp.AgentError, match="closed"):
        session.run("go", interaction=Person())
    assert new_threads(before) == []


# -- the agent's stderr ------------------------------------------------------------------


class FailingStream:
    """A stderr that gives its lines, then raises ``error`` at every read."""

    def __init__(self, lines: Sequence[bytes], error: Exception) -> None:
        self.data = b"".join(lines)
        self.error = error
        self.reads = 0

    def exception(self) -> BaseException | None:
        return None if self.data else self.error

    async def _next(self, n: int) -> bytes:
        self.reads += 1
        if self.data:
            given, self.data = self.data[:n], self.data[n:]
            return given
        raise self.error

    async def read(self, n: int = -1) -> bytes:
        return await self._next(n if n > 0 else len(self.data) or 1)

    async def readline(self) -> bytes:
        end = self.data.find(b"\n")
        return await self._next(end + 1 if end >= 0 else len(self.data) or 1)


class FakeProc:
    """Enough of an ``asyncio.subprocess.Process`` for :class:`AgentProcess` to read it."""

    pid = 0
    returncode = None

    def __init__(self, stderr: Any) -> None:
        self.stdout = asyncio.StreamReader()
        self.stdout.feed_eof()
        self.stderr = stderr
        self.stdin = None


@pytest.mark.parametrize(
    "error",
    [OSError(5, "Input/output error"), ValueError("Separator is not found"), RuntimeError("x")],
    ids=["oserror", "valueerror", "other"],
)
def test_the_stderr_reader_ends_logging_once_on_a_stream_error(
    caplog: pytest.LogCaptureFixture, error: Exception
) -> None:
    stream = FailingStream([b"first\n", b"second\n"], error)
    found: dict[str, Any] = {}

    async def read() -> None:
        process = AgentProcess(FakeProc(stream), "fake")  # type: ignore[arg-type]
        found["tail"] = await process.stderr_tail(timeout=2.0)
        found["ended"] = process._reader.done()
        process._inbound.close()

    caplog.set_level(logging.DEBUG, logger="mead_notebook.adapters.acp._process")
    # On a thread of its own: a reader that spins without yielding would block its loop.
    reader = threading.Thread(target=asyncio.run, args=(read(),), daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "the stderr reader spins on a stream that raises"
    assert found == {"tail": "first\nsecond", "ended": True}
    assert stream.reads < 10
    said = [r for r in caplog.records if r.name.endswith("_process") and "stderr" in r.message]
    assert len(said) == 1
    assert said[0].levelno == logging.WARNING
    assert "fake" in said[0].message


def test_the_stderr_tail_keeps_the_last_lines_and_bounds_a_long_one() -> None:
    async def read() -> str:
        stderr = asyncio.StreamReader(limit=1024)
        stderr.feed_data(b"x" * 100_000 + b"\n")
        stderr.feed_data(b"".join(b"line %d\n" % i for i in range(100)))
        stderr.feed_data(b"no newline at the end")
        stderr.feed_eof()
        process = AgentProcess(FakeProc(stderr), "fake")  # type: ignore[arg-type]
        tail = await process.stderr_tail(timeout=2.0)
        process._inbound.close()
        return tail

    lines = asyncio.run(read()).splitlines()
    assert lines[-1] == "no newline at the end"
    assert lines[-2] == "line 99"
    assert len(lines) <= 40
    assert all(len(line) <= 4096 for line in lines)


def test_kill_ends_the_tree_when_no_thread_can_be_started(tmp_path: Path) -> None:
    """At the interpreter's exit (an atexit close) the loop's executor is shut down: the
    agent's tree is still killed, a child that ignores SIGTERM included."""
    pids = tmp_path / "pids"
    script = f"trap '' TERM; sleep 60 & echo $! > {pids}; wait"

    async def kill() -> int:
        process = await AgentProcess.spawn("stubborn", ["sh", "-c", script], os.environ, ".")
        for _ in range(1000):
            if pids.exists() and pids.read_text().strip():
                break
            await asyncio.sleep(0.01)
        await asyncio.get_running_loop().shutdown_default_executor()
        await process.kill()
        return int(pids.read_text())

    child = asyncio.run(kill())
    # SIGKILL went to the child; a loaded machine ends it a moment later.
    assert gone(child), "the child that ignores SIGTERM outlived the kill"


@pytest.mark.parametrize("end", ["close", "kill"])
def test_the_agents_pipes_are_closed_when_its_end_returns(
    end: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qwen Code's launcher runs the agent as a child sharing its pipes: once ``close`` or
    ``kill`` returns, every pipe is closed, so the loop can close with no transport left
    open (its collection would report "Event loop is closed")."""
    unraisable: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    script = "sleep 60 & read line"

    async def run() -> None:
        process = await AgentProcess.spawn("launcher", ["sh", "-c", script], os.environ, ".")
        await asyncio.sleep(0.2)
        await (process.close(timeout=0.5) if end == "close" else process.kill())

    asyncio.run(run())
    gc.collect()
    assert [u.exc_value for u in unraisable] == []
