"""An offline LangChain chat model that plays back replies, streaming text and tool calls."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, PrivateAttr

from mead_notebook import ToolCall
from mead_notebook.model import Message

from ..base import ScriptedReplies

__all__ = ["ScriptedChatModel"]


class ScriptedChatModel(BaseChatModel):
    """Plays back ``replies``, each a list of text fragments and ``ToolCall`` items, once each,
    or the replies of a function of the conversation (see ``ScriptedReplies``).

    Streamed, each fragment is one chunk and each call one tool-call chunk, as a
    provider streams them; ``bind_tools`` returns the model itself.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    replies: Any
    _script: ScriptedReplies = PrivateAttr()

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        self._script = ScriptedReplies(self.replies)

    @property
    def _llm_type(self) -> str:
        return "mead-scripted"

    @property
    def remaining(self) -> int:
        """How many replies are left."""
        return self._script.remaining

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self._script.next(told(messages))
        text = "".join(i for i in reply if isinstance(i, str))
        calls = [_call(i) for i in reply if isinstance(i, ToolCall)]
        message = AIMessage(content=text, tool_calls=calls)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        index = 0
        for item in self._script.next(told(messages)):
            if isinstance(item, str):
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=item))
                if run_manager is not None:
                    run_manager.on_llm_new_token(item, chunk=chunk)
            else:
                part = {
                    "name": item.name,
                    "args": json.dumps(item.arguments),
                    "id": item.id,
                    "index": index,
                }
                index += 1
                chunk = ChatGenerationChunk(
                    message=AIMessageChunk(content="", tool_call_chunks=[part])  # type: ignore[list-item]
                )
            yield chunk


def told(messages: Sequence[BaseMessage]) -> list[Message]:
    """LangChain's messages as plain ``Message`` dicts, for a scripted function."""
    out: list[Message] = []
    for m in messages:
        text = m.content if isinstance(m.content, str) else _text_of(m.content)
        if isinstance(m, ToolMessage):
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": m.tool_call_id,
                    "content": text,
                    "is_error": m.status == "error",
                }
            )
        elif isinstance(m, AIMessage):
            calls = [
                {"id": c["id"], "name": c["name"], "arguments": c["args"]} for c in m.tool_calls
            ]
            out.append({"role": "assistant", "content": text, "tool_calls": calls})
        else:
            out.append({"role": "system" if m.type == "system" else "user", "content": text})
    return out


def _text_of(content: list[Any]) -> str:
    return "".join(
        part if isinstance(part, str) else str(part.get("text", ""))
        for part in content
        if isinstance(part, (str, dict))
    )


def _call(item: ToolCall) -> Any:
    return {"name": item.name, "args": dict(item.arguments), "id": item.id, "type": "tool_call"}
