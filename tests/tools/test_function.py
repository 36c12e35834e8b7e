from __future__ import annotations

import asyncio
from typing import Any, Literal

import pytest

from mead_notebook import (
    Call,
    Router,
    ScriptedModel,
    ToolArgumentError,
    ToolCall,
    ToolDefinitionError,
    tool,
)
from mead_notebook.policies import AllowAll, Recording


@tool(read_only=True)
def search(
    query: str, limit: int = 10, exact: bool = False, tags: list[str] | None = None
) -> list[str]:
    """Search the notes.

    Returns matching titles.
    """
    return [query] * min(limit, 2)


@tool
def move(
    src: str, dst: str, mode: Literal["copy", "move"] = "move", call: Call | None = None
) -> str:
    return f"{mode} {src} {dst}"


def test_schema_comes_from_type_hints_and_description_from_the_docstring() -> None:
    assert search.name == "search"
    assert search.description.startswith("Search the notes.")
    assert search.tool_class == "read"
    assert search.server == "local"
    schema = search.parameters
    assert schema["type"] == "object"
    assert schema["required"] == ["query"]
    props = schema["properties"]
    assert props["query"] == {"type": "string"}
    assert props["limit"] == {"type": "integer", "default": 10}
    assert props["exact"] == {"type": "boolean", "default": False}
    assert props["tags"]["anyOf"][0] == {"items": {"type": "string"}, "type": "array"}
    assert schema["additionalProperties"] is False


def test_effect_is_the_default_class_and_literals_become_enums() -> None:
    assert move.tool_class == "effect"
    assert move.parameters["properties"]["mode"]["enum"] == ["copy", "move"]
    assert move.description == ""


def test_a_parameter_annotated_call_is_injected_not_offered() -> None:
    @tool
    def work(n: int, call: Call) -> int:
        """Work."""
        assert isinstance(call, Call)
        return n * 2

    assert list(work.parameters["properties"]) == ["n"]
    result = Router(ScriptedModel([[ToolCall("work", {"n": 21})], ["ok"]]), tools=[work]).run("go")
    assert result.calls[0].result == "42"


def test_validation_coerces_what_it_safely_can_and_names_each_problem() -> None:
    assert search.validate({"query": "x", "limit": "3"}) == {
        "query": "x",
        "limit": 3,
        "exact": False,
        "tags": None,
    }
    with pytest.raises(ToolArgumentError, match=r"query: Field required; limit:"):
        search.validate({"limit": "many"})
    with pytest.raises(ToolArgumentError, match="mode"):
        move.validate({"src": "a", "dst": "b", "mode": "delete"})


def test_plain_functions_and_async_functions_are_tools_too() -> None:
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()

    async def later(text: str) -> str:
        await asyncio.sleep(0.01)
        return text[::-1]

    router = Router(
        ScriptedModel(
            [[ToolCall("shout", {"text": "hi"}), ToolCall("later", {"text": "abc"})], ["k"]]
        ),
        tools=[shout, later],
    )
    result = router.run("go")
    assert [c.result for c in result.calls] == ["HI", "cba"]
    assert router.tools["shout"].tool_class == "effect"


def test_results_that_are_not_text_reach_the_model_as_json() -> None:
    result = Router(
        ScriptedModel([[ToolCall("search", {"query": "q"})], ["k"]]), tools=[search]
    ).run("go")
    assert result.messages[2]["content"] == '["q", "q"]'


def test_a_tool_is_still_callable_as_a_function() -> None:
    assert move("a", "b", "copy") == "copy a b"


def test_not_a_tool_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="a tool must be"):
        Router(ScriptedModel([]), tools=[42])


def test_recording_keeps_answers_errors_and_threads() -> None:
    class Broken(AllowAll):
        def text_delta(self, context: object, text: str) -> None:
            raise RuntimeError("bad")

    rec = Recording(Broken())
    Router(ScriptedModel([["a"]])).run("go", interaction=rec)
    assert rec.names == ["text_delta"]
    assert isinstance(rec.events[0].result, RuntimeError)
    assert rec.events[0].thread == "MainThread"


def _define(source: str, name: str) -> Any:
    """Run ``source`` as a module of its own (no names of this test file in it)."""
    namespace: dict[str, Any] = {}
    exec(compile("from __future__ import annotations\n" + source, "<tools>", "exec"), namespace)
    return namespace[name]


def test_a_tool_defined_in_a_function_with_a_locally_imported_call_works() -> None:
    make = _define(
        """
def make():
    from mead_notebook import Call, tool

    @tool
    def slow(n: int, call: Call) -> int:
        \"\"\"Count.\"\"\"
        return n

    return slow
""",
        "make",
    )
    made = make()
    assert list(made.parameters["properties"]) == ["n"]


def test_an_annotation_that_cannot_be_resolved_says_which_and_how_to_fix() -> None:
    make = _define(
        """
def make():
    from mead_notebook import tool

    class Local:
        pass

    @tool
    def use(item: Local) -> str:
        \"\"\"Use it.\"\"\"
        return ""

    return use
""",
        "make",
    )
    with pytest.raises(ToolDefinitionError) as caught:
        make()
    message = str(caught.value)
    assert "'use'" in message
    assert "'item'" in message
    assert "'Local'" in message
    assert "module level" in message
