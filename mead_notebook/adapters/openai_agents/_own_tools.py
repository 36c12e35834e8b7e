"""The package's own tools as OpenAI Agents SDK function tools (``as_tools``)."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from agents import FunctionTool
from agents.tool import ToolOutputImage, ToolOutputText
from agents.tool_context import ToolContext

from mead_notebook.schema import parse
from mead_notebook.tools import Tool, ToolOutput

from ..base.own_tools import OWN_TOOL, check, failed, invoke, own_tools

__all__ = ["as_tools"]


def as_tools(tools: Iterable[object]) -> list[FunctionTool]:
    """Each of the package's own tools (a ``Tool``, an ``@tool`` function) as a ``FunctionTool``.

    A tool keeps its JSON schema (not strict: its defaults stay optional), its
    kind (the card's, unless ``kinds`` names it) and its preview: under
    ``run``/``arun``/``start`` its calls are checked by the tool's own validation
    (a call that fails it is refused and the model told why, nobody asked),
    asked with the preview on the card, and run in a thread that the card's
    Cancel cancels (the tool's ``Call`` too). The model gets the tool's text
    (and the images it returned); a failure's message comes back as the result.
    """
    return [_wrapped(t) for t in own_tools(tools)]


def _wrapped(t: Tool) -> FunctionTool:
    async def run(ctx: ToolContext[Any], raw: str) -> Any:
        arguments, problem = parse(raw)
        valid, problem = check(t, arguments) if arguments is not None else (None, problem)
        if valid is None:
            return problem or f"Invalid arguments for {t.name}."
        try:
            value = await invoke(t, valid, ctx.tool_call_id)
        except Exception as exc:
            return failed(t, exc)
        return _returned(value)

    made = FunctionTool(
        name=t.name,
        description=t.description or t.name,
        params_json_schema=copy.deepcopy(t.parameters),
        on_invoke_tool=run,
        strict_json_schema=False,
    )
    setattr(made, OWN_TOOL, t)
    return made


def _returned(value: Any) -> Any:
    """What the model gets: the tool's value, a ``ToolOutput``'s text and images."""
    if not isinstance(value, ToolOutput):
        return value
    if not value.images:
        return value.text
    return [
        ToolOutputText(text=value.text),
        *(
            ToolOutputImage(image_url=f"data:{image['mime_type']};base64,{image['data']}")
            for image in value.images
        ),
    ]
