"""From an answer sent over the Jupyter protocol to the allowed tool starting, per ipykernel.

For each configuration of the kernel matrix (ipykernel version, and for 7.x the
answer sent with or without a subshell id), a real kernel runs turns that ask
once whether to call a tool; the client answers as soon as the question shows and
notes ``time.monotonic()`` just before sending; the tool notes ``time.monotonic()``
when it starts (the same clock: client and kernel share the machine). Turns run
in a sync cell, in an async cell (``await router.arun``) and in the background
(``router.start``, the cell already returned). ``comm`` is the floor: the same
message to a plain comm handler of an idle kernel, no widget, no turn.

Run: .venv/bin/python bench/latency.py [--rounds 30] [--versions 7.4.0 ...] [--main-only]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from kernel.cells import pause  # noqa: E402
from kernel.conftest import KERNEL_VERSIONS, SETUP  # noqa: E402
from kernel.frontend import Frontend  # noqa: E402

STAMP = '''
starts = []

@tool
def stamp() -> str:
    """Note when the tool starts."""
    starts.append(time.monotonic())
    return "stamped"

def stamp_router():
    return Router(ScriptedModel([[ToolCall("stamp", {})], ["done"]]), [stamp])

def _stamp_target(comm, msg):
    comm.on_msg(lambda msg: starts.append(time.monotonic()))

get_ipython().kernel.comm_manager.register_target("mead-bench-stamp", _stamp_target)
'''
"""A tool and a plain comm handler that note when they start."""

CELLS = {
    "sync": "stamp_router().run('go', interaction=widget())",
    "async": "await stamp_router().arun('go', interaction=widget())",
    "background": "turn = stamp_router().start('go', interaction=widget())",
}
ALLOW = {"type": "answer", "decision": "allow"}


def start(version: str, subshell: bool) -> Frontend:
    fe = Frontend(version, Path(tempfile.mkdtemp(prefix="mead-bench-")), subshell=subshell)
    for cell in (SETUP, STAMP):
        reply, _ = fe.run(cell, timeout=60)
        if reply["status"] != "ok":
            fe.close()
            raise RuntimeError(f"setup failed on ipykernel {version}: {reply}")
    return fe


def turn_round(fe: Frontend, mode: str) -> float:
    """One turn; the monotonic time at which the answer left the client."""
    msg_id = fe.execute(CELLS[mode])
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    card = fe.open_question()
    assert card is not None
    comm_id = next(cid for cid, w in fe.widgets.items() if card["tool_call_id"] in w.cards)
    answer = {**ALLOW, "question_id": card["question"]["id"]}
    sent = time.monotonic()
    fe.send_custom(comm_id, answer)
    fe.wait_reply(msg_id, 30)
    if mode == "background":
        reply, _ = fe.run("turn.result(timeout=30)", timeout=40)
        assert reply["status"] == "ok", reply
    fe.widgets.clear()
    return sent


def comm_round(fe: Frontend, comm_id: str) -> float:
    sent = time.monotonic()
    fe.send_comm(comm_id, {"stamp": True})
    return sent


def starts(fe: Frontend) -> list[float]:
    reply, out = fe.run("print(json.dumps(starts)); starts.clear()")
    assert reply["status"] == "ok", reply
    return [float(t) for t in json.loads(out)]


def measure(fe: Frontend, mode: str, rounds: int) -> list[float]:
    """Milliseconds from each answer to its tool's start."""
    if mode == "comm":
        comm_id = uuid.uuid4().hex
        fe.send_main("comm_open", {"comm_id": comm_id, "target_name": "mead-bench-stamp"})
        sent = []
        for _ in range(rounds):
            sent.append(comm_round(fe, comm_id))
            pause(fe, 0.05)
    else:
        sent = [turn_round(fe, mode) for _ in range(rounds)]
    started = starts(fe)
    if len(started) != len(sent):
        raise RuntimeError(f"{mode}: {len(started)} starts for {len(sent)} answers")
    return [(s - a) * 1000 for a, s in zip(sent, started, strict=True)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--versions", nargs="+", default=list(KERNEL_VERSIONS))
    parser.add_argument("--main-only", action="store_true", help="no subshell routing")
    args = parser.parse_args()
    modes = ["comm", "sync", "async", "background"]
    print(f"answer -> tool start, milliseconds, {args.rounds} rounds each: p50 / p95")
    print(f"{'ipykernel':<18}" + "".join(f"{m:>20}" for m in modes))
    for version in args.versions:
        routings = [False] if version.startswith("6.") or args.main_only else [False, True]
        for subshell in routings:
            label = f"{version}-{'subshell' if subshell else 'main'}"
            fe = start(version, subshell)
            try:
                cells = []
                for mode in modes:
                    ms = measure(fe, mode, args.rounds)
                    cells.append(f"{statistics.median(ms):8.2f} / {percentile(ms, 0.95):7.2f}")
            finally:
                fe.close()
            print(f"{label:<18}" + "".join(f"{c:>20}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
