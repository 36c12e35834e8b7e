"""An offline Anthropic Messages server for Claude Code, with scripted replies, on 127.0.0.1.

::

    from mead_notebook import ToolCall
    from mead_notebook.adapters import claude_agent
    from mead_notebook.adapters.claude_agent import scripted

    replies = [["Writing it. ", ToolCall("Write", {"file_path": "/tmp/a.txt", "content": "hi"})],
               ["Done."]]
    with scripted.ScriptedServer(replies) as server:
        result = claude_agent.run(server.options(cwd="repo/"), "Write a.txt", interaction=...)

The CLI the SDK bundles talks to it as to Anthropic's API (streamed server-sent
events). Each reply is one assistant message: text fragments (``str`` or
``Text``) stream one delta each, ``Think`` is a thinking block, ``ToolCall`` or
``Use`` a ``tool_use`` block. The reply to a request is chosen by the request:
the agent's conversation gets reply N, where N counts the assistant messages
already in it, so the side requests the CLI makes (titles, summaries) cannot
take a reply meant for the conversation; they get a short answer. A
conversation past the end of the script gets "Done.". A reply may also be a
function of the tool results the agent sent back so far (``{tool_use_id: (text,
is_error)}``), so that it says what happened to the calls before it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions

from mead_notebook.model import ToolCall

__all__ = ["MODEL", "Reply", "Results", "ScriptedServer", "Text", "Think", "Use", "frames"]

MODEL = "claude-sonnet-4-5"
"""The model name ``options()`` asks for; the server answers whatever is asked."""
JOIN_TIMEOUT = 5.0
"""How long closing the server waits for its thread (seconds)."""


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
    """A ``tool_use`` block; ``input`` is sent as JSON in two pieces (or as is, if a str)."""

    id: str
    name: str
    input: dict[str, Any] | str = field(default_factory=dict)


Item = str | Text | Think | Use | ToolCall
"""One piece of a scripted reply."""
Block = Text | Think | Use
Results = dict[str, tuple[str, bool]]
"""The tool results the agent sent back, by tool use id: (text, is_error)."""
Reply = Sequence[Item] | Callable[[Results], Sequence[Item]]
"""A scripted reply, or a function of the tool results so far that gives it."""


def blocks(reply: Sequence[Item], number: int = 1) -> list[Block]:
    """A reply's content blocks: adjacent ``str`` fragments join one ``Text``."""
    out: list[Block] = []
    for position, item in enumerate(reply):
        if isinstance(item, str):
            if out and isinstance(out[-1], Text):
                out[-1] = Text(*out[-1].fragments, item)
            else:
                out.append(Text(item))
        elif isinstance(item, ToolCall):
            out.append(Use(item.id or f"toolu_{number}_{position}", item.name, item.arguments))
        elif isinstance(item, Text | Think | Use):
            out.append(item)
        else:
            raise TypeError(
                f"a scripted reply holds str, Text, Think, Use and ToolCall items, not {item!r}"
            )
    return out


def sse(event: str, data: dict[str, Any]) -> bytes:
    """One server-sent event of the Messages stream."""
    return f"event: {event}\ndata: {json.dumps({'type': event, **data})}\n\n".encode()


def _delta(index: int, delta: dict[str, Any]) -> bytes:
    return sse("content_block_delta", {"index": index, "delta": delta})


def _block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[bytes]:
    return [
        sse("content_block_start", {"index": index, "content_block": start}),
        *(_delta(index, d) for d in deltas),
        sse("content_block_stop", {"index": index}),
    ]


def frames(reply: Sequence[Item], message_id: str = "msg_scripted") -> list[bytes]:
    """The server-sent events of one streamed assistant message.

    Each message needs an id of its own: the CLI merges replies that share one.
    """
    message: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    out = [sse("message_start", {"message": message})]
    stop = "end_turn"
    for index, item in enumerate(blocks(reply)):
        if isinstance(item, Text):
            deltas = [{"type": "text_delta", "text": f} for f in item.fragments]
            out += _block(index, {"type": "text", "text": ""}, deltas)
        elif isinstance(item, Think):
            deltas = [{"type": "thinking_delta", "thinking": f} for f in item.fragments]
            deltas.append({"type": "signature_delta", "signature": "c2lnbmVk"})
            out += _block(index, {"type": "thinking", "thinking": "", "signature": ""}, deltas)
        else:
            stop = "tool_use"
            raw = item.input if isinstance(item.input, str) else json.dumps(item.input)
            half = len(raw) // 2
            pieces = [p for p in (raw[:half], raw[half:]) if p]
            start = {"type": "tool_use", "id": item.id, "name": item.name, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
            out += _block(index, start, deltas)
    out.append(
        sse(
            "message_delta",
            {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}},
        )
    )
    out.append(sse("message_stop", {}))
    return out


class ScriptedServer:
    """Plays ``script`` (one reply per assistant message) to Claude Code, on 127.0.0.1.

    A context manager: entering starts serving on a free port (``url``), leaving
    stops it and removes the home folder ``options()`` made. ``requests`` keeps
    the JSON body of every request of the agent's conversation, in order.
    """

    def __init__(self, script: Sequence[Reply] = ()) -> None:
        self.script: list[list[Block] | Callable[[Results], Sequence[Item]]] = [
            r if callable(r) else blocks(r, n) for n, r in enumerate(script, 1)
        ]
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self._home: Path | None = None
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving and remove the home folder ``options()`` made."""
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.thread.join(JOIN_TIMEOUT)
        self.httpd.server_close()
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)
            self._home = None

    def env(self) -> dict[str, str]:
        """The environment that points the CLI here, with a fresh home and no telemetry."""
        if self._home is None:
            self._home = Path(tempfile.mkdtemp(prefix="mead-claude-home-"))
        return {
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": "scripted",
            "HOME": str(self._home),
            "CLAUDE_CONFIG_DIR": str(self._home / ".claude"),
            "ENABLE_TOOL_SEARCH": "false",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }

    def options(self, **options: Any) -> ClaudeAgentOptions:
        """``ClaudeAgentOptions(**options)`` pointed at this server.

        No settings files are read (``setting_sources=[]``) and the model is
        ``MODEL`` unless given; ``env`` entries given are added to ``env()``.
        """
        options.setdefault("setting_sources", [])
        options.setdefault("model", MODEL)
        options["env"] = {**self.env(), **(options.get("env") or {})}
        return ClaudeAgentOptions(**options)

    def tool_results(self) -> Results:
        """Every ``tool_result`` the agent sent back, by tool use id: (text, is_error)."""
        found: Results = {}
        with self.lock:
            bodies = list(self.requests)
        for body in bodies:
            found.update(_results_in(body))
        return found

    def reply_to(self, body: dict[str, Any]) -> list[bytes]:
        """The streamed reply to a request of the agent's conversation (and note the request)."""
        with self.lock:
            self.requests.append(body)
            number = len(self.requests)
        done = sum(1 for m in body.get("messages", ()) if m.get("role") == "assistant")
        entry = self.script[done] if done < len(self.script) else [Text("Done.")]
        reply = blocks(entry(_results_in(body)), done + 1) if callable(entry) else entry
        return frames(reply, f"msg_{number}")


def _results_in(body: dict[str, Any]) -> Results:
    """The ``tool_result`` blocks of one request's messages, by tool use id."""
    found: Results = {}
    for message in body.get("messages", ()):
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            if isinstance(inner, list):
                inner = "".join(p.get("text", "") for p in inner if isinstance(p, dict))
            found[str(block.get("tool_use_id"))] = (str(inner or ""), bool(block.get("is_error")))
    return found


def _is_conversation(body: dict[str, Any]) -> bool:
    """The agent's own conversation: streamed, with tools."""
    return bool(body.get("stream")) and bool(body.get("tools"))


def _side_reply(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_side",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", MODEL),
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            self._json({})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            if not isinstance(body, dict):
                body = {}
            if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
                self._json({"input_tokens": 10})
            elif _is_conversation(body):
                self._stream(server.reply_to(body))
            elif body.get("stream"):
                self._stream(frames(["ok"], "msg_side"))
            else:
                self._json(_side_reply(body))

        def _json(self, value: Any) -> None:
            data = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, out: list[bytes]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            for frame in out:
                self.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler
