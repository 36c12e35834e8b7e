"""Router overhead per tool call, side by side with calling the tool directly.

Run: .venv/bin/python bench/router.py [--calls 2000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

from mead_notebook import Router, ScriptedModel, ToolCall, tool
from mead_notebook.policies import AllowAll


@tool
def noop() -> str:
    """Do nothing."""
    return "ok"


def direct(calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        noop.fn()
    return (time.perf_counter() - started) / calls


def routed(calls: int) -> float:
    model = ScriptedModel([[ToolCall("noop") for _ in range(calls)], ["done"]])
    router = Router(model, tools=[noop])
    started = time.perf_counter()
    result = router.run("go", interaction=AllowAll())
    elapsed = time.perf_counter() - started
    assert len(result.calls) == calls
    assert all(c.status == "completed" for c in result.calls)
    return elapsed / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    routed(50)
    direct_us = [direct(args.calls) * 1e6 for _ in range(args.repeats)]
    routed_us = [routed(args.calls) * 1e6 for _ in range(args.repeats)]
    d, r = statistics.median(direct_us), statistics.median(routed_us)
    print(f"{args.calls} calls x {args.repeats} runs, median per call")
    print(f"  direct loop : {d:10.2f} us")
    print(f"  router      : {r:10.2f} us  (AllowAll, scripted model, tool in its own thread)")
    print(f"  overhead    : {r - d:10.2f} us per call; router/direct = {r / d:,.0f}x")


if __name__ == "__main__":
    main()
