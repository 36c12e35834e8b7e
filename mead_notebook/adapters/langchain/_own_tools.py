"""The package's own tools as LangChain tools (``as_tools``)."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException

from mead_notebook.tools import Tool, ToolFailure, ToolOutput

from ..base.own_tools import OWN_TOOL, check, failed, invoke, invoke_here, kind_of, own_tools

__all__ = ["as_tools"]


def as_tools(tools: Iterable[object]) -> list[BaseTool]:
    """Each of the package's own tools (a ``Tool``, an ``@tool`` function) as a LangChain tool.

    A tool keeps its JSON schema, its kind (``metadata["kind"]``, which the card
    shows) and its preview: under ``run``/``arun``/``start`` or ``middleware`` its
    calls are checked by the tool's own validation (a call that fails it is
    refused and the model told why), asked with the preview on the card, and
    run in a thread that the card's Cancel cancels (the tool's ``Call`` too).
    The model gets the tool's text (an image it returned as an image block);
    a failure's message comes back as an error ``ToolMessage``.
    """
    return [_wrapped(t) for t in own_tools(tools)]


def _wrapped(t: Tool) -> BaseTool:
    def checked(arguments: dict[str, Any]) -> dict[str, Any]:
        valid, problem = check(t, arguments)
        if valid is None:
            raise ToolException(problem)
        return valid

    async def arun(**arguments: Any) -> tuple[Any, Any]:
        try:
            value = await invoke(t, checked(arguments))
        except ToolException:
            raise
        except Exception as exc:
            raise ToolException(failed(t, exc)) from None
        return _content(value), value

    def run(**arguments: Any) -> tuple[Any, Any]:
        try:
            value = invoke_here(t, checked(arguments))
        except ToolException:
            raise
        except Exception as exc:
            raise ToolException(failed(t, exc)) from None
        return _content(value), value

    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=t.name,
        description=t.description or t.name,
        args_schema=copy.deepcopy(t.parameters),
        metadata={"kind": kind_of(t), OWN_TOOL: t},
        response_format="content_and_artifact",
        handle_tool_error=_told,
    )


def _told(error: ToolException) -> str:
    return str(error.args[0]) if error.args else "The tool failed."


def _content(value: Any) -> Any:
    """What the model gets: the text, with an image block for each image the tool returned."""
    if isinstance(value, ToolOutput):
        if not value.images:
            return value.text
        return [
            {"type": "text", "text": value.text},
            *(
                {"type": "image", "base64": image["data"], "mime_type": image["mime_type"]}
                for image in value.images
            ),
        ]
    if isinstance(value, ToolFailure):
        return value.message
    return value
