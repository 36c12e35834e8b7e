"""Fake model servers for the real coding agents, on 127.0.0.1.

Each speaks one provider's streaming wire format: Anthropic Messages (Claude
Code, and OpenCode through its ``anthropic`` provider), OpenAI Responses (Codex)
and Gemini's ``streamGenerateContent`` (Gemini CLI). A test scripts the model's
side of the turn as a list of steps (write a file, run a command, say something).
The agent's request that already carries ``k`` tool results is answered with step
``k``, so a retried request gets the same answer and a step after a refused call
still comes. Side requests (a connectivity probe, a title, a routing or
next-speaker check, token counts) get a short generic answer and are not counted
as turns.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from .provider_server import (
    ProviderServer,
    Recorded,
    Reply,
    anthropic_block_stop,
    anthropic_end,
    anthropic_json_delta,
    anthropic_start,
    anthropic_text,
    anthropic_tool_start,
    openai_chunk,
    openai_text,
    openai_tool_fragment,
    sse,
)


@dataclass(frozen=True)
class WriteFile:
    """The model asks to create ``path`` (relative to the session's cwd) with ``content``."""

    path: str
    content: str


@dataclass(frozen=True)
class RunCommand:
    """The model asks to run ``command`` in a shell.

    Codex's model asks to run it outside Codex's read-only sandbox (as a model does
    for a command that writes) unless ``sandboxed``: a command that only reads.
    """

    command: str
    sandboxed: bool = False


@dataclass(frozen=True)
class UseTool:
    """The model calls the tool the agent offers it as ``name`` (an MCP tool) with ``arguments``."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Say:
    """The model answers with text and ends the turn."""

    text: str


Step = WriteFile | RunCommand | UseTool | Say


class AgentModelServer(ProviderServer):
    """A scripted model for one agent; ``turns`` holds the agent's main-loop requests."""

    def __init__(self, *steps: Step, cwd: str = "", think: float = 0.0) -> None:
        super().__init__()
        self.steps: list[Step] = list(steps)
        self.cwd = cwd
        self.think = think
        """Seconds the model takes before a step that follows a tool result (0: none), as a
        real model does."""
        self.turns: list[Recorded] = []
        self.side: list[Recorded] = []
        self.seen = threading.Condition()

    # -- what each provider defines -------------------------------------------------

    def is_turn(self, path: str, body: Any) -> bool:
        raise NotImplementedError

    def tool_outputs(self, body: Any) -> list[str]:
        """The results of earlier tool calls that the request carries, as text."""
        raise NotImplementedError

    def answer(self, step: Step, number: int) -> Reply:
        raise NotImplementedError

    def side_answer(self, path: str, body: Any) -> Reply:
        return Reply(200, body={})

    def write_call(self, step: WriteFile) -> tuple[str, dict[str, Any]]:
        """The agent's tool and arguments for writing a file (where :meth:`call_for` is used)."""
        raise NotImplementedError

    def command_call(self, step: RunCommand) -> tuple[str, dict[str, Any]]:
        """The agent's tool and arguments for running a command."""
        raise NotImplementedError

    # -- shared ---------------------------------------------------------------------

    def call_for(self, step: WriteFile | RunCommand | UseTool) -> tuple[str, dict[str, Any]]:
        """The tool and arguments of the call that ``step`` stands for."""
        if isinstance(step, WriteFile):
            return self.write_call(step)
        if isinstance(step, UseTool):
            return step.name, dict(step.arguments)
        return self.command_call(step)

    def absolute(self, path: str) -> str:
        return f"{self.cwd.rstrip('/')}/{path}" if self.cwd else path

    def step_for(self, body: Any) -> tuple[Step, int]:
        number = len(self.tool_outputs(body))
        if number < len(self.steps):
            return self.steps[number], number
        return Say("Done."), number

    def wait_turns(self, count: int, timeout: float = 30.0) -> bool:
        """Wait until the agent has made ``count`` main-loop requests."""
        with self.seen:
            return self.seen.wait_for(lambda: len(self.turns) >= count, timeout)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _empty(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(b"{}")

            def do_HEAD(self) -> None:
                self._empty()

            def do_GET(self) -> None:
                owner.side.append(Recorded(self.path, dict(self.headers), None))
                self._empty()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                record = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                if not owner.is_turn(self.path, body):
                    owner.side.append(record)
                    owner._answer(self, owner.side_answer(self.path, body))
                    return
                step, number = owner.step_for(body)
                with owner.seen:
                    owner.turns.append(record)
                    owner.seen.notify_all()
                if number > 0 and owner.think > 0:
                    owner.stop.wait(owner.think)
                owner._answer(self, owner.answer(step, number))

        return Handler


# -- Anthropic Messages (Claude Code) ------------------------------------------------


class AnthropicAgentServer(AgentModelServer):
    """``POST /v1/messages``: tools ``Write`` and ``Bash``."""

    def is_turn(self, path: str, body: Any) -> bool:
        return (
            path.startswith("/v1/messages")
            and "count_tokens" not in path
            and isinstance(body, dict)
            and bool(body.get("tools"))
            and bool(body.get("stream"))
        )

    def tool_outputs(self, body: Any) -> list[str]:
        outputs = []
        for message in body.get("messages", []):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    outputs.append(_text_of(block.get("content")))
        return outputs

    def answer(self, step: Step, number: int) -> Reply:
        if isinstance(step, Say):
            return Reply(frames=anthropic_text(step.text))
        name, arguments = self.call_for(step)
        text = json.dumps(arguments)
        half = len(text) // 2
        frames = [
            anthropic_start(),
            anthropic_tool_start(0, f"toolu_{number:04d}", name),
            anthropic_json_delta(0, text[:half]),
            anthropic_json_delta(0, text[half:]),
            anthropic_block_stop(0),
            *anthropic_end("tool_use"),
        ]
        return Reply(frames=frames)

    def write_call(self, step: WriteFile) -> tuple[str, dict[str, Any]]:
        """Claude Code's ``Write``: the tool's name and input."""
        return "Write", {"file_path": self.absolute(step.path), "content": step.content}

    def command_call(self, step: RunCommand) -> tuple[str, dict[str, Any]]:
        """Claude Code's ``Bash``: the tool's name and input."""
        return "Bash", {"command": step.command, "description": "Run the command"}

    def side_answer(self, path: str, body: Any) -> Reply:
        if "count_tokens" in path:
            return Reply(200, body={"input_tokens": 10})
        if path.startswith("/v1/messages"):
            if isinstance(body, dict) and body.get("stream"):
                return Reply(frames=anthropic_text("A title"))
            return Reply(200, body=_anthropic_message("A title"))
        return Reply(200, body={})


class OpenCodeAgentServer(AnthropicAgentServer):
    """Anthropic Messages as OpenCode (its ``anthropic`` provider) speaks them: tools
    ``write`` and ``bash``; its session titles come as requests without tools."""

    def write_call(self, step: WriteFile) -> tuple[str, dict[str, Any]]:
        return "write", {"filePath": self.absolute(step.path), "content": step.content}

    def command_call(self, step: RunCommand) -> tuple[str, dict[str, Any]]:
        return "bash", {"command": step.command}


def _anthropic_message(text: str) -> dict[str, Any]:
    return {
        "id": "msg_side",
        "type": "message",
        "role": "assistant",
        "model": "test-model",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 2},
    }


# -- OpenAI Responses (Codex) --------------------------------------------------------


class ResponsesAgentServer(AgentModelServer):
    """``POST /v1/responses``: ``apply_patch`` (a custom tool call) and ``exec_command``."""

    def is_turn(self, path: str, body: Any) -> bool:
        return path.startswith("/v1/responses") and isinstance(body, dict)

    def tool_outputs(self, body: Any) -> list[str]:
        return [
            _text_of(item.get("output"))
            for item in body.get("input", [])
            if isinstance(item, dict)
            and item.get("type") in ("function_call_output", "custom_tool_call_output")
        ]

    def answer(self, step: Step, number: int) -> Reply:
        response = f"resp_{number:04d}"
        item: dict[str, Any]
        if isinstance(step, Say):
            item = {
                "type": "message",
                "role": "assistant",
                "id": f"msg_{number:04d}",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
        elif isinstance(step, WriteFile):
            lines = "".join(f"+{line}\n" for line in step.content.splitlines())
            item = {
                "type": "custom_tool_call",
                "id": f"ctc_{number:04d}",
                "call_id": f"call_{number:04d}",
                "name": "apply_patch",
                "input": f"*** Begin Patch\n*** Add File: {step.path}\n{lines}*** End Patch\n",
            }
        elif isinstance(step, UseTool):
            # A namespaced tool (Codex offers MCP tools in a namespace ``mcp__<server>``).
            namespace, _, name = step.name.rpartition("__")
            item = {
                "type": "function_call",
                "id": f"fc_{number:04d}",
                "call_id": f"call_{number:04d}",
                "name": name,
                "arguments": json.dumps(step.arguments),
            }
            if namespace:
                item["namespace"] = namespace
        else:
            item = {
                "type": "function_call",
                "id": f"fc_{number:04d}",
                "call_id": f"call_{number:04d}",
                "name": "exec_command",
                "arguments": json.dumps(_exec_arguments(step)),
            }
        frames = [
            sse({"type": "response.created", "response": {"id": response}}, "response.created"),
        ]
        if isinstance(step, Say):
            frames.append(
                sse(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "delta": step.text,
                    },
                    "response.output_text.delta",
                )
            )
        frames += [
            sse(
                {"type": "response.output_item.done", "output_index": 0, "item": item},
                "response.output_item.done",
            ),
            sse(
                {
                    "type": "response.completed",
                    "response": {
                        "id": response,
                        "usage": {
                            "input_tokens": 10,
                            "input_tokens_details": None,
                            "output_tokens": 5,
                            "output_tokens_details": None,
                            "total_tokens": 15,
                        },
                    },
                },
                "response.completed",
            ),
        ]
        return Reply(frames=frames)

    def side_answer(self, path: str, body: Any) -> Reply:
        return Reply(200, body={"data": [], "models": []})


# -- Gemini (Gemini CLI) ---------------------------------------------------------------


class GeminiAgentServer(AgentModelServer):
    """``:streamGenerateContent?alt=sse``: ``write_file`` and ``run_shell_command``."""

    def is_turn(self, path: str, body: Any) -> bool:
        return (
            ":streamGenerateContent" in path and isinstance(body, dict) and bool(body.get("tools"))
        )

    def tool_outputs(self, body: Any) -> list[str]:
        outputs = []
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                if isinstance(part, dict) and "functionResponse" in part:
                    outputs.append(json.dumps(part["functionResponse"].get("response")))
        return outputs

    def answer(self, step: Step, number: int) -> Reply:
        part: dict[str, Any]
        if isinstance(step, Say):
            part = {"text": step.text}
        elif isinstance(step, WriteFile):
            part = {
                "functionCall": {
                    "name": "write_file",
                    "args": {"file_path": self.absolute(step.path), "content": step.content},
                }
            }
        elif isinstance(step, UseTool):
            part = {"functionCall": {"name": step.name, "args": dict(step.arguments)}}
        else:
            part = {
                "functionCall": {
                    "name": "run_shell_command",
                    "args": {"command": step.command, "description": "Run the command"},
                }
            }
        return Reply(frames=[sse(_gemini_chunk(part))])

    def side_answer(self, path: str, body: Any) -> Reply:
        if ":countTokens" in path:
            return Reply(200, body={"totalTokens": 10})
        verdict = json.dumps(
            {"reasoning": "The turn is done.", "next_speaker": "user", "model_choice": "flash"}
        )
        if ":streamGenerateContent" in path:
            return Reply(frames=[sse(_gemini_chunk({"text": verdict}))])
        return Reply(200, body=_gemini_chunk({"text": verdict}))


# -- OpenAI chat completions (Qwen Code) ------------------------------------------------


class ChatCompletionsAgentServer(AgentModelServer):
    """``POST /v1/chat/completions``, streamed: ``data:`` chunks whose
    ``choices[].delta.tool_calls`` carry the call's name, then its arguments in pieces.

    The tools are Qwen Code's, ``write_file`` and ``run_shell_command``; another agent's
    server overrides :meth:`write_call` and :meth:`command_call`.
    """

    def is_turn(self, path: str, body: Any) -> bool:
        return (
            path.endswith("/chat/completions")
            and isinstance(body, dict)
            and bool(body.get("tools"))
            and bool(body.get("stream"))
        )

    def tool_outputs(self, body: Any) -> list[str]:
        return [
            _text_of(message.get("content"))
            for message in body.get("messages", [])
            if isinstance(message, dict) and message.get("role") == "tool"
        ]

    def write_call(self, step: WriteFile) -> tuple[str, dict[str, Any]]:
        return "write_file", {"file_path": self.absolute(step.path), "content": step.content}

    def command_call(self, step: RunCommand) -> tuple[str, dict[str, Any]]:
        return "run_shell_command", {"command": step.command, "is_background": False}

    def answer(self, step: Step, number: int) -> Reply:
        if isinstance(step, Say):
            return Reply(frames=[*openai_text(step.text)[:-1], _chat_usage(), sse("[DONE]")])
        name, arguments = self.call_for(step)
        text = json.dumps(arguments)
        half = len(text) // 2
        frames = [
            openai_chunk({"role": "assistant", "content": None}),
            openai_tool_fragment(0, id=f"call_{number:04d}", name=name),
            openai_tool_fragment(0, arguments=text[:half]),
            openai_tool_fragment(0, arguments=text[half:]),
            openai_chunk({}, "tool_calls"),
            _chat_usage(),
            sse("[DONE]"),
        ]
        return Reply(frames=frames)

    def side_answer(self, path: str, body: Any) -> Reply:
        if not path.endswith("/chat/completions"):
            return Reply(200, body={"object": "list", "data": []})
        text = json.dumps({"reasoning": "The turn is done.", "next_speaker": "user"})
        if isinstance(body, dict) and body.get("stream"):
            return Reply(frames=openai_text(text))
        message = {"role": "assistant", "content": text}
        completion = {
            "id": "chatcmpl-side",
            "object": "chat.completion",
            "created": 1700000000,
            "model": "test-model",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        return Reply(200, body=completion)


class CopilotAgentServer(ChatCompletionsAgentServer):
    """Chat completions with GitHub Copilot CLI's tools, ``create`` and ``bash``."""

    def write_call(self, step: WriteFile) -> tuple[str, dict[str, Any]]:
        return "create", {"path": self.absolute(step.path), "file_text": step.content}

    def command_call(self, step: RunCommand) -> tuple[str, dict[str, Any]]:
        return "bash", {"command": step.command, "description": "Run the command", "mode": "sync"}


class ClineAgentServer(ChatCompletionsAgentServer):
    """Chat completions with Cline's tools, ``apply_patch`` and ``run_commands``."""

    def write_call(self, step: WriteFile) -> tuple[str, dict[str, Any]]:
        lines = "".join(f"+{line}\n" for line in step.content.splitlines())
        patch = f"*** Begin Patch\n*** Add File: {step.path}\n{lines}*** End Patch\n"
        return "apply_patch", {"input": patch}

    def command_call(self, step: RunCommand) -> tuple[str, dict[str, Any]]:
        return "run_commands", {"commands": [step.command]}


def _chat_usage() -> bytes:
    """The last chunk of a stream asked with ``stream_options.include_usage``: no choices."""
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return sse(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": "test-model",
            "choices": [],
            "usage": usage,
        }
    )


def _exec_arguments(step: RunCommand) -> dict[str, Any]:
    """Codex's ``exec_command``: escalated out of the sandbox unless the step only reads."""
    if step.sandboxed:
        return {"cmd": step.command}
    why = "The command changes files, which the read-only sandbox does not allow."
    return {"cmd": step.command, "sandbox_permissions": "require_escalated", "justification": why}


def _gemini_chunk(part: dict[str, Any]) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-2.5-flash",
    }


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(v.get("text", "") if isinstance(v, dict) else str(v) for v in value)
    return json.dumps(value)
