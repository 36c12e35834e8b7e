"""Models behind the Anthropic messages API."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, cast

from ..errors import ModelError
from ..model import Message, ReplyItem, Thought, ToolCall, ToolSpec
from ._common import (
    SdkModel,
    StreamDropped,
    check_options,
    dropped,
    error_detail,
    missing_extra,
    parse_arguments,
)

try:
    import anthropic
    import httpx2
except ImportError:  # pragma: no cover - depends on the installed extras
    raise missing_extra("AnthropicModel", "anthropic") from None

__all__ = ["AnthropicModel"]

PROVIDER = "anthropic"


@dataclass
class _Block:
    kind: str
    id: str | None = None
    name: str = ""
    json: str = ""


class AnthropicModel(SdkModel):
    r"""A Claude model behind the Anthropic messages API (``ANTHROPIC_API_KEY``).

    Replies stream: text fragments as they arrive, then the tool calls. When the
    model streams its thinking (``thinking_delta``), it arrives as ``Thought``\s.

    Retries: an HTTP 408, 409, 429 or 5xx answer and a failed connection are
    retried by the SDK, at most ``max_retries`` times with exponential backoff.
    A stream that breaks (dropped connection, read timeout, early end) before
    any text was yielded is started again, also at most ``max_retries`` times.
    Once text was yielded nothing is retried: the error is a ``ModelError``
    and the text already shown stays.
    """

    provider = PROVIDER
    sdk: ClassVar[ModuleType] = anthropic

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 4096,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        check_options(model, timeout, max_retries)
        if max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        self.model = model
        self.name = f"{PROVIDER}:{model}"
        self.max_tokens = int(max_tokens)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self._client = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=self.timeout,
            max_retries=self.max_retries,
        )
        self.base_url = str(self._client.base_url)

    def __repr__(self) -> str:
        return f"AnthropicModel({self.model!r}, base_url={self.base_url!r})"

    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        system, converted = to_anthropic_messages(messages, self.model)
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": converted,
            "stream": True,
        }
        if system:
            request["system"] = system
        if tools:
            request["tools"] = to_anthropic_tools(tools)
        return request

    def _stream(self, request: dict[str, Any]) -> Iterator[ReplyItem]:
        stream = self._open(self._client.messages.create, request)
        blocks: dict[int, _Block] = {}
        stop_reason: str | None = None
        finished = False
        with cast(Any, stream) as events:
            try:
                for event in events:
                    kind = getattr(event, "type", None)
                    if kind == "content_block_start":
                        block = event.content_block
                        blocks[event.index] = _Block(
                            kind=getattr(block, "type", ""),
                            id=getattr(block, "id", None),
                            name=getattr(block, "name", "") or "",
                        )
                        text = getattr(block, "text", None)
                        if blocks[event.index].kind == "text" and text:
                            yield text
                    elif kind == "content_block_delta":
                        delta = event.delta
                        delta_kind = getattr(delta, "type", None)
                        if delta_kind == "text_delta" and delta.text:
                            yield delta.text
                        elif delta_kind == "thinking_delta" and getattr(delta, "thinking", ""):
                            yield Thought(delta.thinking)
                        elif delta_kind == "input_json_delta":
                            target = blocks.get(event.index)
                            if target is None:
                                raise self._error(
                                    f"the stream sent tool input for block {event.index}, "
                                    "which never started"
                                )
                            target.json += delta.partial_json or ""
                    elif kind == "message_delta":
                        stop_reason = getattr(event.delta, "stop_reason", None) or stop_reason
                    elif kind == "message_stop":
                        finished = True
            except anthropic.APIStatusError as exc:
                raise self._reported(error_detail(exc.body, exc.message)) from exc
            except (anthropic.APITimeoutError, httpx2.TimeoutException) as exc:
                raise self._stalled() from exc
            except (anthropic.APIConnectionError, httpx2.RequestError) as exc:
                raise dropped(exc) from exc
            except ValueError as exc:
                raise self._malformed(exc) from exc
        if not finished:
            raise StreamDropped("the stream ended before the answer was complete")
        for index in sorted(blocks):
            block = blocks[index]
            if block.kind != "tool_use":
                continue
            if not block.name:
                raise self._error("a tool call came without a tool name")
            arguments = parse_arguments(
                PROVIDER, self.model, block.name, block.json, stop_reason == "max_tokens"
            )
            yield ToolCall(block.name, arguments, block.id)


def to_anthropic_messages(
    messages: Sequence[Message], model: str = ""
) -> tuple[str, list[dict[str, Any]]]:
    """Our messages as the messages API wants them: the system text, and the turns.

    Assistant tool calls become ``tool_use`` blocks; tool results become
    ``tool_result`` blocks (with ``is_error``) in a user turn; consecutive turns
    of one role are merged into one.
    """
    system: list[str] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})

    for number, message in enumerate(messages, 1):
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if role == "system":
            if content:
                system.append(str(content))
        elif role == "user":
            add("user", _text_blocks(content))
        elif role == "assistant":
            blocks = _text_blocks(content)
            for c in message.get("tool_calls") or []:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": c["id"],
                        "name": c["name"],
                        "input": c.get("arguments") or {},
                    }
                )
            add("assistant", blocks)
        elif role == "tool":
            text = content if isinstance(content, str) else json.dumps(content, default=str)
            add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": message["tool_call_id"],
                        "content": text,
                        "is_error": bool(message.get("is_error")),
                    }
                ],
            )
        else:
            raise ModelError(PROVIDER, f"{model}: message {number} has an unknown role {role!r}")
    return "\n\n".join(system), turns


def _text_blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return [dict(block) for block in content if isinstance(block, dict)]
    if content is None or content == "":
        return []
    return [{"type": "text", "text": str(content)}]


def to_anthropic_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tools with their ``input_schema``, as the messages API wants them."""
    converted = []
    for t in tools:
        schema = dict(t.get("parameters") or {})
        schema.setdefault("type", "object")
        converted.append(
            {"name": t["name"], "description": t.get("description") or "", "input_schema": schema}
        )
    return converted
