from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

import mead_notebook
from mead_notebook import Router, ScriptedModel, ToolCall, magic, tool
from mead_notebook.model import Message
from mead_notebook.notebook import widget as widget_module

REPO = Path(__file__).resolve().parents[1]


@tool(read_only=True)
def read_file(path: str) -> str:
    """Read a text file."""
    return f"contents of {path}"


@tool
def write_file(path: str, text: str = "") -> str:
    """Write a text file."""
    return f"wrote {len(text)} characters to {path}"


class Echo:
    """A scripted model's script that records each conversation it is shown."""

    def __init__(self) -> None:
        self.seen: list[list[Message]] = []

    def __call__(self, messages: Sequence[Message]) -> list[Any]:
        self.seen.append([dict(m) for m in messages])
        users = [m["content"] for m in messages if m["role"] == "user"]
        return [f"turn {len(users)}: ", f"you said {users[-1]!r}"]


@pytest.fixture
def shell(monkeypatch: pytest.MonkeyPatch) -> InteractiveShell:
    monkeypatch.setattr(magic, "_current", magic._Conversation())
    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "mead_notebook")
    return sh


def cell(sh: InteractiveShell, body: str, options: str = "") -> Any:
    return sh.run_cell_magic("mead", options, body)  # type: ignore[no-untyped-call]


def test_cell_without_router_explains_what_to_do(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cell(shell, "hello") is None
    out = capsys.readouterr()
    assert "no router chosen yet" in out.err
    assert "mead_notebook.use(" in out.err
    assert "Traceback" not in out.err + out.out


def test_line_magic_without_router_explains_what_to_do(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("mead", "")
    shell.run_line_magic("mead", "reset")
    out = capsys.readouterr().out
    assert out.count("no router chosen yet") == 2


def test_conversation_carries_over_between_cells(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    echo = Echo()
    mead_notebook.use(Router(ScriptedModel(echo)))
    cell(shell, "first question")
    cell(shell, "second question\n")
    assert [m["role"] for m in echo.seen[1]] == ["user", "assistant", "user"]
    assert echo.seen[1][0]["content"] == "first question"
    assert echo.seen[1][1]["content"] == "turn 1: you said 'first question'"
    assert echo.seen[1][2]["content"] == "second question"
    result = magic.last_result()
    assert result is not None
    assert result.text == "turn 2: you said 'second question'"
    assert len(magic.history()) == 4
    out = capsys.readouterr().out
    assert out.count("NotebookInteraction: running, 0 tool calls") == 2


def test_reset_starts_a_new_conversation_and_keeps_the_router(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    echo = Echo()
    router = mead_notebook.use(Router(ScriptedModel(echo)))
    cell(shell, "one")
    shell.run_line_magic("mead", "reset")
    assert "new conversation" in capsys.readouterr().out
    assert magic.history() == []
    assert magic.current_router() is router
    cell(shell, "two")
    assert [m["content"] for m in echo.seen[-1]] == ["two"]


def test_new_option_starts_over_for_that_cell(shell: InteractiveShell) -> None:
    echo = Echo()
    mead_notebook.use(Router(ScriptedModel(echo)))
    cell(shell, "one")
    cell(shell, "two", "--new")
    assert [m["content"] for m in echo.seen[-1]] == ["two"]
    assert len(magic.history()) == 2


def test_line_magic_shows_model_tools_and_message_count(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    mead_notebook.use(Router(ScriptedModel(Echo()), tools=[read_file, write_file]))
    cell(shell, "hi")
    capsys.readouterr()
    shell.run_line_magic("mead", "")
    out = capsys.readouterr().out
    assert out.splitlines() == ["model: scripted", "tools: read_file, write_file", "messages: 2"]


def test_use_starts_a_new_conversation(shell: InteractiveShell) -> None:
    mead_notebook.use(Router(ScriptedModel(Echo())))
    cell(shell, "hi")
    echo = Echo()
    mead_notebook.use(Router(ScriptedModel(echo)))
    assert magic.history() == []
    cell(shell, "again")
    assert len(echo.seen[0]) == 1


def test_use_rejects_what_is_not_a_router() -> None:
    with pytest.raises(TypeError, match="needs a Router"):
        mead_notebook.use("not a router")


def test_timeout_option_bounds_each_question(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[widget_module.NotebookInteraction] = []

    class Kept(widget_module.NotebookInteraction):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(grace=30.0, **kwargs)
            made.append(self)

    monkeypatch.setattr(widget_module, "NotebookInteraction", Kept)
    model = ScriptedModel([[ToolCall("write_file", {"path": "a.txt"})], ["done"]])
    mead_notebook.use(Router(model, tools=[write_file]))
    cell(shell, "write it", "--timeout 0.3")
    assert made[0].timeout == pytest.approx(0.3)
    result = magic.last_result()
    assert result is not None
    assert result.calls[0].outcome == "expired"
    assert "expired" in (result.calls[0].error or "")
    card = made[0].calls[result.calls[0].tool_call_id]
    assert card["question"]["answer"]["by"] == "timeout"
    assert card["outcome"] == result.calls[0].outcome


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ("--timeout soon", "not a number of seconds"),
        ("--timeout -1", "must be a positive number"),
        ("--timeout 0", "must be a positive number"),
        ("--timeout nan", "must be a positive number"),
        ("--bogus", "unrecognized arguments"),
        ("--timeout 'unclosed", "No closing quotation"),
    ],
)
def test_bad_options_print_usage_and_run_nothing(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str], options: str, problem: str
) -> None:
    echo = Echo()
    mead_notebook.use(Router(ScriptedModel(echo)))
    assert cell(shell, "hi", options) is None
    err = capsys.readouterr().err
    assert problem in err
    assert "Traceback" not in err
    assert echo.seen == []


def test_empty_cell_is_refused(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    echo = Echo()
    mead_notebook.use(Router(ScriptedModel(echo)))
    cell(shell, "  \n\n ")
    assert "the cell is empty" in capsys.readouterr().err
    assert echo.seen == []


def test_unknown_line_argument_prints_usage(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("mead", "restart now")
    assert "usage: %mead" in capsys.readouterr().err


def test_model_failure_is_reported_and_the_conversation_kept(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    mead_notebook.use(Router(ScriptedModel([["only reply"]])))
    cell(shell, "one")
    capsys.readouterr()
    cell(shell, "two")
    err = capsys.readouterr().err
    assert "the turn failed" in err
    assert "no reply left" in err
    assert "Traceback" not in err
    assert [m["content"] for m in magic.history()] == ["one", "only reply"]


# -- in a real kernel, over the Jupyter protocol ------------------------------------


class KernelSession:
    """A real ipykernel driven with jupyter_client; collects each cell's outputs."""

    def __init__(self, cwd: Path) -> None:
        from jupyter_client.manager import KernelManager

        self.km = KernelManager(kernel_name="python3")
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        self.km.start_kernel(env=env, cwd=str(cwd))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 60.0) -> tuple[str, list[dict[str, Any]], str]:
        """Run ``code``; return its stdout+stderr text, display outputs and reply status."""
        text: list[str] = []
        displays: list[dict[str, Any]] = []

        def hook(msg: dict[str, Any]) -> None:
            kind = msg["msg_type"]
            if kind == "stream":
                text.append(msg["content"]["text"])
            elif kind in ("display_data", "execute_result"):
                displays.append(msg["content"]["data"])
            elif kind == "error":
                text.append("\n".join(msg["content"]["traceback"]))

        reply = self.kc.execute_interactive(code, timeout=timeout, output_hook=hook)
        return "".join(text), displays, reply["content"]["status"]

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelSession]:
    session = KernelSession(tmp_path_factory.mktemp("kernel"))
    try:
        yield session
    finally:
        session.close()


SETUP = """
import mead_notebook
from mead_notebook import Router, ScriptedModel

def echo(messages):
    users = [m["content"] for m in messages if m["role"] == "user"]
    return [f"turn {len(users)}: you said {users[-1]!r}"]

mead_notebook.use(Router(ScriptedModel(echo)))
"""


@pytest.mark.kernel
def test_magic_in_a_real_kernel(kernel: KernelSession) -> None:
    out, _, status = kernel.run("%load_ext mead_notebook")
    assert status == "ok", out
    out, _, status = kernel.run("%%mead\nhello")
    assert status == "ok"
    assert "no router chosen yet" in out
    assert "Traceback" not in out

    out, _, status = kernel.run(SETUP)
    assert status == "ok", out
    out, displays, status = kernel.run("%%mead\nfirst")
    assert status == "ok", out
    views = [d for d in displays if "application/vnd.jupyter.widget-view+json" in d]
    assert len(views) == 1
    assert views[0]["text/plain"].startswith("NotebookInteraction: ")
    out, _, status = kernel.run("%%mead --timeout 30\nsecond")
    assert status == "ok", out

    out, _, _ = kernel.run("print(mead_notebook.magic.last_result().text)")
    assert out == "turn 2: you said 'second'\n"
    out, _, _ = kernel.run("%mead")
    assert out.splitlines() == ["model: scripted", "tools: (none)", "messages: 4"]
    out, _, _ = kernel.run("%mead reset\n%mead")
    assert out.splitlines() == [
        "mead: new conversation",
        "model: scripted",
        "tools: (none)",
        "messages: 0",
    ]
