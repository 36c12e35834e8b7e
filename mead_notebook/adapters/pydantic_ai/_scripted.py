"""An offline pydantic-ai model that plays back replies: a ``FunctionModel``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from mead_notebook import ToolCall

from ..base import ScriptedReplies

__all__ = ["scripted_model"]


def scripted_model(
    replies: Sequence[Sequence[str | ToolCall]], *, requests: list[list[ModelMessage]] | None = None
) -> FunctionModel:
    """A ``FunctionModel`` that plays back ``replies`` (text fragments and ``ToolCall`` items).

    Streamed, each fragment is one text delta and each call one tool-call delta;
    each reply is used once, in order. ``requests``, if given, gets the messages
    of every request the model receives (what it was told).
    """
    script = ScriptedReplies(replies)
    seen = requests if requests is not None else []

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
        seen.append(list(messages))
        for index, item in enumerate(script.next()):
            if isinstance(item, str):
                yield item
            else:
                arguments = json.dumps(item.arguments)
                yield {index: DeltaToolCall(item.name, arguments, tool_call_id=item.id)}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        parts: list[Any] = []
        reply = script.next()
        text = "".join(i for i in reply if isinstance(i, str))
        if text:
            parts.append(TextPart(text))
        for item in reply:
            if isinstance(item, ToolCall):
                parts.append(
                    ToolCallPart(item.name, dict(item.arguments), tool_call_id=item.id or "")
                )
        return ModelResponse(parts=parts)

    return FunctionModel(respond, stream_function=stream, model_name="scripted")
