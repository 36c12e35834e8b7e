"""The package's own tools as pydantic-ai tools (``as_tools``)."""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterable
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.messages import BinaryImage

from mead_notebook.tools import Tool as OwnTool
from mead_notebook.tools import ToolOutput

from ..base.own_tools import OWN_TOOL, check, failed, invoke, kind_of, own_tools

__all__ = ["as_tools"]


def as_tools(tools: Iterable[object]) -> list[Tool[Any]]:
    """Each of the package's own tools (a ``Tool``, an ``@tool`` function) as a pydantic-ai tool.

    A tool keeps its JSON schema, its kind (``metadata["kind"]``, which the card
    shows) and its preview: under ``run``/``arun``/``start`` or ``capability`` its
    calls are checked by the tool's own validation (a call that fails it is
    retried as pydantic-ai retries a schema error: the model is told why, nobody
    is asked), asked with the preview on the card, and run in a thread that the
    card's Cancel cancels (the tool's ``Call`` too). The model gets the tool's
    text (and the images it returned); a failure's message comes back as
    ``ToolFailed``.
    """
    return [_wrapped(t) for t in own_tools(tools)]


def _wrapped(t: OwnTool) -> Tool[Any]:
    def checked(arguments: dict[str, Any]) -> dict[str, Any]:
        valid, problem = check(t, arguments)
        if valid is None:
            raise ModelRetry(problem or f"Invalid arguments for {t.name}.")
        return valid

    async def validate(ctx: RunContext[Any], **arguments: Any) -> None:
        checked(arguments)

    async def run(ctx: RunContext[Any], **arguments: Any) -> Any:
        try:
            value = await invoke(t, checked(arguments), ctx.tool_call_id)
        except (ModelRetry, ToolFailed):
            raise
        except Exception as exc:
            raise ToolFailed(failed(t, exc)) from None
        return _returned(value)

    made: Tool[Any] = Tool.from_schema(
        run,
        name=t.name,
        description=t.description or None,
        json_schema=copy.deepcopy(t.parameters),
        takes_ctx=True,
        args_validator=validate,
    )
    made.metadata = {"kind": kind_of(t), OWN_TOOL: t}
    return made


def _returned(value: Any) -> Any:
    """What the model gets: the tool's value, a ``ToolOutput``'s text and images."""
    if not isinstance(value, ToolOutput):
        return value
    if not value.images:
        return value.text
    return [
        value.text,
        *(
            BinaryImage(data=base64.b64decode(image["data"]), media_type=image["mime_type"])
            for image in value.images
        ),
    ]
