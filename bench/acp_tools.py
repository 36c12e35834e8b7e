"""The round trip of a tool call from an ACP agent to the kernel's tools and back, through the gate.

The scripted ACP agent (``mead_notebook.adapters.acp.scripted``) calls a tool of
the package, served by ``acp.session(..., tools=)`` over MCP (streamable HTTP on
127.0.0.1, with the token), ``--calls`` times in one turn, each with other
arguments; it times each ``tools/call`` from the request leaving to the result
arriving (its own clock). Side by side, in one run, alternating per repeat:

- ``ungated``: the same server and transport with the gate taken out (the call
  runs at once): the floor of MCP over HTTP here;
- ``policy``: through the gate, each call a card that ``AllowAll()`` allows;
- ``widget``: through the gate and ``NotebookInteraction``, each card's question
  answered Allow at once by a view played in this process (as ``bench/acp.py``);
- ``widget, reported``: the same with the agent reporting each call first, as
  Codex does (``tool_call`` in progress), so that the call asks on that card.

Each line gives p50 and p95 over every call of every repeat, in milliseconds.

Run: .venv/bin/python bench/acp_tools.py [--calls 50] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

# This file's own folder comes first on sys.path and its name would hide the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import mcp.types as mt  # noqa: E402

from mead_notebook import NotebookInteraction, tool  # noqa: E402
from mead_notebook.adapters import acp  # noqa: E402
from mead_notebook.policies import AllowAll  # noqa: E402


@tool(kind="edit")
def note(text: str) -> str:
    """Keep a note."""
    return f"noted {text}"


def script(calls: int, report: str | None) -> list[list[dict[str, Any]]]:
    steps = [
        {"mcp": {"id": f"m{i}", "tool": "note", "arguments": {"text": f"n{i}"}, "report": report}}
        for i in range(calls)
    ]
    warm = [{"mcp": {"id": "w", "tool": "note", "arguments": {"text": "warm"}}}]
    return [warm, steps]


class View:
    """Plays the widget's view: rendered, then Allow on every question as soon as it opens."""

    def __init__(self, interaction: NotebookInteraction) -> None:
        self.interaction = interaction
        self.answered: set[str] = set()
        self._lock = threading.Lock()
        interaction.observe(self._changed, names=["calls"])
        interaction.deliver({"type": "rendered"})

    def _changed(self, change: dict[str, Any]) -> None:
        for card in (change["new"] or {}).values():
            question = card.get("question")
            if not question or question.get("answer") is not None:
                continue
            with self._lock:
                if question["id"] in self.answered:
                    continue
                self.answered.add(question["id"])
            threading.Thread(target=self._allow, args=(question["id"],), daemon=True).start()

    def _allow(self, question_id: str) -> None:
        self.interaction.deliver(
            {"type": "answer", "question_id": question_id, "decision": "allow"}
        )


def one_turn(variant: str, calls: int, cwd: str) -> list[float]:
    """The round trips (ms) of one turn's calls, as the agent timed them."""
    log = Path(tempfile.mktemp(suffix=".jsonl", dir=cwd))
    report = "codex" if variant == "widget, reported" else None
    spec = acp.scripted_agent(script(calls, report), log=log)
    with acp.session(spec, cwd=cwd, tools=[note]) as session:
        assert session.served is not None
        if variant == "ungated":

            async def direct(name: str, arguments: dict[str, Any]) -> mt.CallToolResult:
                text = note(**arguments)
                return mt.CallToolResult(content=[mt.TextContent(type="text", text=text)])

            session.served.server.on_call = direct
        session.run("warm up", interaction=AllowAll())
        if variant == "policy":
            result = session.run("go", interaction=AllowAll())
        else:
            interaction = NotebookInteraction(display=False, timeout=60, grace=60)
            View(interaction)
            result = session.run("go", interaction=interaction)
    found = [json.loads(line) for line in log.read_text().splitlines()]
    timed = [e for e in found if e["event"] == "mcp" and e["id"] != "w"]
    if len(timed) != calls or any(e["error"] for e in timed):
        raise RuntimeError(f"{variant}: expected {calls} calls that ran: {timed[:3]}")
    gated = [c for c in result.calls if c.status == "completed"]
    if variant != "ungated" and len(gated) != calls:
        raise RuntimeError(f"{variant}: expected {calls} completed cards: {result.calls[:3]}")
    return [float(e["ms"]) for e in timed]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


VARIANTS = ("ungated", "policy", "widget", "widget, reported")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory() as cwd:
        for _ in range(args.repeats):
            for variant in VARIANTS:
                times[variant] += one_turn(variant, args.calls, cwd)
    print(
        f"ACP agent -> kernel tool -> agent, {args.calls} calls x {args.repeats} repeats "
        "(tools/call round trip as the agent times it, ms)"
    )
    print(f"{'':>18} {'p50':>8} {'p95':>8} {'mean':>8}")
    floor = pct(times["ungated"], 0.5)
    for variant in VARIANTS:
        values = times[variant]
        p50, p95 = pct(values, 0.5), pct(values, 0.95)
        extra = "" if variant == "ungated" else f"   (+{p50 - floor:.2f} ms p50 over ungated)"
        print(f"{variant:>18} {p50:8.2f} {p95:8.2f} {statistics.fmean(values):8.2f}{extra}")


if __name__ == "__main__":
    main()
