"""``claude_agent.session``: one Claude Code conversation across turns, resumed by id in
another process; the SDK's bundled CLI against the offline scripted Anthropic server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import psutil
import pytest
from claude_agent_sdk import ClaudeAgentOptions, PermissionResultDeny, ToolPermissionContext
from servers.anthropic_agent_server import AgentServer, Text, Use

from mead_notebook import TurnError, tool
from mead_notebook.adapters import claude_agent
from mead_notebook.adapters.claude_agent._session import NO_TURN
from mead_notebook.policies import AllowAll

from .claude_cli import clis, command_line, every_cli_ends, repo_folder  # noqa: F401 (fixtures)
from .helpers import ALLOWED, DENIED, Person, Waiting, recorded, running, steps

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[2]


def agents() -> list[int]:
    """The process ids of the Claude Code CLIs this process started: not the commands they
    run, nor a process a CLI starts with its own command line (seen once under load)."""
    found = []
    for process in psutil.Process(os.getpid()).children():
        try:
            command = process.cmdline()
            if (
                "claude" in " ".join(command)
                and "--output-format" in command
                and process.status() != psutil.STATUS_ZOMBIE
            ):
                found.append(process.pid)
        except psutil.NoSuchProcess:
            continue
    return found


def gone(pid: int, timeout: float = 10) -> None:
    """Wait until the CLI ``pid`` has ended (a zombie counts as ended)."""
    deadline = time.monotonic() + timeout
    while pid in agents():
        assert time.monotonic() < deadline, f"the CLI {pid} is still running"
        time.sleep(0.05)


def wait_saved(server: AgentServer, session_id: str, text: str, timeout: float = 10) -> None:
    """Wait until Claude Code has saved ``text`` in the conversation's file."""
    folder = Path(server.env()["CLAUDE_CONFIG_DIR"]) / "projects"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(text in f.read_text() for f in folder.glob(f"*/{session_id}.jsonl")):
            return
        time.sleep(0.05)
    raise AssertionError(f"Claude Code did not save {text} within {timeout} s")


def said(request: dict[str, Any]) -> list[str]:
    """Every text of a request's messages, user's and assistant's, in order."""
    texts = []
    for message in request["messages"]:
        content = message["content"]
        for block in [content] if isinstance(content, str) else content:
            text = block if isinstance(block, str) else block.get("text")
            if isinstance(text, str):
                texts.append(text)
    return texts


def test_two_turns_of_a_session_are_one_conversation_in_one_process(cwd: Path) -> None:
    script = [["Noted: kiwi."], ["The word was kiwi."]]
    with AgentServer(script) as server, claude_agent.session(server.options(cwd=str(cwd))) as chat:
        assert chat.id is None
        first = chat.run("The word is kiwi.", interaction=AllowAll())
        [process] = agents()
        second = asyncio.run(chat.arun("Which word?", interaction=AllowAll()))
        assert agents() == [process]
        assert (first.text, second.text) == ("Noted: kiwi.", "The word was kiwi.")
        asked_first, asked_second = server.requests
        assert "The word is kiwi." in said(asked_first)
        history = said(asked_second)
        assert history.index("The word is kiwi.") < history.index("Noted: kiwi.")
        assert history[-1] == "Which word?"
        reported = {m.session_id for m in (first.output[-1], second.output[-1])}
        assert reported == {chat.id}
        uuid.UUID(str(chat.id))
        # Between turns the client's permission callback allows nothing.
        context = ToolPermissionContext(tool_use_id="x1")
        asked = chat._submit(chat._can_use_tool("Bash", {"command": "rm -rf /"}, context))
        assert asked.result(5) == PermissionResultDeny(message=NO_TURN)
        chat.close()
        assert clis() == []
        with pytest.raises(claude_agent.SessionError, match="closed"):
            chat.run("again", interaction=AllowAll())


FIRST_PROCESS = """
import json, os, sys
import psutil
from claude_agent_sdk import ClaudeAgentOptions
from mead_notebook.adapters import claude_agent
from mead_notebook.policies import AllowAll

chat = claude_agent.session(ClaudeAgentOptions(**json.loads(sys.argv[1])))
chat.run("The word is kiwi.", interaction=AllowAll())
print("ID", chat.id)
for child in psutil.Process(os.getpid()).children(recursive=True):
    try:
        if "--output-format" in child.cmdline():
            print("CLI", child.pid)
    except psutil.Error:  # a command the CLI ran, ended meanwhile
        pass
# left open: the interpreter's exit ends it
"""


def test_a_session_resumed_by_id_in_another_process_continues_it(
    cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [["Noted: kiwi."], ["The word was kiwi."]]
    with AgentServer(script) as server:
        options = server.options(cwd=str(cwd))
        given = {k: getattr(options, k) for k in ("cwd", "env", "model", "setting_sources")}
        done = subprocess.run(
            [sys.executable, "-c", FIRST_PROCESS, json.dumps(given)],
            capture_output=True,
            text=True,
            timeout=90,
            cwd=REPO,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        lines = [line.split() for line in done.stdout.splitlines()]
        [made] = [words[1] for words in lines if words[0] == "ID"]
        [cli] = [int(words[1]) for words in lines if words[0] == "CLI"]
        assert not psutil.pid_exists(cli) or psutil.Process(cli).status() == "zombie"
        assert len(server.requests) == 1
        with claude_agent.session(options, resume=made) as chat:
            assert (chat.id, chat.resumed_by) == (made, None)
            result = chat.run("Which word?", interaction=AllowAll())
            assert (chat.id, chat.resumed_by) == (made, "resume")
        assert result.text == "The word was kiwi."
        history = said(server.requests[-1])
        assert history.index("The word is kiwi.") < history.index("Noted: kiwi.")
        assert history[-1] == "Which word?"
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", options.env["CLAUDE_CONFIG_DIR"])
        [listed] = claude_agent.sessions(options)
        assert (listed.id, listed.title) == (made, "The word is kiwi.")
        assert listed.updated_at is not None
        assert os.path.realpath(listed.cwd) == os.path.realpath(cwd)
        monkeypatch.delenv("CLAUDE_CONFIG_DIR")
        with pytest.raises(ValueError, match="CLAUDE_CONFIG_DIR in the kernel's environment"):
            claude_agent.sessions(options)


def test_an_id_claude_code_cannot_resume_fails_and_nothing_reaches_the_model(cwd: Path) -> None:
    unknown = str(uuid.uuid4())
    with AgentServer([["A new conversation."]]) as server:
        options = server.options(cwd=str(cwd))
        with claude_agent.session(options, resume=unknown) as chat:
            with pytest.raises(TurnError, match=f"could not resume session '{unknown}'") as err:
                chat.run("Which word?", interaction=AllowAll())
            assert isinstance(err.value.__cause__, claude_agent.SessionError)
            assert "No conversation found" in str(err.value)
            assert (chat.id, chat.resumed_by) == (unknown, None)
        assert server.requests == []


def test_claude_code_in_another_conversation_keeps_the_prompt_from_the_model(cwd: Path) -> None:
    script = [["Noted: kiwi."], ["Forked."]]
    with AgentServer(script) as server:
        options = server.options(cwd=str(cwd))
        with claude_agent.session(options) as chat:
            chat.run("The word is kiwi.", interaction=AllowAll())
            made = chat.id
        # A flag past the options' own fields makes the CLI fork the conversation anew.
        forking = dataclasses.replace(options, extra_args={"fork-session": None})
        with claude_agent.session(forking, resume=made) as chat:
            with pytest.raises(TurnError, match=f"not in this session's '{made}'"):
                chat.run("Which word?", interaction=AllowAll())
            assert chat.id == made
        assert len(server.requests) == 1


def test_what_would_choose_another_conversation_is_refused_before_anything_runs(
    cwd: Path,
) -> None:
    options = ClaudeAgentOptions(cwd=str(cwd))
    with pytest.raises(ValueError, match="not 'my session title'"):
        claude_agent.session(options, resume="my session title")
    with pytest.raises(TypeError, match="not int"):
        claude_agent.session(options, resume=3)  # type: ignore[arg-type]
    for field in ("resume", "session_id"):
        chosen = dataclasses.replace(options, **{field: str(uuid.uuid4())})
        with pytest.raises(ValueError, match=f"leave {field} unset"):
            claude_agent.session(chosen)
    with pytest.raises(ValueError, match="leave continue_conversation, fork_session unset"):
        claude_agent.session(
            dataclasses.replace(options, continue_conversation=True, fork_session=True)
        )
    with pytest.raises(TypeError, match="ClaudeAgentOptions"):
        claude_agent.session({"cwd": str(cwd)})  # type: ignore[arg-type]
    assert clis() == []


def test_each_turn_asks_its_own_interaction_and_a_denied_call_never_runs(cwd: Path) -> None:
    first, second = cwd / "first.txt", cwd / "second.txt"
    (cwd / "notes.txt").write_text("secret\n")
    script = [
        [Use("w1", "Write", {"file_path": str(first), "content": "one\n"})],
        [Text("Wrote it.")],
        # A read in the working folder Claude Code's own rules would allow unasked.
        [Use("r2", "Read", {"file_path": str(cwd / "notes.txt")})],
        [Use("w2", "Write", {"file_path": str(second), "content": "two\n"})],
        [Text("Did not write it.")],
    ]
    allowing, _ = recorded(Person())
    denying, _ = recorded(Person(deny={"Write": "not this one", "Read": "no reading"}))
    with AgentServer(script) as server, claude_agent.session(server.options(cwd=str(cwd))) as chat:
        one = chat.run("Write first.txt", interaction=allowing)
        two = chat.run("Read the notes, write second.txt", interaction=denying)
        told = server.tool_results()
    assert steps(allowing) == {"w1": ALLOWED}
    assert steps(denying) == {"r2": DENIED, "w2": DENIED}
    assert first.read_text() == "one\n"
    assert not second.exists()
    assert one.calls[0].status == "completed"
    assert [c.outcome for c in two.calls] == ["denied", "denied"]
    assert "no reading" in told["r2"][0]
    assert "secret" not in told["r2"][0]
    assert "not this one" in told["w2"][0]
    assert told["w2"][1] is True


def test_the_package_tools_run_in_each_turn_on_that_turn_s_allow(cwd: Path) -> None:
    saved: list[str] = []

    @tool(kind="edit")
    def save(text: str) -> str:
        """Save a text."""
        saved.append(text)
        return f"saved {text}"

    script = [
        [Use("s1", "mcp__mead__save", {"text": "one"})],
        [Text("Saved one.")],
        [Use("s2", "mcp__mead__save", {"text": "two"})],
        [Text("Saved two.")],
    ]
    servers = {"mead": claude_agent.as_server([save])}
    with AgentServer(script) as server:
        options = server.options(cwd=str(cwd), mcp_servers=servers)
        with claude_agent.session(options) as chat:
            results = [
                chat.run(f"Save {word}", interaction=recorded(Person())[0])
                for word in ("one", "two")
            ]
    assert saved == ["one", "two"]
    assert [r.calls[0].result for r in results] == ["saved one", "saved two"]


def test_an_interrupted_turn_leaves_the_session_usable(cwd: Path) -> None:
    person = Waiting()
    rec, _ = recorded(person)
    script = [
        [Use("b1", "Bash", {"command": "echo hi", "description": "say hi"})],
        [Text("Stopped.")],
        [Text("Still here.")],
    ]
    with AgentServer(script) as server, claude_agent.session(server.options(cwd=str(cwd))) as chat:
        turn = chat.start("Say hi", interaction=rec)
        assert person.asked.wait(60)
        [process] = agents()
        started = time.monotonic()
        turn.cancel()
        stopped = turn.result(timeout=30)
        assert time.monotonic() - started < claude_agent.TEARDOWN_TIMEOUT
        assert (stopped.stop_reason, stopped.calls[0].outcome) == ("interrupted", "interrupted")
        again = chat.run("Are you there?", interaction=AllowAll())
        assert agents() == [process]
        assert again.stop_reason == "end_turn"
        history = said(server.requests[-1])
        assert history.index("Say hi") < history.index("Are you there?")
    assert "b1" not in {c.tool_call_id for c in again.calls}


def test_an_interrupt_stops_a_running_command_and_the_same_cli_goes_on(cwd: Path) -> None:
    rec, _ = recorded(Person())
    script = [
        [Use("s1", "Bash", {"command": "echo waiting; sleep 30", "description": "wait"})],
        [Text("Stopped.")],
        [Text("Still here.")],
    ]
    with AgentServer(script) as server, claude_agent.session(server.options(cwd=str(cwd))) as chat:
        turn = chat.start("Wait", interaction=rec)
        deadline = time.monotonic() + 60
        while "s1" not in running(rec) and time.monotonic() < deadline:
            time.sleep(0.05)
        [process] = agents()
        started = time.monotonic()
        turn.cancel()
        assert turn.result(timeout=30).stop_reason == "interrupted"
        assert time.monotonic() - started < claude_agent.TEARDOWN_TIMEOUT
        again = chat.run("Are you there?", interaction=AllowAll())
        assert agents() == [process]
        assert again.stop_reason == "end_turn"
        assert not [p for p in clis() if "sleep 30" in command_line(p)]


def test_a_cli_that_does_not_end_its_turn_is_ended_and_the_next_turn_resumes(cwd: Path) -> None:
    person = Waiting()
    rec, _ = recorded(person)
    # How much of the stopped turn the history keeps depends on when the CLI stopped.
    script = [[Use("b1", "Bash", {"command": "echo hi", "description": "say hi"})]]
    script += [[Text("Still here.")]] * 3
    with AgentServer(script) as server, claude_agent.session(server.options(cwd=str(cwd))) as chat:
        turn = chat.start("Say hi", interaction=rec)
        assert person.asked.wait(60)
        wait_saved(server, str(chat.id), '"b1"')  # else a resume finds nothing to go on with
        [stuck] = agents()
        os.kill(stuck, signal.SIGSTOP)  # it can answer nothing now, the interrupt neither
        started = time.monotonic()
        turn.cancel()
        stopped = turn.result(timeout=30)
        assert time.monotonic() - started < 2 * claude_agent.TEARDOWN_TIMEOUT
        assert stopped.stop_reason == "interrupted"
        gone(stuck)  # killed; its end is seen a moment later on a loaded machine
        made = chat.id
        again = chat.run("Are you there?", interaction=AllowAll())
        assert stuck not in agents()
        assert (again.text, chat.id) == ("Still here.", made)
        history = said(server.requests[-1])
        assert history.index("Say hi") < history.index("Are you there?")


def test_a_card_s_cancel_stops_the_turn_and_the_next_turn_goes_on(cwd: Path) -> None:
    rec, _ = recorded(Person(cancel_after=1.0))
    script = [
        [Use("s1", "Bash", {"command": "echo waiting; sleep 30", "description": "wait"})],
        [Text("Still here.")],
    ]
    with AgentServer(script) as server, claude_agent.session(server.options(cwd=str(cwd))) as chat:
        started = time.monotonic()
        stopped = chat.run("Wait", interaction=rec)
        assert time.monotonic() - started < 25
        assert (stopped.stop_reason, stopped.calls[0].outcome) == ("interrupted", "cancelled")
        [process] = agents()
        again = chat.run("Are you there?", interaction=AllowAll())
        assert agents() == [process]
        assert again.text == "Still here."


def test_closing_during_a_turn_ends_the_cli(cwd: Path) -> None:
    person = Waiting()
    rec, _ = recorded(person)
    script = [[Use("b1", "Bash", {"command": "echo hi", "description": "say hi"})]]
    with AgentServer(script) as server:
        chat = claude_agent.session(server.options(cwd=str(cwd)))
        turn = chat.start("Say hi", interaction=rec)
        assert person.asked.wait(60)
        assert clis()
        with pytest.raises(claude_agent.SessionError, match="already running a turn"):
            chat.start("Again", interaction=AllowAll())
        started = time.monotonic()
        chat.close()
        assert time.monotonic() - started < 2 * claude_agent.TEARDOWN_TIMEOUT
        assert clis() == []
        assert turn.result(timeout=10).stop_reason == "interrupted"
