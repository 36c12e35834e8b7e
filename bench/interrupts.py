"""Interrupting a waiting cell while the frontend keeps sending messages.

For each ipykernel of the test matrix, a real kernel runs rounds of: a sync cell
(``--async``: an async one) asks for permission through ``NotebookInteraction``;
while it waits, the client sends a stream of widget messages (as a busy page does)
and interrupts the kernel at a random point of it. A round is good when the cell
ends with ``KeyboardInterrupt`` (async: ipykernel's ``CancelledError``) within
15 s and the next cell runs; otherwise the
interrupt was lost (the cell went on waiting), the kernel stopped replying
(stuck) or sent something the client could not read (broken). A kernel that
failed a round is replaced before the next one.

Run: .venv/bin/python bench/interrupts.py [--rounds 40] [--async] [--versions 6.29.5 ...]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from kernel.conftest import KERNEL_VERSIONS, SETUP  # noqa: E402
from kernel.frontend import Frontend  # noqa: E402

CELLS = {
    False: ("permission_router().run('go', interaction=widget())", "KeyboardInterrupt"),
    True: ("await permission_router().arun('go', interaction=widget())", "CancelledError"),
}
MESSAGES = 80


def start(version: str) -> Frontend:
    fe = Frontend(version, Path(tempfile.mkdtemp(prefix="mead-bench-")))
    reply, _ = fe.run(SETUP, timeout=60)
    assert reply["status"] == "ok", reply
    return fe


def one_round(fe: Frontend, rng: random.Random, is_async: bool) -> str:
    """``ok``, ``lost`` (the cell went on waiting) or ``stuck`` (no next cell)."""
    cell, ename = CELLS[is_async]
    msg_id = fe.execute(cell)
    fe.drive(lambda: fe.open_question() is not None, 30, "the open question")
    comm = next(reversed(fe.widgets))
    at = rng.randrange(MESSAGES)
    for i in range(MESSAGES):
        fe.send_custom(comm, {"type": "noise", "i": i})
        if i == at:
            fe.km.interrupt_kernel()
        time.sleep(0.0005)
    try:
        reply = fe.wait_reply(msg_id, 15)["content"]
    except AssertionError:
        print(f"  {fe.version}: no reply within 15 s (interrupted after message {at})", flush=True)
        return "lost"
    if reply.get("ename") != ename:
        ended = f"{reply.get('status')} {reply.get('ename')}"
        print(f"  {fe.version}: the cell ended {ended}", flush=True)
        return "lost"
    try:
        _, out = fe.run("print('NEXT')", timeout=15)
    except AssertionError:
        return "stuck"
    return "ok" if out == "NEXT\n" else "stuck"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--versions", nargs="+", default=list(KERNEL_VERSIONS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--async", dest="is_async", action="store_true", help="an async cell")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"{'ipykernel':<10} {'rounds':>6} {'ok':>4} {'lost':>5} {'stuck':>6} {'broken':>7}")
    for version in args.versions:
        counts = {"ok": 0, "lost": 0, "stuck": 0, "broken": 0}
        fe = start(version)
        try:
            for _ in range(args.rounds):
                try:
                    outcome = one_round(fe, rng, args.is_async)
                except Exception as exc:
                    print(f"  {version}: {type(exc).__name__}: {str(exc)[:120]}", flush=True)
                    outcome = "broken"
                counts[outcome] += 1
                if outcome != "ok":
                    fe.close()
                    fe = start(version)
        finally:
            fe.close()
        print(
            f"{version:<10} {args.rounds:>6} {counts['ok']:>4} {counts['lost']:>5} "
            f"{counts['stuck']:>6} {counts['broken']:>7}",
            flush=True,
        )


if __name__ == "__main__":
    main()
