"""A local HTTP server that plays scripted provider answers (server-sent events).

Each POST takes the next scripted ``Reply`` and records the request (path,
headers, JSON body). A reply is an HTTP status with a body, or a stream of
SSE frames sent with chunked encoding, which may stop early: ``drop_after``
closes the socket mid-body, ``stall_after`` stops sending until the server
shuts down, ``gate_after`` holds the rest until the test sets ``gate``.
Builders for the OpenAI and Anthropic wire formats are below.
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mead_notebook.model import ToolSpec

STALL_LIMIT = 10.0
"""The longest a stalled reply keeps its connection open (seconds)."""


@dataclass
class Reply:
    """One scripted answer."""

    status: int = 200
    frames: list[bytes] = field(default_factory=list)
    body: Any = None
    drop_after: int | None = None
    stall_after: int | None = None
    gate_after: int | None = None
    gate: threading.Event = field(default_factory=threading.Event)
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Recorded:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: Any


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a dropped or stalled reply ends with a broken socket, on purpose


class ProviderServer:
    """A scripted SSE server on 127.0.0.1, on a free port, in a thread."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.requests.append(Recorded(self.path, headers, body))
                reply = owner.replies.popleft() if owner.replies else None
                if reply is None:
                    reply = Reply(500, body={"error": {"message": "no scripted reply left"}})
                owner._answer(self, reply)

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> ProviderServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)

    def add(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def _answer(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.status != 200:
            data = json.dumps(reply.body).encode()
            handler.send_response(reply.status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            for key, value in reply.headers.items():
                handler.send_header(key, value)
            handler.end_headers()
            handler.wfile.write(data)
            handler.wfile.flush()
            return
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.send_header("Cache-Control", "no-cache")
        for key, value in reply.headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        for number, frame in enumerate(reply.frames):
            if reply.drop_after is not None and number >= reply.drop_after:
                handler.wfile.flush()
                handler.connection.shutdown(socket.SHUT_RDWR)
                handler.close_connection = True
                return
            if reply.stall_after is not None and number >= reply.stall_after:
                handler.wfile.flush()
                self.stop.wait(STALL_LIMIT)
                handler.close_connection = True
                return
            if number == reply.gate_after:
                reply.gate.wait(STALL_LIMIT)
            handler.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
            handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event; ``data`` is JSON-encoded unless it is already a string."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


# -- OpenAI chat completions ---------------------------------------------------------


def openai_chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    """One ``chat.completion.chunk`` event."""
    return sse(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": "test-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def openai_text(*fragments: str, finish: str = "stop") -> list[bytes]:
    """A streamed text answer, one chunk per fragment, then ``[DONE]``."""
    frames = [openai_chunk({"role": "assistant", "content": ""})]
    frames += [openai_chunk({"content": f}) for f in fragments]
    frames += [openai_chunk({}, finish), sse("[DONE]")]
    return frames


def openai_tool_fragment(
    index: int, *, id: str | None = None, name: str | None = None, arguments: str = ""
) -> bytes:
    """One chunk carrying a piece of the tool call at ``index``."""
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if id is not None:
        call["id"] = id
        call["type"] = "function"
    if name is not None:
        call["function"]["name"] = name
    return openai_chunk({"tool_calls": [call]})


# -- Anthropic messages ----------------------------------------------------------------


def anthropic_start() -> bytes:
    return sse(
        {
            "type": "message_start",
            "message": {
                "id": "msg_test",
                "type": "message",
                "role": "assistant",
                "model": "test-model",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        "message_start",
    )


def anthropic_text_block(index: int, *fragments: str) -> list[bytes]:
    """A text content block streamed as ``text_delta`` events."""
    frames = [
        sse(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            },
            "content_block_start",
        )
    ]
    frames += [
        sse(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "text_delta", "text": f},
            },
            "content_block_delta",
        )
        for f in fragments
    ]
    frames.append(anthropic_block_stop(index))
    return frames


def anthropic_thinking_block(index: int, *fragments: str) -> list[bytes]:
    """A thinking content block streamed as ``thinking_delta`` events, then its signature."""
    start = {"type": "content_block_start", "index": index}
    start["content_block"] = {"type": "thinking", "thinking": "", "signature": ""}
    frames = [sse(start, "content_block_start")]
    for f in fragments:
        delta = {"type": "content_block_delta", "index": index}
        delta["delta"] = {"type": "thinking_delta", "thinking": f}
        frames.append(sse(delta, "content_block_delta"))
    signed = {"type": "content_block_delta", "index": index}
    signed["delta"] = {"type": "signature_delta", "signature": "c2ln"}
    frames.append(sse(signed, "content_block_delta"))
    frames.append(anthropic_block_stop(index))
    return frames


def anthropic_tool_start(index: int, id: str, name: str) -> bytes:
    return sse(
        {
            "type": "content_block_start",
            "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}},
        },
        "content_block_start",
    )


def anthropic_json_delta(index: int, partial: str) -> bytes:
    return sse(
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "input_json_delta", "partial_json": partial},
        },
        "content_block_delta",
    )


def anthropic_block_stop(index: int) -> bytes:
    return sse({"type": "content_block_stop", "index": index}, "content_block_stop")


def anthropic_end(stop_reason: str = "end_turn") -> list[bytes]:
    return [
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
            "message_delta",
        ),
        sse({"type": "message_stop"}, "message_stop"),
    ]


def anthropic_text(*fragments: str) -> list[bytes]:
    """A whole streamed text answer."""
    return [anthropic_start(), *anthropic_text_block(0, *fragments), *anthropic_end()]


ADD_SPEC = ToolSpec(
    name="add",
    description="Add two integers.",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
"""A tool offered to the fake providers in their tests."""
