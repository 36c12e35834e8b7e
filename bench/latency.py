"""From an answer sent over the Jupyter protocol to the allowed tool starting, per ipykernel.

For each configuration of the kernel matrix (ipykernel version, and for 7.x the
answer sent with or without a subshell id), a real kernel runs turns that ask
once whether to call a tool; the client answers as soon as the question shows and
notes ``time.monotonic()`` just before sending; the tool notes ``time.monotonic()``
when it starts (the same clock: client and kernel share the machine). Turns run
in a sync cell, in an async cell (``await router.arun``) and in the background
(``router.start``, the cell already returned). ``comm`` is the floor: the same
message to a plain comm handler of an idle kernel, no widget, no turn.

``--against REV`` measures this checkout and revision ``REV`` side by side in the
same run: ``REV`` is checked out into a temporary folder (``git archive``) and its
kernels are the same environments with ``PYTHONPATH`` pointing there. Each run
starts one kernel of each, alternating which goes first; each figure is the
median over ``--runs`` runs of each run's median, with the ratio this / ``REV``.
Its defaults are the answer path's yardstick: ipykernel 7.4.0, main shell (``--subshell``
adds the subshell routing), a sync cell, 60 rounds, 3 runs.

Run: .venv/bin/python bench/latency.py [--rounds 30] [--versions 7.4.0 ...] [--main-only]
     .venv/bin/python bench/latency.py --against c9f87fb [--modes sync async] [--runs 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
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


def start(version: str, subshell: bool, tree: Path | None = None) -> Frontend:
    """A kernel with the helpers loaded, importing the project from ``tree`` (default: here)."""
    env = {"PYTHONPATH": str(tree or ROOT)}
    workdir = Path(tempfile.mkdtemp(prefix="mead-bench-"))
    fe = Frontend(version, workdir, subshell=subshell, env=env, log=workdir / "kernel.log")
    where = "import mead_notebook, pathlib; print(pathlib.Path(mead_notebook.__file__).parent)"
    reply, out = fe.run(where, timeout=60)
    expected = (tree or ROOT) / "mead_notebook"
    if reply["status"] != "ok" or Path(out.strip()) != expected:
        fe.close()
        raise RuntimeError(f"the kernel imports the project from {out.strip()!r}, not {expected}")
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
        # The main shell takes the open before this cell; a subshell would not wait for it.
        reply, _ = fe.run(f"assert {comm_id!r} in get_ipython().kernel.comm_manager.comms")
        assert reply["status"] == "ok", reply
        sent = []
        for _ in range(rounds):
            sent.append(comm_round(fe, comm_id))
            pause(fe, 0.05)
    else:
        sent = [turn_round(fe, mode) for _ in range(rounds)]
    started = starts(fe)
    deadline = time.monotonic() + 10
    while len(started) < len(sent) and time.monotonic() < deadline:
        pause(fe, 0.05)  # a comm message may still be on its way to its handler
        started += starts(fe)
    if len(started) != len(sent):
        raise RuntimeError(f"{mode}: {len(started)} starts for {len(sent)} answers")
    return [(s - a) * 1000 for a, s in zip(sent, started, strict=True)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


MODES = ["comm", "sync", "async", "background"]


@contextlib.contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """Revision ``rev`` of this repository in a temporary folder, removed afterwards.

    The frontend bundle is not built there: this checkout's is linked in when it
    exists (the answer path never loads it; the kernel only names it).
    """
    folder = Path(tempfile.mkdtemp(prefix="mead-against-"))
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", rev],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
        static = ROOT / "mead_notebook" / "static"
        if static.is_dir() and not (folder / "mead_notebook" / "static").exists():
            (folder / "mead_notebook" / "static").symlink_to(static)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def routings(args: argparse.Namespace, version: str) -> list[bool]:
    return [False] if version.startswith("6.") or args.main_only else [False, True]


def table(args: argparse.Namespace) -> None:
    """p50 / p95 per configuration and mode, this checkout only."""
    print(f"answer -> tool start, milliseconds, {args.rounds} rounds each: p50 / p95")
    print(f"{'ipykernel':<18}" + "".join(f"{m:>20}" for m in args.modes))
    for version in args.versions:
        for subshell in routings(args, version):
            label = f"{version}-{'subshell' if subshell else 'main'}"
            fe = start(version, subshell)
            try:
                cells = []
                for mode in args.modes:
                    ms = measure(fe, mode, args.rounds)
                    cells.append(f"{statistics.median(ms):8.2f} / {percentile(ms, 0.95):7.2f}")
            finally:
                fe.close()
            print(f"{label:<18}" + "".join(f"{c:>20}" for c in cells), flush=True)


def side_by_side(args: argparse.Namespace) -> None:
    """This checkout and ``args.against``, alternating, median of the runs' medians."""
    print(
        f"answer -> tool start, milliseconds: median of {args.runs} runs' medians "
        f"({args.rounds} rounds each), this checkout vs {args.against}"
    )
    print(f"{'ipykernel':<18}{'mode':<12}{'this':>10}{args.against:>12}{'ratio':>8}")
    with checkout(args.against) as tree:
        trees: dict[str, Path | None] = {"this": None, args.against: tree}
        for version in args.versions:
            for subshell in routings(args, version):
                label = f"{version}-{'subshell' if subshell else 'main'}"
                medians: dict[str, dict[str, list[float]]] = {
                    name: {mode: [] for mode in args.modes} for name in trees
                }
                for run in range(args.runs):
                    order = list(trees) if run % 2 == 0 else list(reversed(trees))
                    for name in order:
                        fe = start(version, subshell, trees[name])
                        try:
                            for mode in args.modes:
                                ms = measure(fe, mode, args.rounds)
                                medians[name][mode].append(statistics.median(ms))
                        finally:
                            fe.close()
                for mode in args.modes:
                    this = statistics.median(medians["this"][mode])
                    other = statistics.median(medians[args.against][mode])
                    print(
                        f"{label:<18}{mode:<12}{this:>10.2f}{other:>12.2f}{this / other:>8.2f}",
                        flush=True,
                    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, help="turns per measurement (30; 60 with --against)")
    parser.add_argument("--versions", nargs="+", help="ipykernels (all; 7.4.0 with --against)")
    parser.add_argument("--modes", nargs="+", choices=MODES, help="(all; sync with --against)")
    parser.add_argument("--main-only", action="store_true", help="no subshell routing")
    parser.add_argument("--against", metavar="REV", help="measure revision REV side by side")
    parser.add_argument("--runs", type=int, default=3, help="runs of each, with --against")
    parser.add_argument(
        "--subshell", action="store_true", help="with --against: also with a subshell id"
    )
    args = parser.parse_args()
    against = args.against is not None
    args.rounds = args.rounds or (60 if against else 30)
    args.versions = args.versions or (["7.4.0"] if against else list(KERNEL_VERSIONS))
    args.modes = args.modes or (["sync"] if against else MODES)
    if against:
        args.main_only = args.main_only or not args.subshell
        side_by_side(args)
    else:
        table(args)


if __name__ == "__main__":
    main()
