"""The whole suite's running order and timing, for every pytest run in this repository.

Parallel runs (``pytest -n N --dist loadgroup``, as ``scripts/test.sh`` runs them):
each test that shares an expensive fixture instance (a kernel per ipykernel version,
a JupyterLab per lane, a tutorial's kernel) carries an ``xdist_group`` naming that
instance, so all its tests run on one worker, which starts it once. Groups that
take long go first, so that no worker is left with a long one at the end.

Every run ends with the time per area and its slowest tests, also written to
``tests/artifacts/durations.json``: ``total_s``, the run's wall time; ``areas``,
per area the tests' summed time and the span from the first start to the last
end; ``outcomes``, how many tests passed, failed, errored or were skipped;
``by_worker``, under xdist, each worker's busy seconds and when it finished its last
test (seconds into the run), which shows a run held up by one worker; ``slowest``;
``files``, each test file's summed time, slowest first; and
``setup_s`` and ``checks_s`` when ``scripts/test.sh`` passes them in
``MEAD_SETUP_S`` and ``MEAD_CHECKS_S``. So growth shows where it comes from.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

STARTED = float(os.environ.get("MEAD_TESTS_STARTED") or time.time())
"""When this run started: as ``scripts/test.sh`` started pytest, else when pytest loaded
this file (the controller, under xdist)."""
ROOT = Path(__file__).resolve().parent
DURATIONS = ROOT / "tests" / "artifacts" / "durations.json"
SLOWEST = 25
"""Tests listed in the report, slowest first."""

AREAS = {
    "tests/kernel/": "kernel",
    "tests/browser/": "browser",
    "tests/vscode/": "vscode",
    "tests/agents/": "agents",
    "notebooks/": "tutorials",
}
"""The area of a test, by where it lives; everything else is ``unit``."""

FIRST = ("browser", "vscode", "agents", "kernel", "tutorials")
"""Areas whose groups start first: their groups are the longest."""


def area_of(nodeid: str) -> str:
    """The area of the test ``nodeid`` (``unit`` unless it lives in one of :data:`AREAS`)."""
    return next((area for prefix, area in AREAS.items() if nodeid.startswith(prefix)), "unit")


def shared_group(item: pytest.Item) -> str | None:
    """The instances of shared fixtures the item uses: those of module scope, and those of
    a wider scope that are parametrized (one kernel per ipykernel version, say).

    Tests with the same answer share those instances, so they belong on one worker,
    which makes each of them once.
    """
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    params = getattr(getattr(item, "callspec", None), "params", {})
    module = item.nodeid.split("::", 1)[0]
    keys: set[str] = set()
    for name, defs in info.name2fixturedefs.items():
        fixturedef = defs[-1]
        if fixturedef.scope in ("function", "class"):
            continue
        if name in params:
            where = module if fixturedef.scope == "module" else fixturedef.baseid or "."
            keys.add(f"{where}:{name}={params[name]}")
        elif fixturedef.scope == "module":
            keys.add(module)
    return ";".join(sorted(keys)) or None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Put each test in its group (see the module's text) and the long groups first.

    It runs before xdist's own hook, which reads the groups. An area's conftest may
    give its tests a group of its own before this one (a ``tryfirst`` hook of a conftest
    loaded later runs earlier); that one is kept.
    """
    for item in items:
        if item.get_closest_marker("xdist_group") is not None:
            continue
        group = shared_group(item)
        if group is None and item.nodeid.startswith("notebooks/"):
            group = item.nodeid.split("::", 1)[0]  # a tutorial's cells share its kernel
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))

    def rank(item: pytest.Item) -> int:
        area = area_of(item.nodeid)
        return FIRST.index(area) if area in FIRST else len(FIRST)

    items.sort(key=rank)  # stable: the order within an area stays as collected
    if hasattr(config, "workerinput") and config.getvalue("loadgroup"):
        for item in items:
            name_group(item)


def name_group(item: pytest.Item) -> None:
    """Add the item's group to its node id (``...@group``), which xdist schedules by.

    xdist does it itself through ``Item._nodeid``, which pytest 9.2 no longer reads
    (the id lives in ``Item._id``); where it still does, this leaves it to xdist.
    """
    if not hasattr(item, "_id") or hasattr(item, "_nodeid"):
        return
    names = sorted({str(m.args[0]) for m in item.iter_markers("xdist_group") if m.args})
    if not names or item.nodeid.endswith("@" + "_".join(names)):
        return
    from _pytest.nodeid import NodeId

    item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")


class Timings:
    """What each test took, gathered where the reports arrive (the controller under xdist)."""

    def __init__(self) -> None:
        self.started = STARTED
        self.tests: dict[str, dict[str, float]] = {}
        self.outcomes: dict[str, str] = {}
        self.workers: dict[str, dict[str, float]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        if nodeid.rfind("@") > nodeid.rfind("]"):
            nodeid = nodeid[: nodeid.rfind("@")]  # the xdist group (name_group)
        entry = self.tests.setdefault(
            nodeid, {"duration": 0.0, "start": report.start, "stop": report.stop}
        )
        entry["duration"] += report.duration
        node = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", None)
        if node is not None:
            worker = self.workers.setdefault(node, {"busy": 0.0, "last": report.stop})
            worker["busy"] += report.duration
            worker["last"] = max(worker["last"], report.stop)
        entry["start"] = min(entry["start"], report.start)
        entry["stop"] = max(entry["stop"], report.stop)
        if report.when == "call" or report.outcome != "passed":
            failed = report.failed and report.when != "call"
            outcome = "error" if failed else report.outcome
            if self.outcomes.get(nodeid) not in ("failed", "error"):
                self.outcomes[nodeid] = outcome

    def pytest_terminal_summary(self, terminalreporter: Any, config: pytest.Config) -> None:
        if not self.tests:
            return
        found = self.report(config)
        DURATIONS.parent.mkdir(parents=True, exist_ok=True)
        DURATIONS.write_text(json.dumps(found, indent=2) + "\n")
        write = terminalreporter.write_line
        terminalreporter.section("time per area")
        for name, area in found["areas"].items():
            write(
                f"{name:<10} {area['tests']:>5} tests {area['sum_s']:>9.1f} s summed "
                f"{area['span_s']:>8.1f} s from the first start to the last end"
            )
        for node, worker in found["by_worker"].items():
            busy, done = worker["busy_s"], worker["done_at_s"]
            write(f"{node:<10} busy {busy:>7.1f} s, done at {done:>7.1f} s")
        write(f"total {found['total_s']:.1f} s wall ({DURATIONS.relative_to(ROOT)})")

    def report(self, config: pytest.Config) -> dict[str, Any]:
        areas: dict[str, dict[str, Any]] = {}
        for nodeid, t in self.tests.items():
            area = areas.setdefault(
                area_of(nodeid), {"tests": 0, "sum_s": 0.0, "first": t["start"], "last": t["stop"]}
            )
            area["tests"] += 1
            area["sum_s"] += t["duration"]
            area["first"] = min(area["first"], t["start"])
            area["last"] = max(area["last"], t["stop"])
        slowest = sorted(self.tests.items(), key=lambda kv: -kv[1]["duration"])[:SLOWEST]
        files: dict[str, float] = {}
        for nodeid, t in self.tests.items():
            path = nodeid.split("::", 1)[0]
            files[path] = files.get(path, 0.0) + t["duration"]
        workers = getattr(config.option, "numprocesses", None)
        found: dict[str, Any] = {
            "total_s": round(time.time() - self.started, 1),
            "workers": workers if isinstance(workers, int) else 0,
            "areas": {
                name: {
                    "tests": a["tests"],
                    "sum_s": round(a["sum_s"], 1),
                    "span_s": round(a["last"] - a["first"], 1),
                }
                for name, a in sorted(areas.items())
            },
            "outcomes": {
                outcome: sum(1 for o in self.outcomes.values() if o == outcome)
                for outcome in sorted(set(self.outcomes.values()))
            },
            "by_worker": {
                node: {
                    "busy_s": round(w["busy"], 1),
                    "done_at_s": round(w["last"] - self.started, 1),
                }
                for node, w in sorted(self.workers.items())
            },
            "slowest": [{"test": nodeid, "s": round(t["duration"], 2)} for nodeid, t in slowest],
            "files": {
                path: round(seconds, 1)
                for path, seconds in sorted(files.items(), key=lambda kv: -kv[1])
            },
        }
        for key, variable in (("setup_s", "MEAD_SETUP_S"), ("checks_s", "MEAD_CHECKS_S")):
            value = os.environ.get(variable)
            if value:
                found[key] = float(value)
        return found


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller, or a run without xdist
        config.pluginmanager.register(Timings(), "mead-timings")
        # One id for this run, which its workers inherit: reports that several workers
        # write to one file merge only what this run wrote.
        os.environ["MEAD_RUN_ID"] = uuid.uuid4().hex
