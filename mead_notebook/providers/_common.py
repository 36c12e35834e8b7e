"""What the provider models share: the SDK base class, argument parsing, error wording, retries."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, ClassVar, TypeVar

from ..errors import ModelError
from ..model import Message, ReplyItem, ToolSpec

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""HTTP statuses worth a retry besides every 5xx (the SDKs use the same rule)."""

_STATUS_WORDS = {
    400: "the server rejected the request as malformed",
    401: "the API key was refused",
    402: "the account cannot pay for this request",
    403: "access was denied",
    404: "not found (check the model name and the base URL)",
    408: "the server timed out waiting for the request",
    409: "the request conflicted with another one",
    413: "the request is too large",
    422: "the server could not process the request",
    429: "too many requests (rate limited)",
    529: "the service is overloaded",
}


T = TypeVar("T")


class StreamDropped(Exception):
    """The stream broke in a way worth one more try if nothing was shown yet."""


def stream_with_retries(
    stream: Callable[[], Iterator[T]], provider: str, model: str, max_retries: int
) -> Iterator[T]:
    """Yield from ``stream()``, starting it again after a ``StreamDropped`` only while
    nothing was yielded, at most ``max_retries`` times, with exponential backoff."""
    attempt = 0
    while True:
        produced = False
        try:
            for item in stream():
                produced = True
                yield item
            return
        except StreamDropped as exc:
            if produced or attempt >= max_retries:
                tried = f" (after {attempt} retries)" if attempt else ""
                raise ModelError(provider, f"{model}: {exc}{tried}") from exc.__cause__
            attempt += 1
            time.sleep(min(0.5 * 2 ** (attempt - 1), 8.0))


class SdkModel:
    """A model behind one of the official SDKs: what does not depend on the wire format.

    Both SDKs raise ``APIStatusError``, ``APITimeoutError`` and ``APIConnectionError``;
    a subclass names its SDK module in ``sdk`` and writes ``_request`` and ``_stream``.
    """

    streaming = True
    provider: ClassVar[str]
    sdk: ClassVar[ModuleType]
    model: str
    base_url: str
    timeout: float
    max_retries: int

    def reply(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Iterator[ReplyItem]:
        """Stream the next reply: text fragments, then the tool calls."""
        request = self._request(messages, tools)
        return stream_with_retries(
            lambda: self._stream(request), self.provider, self.model, self.max_retries
        )

    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        raise NotImplementedError

    def _stream(self, request: dict[str, Any]) -> Iterator[ReplyItem]:
        raise NotImplementedError

    def _open(self, create: Callable[..., T], request: dict[str, Any]) -> T:
        """Send ``request``; the SDK's errors (after its own retries) become ``ModelError``."""
        sdk = self.sdk
        try:
            return create(**request)
        except sdk.APIStatusError as exc:
            raise http_error(
                self.provider,
                self.model,
                exc.status_code,
                exc.body,
                exc.message,
                self.max_retries,
            ) from exc
        except sdk.APITimeoutError as exc:
            raise self._error(
                f"{self.base_url} did not answer within {self.timeout:g} s{self._retried()}"
            ) from exc
        except sdk.APIConnectionError as exc:
            raise self._error(
                f"could not connect to {self.base_url}{self._retried()}: {cause_text(exc)}"
            ) from exc
        except Exception as exc:
            raise self._error(f"the request failed: {exc}") from exc

    def _error(self, what: str) -> ModelError:
        return ModelError(self.provider, f"{self.model}: {what}")

    def _reported(self, detail: str) -> ModelError:
        return self._error(f"the server reported an error mid-answer: {detail}")

    def _malformed(self, exc: ValueError) -> ModelError:
        return self._error(f"the server sent a malformed stream event (not valid JSON): {exc}")

    def _stalled(self) -> StreamDropped:
        return StreamDropped(
            f"the server sent nothing for {self.timeout:g} s mid-answer (timed out)"
        )

    def _retried(self) -> str:
        return f" (tried {self.max_retries + 1} times)" if self.max_retries else ""


def dropped(exc: BaseException) -> StreamDropped:
    """The stream's connection broke mid-answer."""
    return StreamDropped(f"the connection dropped mid-answer: {cause_text(exc)}")


def check_options(model: object, timeout: float, max_retries: int) -> None:
    """Refuse the options every provider model shares when they cannot work."""
    if not isinstance(model, str) or not model.strip():
        raise ValueError("model must be a non-empty model name")
    if timeout <= 0:
        raise ValueError("timeout must be positive (seconds)")
    if max_retries < 0:
        raise ValueError("max_retries must be 0 or more")


def missing_extra(cls: str, extra: str) -> ImportError:
    """The error for a class whose optional dependency is not installed."""
    return ImportError(f"{cls} needs the {extra} extra: pip install 'mead-notebook[{extra}]'")


def retryable(status: int) -> bool:
    """Whether an HTTP status is transient: 408, 409, 429 and every 5xx."""
    return status in RETRYABLE_STATUS or status >= 500


def status_words(status: int) -> str:
    """A plain description of an HTTP error status."""
    if status in _STATUS_WORDS:
        return _STATUS_WORDS[status]
    if status >= 500:
        return "the server failed"
    return "the request failed"


def error_detail(body: object, fallback: str) -> str:
    """The human message inside a provider's JSON error body, else ``fallback``."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            message = inner.get("message")
            if isinstance(message, str) and message.strip():
                return message.strip()
        elif isinstance(inner, str) and inner.strip():
            return inner.strip()
        message = body.get("message")
        if isinstance(message, str) and message.strip():
            return message.strip()
    if isinstance(body, str) and body.strip():
        return body.strip()[:300]
    return fallback


def http_error(
    provider: str, model: str, status: int, body: object, fallback: str, retries: int
) -> ModelError:
    """A ``ModelError`` for an HTTP error status, saying whether it was retried."""
    detail = error_detail(body, fallback)
    retried = f" (still failing after {retries} retries)" if retryable(status) and retries else ""
    return ModelError(
        provider, f"{model}: HTTP {status}, {status_words(status)}{retried}: {detail}"
    )


def parse_arguments(
    provider: str, model: str, name: str, raw: str, cut_off: bool
) -> dict[str, Any]:
    """The JSON object of a tool call's streamed arguments, or a ``ModelError``."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        why = " (the answer was cut off at the token limit)" if cut_off else ""
        raise ModelError(
            provider,
            f"{model}: the arguments of the call to {name!r} are not valid JSON{why}: "
            f"{exc.msg} at character {exc.pos} of {_clip(raw)}",
        ) from None
    if not isinstance(value, dict):
        raise ModelError(
            provider,
            f"{model}: the arguments of the call to {name!r} are not a JSON object: {_clip(raw)}",
        )
    return value


def cause_text(exc: BaseException) -> str:
    """The deepest useful message of an exception chain, for connection errors."""
    seen: set[int] = set()
    current: BaseException | None = exc
    text = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        message = str(current).strip()
        if message:
            text = f"{type(current).__name__}: {message}"
        current = current.__cause__ or current.__context__
    return text or type(exc).__name__


def _clip(text: str, limit: int = 120) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")
