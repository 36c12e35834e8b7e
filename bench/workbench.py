"""run_python through the gate vs exec of the same code, in the same real kernel.

For each ipykernel asked for, one kernel times, per call and in the kernel itself:

- ``exec``: ``exec(code, user_ns)``, the floor;
- ``run_code``: the tool's own work, without the router (input transformers,
  capture of what the code prints for this thread only, the guard that can stop it,
  the last expression's value formatted);
- ``router``: ``run_python`` through the Router with a scripted model, asked
  through the contract and allowed by ``AllowAll()`` (the tool in its own thread);
- ``widget``: the same with ``NotebookInteraction(policy=AllowAll())``: every card
  update synced to the frontend and the transcript at the end.

The variants alternate within each repeat, so drift hits them alike; each line
gives the median over repeats and the ratio to ``exec``.

Run: .venv/bin/python bench/workbench.py [--calls 200] [--repeats 5] [--versions 7.4.0 ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from kernel.frontend import Frontend  # noqa: E402

CODES = {
    "assign": "x = 1",
    "sum": "total = sum(range(10_000))\ntotal",
    "print": "print('hello')",
}
SETUP = """
import json, time
from mead_notebook import NotebookInteraction, Router, ScriptedModel, ToolCall, kernel_tools
from mead_notebook.policies import AllowAll
from mead_notebook.workbench.execute import run_code
from mead_notebook.workbench.stopping import Guard

TOOLS = kernel_tools(timeout=60)
SHELL = get_ipython()

def per_call(variant, code, calls):
    ns = SHELL.user_ns
    if variant == "exec":
        compiled = compile(code, "<bench>", "exec")
        started = time.perf_counter()
        for _ in range(calls):
            exec(compiled, ns)
        return (time.perf_counter() - started) / calls
    if variant == "run_code":
        started = time.perf_counter()
        for _ in range(calls):
            run_code(SHELL, code, Guard(), 100_000)
        return (time.perf_counter() - started) / calls
    asks = [ToolCall("run_python", {"code": code}) for _ in range(calls)]
    model = ScriptedModel([asks, ["done"]])
    router = Router(model, TOOLS, max_rounds=2)
    interaction = AllowAll() if variant == "router" else NotebookInteraction(policy=AllowAll())
    started = time.perf_counter()
    result = router.run("go", interaction=interaction)
    elapsed = time.perf_counter() - started
    assert [c.status for c in result.calls] == ["completed"] * calls, result
    return elapsed / calls
print("READY")
"""
VARIANTS = ("exec", "run_code", "router", "widget")


def measure(fe: Frontend, variant: str, code: str, calls: int) -> float:
    cell = f"print('US', per_call({variant!r}, {code!r}, {calls}) * 1e6)"
    reply, out = fe.run(cell, timeout=600)
    assert reply["status"] == "ok", reply
    [line] = [line for line in out.splitlines() if line.startswith("US ")]
    return float(line.split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--versions", nargs="+", default=["7.4.0"])
    args = parser.parse_args()
    report: dict[str, dict[str, dict[str, float]]] = {}
    for version in args.versions:
        fe = Frontend(version, Path(tempfile.mkdtemp(prefix="mead-bench-")))
        try:
            reply, out = fe.run(SETUP, timeout=120)
            assert reply["status"] == "ok", reply
            assert "READY" in out, out
            for variant in VARIANTS:  # warm up
                measure(fe, variant, "x = 1", 5)
            samples = {(c, v): [] for c in CODES for v in VARIANTS}
            for _ in range(args.repeats):
                for name, code in CODES.items():
                    for variant in VARIANTS:
                        samples[name, variant].append(measure(fe, variant, code, args.calls))
        finally:
            fe.close()
        print(f"ipykernel {version}: {args.calls} calls x {args.repeats} repeats, median per call")
        report[version] = {}
        for name, code in CODES.items():
            floor = statistics.median(samples[name, "exec"])
            print(f"  {name} ({code!r})")
            report[version][name] = {}
            for variant in VARIANTS:
                us = statistics.median(samples[name, variant])
                report[version][name][variant] = round(us, 2)
                ratio = f"{us / floor:8.1f}x exec" if variant != "exec" else ""
                print(f"    {variant:9} {us:10.2f} us  {ratio}")
            overhead = report[version][name]["router"] - report[version][name]["exec"]
            print(f"    gate overhead (router - exec): {overhead:.1f} us per call")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
