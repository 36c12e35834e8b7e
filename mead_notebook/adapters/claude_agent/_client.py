"""A ``ClaudeSDKClient`` made to ask the gate, and its bounded teardown."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, HookMatcher

__all__ = ["TEARDOWN_TIMEOUT", "alive", "gated_client", "teardown"]

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

TEARDOWN_TIMEOUT = 5.0
"""How long an interrupted turn waits for the CLI to stop before it is killed (seconds)."""


def gated_client(
    given: ClaudeAgentOptions,
    can_use_tool: Callable[..., Any],
    pre_tool_use: Callable[..., Any],
    **hooks: Callable[..., Any],
) -> ClaudeSDKClient:
    """A client on ``given`` whose every call asks: ``pre_tool_use`` after your own
    ``PreToolUse`` hooks, then ``can_use_tool``; ``hooks`` adds one hook per event
    (``UserPromptSubmit=...``) after yours. Partial messages stream."""
    merged: dict[Any, list[HookMatcher]] = dict(given.hooks or {})
    for event, hook in {"PreToolUse": pre_tool_use, **hooks}.items():
        merged[event] = [*merged.get(event, ()), HookMatcher(hooks=[hook])]
    return ClaudeSDKClient(
        dataclasses.replace(
            given, can_use_tool=can_use_tool, include_partial_messages=True, hooks=merged
        )
    )


async def teardown(client: ClaudeSDKClient, timeout: float = TEARDOWN_TIMEOUT) -> None:
    """Disconnect within ``timeout`` seconds; a CLI process still alive then is killed."""
    process = getattr(getattr(client, "_transport", None), "_process", None)
    try:
        await asyncio.wait_for(client.disconnect(), timeout)
    except BaseException:
        log.debug("the Claude CLI did not disconnect in time", exc_info=True)
    if process is not None and getattr(process, "returncode", 0) is None:
        with contextlib.suppress(ProcessLookupError, OSError):
            process.kill()


def alive(client: ClaudeSDKClient) -> bool:
    """Whether the client's CLI process is still running."""
    process = getattr(getattr(client, "_transport", None), "_process", None)
    return process is not None and getattr(process, "returncode", 0) is None
