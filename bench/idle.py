"""What a kernel spends while a question waits and nothing happens, per ipykernel.

For each ipykernel of the matrix, a real kernel sits for ``--seconds``: first idle
(no cell), then with a question open and unanswered in a sync cell, in an async
cell (``await router.arun``) and in a background turn (``router.start``, the cell
returned). For each, the kernel process's CPU time (psutil) and its threads'
voluntary context switches (``/proc/<pid>/task/*/status``: how often a thread
went to sleep, so about how often it woke up) per second of waiting, and the
threads that woke most. Linux only. The checks on views run with the package's
default timing unless ``--ping-every`` / ``--answer-within`` set another
(``views.set_timing`` in the kernel), to compare timings on the same code.

``--against REV`` measures revision ``REV`` side by side in the same run (its
kernels import it from a temporary checkout, as ``bench/latency.py --against`` does),
each version's row of this checkout first, then REV's.

Run: .venv/bin/python bench/idle.py [--seconds 60] [--versions 6.29.5 ...]
     [--ping-every 8 --answer-within 2] [--against REV]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from kernel.cells import pause  # noqa: E402
from kernel.conftest import KERNEL_VERSIONS, SETUP  # noqa: E402
from kernel.frontend import Frontend  # noqa: E402
from latency import checkout  # noqa: E402

from mead_notebook.notebook.waiting.views import Timing  # noqa: E402

QUESTION = "permission_router().{call}('go', interaction=NotebookInteraction(timeout=3600))"
MODES = {
    "idle": None,
    "sync": "names_later()\n" + QUESTION.format(call="run"),
    "async": "names_later()\nawait " + QUESTION.format(call="arun"),
    "background": "names_later()\nturn = " + QUESTION.format(call="start"),
}
NAMES = """
def names_later(delay=0.5):
    \"\"\"Print the name of each thread ``delay`` seconds from now (the cell may block).\"\"\"
    def report():
        names = {t.native_id: t.name for t in threading.enumerate() if t.native_id}
        print("NAMES " + json.dumps(names), flush=True)
    threading.Timer(delay, report).start()
"""


def switches(pid: int) -> dict[int, int]:
    """Voluntary context switches so far, per thread id."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                out[int(task.name)] = int(line.split()[1])
    return out


def thread_names(fe: Frontend, since: int) -> dict[int, str]:
    """The kernel's threads by id: Python's names as printed after ``fe.iopub[since]``
    (whatever parent the timer thread's print got), else the OS's names."""

    def printed() -> str | None:
        for m in fe.iopub[since:]:
            text = m["content"].get("text", "") if m["msg_type"] == "stream" else ""
            if text.startswith("NAMES "):
                return str(text)
        return None

    fe.drive(lambda: printed() is not None, 10, "the thread names")
    line = (printed() or "").splitlines()[0]
    names = {int(k): v for k, v in json.loads(line[len("NAMES ") :]).items()}
    for task in Path(f"/proc/{fe.pid}/task").iterdir():
        if int(task.name) not in names:
            names[int(task.name)] = (task / "comm").read_text().strip()
    return names


def sample(fe: Frontend, seconds: float) -> tuple[float, dict[int, float]]:
    """CPU milliseconds per second, and wakeups per second per thread, over ``seconds``."""
    process = psutil.Process(fe.pid)
    cpu, before = process.cpu_times(), switches(fe.pid)
    start = time.monotonic()
    pause(fe, seconds)
    elapsed = time.monotonic() - start
    cpu_after, after = process.cpu_times(), switches(fe.pid)
    used = (cpu_after.user + cpu_after.system) - (cpu.user + cpu.system)
    woke = {tid: (n - before.get(tid, 0)) / elapsed for tid, n in after.items()}
    return used * 1000 / elapsed, woke


def measure(fe: Frontend, mode: str, seconds: float) -> tuple[float, dict[str, float]]:
    cell = MODES[mode]
    since = len(fe.iopub)
    msg_id = fe.execute("names_later(0)" if cell is None else cell)
    if cell is None:
        fe.wait_reply(msg_id, 30)
    else:
        fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    names = thread_names(fe, since)
    pause(fe, 1.0)
    cpu, woke = sample(fe, seconds)
    if cell is not None:
        card = fe.open_question()
        assert card is not None
        comm_id = next(cid for cid, w in fe.widgets.items() if card["tool_call_id"] in w.cards)
        answer = {"type": "answer", "question_id": card["question"]["id"], "decision": "deny"}
        fe.send_custom(comm_id, answer)
        fe.wait_reply(msg_id, 30)
        if mode == "background":
            fe.run("turn.result(timeout=30)")
        fe.widgets.clear()
    by_name: dict[str, float] = {}
    for tid, rate in woke.items():
        name = names.get(tid, f"thread {tid}")
        by_name[name] = by_name.get(name, 0.0) + rate
    return cpu, by_name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--versions", nargs="+", default=list(KERNEL_VERSIONS))
    parser.add_argument("--ping-every", type=float, help="seconds between pings (views.Timing)")
    parser.add_argument("--answer-within", type=float, help="seconds a ping waits for its pong")
    parser.add_argument("--against", metavar="REV", help="measure revision REV side by side")
    args = parser.parse_args()
    changes = {
        name: value
        for name, value in (("ping_every", args.ping_every), ("answer_within", args.answer_within))
        if value is not None
    }
    timing = dataclasses.replace(Timing(), **changes)
    print(f"checks on views: {timing}")
    print(f"per second over {args.seconds:g} s: kernel CPU ms / wakeups (voluntary switches)")
    print(f"{'ipykernel':<18}" + "".join(f"{m:>18}" for m in MODES))
    with contextlib.ExitStack() as stack:
        trees: dict[str, Path] = {"": ROOT}
        if args.against:
            trees[args.against] = stack.enter_context(checkout(args.against))
        for version in args.versions:
            for name, tree in trees.items():
                row(version, name, tree, args.seconds, changes)


def row(version: str, name: str, tree: Path, seconds: float, changes: dict[str, float]) -> None:
    """Measure one kernel that imports the project from ``tree``; print its row."""
    workdir = Path(tempfile.mkdtemp(prefix="mead-bench-"))
    env = {"PYTHONPATH": str(tree)}
    fe = Frontend(version, workdir, log=Path("/dev/null"), env=env)
    busiest = []
    try:
        keep = ", ".join(f"{k}={v!r}" for k, v in changes.items())
        timed = f"waiting.views.set_timing({keep})" if keep else "None"
        for setup in (SETUP, NAMES, timed):
            reply, _ = fe.run(setup, timeout=60)
            assert reply["status"] == "ok", reply
        pause(fe, 2.0)
        cells = []
        for mode in MODES:
            cpu, by_name = measure(fe, mode, seconds)
            cells.append(f"{cpu:7.2f} / {sum(by_name.values()):6.1f}")
            top = sorted(by_name.items(), key=lambda kv: -kv[1])[:3]
            busiest.append(f"{mode}: " + ", ".join(f"{n} {r:.1f}" for n, r in top))
    finally:
        fe.close()
    label = f"{version} {name}".strip()
    print(f"{label:<18}" + "".join(f"{c:>18}" for c in cells), flush=True)
    print("           woke most (per s): " + "; ".join(busiest), flush=True)


if __name__ == "__main__":
    main()
