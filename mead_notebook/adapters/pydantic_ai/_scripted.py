"""An offline pydantic-ai model that plays back replies: a ``FunctionModel``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from mead_notebook import ToolCall
from mead_notebook.model import Message

from ..base import ScriptedReplies
from ..base.replies import Script

__all__ = ["scripted_model"]


def scripted_model(
    replies: Script, *, requests: list[list[ModelMessage]] | None = None
) -> FunctionModel:
    """A ``FunctionModel`` that plays back ``replies`` (text fragments and ``ToolCall`` items).

    Streamed, each fragment is one text delta and each call one tool-call delta;
    each reply is used once, in order; or ``replies`` is a function of the
    conversation so far (plain ``Message`` dicts: a tool result's ``is_error`` is
    True unless it succeeded) that returns each reply. ``requests``, if given,
    gets the messages of every request the model receives (what it was told).
    """
    script = ScriptedReplies(replies)
    seen = requests if requests is not None else []

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | dict[int, DeltaToolCall]]:
        seen.append(list(messages))
        for index, item in enumerate(script.next(told(messages))):
            if isinstance(item, str):
                yield item
            else:
                arguments = json.dumps(item.arguments)
                yield {index: DeltaToolCall(item.name, arguments, tool_call_id=item.id)}

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        parts: list[Any] = []
        reply = script.next(told(messages))
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


def told(messages: list[ModelMessage]) -> list[Message]:
    """pydantic-ai's messages as plain ``Message`` dicts, for a scripted function."""
    out: list[Message] = []
    for message in messages:
        if isinstance(message, ModelResponse):
            text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            calls = [
                {"id": p.tool_call_id, "name": p.tool_name, "arguments": p.args_as_dict()}
                for p in message.parts
                if isinstance(p, ToolCallPart)
            ]
            out.append({"role": "assistant", "content": text, "tool_calls": calls})
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                said = part.model_response_str()
                failed = part.outcome != "success"
                out.append(_tool(part.tool_call_id, said, failed))
            elif isinstance(part, RetryPromptPart):
                out.append(_tool(part.tool_call_id, part.model_response(), True))
            elif isinstance(part, UserPromptPart):
                content = part.content if isinstance(part.content, str) else str(part.content)
                out.append({"role": "user", "content": content})
            elif isinstance(part, SystemPromptPart):
                out.append({"role": "system", "content": part.content})
    return out


def _tool(tool_call_id: str, content: str, is_error: bool) -> Message:
    return {"role": "tool", "tool_call_id": tool_call_id, "content": content, "is_error": is_error}
