"""The package's own tools in each framework: ``as_tools`` of LangChain, pydantic-ai and the
OpenAI Agents SDK, driven through each adapter's conformance harness.

Each tool keeps its schema, kind and preview: an allowed call runs with the tool's
own validation (its defaults filled in), a denied one never runs, the card
carries the kind and the preview before Allow and the tool's content after, a
card's Cancel cancels the tool's ``Call``, a schema error reaches the model
without anyone being asked, and a ``ToolFailure`` ends the call with its outcome.
The kernel's own tools (``kernel_tools()``) run the same way, in an IPython shell
of their own (a subprocess).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from mead_notebook import Call, ToolCall, tool
from mead_notebook.tools import ToolFailure, ToolOutput, preview

from .conformance import Harness, Told
from .helpers import ALLOWED, DENIED, REFUSED, Person, asked, finals, recorded, steps

pytestmark = pytest.mark.timeout(120)

FRAMEWORKS = ["langchain", "pydantic_ai", "openai_agents"]
HERE = Path(__file__).parent


class Shop:
    """The package tools of these tests; ``got`` is what each received."""

    def __init__(self) -> None:
        self.got: list[tuple[str, Any]] = []
        self.stopped = threading.Event()
        got = self.got

        @tool(kind="edit", preview=lambda path, text, mode: preview.text(f"{mode} {path}: {text}"))
        def save(path: str, text: str, mode: str = "w") -> ToolOutput:
            """Save a text."""
            got.append(("save", (path, text, mode)))
            return ToolOutput(
                f"saved {path}", [{"type": "text", "text": f"{path} now says {text}"}]
            )

        @tool(read_only=True)
        def count(n: int, step: int = 1) -> int:
            """Count."""
            got.append(("count", (n, step)))
            return n * step

        @tool(kind="execute")
        def wait(call: Call) -> str:
            """Wait until cancelled."""
            got.append(("wait", None))
            if call.wait_cancelled(30):
                self.stopped.set()
            return "waited"

        @tool
        def broken() -> str:
            """Fails half-way."""
            raise ToolFailure(
                "half done", content=[{"type": "text", "text": "the first half"}], outcome="timeout"
            )

        @tool
        def crash() -> str:
            """Raises."""
            raise ValueError("boom")

        self.tools = [save, count, wait, broken, crash]


def own_harness(framework: str, shop: Shop) -> Harness:
    """The framework's conformance harness, its agent given ``as_tools(shop.tools)`` only."""
    base = importlib.import_module(f".harness_{framework}", __package__).Harness
    adapter = importlib.import_module(f"mead_notebook.adapters.{framework}")

    class Own(base):  # type: ignore[misc,valid-type]
        def tools(self) -> list[Any]:
            return list(adapter.as_tools(shop.tools))

    harness: Harness = Own()
    return harness


@pytest.fixture(params=FRAMEWORKS)
def framework(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def play(framework: str, replies: list[list[Any]], person: Person | None = None) -> Any:
    shop = Shop()
    harness = own_harness(framework, shop)
    rec, _ = recorded(person or Person())
    result = harness.start(replies, rec).result(timeout=60)
    return shop, harness, rec, result


def told_error(framework: str, told: Told) -> bool:
    """Whether the model was told of a failure (the Responses API has no error flag)."""
    return told.error or framework == "openai_agents"


def test_an_allowed_call_runs_with_the_tools_own_validation(framework: str) -> None:
    shop, harness, rec, _ = play(framework, [[ToolCall("count", {"n": 3}, "c1")], ["ok"]])
    assert shop.got == [("count", (3, 1))], "the tool's default was filled in"
    assert steps(rec)["c1"] == ALLOWED
    [request] = asked(rec)
    assert (request["kind"], request["class"]) == ("read", "read")
    assert request["parameters"]["properties"]["step"]["default"] == 1
    assert harness.told()["c1"] == Told("3", False)


def test_a_denied_call_never_runs(framework: str) -> None:
    replies = [[ToolCall("save", {"path": "a.txt", "text": "hi"}, "s1")], ["ok"]]
    shop, harness, rec, _ = play(framework, replies, Person(deny={"save": "not now"}))
    assert shop.got == []
    assert steps(rec)["s1"] == DENIED
    told = harness.told()["s1"]
    assert told_error(framework, told)
    assert "not now" in told.text


def test_the_card_carries_the_kind_and_the_preview_then_the_tools_content(framework: str) -> None:
    replies = [[ToolCall("save", {"path": "a.txt", "text": "hi"}, "s1")], ["ok"]]
    shop, harness, rec, result = play(framework, replies)
    [request] = asked(rec)
    assert (request["kind"], request["class"]) == ("edit", "effect")
    assert request["content"] == [{"type": "text", "text": "w a.txt: hi"}]
    final = finals(rec)["s1"]
    assert final["content"] == [{"type": "text", "text": "a.txt now says hi"}]
    assert final["result"] == "saved a.txt"
    assert harness.told()["s1"] == Told("saved a.txt", False)
    assert shop.got == [("save", ("a.txt", "hi", "w"))]
    assert result.calls[0].content == [{"type": "text", "text": "a.txt now says hi"}]


def test_cancel_on_the_card_cancels_the_tools_call(framework: str) -> None:
    replies = [[ToolCall("wait", {}, "w1")], ["stopped"]]
    shop, harness, rec, result = play(framework, replies, Person(cancel_after=0.3))
    assert shop.stopped.wait(5), "the tool's Call was not cancelled"
    assert finals(rec)["w1"]["outcome"] == "cancelled"
    assert result.stop_reason == "end_turn"
    told = harness.told()["w1"]
    assert told_error(framework, told)
    assert "cancelled" in told.text


def test_a_schema_error_reaches_the_model_and_nobody_is_asked(framework: str) -> None:
    replies = [[ToolCall("save", {"path": 3}, "s1")], ["ok"]]
    shop, harness, rec, _ = play(framework, replies)
    assert shop.got == []
    assert steps(rec)["s1"] == REFUSED
    assert asked(rec) == []
    assert finals(rec)["s1"]["outcome"] == "invalid_arguments"
    told = harness.told()["s1"]
    assert told_error(framework, told)
    assert "Invalid arguments for save" in told.text
    assert "text" in told.text


def test_a_tool_failure_ends_the_call_with_its_outcome_and_content(framework: str) -> None:
    _, harness, rec, _ = play(framework, [[ToolCall("broken", {}, "b1")], ["ok"]])
    final = finals(rec)["b1"]
    assert (final["outcome"], final["error"]) == ("timeout", "half done")
    assert final["content"] == [{"type": "text", "text": "the first half"}]
    told = harness.told()["b1"]
    assert told_error(framework, told)
    assert "half done" in told.text


def test_an_error_is_told_as_the_router_tells_it(framework: str) -> None:
    _, harness, rec, _ = play(framework, [[ToolCall("crash", {}, "x1")], ["ok"]])
    final = finals(rec)["x1"]
    assert (final["outcome"], final["error"]) == ("error", "crash failed: ValueError: boom")
    assert "crash failed: ValueError: boom" in harness.told()["x1"].text


def test_a_tool_source_or_two_tools_of_one_name_are_refused(framework: str) -> None:
    from mead_notebook.tools.mcp import MCPServer

    adapter = importlib.import_module(f"mead_notebook.adapters.{framework}")
    shop = Shop()
    with pytest.raises(TypeError, match="tool source"):
        adapter.as_tools([MCPServer.stdio("true", [], name="x")])
    with pytest.raises(ValueError, match="two tools are named 'save'"):
        adapter.as_tools([shop.tools[0], shop.tools[0]])
    with pytest.raises(TypeError, match="list of tools"):
        adapter.as_tools(shop.tools[0])


# -- the kernel's tools ----------------------------------------------------------------

KERNEL = """
import json, sys
sys.path.insert(0, {tests!r})
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
from mead_notebook import ToolCall, kernel_tools
from adapters.helpers import Person, asked, finals, recorded
from adapters.test_own_tools import own_harness

class Tools:
    def __init__(self):
        self.tools = kernel_tools(timeout=5)

harness = own_harness({framework!r}, Tools())
rec, _ = recorded(Person(deny={deny!r}))
code = "x = 6 * 7\\nprint('six times seven is', x)"
replies = [[ToolCall("run_python", {{"code": code}}, "r1")], ["done"]]
harness.start(replies, rec).result(timeout=60)
print("RESULT " + json.dumps({{
    "x": shell.user_ns.get("x"),
    "asked": [r.get("content") for r in asked(rec)],
    "final": finals(rec)["r1"],
    "told": harness.told()["r1"].text,
}}))
"""


def run_kernel_tool(framework: str, deny: dict[str, str]) -> dict[str, Any]:
    code = KERNEL.format(tests=str(HERE.parent), framework=framework, deny=deny)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=HERE
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stdout + done.stderr
    found: dict[str, Any] = json.loads(lines[-1].removeprefix("RESULT "))
    return found


def test_run_python_runs_in_the_shell_on_allow_with_its_code_on_the_card(framework: str) -> None:
    found = run_kernel_tool(framework, {})
    code = "x = 6 * 7\nprint('six times seven is', x)"
    assert found["x"] == 42
    assert found["asked"] == [[{"type": "code", "language": "python", "code": code}]]
    assert found["final"]["status"] == "completed"
    assert {"type": "output", "name": "stdout", "text": "six times seven is 42\n"} in found[
        "final"
    ]["content"]
    assert "six times seven is 42" in found["told"]


def test_run_python_denied_leaves_the_namespace_untouched(framework: str) -> None:
    found = run_kernel_tool(framework, {"run_python": "no"})
    assert found["x"] is None
    assert found["final"]["outcome"] == "denied"
