"""An offline model for the SDK, built on its own ``agents.testing.ScriptedModel``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from agents.testing import ScriptedModel, function_call
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from mead_notebook import ToolCall

from ..base import ScriptedReplies

__all__ = ["scripted_model"]


def scripted_model(replies: Sequence[Sequence[str | ToolCall]]) -> ScriptedModel:
    """A ``ScriptedModel`` that plays back ``replies`` (text fragments and ``ToolCall`` items).

    Each reply is one model response; streamed, each text fragment arrives as a
    delta of its own, as a provider streams tokens. The SDK's model plays a list:
    a function of the conversation is refused (``TypeError``).
    """
    if callable(replies):
        raise TypeError(
            "openai_agents.scripted_model takes a list of replies (the SDK's ScriptedModel "
            "plays a list), not a function"
        )
    steps = []
    for number, reply in enumerate(ScriptedReplies(replies).replies, 1):
        output: list[object] = []
        texts = [i for i in reply if isinstance(i, str)]
        if texts:
            output.append(
                ResponseOutputMessage(
                    id=f"msg_{number}",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[
                        ResponseOutputText(text=t, type="output_text", annotations=[], logprobs=[])
                        for t in texts
                    ],
                )
            )
        for item in reply:
            if isinstance(item, ToolCall):
                output.append(function_call(item.name, item.arguments, call_id=item.id or ""))
        steps.append(output)
    return ScriptedModel(cast(list[Any], steps))
