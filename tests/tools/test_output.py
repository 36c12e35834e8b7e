"""A tool that says more than text: ``ToolOutput`` and ``ToolFailure`` through the router."""

from __future__ import annotations

from typing import Any

from mead_notebook import Router, ScriptedModel, ToolCall, tool
from mead_notebook.interaction import ContentBlock
from mead_notebook.policies import AllowAll, Recording
from mead_notebook.tools import ToolFailure, ToolOutput, preview, result_text

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
    "awAAAABJRU5ErkJggg=="
)
RAN: list[ContentBlock] = [
    {"type": "code", "language": "python", "code": "print(1)"},
    {"type": "output", "name": "stdout", "text": "1\n"},
    {"type": "image", "mime_type": "image/png", "data": PNG, "alt": "a dot"},
]


@tool(kind="execute", preview=lambda code: preview.code(code))
def run(code: str) -> ToolOutput:
    """Run code."""
    return ToolOutput("stdout:\n1", RAN)


@tool(kind="execute", preview=lambda code: preview.code(code))
def fail(code: str, outcome: str = "error") -> str:
    """Fail."""
    raise ToolFailure(f"it failed: {code}", content=RAN[:2], outcome=outcome)  # type: ignore[arg-type]


def turn(call: ToolCall, *tools: Any) -> tuple[Recording, Any]:
    rec = Recording(AllowAll())
    router = Router(ScriptedModel([[call], ["done"]]), tools=list(tools))
    return rec, router.run("go", interaction=rec)


def updates(rec: Recording) -> list[dict[str, Any]]:
    return [e.args[0] for e in rec.events if e.name == "tool_updated"]


def test_the_preview_shows_the_code_and_the_output_replaces_it_when_done() -> None:
    rec, result = turn(ToolCall("run", {"code": "print(1)"}), run)
    asked = next(e.args[0] for e in rec.events if e.name == "request_permission")
    assert asked["content"] == [{"type": "code", "language": "python", "code": "print(1)"}]
    final = updates(rec)[-1]
    assert (final["status"], final["result"], final["content"]) == ("completed", "stdout:\n1", RAN)
    [record] = result.calls
    assert (record.result, record.content) == ("stdout:\n1", RAN)
    tool_message = next(m for m in result.messages if m.get("role") == "tool")
    assert tool_message["content"] == "stdout:\n1", "the model gets the text only"


def test_the_images_are_there_for_a_framework_that_takes_them() -> None:
    output = run.invoke({"code": "x"}, None)  # type: ignore[arg-type]
    assert output.images == [RAN[2]]
    assert result_text(output) == "stdout:\n1"


def test_a_failure_says_its_outcome_and_keeps_its_content() -> None:
    for outcome in ("error", "timeout"):
        rec, result = turn(ToolCall("fail", {"code": "x", "outcome": outcome}), fail)
        final = updates(rec)[-1]
        assert (final["status"], final["outcome"]) == ("failed", outcome)
        assert final["error"] == "it failed: x"
        assert final["content"] == RAN[:2]
        tool_message = next(m for m in result.messages if m.get("role") == "tool")
        assert (tool_message["content"], tool_message["is_error"]) == ("it failed: x", True)


def test_a_preview_may_return_a_code_block_as_a_dict() -> None:
    shown = preview.normalize({"type": "code", "code": "x = 1"})
    assert shown.content == [{"type": "code", "language": "python", "code": "x = 1"}]
