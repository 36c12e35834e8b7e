"""Models behind the OpenAI chat completions API, and servers that speak it."""

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
    missing_extra,
    parse_arguments,
)

try:
    import openai
except ImportError:  # pragma: no cover - depends on the installed extras
    raise missing_extra("OpenAIModel", "openai") from None

__all__ = ["OpenAIModel"]

PROVIDER = "openai"
PLACEHOLDER_KEY = "not-needed"
"""The key sent to a local server (``base_url`` given, no key): most ignore it."""


@dataclass
class _PartialCall:
    id: str | None = None
    name: str = ""
    arguments: str = ""


class OpenAIModel(SdkModel):
    r"""A chat model behind the OpenAI API or an OpenAI-compatible server.

    ``OpenAIModel("gpt-4o-mini")`` reads ``OPENAI_API_KEY``;
    ``OpenAIModel("llama3.2", base_url="http://localhost:11434/v1")`` talks to a
    local server (Ollama, vLLM, llama.cpp, LM Studio) with a placeholder key.
    Replies stream: text fragments as they arrive, then the tool calls. The
    reasoning that compatible servers stream (``reasoning_content`` from vLLM,
    DeepSeek and llama.cpp; ``reasoning`` from Ollama and OpenRouter) arrives as
    ``Thought``\s.

    Retries: an HTTP 408, 409, 429 or 5xx answer and a failed connection are
    retried by the SDK, at most ``max_retries`` times with exponential backoff.
    A stream that breaks (dropped connection, read timeout, early end) before
    any text was yielded is started again, also at most ``max_retries`` times.
    Once text was yielded nothing is retried: the error is a ``ModelError``
    and the text already shown stays.
    """

    provider = PROVIDER
    sdk: ClassVar[ModuleType] = openai

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        temperature: float | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        check_options(model, timeout, max_retries)
        self.model = model
        self.name = f"{PROVIDER}:{model}"
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.temperature = temperature
        self.extra_body = dict(extra_body) if extra_body else None
        if api_key is None and base_url is not None:
            api_key = PLACEHOLDER_KEY
        try:
            self._client = openai.OpenAI(
                api_key=api_key,
                base_url=base_url,
                timeout=self.timeout,
                max_retries=self.max_retries,
            )
        except openai.OpenAIError as exc:
            raise ValueError(
                "OpenAIModel needs an API key: pass api_key= or set OPENAI_API_KEY "
                f"(a local server given by base_url needs none). {exc}"
            ) from None
        self.base_url = str(self._client.base_url)

    def __repr__(self) -> str:
        return f"OpenAIModel({self.model!r}, base_url={self.base_url!r})"

    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(messages, self.model),
            "stream": True,
        }
        if tools:
            request["tools"] = to_openai_tools(tools)
        if self.temperature is not None:
            request["temperature"] = self.temperature
        if self.extra_body:
            request["extra_body"] = self.extra_body
        return request

    def _stream(self, request: dict[str, Any]) -> Iterator[ReplyItem]:
        stream = self._open(self._client.chat.completions.create, request)
        calls: dict[int, _PartialCall] = {}
        finish: str | None = None
        with cast(Any, stream) as chunks:
            try:
                for chunk in chunks:
                    for choice in chunk.choices or ():
                        if getattr(choice, "index", 0) not in (0, None):
                            continue
                        delta = choice.delta
                        thought = _reasoning(delta)
                        if thought:
                            yield Thought(thought)
                        text = getattr(delta, "content", None) if delta is not None else None
                        if isinstance(text, str) and text:
                            yield text
                        for fragment in getattr(delta, "tool_calls", None) or ():
                            _add_fragment(calls, fragment)
                        if choice.finish_reason:
                            finish = choice.finish_reason
            except openai.APITimeoutError as exc:
                raise self._stalled() from exc
            except openai.APIConnectionError as exc:
                raise dropped(exc) from exc
            except openai.APIError as exc:
                raise self._reported(exc.message) from exc
            except ValueError as exc:
                raise self._malformed(exc) from exc
        if finish is None:
            raise StreamDropped("the stream ended before the answer was complete")
        for index in sorted(calls):
            partial = calls[index]
            if not partial.name:
                raise self._error("a tool call came without a tool name")
            arguments = parse_arguments(
                PROVIDER, self.model, partial.name, partial.arguments, finish == "length"
            )
            yield ToolCall(partial.name, arguments, partial.id)


def _add_fragment(calls: dict[int, _PartialCall], fragment: Any) -> None:
    """Fold one streamed tool-call fragment into the call at its index."""
    index = getattr(fragment, "index", None)
    call_id = getattr(fragment, "id", None)
    if not isinstance(index, int):
        known = [i for i, c in calls.items() if call_id is not None and c.id == call_id]
        if known:
            index = known[0]
        elif call_id is not None or not calls:
            index = len(calls)
        else:
            index = max(calls)
    partial = calls.setdefault(index, _PartialCall())
    if call_id and not partial.id:
        partial.id = call_id
    function = getattr(fragment, "function", None)
    if function is None:
        return
    name = getattr(function, "name", None)
    if name and not partial.name:
        partial.name = name
    arguments = getattr(function, "arguments", None)
    if arguments:
        partial.arguments += arguments


def to_openai_messages(messages: Sequence[Message], model: str = "") -> list[dict[str, Any]]:
    """Our messages in the chat completions format.

    Tool calls carry their arguments as a JSON string; a failed tool result is
    a ``tool`` message whose text starts with ``Error:`` (the API has no flag).
    """
    converted: list[dict[str, Any]] = []
    for number, message in enumerate(messages, 1):
        role = message.get("role") if isinstance(message, dict) else None
        if role in ("system", "user"):
            converted.append({"role": role, "content": message.get("content") or ""})
        elif role == "assistant":
            out: dict[str, Any] = {"role": "assistant", "content": message.get("content") or None}
            tool_calls = message.get("tool_calls") or []
            if tool_calls:
                out["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {
                            "name": c["name"],
                            "arguments": json.dumps(c.get("arguments") or {}, ensure_ascii=False),
                        },
                    }
                    for c in tool_calls
                ]
            elif out["content"] is None:
                out["content"] = ""
            converted.append(out)
        elif role == "tool":
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content, default=str)
            if message.get("is_error") and not text.lower().startswith("error"):
                text = f"Error: {text}"
            converted.append(
                {"role": "tool", "tool_call_id": message["tool_call_id"], "content": text}
            )
        else:
            raise ModelError(PROVIDER, f"{model}: message {number} has an unknown role {role!r}")
    return converted


def to_openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Tools as chat completions function tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description") or "",
                "parameters": t.get("parameters") or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]


def _reasoning(delta: object) -> str:
    """The reasoning fragment a compatible server put beside the content, if any."""
    for key in ("reasoning_content", "reasoning"):
        value = getattr(delta, key, None)
        if isinstance(value, str) and value:
            return value
    return ""
