"""A fake Anthropic Messages server for a coding agent's CLI, on 127.0.0.1.

Unlike ``ProviderServer``'s queue, the reply to each ``POST /v1/messages`` is
chosen from the request itself: the agent's main conversation gets turn N of
the script, where N counts the assistant messages already in it, so side
requests the CLI makes (titles, summaries, quota checks) cannot take a turn
meant for the conversation. Each turn is a list of ``Text``/``Use``/``Think``
items streamed with ``provider_server``'s Anthropic SSE builders. Anything else
(``HEAD /``, side requests, other paths) gets a short answer.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .provider_server import (
    anthropic_block_stop,
    anthropic_end,
    anthropic_json_delta,
    anthropic_start,
    anthropic_text_block,
    anthropic_tool_start,
    sse,
)

__all__ = ["AgentServer", "Text", "Think", "Use"]


@dataclass(frozen=True)
class Text:
    """Streamed text, one ``text_delta`` per fragment."""

    fragments: tuple[str, ...]

    def __init__(self, *fragments: str) -> None:
        object.__setattr__(self, "fragments", fragments)


@dataclass(frozen=True)
class Think:
    """A thinking block, one ``thinking_delta`` per fragment."""

    fragments: tuple[str, ...]

    def __init__(self, *fragments: str) -> None:
        object.__setattr__(self, "fragments", fragments)


@dataclass(frozen=True)
class Use:
    """A ``tool_use`` block; ``input`` is sent as JSON in two pieces (or raw, if a str)."""

    id: str
    name: str
    input: dict[str, Any] | str = field(default_factory=dict)


Turn = Sequence[Text | Think | Use]


def _start(message_id: str) -> bytes:
    """``message_start`` with an id of its own: the CLI merges replies that share one."""
    frame = anthropic_start()
    return frame.replace(b'"id": "msg_test"', f'"id": "{message_id}"'.encode(), 1)


def frames(turn: Turn, message_id: str = "msg_test") -> list[bytes]:
    """The SSE frames of one assistant message."""
    out = [_start(message_id)]
    stop = "end_turn"
    for index, item in enumerate(turn):
        if isinstance(item, Text):
            out += anthropic_text_block(index, *item.fragments)
        elif isinstance(item, Think):
            out.append(
                sse(
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    },
                    "content_block_start",
                )
            )
            for fragment in item.fragments:
                delta = {"type": "thinking_delta", "thinking": fragment}
                out.append(
                    sse(
                        {"type": "content_block_delta", "index": index, "delta": delta},
                        "content_block_delta",
                    )
                )
            signature = {"type": "signature_delta", "signature": "c2lnbmVk"}
            out.append(
                sse(
                    {"type": "content_block_delta", "index": index, "delta": signature},
                    "content_block_delta",
                )
            )
            out.append(anthropic_block_stop(index))
        else:
            stop = "tool_use"
            raw = item.input if isinstance(item.input, str) else json.dumps(item.input)
            half = len(raw) // 2
            out.append(anthropic_tool_start(index, item.id, item.name))
            out += [anthropic_json_delta(index, part) for part in (raw[:half], raw[half:]) if part]
            out.append(anthropic_block_stop(index))
    return out + anthropic_end(stop)


class AgentServer:
    """Serves ``script`` (one turn per assistant reply) to the agent's main conversation.

    ``requests`` keeps the JSON body of every main-conversation request, in order.
    A conversation past the end of the script gets "Done.".
    """

    def __init__(self, script: Sequence[Turn] = ()) -> None:
        self.script: list[Turn] = list(script)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                owner._json(self, {})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                    owner._json(self, {"input_tokens": 10})
                    return
                if not isinstance(body, dict) or not owner._is_main(body):
                    owner._side(self, body if isinstance(body, dict) else {})
                    return
                with owner.lock:
                    owner.requests.append(body)
                done = sum(1 for m in body.get("messages", ()) if m.get("role") == "assistant")
                turn = owner.script[done] if done < len(owner.script) else [Text("Done.")]
                owner._stream(self, frames(turn, f"msg_{len(owner.requests)}"))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> AgentServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)

    def tool_results(self) -> dict[str, tuple[str, bool]]:
        """Every ``tool_result`` the agent sent back, by tool use id: (text, is_error)."""
        found: dict[str, tuple[str, bool]] = {}
        for body in self.requests:
            for message in body.get("messages", ()):
                content = message.get("content")
                for block in content if isinstance(content, list) else ():
                    if block.get("type") != "tool_result":
                        continue
                    inner = block.get("content")
                    if isinstance(inner, list):
                        inner = "".join(p.get("text", "") for p in inner if isinstance(p, dict))
                    found[block["tool_use_id"]] = (str(inner or ""), bool(block.get("is_error")))
        return found

    @staticmethod
    def _is_main(body: dict[str, Any]) -> bool:
        """The agent's own conversation: streamed, with tools."""
        return bool(body.get("stream")) and bool(body.get("tools"))

    def _side(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if body.get("stream"):
            self._stream(handler, frames([Text("ok")]))
            return
        self._json(
            handler,
            {
                "id": "msg_side",
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "test-model"),
                "content": [{"type": "text", "text": "ok"}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )

    @staticmethod
    def _json(handler: BaseHTTPRequestHandler, value: Any) -> None:
        data = json.dumps(value).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    @staticmethod
    def _stream(handler: BaseHTTPRequestHandler, out: list[bytes]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.send_header("Cache-Control", "no-cache")
        handler.end_headers()
        for frame in out:
            handler.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
