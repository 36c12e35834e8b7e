"""How often ipykernel itself drops a cell's reply when an interrupt lands as the cell ends.

No part of this library runs: for each ipykernel of the test matrix, a real kernel
runs a short cell (``time.sleep(0.05)``, or ``--async``: ``await asyncio.sleep(0.05)``)
and is interrupted 30 - 70 ms after the cell was sent, around the moment it ends.
Counted: cells that got no ``execute_reply`` (a frontend shows them running for
good), and of those, how many left the kernel answering nothing more (the next
cell got no reply either; the kernel is then replaced). This is the baseline for
the ``unreplied`` column of ``bench/stress.py``.

Run: .venv/bin/python bench/interrupt_at_end.py [--cells 150] [--async] [--versions 7.4.0 ...]
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

from kernel.conftest import KERNEL_VERSIONS  # noqa: E402
from kernel.frontend import Frontend  # noqa: E402


def run_version(version: str, cells: int, code: str, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    counts = {"cells": 0, "unreplied": 0, "next cell failed": 0}
    workdir = Path(tempfile.mkdtemp(prefix="mead-at-end-"))
    fe = start(version, workdir)
    try:
        for _ in range(cells):
            sent = fe.execute(code)
            time.sleep(rng.uniform(0.03, 0.07))
            fe.km.interrupt_kernel()
            counts["cells"] += 1
            try:
                fe.drive(lambda f=fe, s=sent: s in f.replies, 8, "the cell's reply")
            except AssertionError:
                counts["unreplied"] += 1
                try:
                    _, out = fe.run("print('NEXT')", timeout=20)
                    failed = out != "NEXT\n"
                except AssertionError:
                    failed = True
                if failed:  # the kernel no longer answers: count it and start another
                    counts["next cell failed"] += 1
                    fe.close()
                    fe = start(version, workdir)
            time.sleep(0.1)
    finally:
        fe.close()
    return counts


def start(version: str, workdir: Path) -> Frontend:
    fe = Frontend(version, workdir, log=workdir / "kernel.log")
    fe.run("import asyncio, time", timeout=30)
    return fe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=150)
    parser.add_argument("--async", dest="is_async", action="store_true")
    parser.add_argument("--versions", nargs="+", default=list(KERNEL_VERSIONS))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    code = "await asyncio.sleep(0.05)" if args.is_async else "time.sleep(0.05)"
    print(f"{'ipykernel':<12}{'cells':>8}{'unreplied':>12}{'next cell failed':>18}  ({code})")
    for version in args.versions:
        c = run_version(version, args.cells, code, args.seed)
        print(
            f"{version:<12}{c['cells']:>8}{c['unreplied']:>12}{c['next cell failed']:>18}",
            flush=True,
        )


if __name__ == "__main__":
    main()
