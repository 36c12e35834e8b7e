"""Reloading pages while turns stream, ask and create widgets, and interrupts racing answers.

For each configuration of the kernel matrix a real kernel runs rounds of one turn
(a sync cell, or an async one every other round): the model streams text 2 ms a
fragment, asks whether to run a tool that creates and closes widgets, then
streams again. Meanwhile pages "reload" at random moments, as JupyterLab does:
``kernel_info_request``, a new ipywidgets control comm and ``request_states``,
sent back to back. The client answers each question at once (allow or deny at
random); every third round it interrupts the kernel 0 - 5 ms after answering,
and the turn then ends right after the tool.

Counted per configuration: pages that got no ``kernel_info_reply`` or no
``update_states`` on their own comm (lost), ``update_states`` beyond what a comm
asked for (misrouted), widgets left showing ``running`` after their cell ended
(stuck), turns whose streamed text differs from the text they ended with (text),
cells that ended otherwise than expected or a next cell that did not run (cells),
interrupted cells that went idle without an ``execute_reply`` (unreplied: ipykernel
itself drops the reply when an interrupt lands as a cell ends, on every version,
with or without this library), and tracebacks the kernel printed or logged
(errors). Bounded by ``--rounds`` and
``--seconds`` per configuration; loopback only.

``--plain`` runs the same storm against kernels where the library never runs
(cells that print at the same pace and create the same widgets; interrupts at
random moments), for comparison.

Run: .venv/bin/python bench/stress.py [--rounds 30] [--seconds 120] [--versions 7.4.0 ...] [--plain]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from kernel.cells import pause, result_of  # noqa: E402
from kernel.conftest import CONFIGS, SETUP  # noqa: E402
from kernel.frontend import Frontend  # noqa: E402

STRESS = '''
import ipywidgets

class PacedModel:
    """Plays back replies, one text fragment every 2 ms."""

    name = "paced"
    streaming = True

    def __init__(self, replies):
        self.replies = [list(r) for r in replies]

    def reply(self, messages, tools):
        for item in self.replies.pop(0):
            if isinstance(item, str):
                time.sleep(0.002)
            yield item

@tool
def make_widgets(n: int) -> str:
    """Create n widgets, then close them."""
    made = [ipywidgets.IntSlider(value=i) for i in range(n)]
    for w in made:
        w.close()
    return f"made {n}"

def stress_router(before, after):
    first = [f"a{i} " for i in range(before)] + [ToolCall("make_widgets", {"n": 40})]
    second = [f"b{i} " for i in range(after)] or ["."]
    return Router(PacedModel([first, second]), [make_widgets])
'''
"""The paced model and the widget-making tool of the stress turns."""

PLAIN = """
import time
import ipywidgets

def plain_round(before, after):
    for i in range(before):
        time.sleep(0.002)
        print(f"a{i} ", end="", flush=True)
    made = [ipywidgets.IntSlider(value=i) for i in range(40)]
    for w in made:
        w.close()
    for i in range(after):
        time.sleep(0.002)
        print(f"b{i} ", end="", flush=True)
"""
"""``--plain``: the same cell's pace and widgets, in a kernel where the library never ran."""


UNREPLIED = 3.0
"""How long after its cell went idle a missing ``execute_reply`` counts as never coming (s)."""


def expected_text(before: int, after: int) -> str:
    second = "".join(f"b{i} " for i in range(after)) or "."
    return "".join(f"a{i} " for i in range(before)) + second


@dataclass
class Counts:
    rounds: int = 0
    pages: int = 0
    lost: int = 0
    misrouted: int = 0
    stuck: int = 0
    text: int = 0
    cells: int = 0
    unreplied: int = 0
    errors: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class Page:
    info: str
    control: str
    at: float


def reload_page(fe: Frontend, at: float) -> Page:
    """What a reloading JupyterLab page sends first, back to back (``at`` s into the round)."""
    info = fe.send_main("kernel_info_request", {})
    control = fe.open_control()
    fe.request_states(control)
    return Page(info, control, at)


def streamed(fe: Frontend, comm_id: str) -> str:
    """The text the view put together from the widget's ``text`` messages."""
    text = ""
    for message in fe.widgets[comm_id].custom:
        if message.get("type") == "text":
            text = text[: message["start"]] + message["delta"]
    return text


def one_round(
    fe: Frontend, rng: random.Random, n: int, counts: Counts, pages: int, plain: bool
) -> None:
    racing = n % 3 == 2
    is_async = n % 2 == 1
    before, after = rng.randrange(20, 80), 0 if racing else rng.randrange(20, 80)
    call = "await stress_router({}, {}).arun" if is_async else "stress_router({}, {}).run"
    cell = f"report({call.format(before, after)}('go', interaction=widget()))"
    interrupt_at: float | None = None
    if plain:
        cell = f"plain_round({before}, {after})"
        interrupt_at = rng.uniform(0.05, 0.2) if racing else None
    fe.widgets.clear()
    since = len(fe.iopub)
    started = time.monotonic()
    moments = sorted(rng.uniform(0.0, 0.25 + 0.002 * (before + after)) for _ in range(pages))
    sent: list[Page] = []
    msg_id = fe.execute(cell)
    answered = [False]
    idle_since: list[float] = []

    def ended() -> bool:
        """The cell's reply is in, or it went idle UNREPLIED s ago without one."""
        if not fe.idle(msg_id):
            return False
        if not idle_since:
            idle_since.append(time.monotonic())
        return msg_id in fe.replies or time.monotonic() - idle_since[0] > UNREPLIED

    def step() -> bool:
        while moments and time.monotonic() - started >= moments[0]:
            sent.append(reload_page(fe, moments.pop(0)))
        if plain:
            due = interrupt_at is not None and time.monotonic() - started >= interrupt_at
            if due and not answered[0]:
                answered[0] = True
                fe.km.interrupt_kernel()
            return not moments and ended()
        card = fe.open_question()
        if card is not None and not answered[0]:
            answered[0] = True
            comm_id = next(c for c, w in fe.widgets.items() if card["tool_call_id"] in w.cards)
            decision = rng.choice(["allow", "deny"])
            fe.answer(
                comm_id,
                {"type": "answer", "question_id": card["question"]["id"], "decision": decision},
            )
            if racing:
                time.sleep(rng.uniform(0.0, 0.005))
                fe.km.interrupt_kernel()
        return not moments and ended()

    try:
        fe.drive(step, 30, "the round's cell")
    except AssertionError as exc:
        counts.cells += 1
        counts.notes.append(f"round {n}: {str(exc)[:100]}")
        return
    counts.rounds += 1
    counts.pages += len(sent)
    if msg_id not in fe.replies:
        counts.unreplied += 1
        if not answered[0] or not racing:
            counts.cells += 1
        counts.notes.append(f"round {n}: the cell went idle without a reply")
    reply = fe.replies.get(msg_id, {"content": {"status": "error", "ename": "KeyboardInterrupt"}})[
        "content"
    ]
    expected = ["ok"] if not racing else ["ok", "KeyboardInterrupt", "CancelledError"]
    outcome = reply["status"] if reply["status"] == "ok" else reply.get("ename")
    if outcome not in expected:
        counts.cells += 1
        counts.notes.append(f"round {n}: the cell ended {outcome}: {reply.get('evalue')}")
    settle(fe, sent)
    for page in sent:
        got = len(fe.comm_sent(page.control, "update_states"))
        lost = (page.info not in fe.replies) + (got == 0)
        if lost:
            what = "kernel_info_reply" if page.info not in fe.replies else "update_states"
            counts.notes.append(f"round {n}: a page got no {what} ({page.at:.3f} s in)")
        counts.lost += lost
        counts.misrouted += max(0, got - 1)
    for comm_id, widget in () if plain else fe.widgets.items():
        if widget.state.get("status") == "running":
            counts.stuck += 1
            counts.notes.append(f"round {n}: widget {comm_id[:8]} left running")
        elif outcome == "ok":
            final = str(widget.state.get("text"))
            expected_final = expected_text(before, after)
            if final != expected_final or not expected_final.startswith(streamed(fe, comm_id)):
                counts.text += 1
    for m in fe.iopub[since:]:
        text = m["content"].get("text", "") if m["msg_type"] == "stream" else ""
        if "Traceback (most recent call last)" in text:
            counts.errors += 1
            counts.notes.append(f"round {n}: " + " | ".join(text.strip().splitlines()[::-1][:1]))
    if not plain and outcome == "ok" and result_of(fe.stdout(msg_id))["stop"] != "end_turn":
        counts.cells += 1
    try:
        reply_next, out = fe.run("print('NEXT')", timeout=15)
        if out != "NEXT\n":
            raise AssertionError(reply_next)
    except AssertionError as exc:
        counts.cells += 1
        counts.notes.append(f"round {n}: the next cell did not run: {str(exc)[:100]}")


def settle(fe: Frontend, sent: list[Page]) -> None:
    """Read until every page has its answers, at most 10 s, then a little more."""

    def answered() -> bool:
        return all(p.info in fe.replies and fe.comm_sent(p.control, "update_states") for p in sent)

    deadline = time.monotonic() + 10
    until: Callable[[], bool] = lambda: answered() or time.monotonic() > deadline  # noqa: E731
    fe.drive(until, 15, "the pages' answers")
    pause(fe, 0.2)


def run_config(version: str, subshell: bool, args: argparse.Namespace) -> Counts:
    counts = Counts()
    log = Path(tempfile.mkdtemp(prefix="mead-stress-")) / "kernel.log"
    fe = Frontend(version, log.parent, subshell=subshell, log=log)
    try:
        for setup in (PLAIN,) if args.plain else (SETUP, STRESS):
            reply, _ = fe.run(setup, timeout=60)
            assert reply["status"] == "ok", reply
        fe.render = True
        rng = random.Random(args.seed)
        end = time.monotonic() + args.seconds
        for n in range(args.rounds):
            if time.monotonic() > end:
                break
            one_round(fe, rng, n, counts, args.pages, args.plain)
    finally:
        fe.close()
    text = log.read_text(errors="replace")
    logged = text.count("Traceback (most recent call last)")
    counts.errors += logged
    if logged:
        first = text[text.index("Traceback (most recent call last)") :].splitlines()
        counts.notes.append("kernel log: " + " | ".join(first[-2:])[:160])
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--pages", type=int, default=6, help="pages reloading per round")
    parser.add_argument("--versions", nargs="+", default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--plain", action="store_true", help="the same storm on kernels where the library never ran"
    )
    args = parser.parse_args()
    columns = (
        "rounds",
        "pages",
        "lost",
        "misrouted",
        "stuck",
        "text",
        "cells",
        "unreplied",
        "errors",
    )
    print(f"{'ipykernel':<16}" + "".join(f"{c:>10}" for c in columns))
    for param in CONFIGS:
        version, subshell = param.values[0]  # type: ignore[misc]
        if args.versions and version not in args.versions:
            continue
        counts = run_config(version, subshell, args)
        label = f"{version}-{'subshell' if subshell else 'main'}"
        print(f"{label:<16}" + "".join(f"{getattr(counts, c):>10}" for c in columns), flush=True)
        for note in counts.notes[:5]:
            print(f"    {note}", flush=True)


if __name__ == "__main__":
    main()
