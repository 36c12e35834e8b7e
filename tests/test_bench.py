"""Every benchmark docs/benchmarks.md lists runs to the end, with its smallest arguments."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SMALLEST: dict[str, list[str]] = {
    "bench/router.py": ["--calls", "20", "--repeats", "1"],
    "bench/stream.py": ["--fragments", "300", "--repeats", "1", "--turns", "1"],
    "bench/stream.py --paced": [
        *("--paced", "--fragments", "300", "--repeats", "1", "--turns", "0"),
        *("--only", "no interaction", "NotebookInteraction"),
    ],
    "bench/cards.py": ["--calls", "3"],
    "bench/interrupts.py": ["--rounds", "2", "--versions", "7.4.0"],
    "bench/adapters.py": ["--calls", "3", "--repeats", "1", "--claude-calls", "2"],
    "bench/acp.py": ["--calls", "3", "--repeats", "1"],
    "bench/acp.py --agent": ["--agent", "codex", "--calls", "2", "--repeats", "1"],
    "bench/latency.py": ["--rounds", "2", "--versions", "7.4.0"],
    "bench/idle.py": ["--seconds", "2", "--versions", "7.4.0"],
    "bench/stress.py": ["--rounds", "2", "--seconds", "20", "--pages", "2", "--versions", "7.4.0"],
    "bench/stress.py --plain": [
        *("--plain", "--rounds", "2", "--seconds", "20", "--pages", "2", "--versions", "7.4.0"),
    ],
    "bench/interrupt_at_end.py": ["--cells", "3", "--versions", "7.4.0"],
    "bench/workbench.py": ["--calls", "3", "--repeats", "1"],
    "bench/acp_tools.py": ["--calls", "3", "--repeats", "1"],
}
"""Each benchmark command of docs/benchmarks.md, and the arguments that run it smallest."""


def readme_commands() -> list[str]:
    """The benchmark commands docs/benchmarks.md names, with their flag."""
    text = (REPO / "docs" / "benchmarks.md").read_text()
    return sorted(set(re.findall(r"(bench/\w+\.py(?: --[a-z]+)?)", text)))


def test_every_readme_benchmark_has_a_smallest_run() -> None:
    assert readme_commands() == sorted(SMALLEST)


@pytest.mark.bench
@pytest.mark.kernel
@pytest.mark.parametrize("command", list(SMALLEST))
def test_the_benchmark_runs(command: str) -> None:
    script = command.split()[0]
    run = subprocess.run(
        [sys.executable, str(REPO / script), *SMALLEST[command]],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    assert len(lines) >= 2, run.stdout
