"""``@tool(kind=, preview=)`` and the preview helpers: what a call will do, before it is asked."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from mead_notebook import Router, ScriptedModel, ToolCall, ToolDefinitionError, tool
from mead_notebook.policies import AllowAll, DenyAll, Recording
from mead_notebook.tools import preview
from mead_notebook.tools.mcp.server import kind_from_hints


def write_tool(folder: Path) -> Any:
    @tool(kind="edit", preview=lambda path, text: preview.file_diff(folder / path, text))
    def write_file(path: str, text: str) -> str:
        """Write a file."""
        (folder / path).write_text(text)
        return "written"

    return write_file


def run(tools: list[Any], call: ToolCall, interaction: Any) -> Recording:
    rec = Recording(interaction)
    Router(ScriptedModel([[call], ["done"]]), tools=tools).run("go", interaction=rec)
    return rec


def asked(rec: Recording) -> dict[str, Any]:
    return next(e.args[0] for e in rec.events if e.name == "request_permission")


def test_a_write_tool_shows_its_diff_against_the_file_before_it_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a preview reads only files in the working folder
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    rec = run(
        [write_tool(tmp_path)],
        ToolCall("write_file", {"path": "a.txt", "text": "one\n2\n"}),
        DenyAll(),
    )
    request = asked(rec)
    assert request["kind"] == "edit"
    assert request["class"] == "effect"
    assert request["content"] == [
        {
            "type": "diff",
            "path": str(tmp_path / "a.txt"),
            "old_text": "one\ntwo\n",
            "new_text": "one\n2\n",
        }
    ]
    assert request["locations"] == [{"path": str(tmp_path / "a.txt"), "line": None}]
    updates = [e.args[0] for e in rec.events if e.name == "tool_updated"]
    pending = [u for u in updates if u["status"] == "pending"]
    assert pending[0]["kind"] == "edit"
    assert "content" not in pending[0]
    assert pending[1]["content"] == request["content"]
    names = rec.names
    assert names.index("request_permission") > names.index("tool_updated")
    assert (tmp_path / "a.txt").read_text() == "one\ntwo\n"


def test_a_new_file_is_a_diff_with_no_old_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a preview reads only files in the working folder
    shown = preview.file_diff(tmp_path / "new.txt", "hello\n")
    assert shown.content == [
        {"type": "diff", "path": str(tmp_path / "new.txt"), "old_text": None, "new_text": "hello\n"}
    ]


def test_a_file_that_is_not_text_or_too_large_is_said_in_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a preview reads only files in the working folder
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\xff\xfe\x00")
    assert preview.file_diff(binary, "x").content[0]["type"] == "text"
    assert "not UTF-8" in str(preview.file_diff(binary, "x").content[0])
    big = tmp_path / "big.txt"
    big.write_text("x" * (preview.MAX_FILE + 1))
    block = preview.file_diff(big, "x").content[0]
    assert block["type"] == "text"
    assert "too large" in str(block)


def test_a_command_preview_names_the_command_and_where_it_runs() -> None:
    shown = preview.command(["rm", "-r", "my dir"], cwd="/tmp")
    assert shown.content == [{"type": "terminal", "command": "rm -r 'my dir'", "cwd": "/tmp"}]
    assert preview.command("ls").content == [{"type": "terminal", "command": "ls"}]


def test_a_preview_may_return_blocks_or_a_string() -> None:
    assert preview.normalize("will do x").content == [{"type": "text", "text": "will do x"}]
    blocks = preview.normalize([{"type": "diff", "path": "p", "old_text": "a", "new_text": "b"}])
    assert blocks.locations == [{"path": "p", "line": None}]
    with pytest.raises(TypeError, match="diff block needs"):
        preview.normalize({"type": "diff", "path": "p"})
    with pytest.raises(TypeError):
        preview.normalize(42)


def test_a_preview_that_raises_is_said_and_the_person_still_decides(tmp_path: Path) -> None:
    def broken(text: str) -> str:
        raise OSError("disk gone")

    @tool(kind="edit", preview=broken)
    def save(text: str) -> str:
        """Save."""
        return "saved"

    rec = run([save], ToolCall("save", {"text": "x"}), AllowAll())
    request = asked(rec)
    assert request["content"][0]["type"] == "text"
    assert "The preview failed: OSError: disk gone" in request["content"][0]["text"]
    final = [e.args[0] for e in rec.events if e.name == "tool_updated"][-1]
    assert final["status"] == "completed"


def test_a_preview_that_hangs_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()

    @tool(preview=lambda text: release.wait(10) and None)
    def slow(text: str) -> str:
        """Slow to preview."""
        return "ok"

    shown = preview.of(slow, {"text": "x"}, timeout=0.2)
    release.set()
    assert shown.content == [{"type": "text", "text": "The preview did not finish within 0.2 s."}]


def test_kind_read_only_and_class_agree() -> None:
    @tool(read_only=True)
    def look() -> str:
        """Look."""
        return ""

    @tool(kind="search")
    def find() -> str:
        """Find."""
        return ""

    @tool
    def act() -> str:
        """Act."""
        return ""

    assert (look.kind, look.tool_class) == ("read", "read")
    assert (find.kind, find.tool_class) == ("search", "read")
    assert (act.kind, act.tool_class) == ("other", "effect")
    with pytest.raises(ToolDefinitionError, match="contradicts"):
        tool(read_only=True, kind="delete")(lambda: "")


def test_mcp_hints_give_a_kind_only_as_far_as_they_are_trusted() -> None:
    import mcp_types

    read = mcp_types.ToolAnnotations(readOnlyHint=True)
    destructive = mcp_types.ToolAnnotations(destructiveHint=True)
    assert kind_from_hints(read, trusted=True) == "read"
    assert kind_from_hints(read, trusted=False) == "other"
    assert kind_from_hints(destructive, trusted=False) == "delete"
    assert kind_from_hints(None, trusted=True) == "other"
