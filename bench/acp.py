"""The ACP adapter's own cost, side by side with the same agent driven by a bare ACP client.

The scripted ACP agent (``mead_notebook.adapters.acp.scripted``) runs ``--calls``
tool calls that each ask permission, and notes ``time.monotonic()`` just before
each ``session/request_permission`` leaves its process and when each answer
arrives (the same clock: agent and client share the machine).

- "card": from the agent's request leaving its process to the card, with its open
  question, being in the widget's synced state (``NotebookInteraction.calls``);
- "answer": from Allow reaching the kernel (``NotebookInteraction.deliver``, as the
  widget's comm message does) to the agent receiving its allow-once answer;
- "turn": the whole turn's wall time through the widget, vs the same agent and
  script driven by a bare client on the SDK (``acp.connect_to_agent``) that
  answers every request allow-once at once; each times the prompt of the turn
  alone, on an agent already started (a first turn warms it up), and "adapter +
  policy" is the adapter with ``AllowAll`` and no widget. Medians, and the
  fastest run (less exposed to other load on the machine). The target is within
  5% and within 20 ms a call.

``--agent claude`` (or ``codex``, ``gemini``, ``opencode``, ``qwen``, ``copilot``, ``cline``:
the real agents the tests install, ``tests/agents``) times what a person waits for with a
real agent instead: the whole turn, agent start included, through the widget vs the bare
client, each
with a fresh agent and the tests' fake model server scripting ``--calls``
commands that ask (``touch``). The scripted agent's turn is a few milliseconds,
so there the 5% is a ratio of two tiny numbers; a real agent's is not.

Run: .venv/bin/python bench/acp.py [--calls 50] [--repeats 3] [--agent claude]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

# This file's own folder comes first on sys.path and its name would hide the SDK.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import acp as sdk  # noqa: E402
from acp.schema import AllowedOutcome, RequestPermissionResponse  # noqa: E402

from mead_notebook import NotebookInteraction  # noqa: E402
from mead_notebook.adapters import acp  # noqa: E402
from mead_notebook.policies import AllowAll  # noqa: E402


def script(calls: int) -> list[list[dict[str, Any]]]:
    steps: list[dict[str, Any]] = [{"text": "Working. "}]
    for i in range(calls):
        steps.append(
            {
                "call": {
                    "id": f"c{i}",
                    "title": f"echo {i}",
                    "kind": "execute",
                    "input": {"command": f"echo {i}"},
                    "ask": True,
                }
            }
        )
    steps.append({"text": "Done."})
    return [[{"text": "Ready."}], steps]


class View:
    """Plays the widget's view in this process: rendered, then Allow on every open question."""

    def __init__(self, interaction: NotebookInteraction) -> None:
        self.interaction = interaction
        self.shown: dict[str, float] = {}
        self.allowed: dict[str, float] = {}
        self._queue: list[str] = []
        self._wake = threading.Condition()
        self._stop = False
        interaction.observe(self._changed, names=["calls"])
        self._thread = threading.Thread(target=self._answer, daemon=True)
        self._thread.start()
        interaction.deliver({"type": "rendered"})

    def _changed(self, change: dict[str, Any]) -> None:
        now = time.monotonic()
        for tool_call_id, card in (change["new"] or {}).items():
            question = card.get("question")
            if question and question.get("answer") is None and tool_call_id not in self.shown:
                self.shown[tool_call_id] = now
                with self._wake:
                    self._queue.append(question["id"])
                    self._wake.notify()

    def _answer(self) -> None:
        while True:
            with self._wake:
                while not self._queue and not self._stop:
                    self._wake.wait()
                if self._stop:
                    return
                question_id = self._queue.pop(0)
            self.allowed[question_id] = time.monotonic()
            self.interaction.deliver(
                {"type": "answer", "question_id": question_id, "decision": "allow"}
            )

    def close(self) -> None:
        with self._wake:
            self._stop = True
            self._wake.notify()


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def through_widget(calls: int, cwd: str) -> tuple[float, list[float], list[float]]:
    log = Path(tempfile.mktemp(suffix=".jsonl", dir=cwd))
    with acp.session(acp.scripted_agent(script(calls), log=log), cwd=cwd) as session:
        session.run("warm up", interaction=AllowAll())
        interaction = NotebookInteraction(display=False, timeout=60, grace=60)
        view = View(interaction)
        started = time.monotonic()
        result = session.run("go", interaction=interaction)
        wall = time.monotonic() - started
        view.close()
    if [c.status for c in result.calls] != ["completed"] * calls:
        raise RuntimeError(f"expected {calls} completed calls: {result}")
    found = events(log)
    asking = {e["id"]: e["at"] for e in found if e["event"] == "asking"}
    answered = {e["id"]: e["at"] for e in found if e["event"] == "permission"}
    questions = {
        card["tool_call_id"]: card["question"]["id"] for card in interaction.calls.values()
    }
    card = [view.shown[i] - asking[i] for i in asking]
    answer = [answered[i] - view.allowed[questions[i]] for i in answered]
    return wall, card, answer


class Bare:
    """The smallest ACP client: every request answered allow-once, updates dropped."""

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **_: Any
    ) -> Any:
        chosen = next(o.option_id for o in options if o.kind == "allow_once")
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        return None


async def bare_turn(calls: int, cwd: str) -> float:
    spec = acp.scripted_agent(script(calls))
    proc = await asyncio.create_subprocess_exec(
        *spec.command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=dict(os.environ),
        start_new_session=True,
    )
    conn = sdk.connect_to_agent(Bare(), proc.stdin, proc.stdout)  # type: ignore[arg-type]
    await conn.initialize(protocol_version=sdk.PROTOCOL_VERSION)
    opened = await conn.new_session(cwd=cwd, mcp_servers=[])
    await conn.set_session_mode(session_id=opened.session_id, mode_id="default")
    await conn.prompt(session_id=opened.session_id, prompt=[sdk.text_block("warm up")])
    started = time.monotonic()
    await conn.prompt(session_id=opened.session_id, prompt=[sdk.text_block("go")])
    took = time.monotonic() - started
    await conn.close()
    assert proc.stdin is not None
    proc.stdin.close()
    await proc.wait()
    return took


def bare(calls: int, cwd: str) -> float:
    return asyncio.run(bare_turn(calls, cwd))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def with_policy(calls: int, cwd: str) -> float:
    """The adapter alone: the same turn with every call allowed by a policy, no widget."""
    with acp.session(acp.scripted_agent(script(calls)), cwd=cwd) as session:
        session.run("warm up", interaction=AllowAll())
        started = time.monotonic()
        result = session.run("go", interaction=AllowAll())
        took = time.monotonic() - started
    if [c.status for c in result.calls] != ["completed"] * calls:
        raise RuntimeError(f"expected {calls} completed calls: {result}")
    return took


def real_agent(name: str, calls: int, root: Path) -> tuple[Any, Any, Path]:
    """The tests' fake model server for ``name``, the agent's spec and its cwd."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from servers.agent_launch import BIN, EXECUTABLES, GEMINI_MODEL, launch
    from servers.agent_models import (
        AnthropicAgentServer,
        ChatCompletionsAgentServer,
        ClineAgentServer,
        CopilotAgentServer,
        GeminiAgentServer,
        OpenCodeAgentServer,
        ResponsesAgentServer,
        RunCommand,
        Say,
    )

    servers = {
        "claude": AnthropicAgentServer,
        "codex": ResponsesAgentServer,
        "gemini": GeminiAgentServer,
        "opencode": OpenCodeAgentServer,
        "qwen": ChatCompletionsAgentServer,
        "copilot": CopilotAgentServer,
        "cline": ClineAgentServer,
    }
    cwd = root / "work"
    cwd.mkdir(parents=True)
    steps = [RunCommand(f"touch f{i}") for i in range(calls)]
    server = servers[name](*steps, Say("Done."), cwd=str(cwd)).__enter__()
    start = launch(name, server.url, root)
    model = ("-m", GEMINI_MODEL) if name == "gemini" else ()
    spec = acp.agent(name, executable=str(BIN / EXECUTABLES[name]), env=start.env, args=model)
    return server, spec, cwd


async def bare_real_turn(spec: Any, cwd: Path) -> float:
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *spec.command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        cwd=str(cwd),
        env=spec.environment(),
        start_new_session=True,
        limit=50 * 1024 * 1024,
    )
    conn = sdk.connect_to_agent(Bare(), proc.stdin, proc.stdout, use_unstable_protocol=True)  # type: ignore[arg-type]
    await conn.initialize(protocol_version=sdk.PROTOCOL_VERSION)
    opened = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    if spec.mode is not None:
        await conn.set_session_mode(session_id=opened.session_id, mode_id=spec.mode)
    await conn.prompt(session_id=opened.session_id, prompt=[sdk.text_block("go")])
    took = time.monotonic() - started
    await conn.close()
    assert proc.stdin is not None
    proc.stdin.close()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), 5)
    # Whatever of the agent's group is left (helpers that hold its pipes) goes too.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    await proc.wait()
    await asyncio.sleep(0.1)
    return took


def real_turns(name: str, calls: int) -> tuple[float, float]:
    """One turn of the real agent through the widget and one by the bare client (seconds)."""
    took: list[float] = []
    for way in ("widget", "bare"):
        root = Path(tempfile.mkdtemp(prefix=f"mead-bench-{name}-"))
        server, spec, cwd = real_agent(name, calls, root)
        try:
            if way == "bare":
                took.append(asyncio.run(bare_real_turn(spec, cwd)))
            else:
                interaction = NotebookInteraction(display=False, timeout=60, grace=60)
                view = View(interaction)
                started = time.monotonic()
                with acp.session(spec, cwd=cwd) as session:
                    result = session.run("go", interaction=interaction)
                    took.append(time.monotonic() - started)
                view.close()
                done = [c.status for c in result.calls]
                if done != ["completed"] * calls:
                    raise RuntimeError(f"{name}: expected {calls} completed calls: {done}")
            made = sorted(p.name for p in cwd.iterdir())
            if made != sorted(f"f{i}" for i in range(calls)):
                raise RuntimeError(f"{name} ({way}) ran {made}, not the {calls} commands")
        finally:
            server.__exit__(None, None, None)
    return took[0], took[1]


def main_real(name: str, calls: int, repeats: int) -> None:
    # The SDK logs a traceback for each malformed update the bare client gets.
    logging.basicConfig(level=logging.CRITICAL)
    widget: list[float] = []
    bares: list[float] = []
    for _ in range(repeats):
        through, plain = real_turns(name, calls)
        widget.append(through)
        bares.append(plain)
    print(f"{name}: {calls} asked commands x {repeats} turns, agent start included")
    for label, pick in (("median", statistics.median), ("fastest", min)):
        plain, took = pick(bares), pick(widget)
        extra = (took - plain) / calls * 1e3
        print(
            f"turn ({label}): bare ACP client {plain * 1e3:8.1f} ms, through the widget "
            f"{took * 1e3:8.1f} ms, ratio {took / plain:.3f}, extra per call {extra:6.2f} ms"
        )
    print("target: through the widget within 5% and 20 ms a call of the bare client")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    real = ("claude", "codex", "gemini", "opencode", "qwen", "copilot", "cline")
    parser.add_argument("--agent", choices=real)
    args = parser.parse_args()
    if args.agent:
        main_real(args.agent, args.calls, args.repeats)
        return
    cwd = tempfile.mkdtemp(prefix="mead-bench-acp-")
    walls: list[float] = []
    bares: list[float] = []
    policies: list[float] = []
    cards: list[float] = []
    answers: list[float] = []
    through_widget(2, cwd)
    bare(2, cwd)
    for _ in range(args.repeats):
        wall, card, answer = through_widget(args.calls, cwd)
        walls.append(wall)
        cards += card
        answers += answer
        bares.append(bare(args.calls, cwd))
        policies.append(with_policy(args.calls, cwd))
    print(f"{args.calls} asked calls x {args.repeats} turns (python {sys.version.split()[0]})")
    for name, values in (("card in the widget's state", cards), ("Allow to the agent", answers)):
        p50, p95 = pct(values, 0.5) * 1e3, pct(values, 0.95) * 1e3
        print(f"{name:<28} p50 {p50:7.2f} ms   p95 {p95:7.2f} ms")
    for label, pick in (("median", statistics.median), ("fastest", min)):
        plain = pick(bares)
        print(f"{'turn, bare ACP client':<28} {plain * 1e3:9.1f} ms ({label})")
        for name, values in (
            ("turn, adapter + policy", policies),
            ("turn, through the widget", walls),
        ):
            took = pick(values)
            extra = (took - plain) / args.calls * 1e3
            print(
                f"{name:<28} {took * 1e3:9.1f} ms   ratio {took / plain:.3f}"
                f"   extra per call {extra:6.2f} ms"
            )
    print("target: through the widget within 5% and 20 ms a call of the bare client")


if __name__ == "__main__":
    main()
