"""An MCP server for the tests: progress, cancellation, hints, failures, a crash, a hang.

Run over stdio (``python progress_server.py``) or streamable HTTP
(``python progress_server.py --http PORT``). ``slow`` reports progress every
50 ms and writes ``cancelled`` to its ``marker`` file when it is cancelled.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

HANG_LIMIT = 60.0
"""How long ``hang`` sleeps: far longer than any test waits, yet bounded."""

server = MCPServer("progress-test", log_level="WARNING")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def peek(key: str) -> str:
    """Read a value (annotated read-only)."""
    return f"the value of {key}"


@server.tool()
def echo(text: str, times: int = 1) -> str:
    """Repeat a text (no annotations)."""
    return " ".join([text] * times)


@server.tool()
def forecast(city: str) -> dict[str, object]:
    """A structured result."""
    return {"city": city, "temperature": 21, "sky": "clear"}


@server.tool()
def refuse(reason: str) -> str:
    """Always fails with the given reason."""
    raise ToolError(f"refused: {reason}")


@server.tool()
async def slow(steps: int, marker: str, ctx: Context) -> str:
    """Count ``steps`` steps of 50 ms, reporting progress; note a cancellation in ``marker``."""
    try:
        for step in range(steps):
            await ctx.report_progress(step, steps, f"step {step + 1} of {steps}")
            await asyncio.sleep(0.05)
    except asyncio.CancelledError:
        Path(marker).write_text("cancelled")
        raise
    Path(marker).write_text("finished")
    return f"done after {steps} steps"


@server.tool()
def crash() -> str:
    """Kill the server process mid-call."""
    sys.stderr.write("progress-test: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never answer (within any test's patience)."""
    await asyncio.sleep(HANG_LIMIT)
    return "woke up"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP")
    parser.add_argument("--crash-on-start", action="store_true")
    options = parser.parse_args()
    if options.crash_on_start:
        sys.stderr.write("progress-test: cannot start, configuration is broken\n")
        sys.exit(2)
    if options.http:
        server.run("streamable-http", host="127.0.0.1", port=options.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
