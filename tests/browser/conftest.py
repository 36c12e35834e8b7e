"""Fixtures of the browser tests: Jupyter servers, Chromium, pages, latencies."""

from __future__ import annotations

import fcntl
import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Playwright, expect, sync_playwright

from .pages import CLICK_RECORDER, NotebookPage
from .servers import REPO, JupyterServer

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = REPO / "tests" / "artifacts"
LATENCY_FILE = ARTIFACTS / "latency.json"
WRITTEN: dict[str, Any] = {}
"""The latency report written by this session, for the terminal summary."""

# An expectation waits as long as an action: on two loaded cores a widget restored
# from saved state has taken longer than Playwright's 5 s default to render.
expect.set_options(timeout=30_000)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="package")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="package")
def chromium(playwright: Playwright) -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"Chromium is missing at {CHROMIUM}: install Debian's chromium package "
            "(apt-get install chromium); the browser tests never download a browser"
        )
    browser = playwright.chromium.launch(
        executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS, timeout=60_000
    )
    try:
        yield browser
    finally:
        browser.close()


def _serve(tmp_path_factory: pytest.TempPathFactory, app: str) -> Iterator[JupyterServer]:
    server = JupyterServer(tmp_path_factory.mktemp(app), app).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="package")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    """One JupyterLab per worker, for every module of its lane (each test shuts its kernels)."""
    yield from _serve(tmp_path_factory, "lab")


@pytest.fixture(scope="package")
def notebook7_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    yield from _serve(tmp_path_factory, "notebook")


LANES = 2
"""How many workers run browser tests at once, each with its own JupyterLab and Chromium."""


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Spread the browser tests' modules over :data:`LANES` groups of about equal size,
    so that a parallel run keeps each lane's servers and browser on one worker. A test
    that names its own ``xdist_group`` keeps it (a long test that may run on any worker)."""
    items = [item for item in items if item.get_closest_marker("xdist_group") is None]
    sizes: dict[str, int] = {}
    for item in items:
        if item.nodeid.startswith("tests/browser/"):
            module = item.nodeid.split("::", 1)[0]
            sizes[module] = sizes.get(module, 0) + 1
    load = [0] * LANES
    lane: dict[str, int] = {}
    for module, size in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])):
        lane[module] = load.index(min(load))
        load[lane[module]] += size
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if module in lane:
            item.add_marker(pytest.mark.xdist_group(f"browser-lane-{lane[module]}"))


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    context = chromium.new_context(viewport={"width": 1280, "height": 960})
    context.set_default_timeout(30_000)
    context.add_init_script(CLICK_RECORDER)
    pg = context.new_page()
    try:
        yield pg
    finally:
        context.close()


def notebook_page(
    page: Page, server: JupyterServer, artifacts: Path, request: pytest.FixtureRequest
) -> Iterator[NotebookPage]:
    """The test's notebook page in ``server``; its kernels are shut down after the test."""
    nb = NotebookPage(page, server, request.node.name, artifacts)
    try:
        yield nb
    finally:
        nb.finish()
        server.shutdown_kernels()


@pytest.fixture
def lab(
    page: Page, lab_server: JupyterServer, artifacts: Path, request: pytest.FixtureRequest
) -> Iterator[NotebookPage]:
    yield from notebook_page(page, lab_server, artifacts, request)


@pytest.fixture
def notebook7(
    page: Page, notebook7_server: JupyterServer, artifacts: Path, request: pytest.FixtureRequest
) -> Iterator[NotebookPage]:
    yield from notebook_page(page, notebook7_server, artifacts, request)


class Latencies:
    """Click-to-kernel latencies in milliseconds, by test.

    From the page's click event (its ``timeStamp``, as epoch time through
    ``performance.timeOrigin``) to the kernel's ``time.time()`` when the turn went on:
    the tool started (an allowed call) or the question returned (a denial, a choice).
    A stamp that holds an agent's own work too (a file's mtime where an agent reports
    no tool start) is kept by name but out of the pooled p50/p95 (``pooled=False``).
    """

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = {}
        self.unpooled: set[str] = set()
        self.skew_ms: list[float] = []

    def measure(
        self,
        nb: NotebookPage,
        test: str,
        labels: tuple[str, ...],
        kind: str,
        *,
        pooled: bool = True,
    ) -> None:
        """Pair the page's clicks on ``labels`` with the kernel's ``kind`` stamps, in order."""
        clicks = nb.clicks(*labels)
        stamps = nb.kernel_stamps(kind)
        assert len(clicks) == len(stamps), f"{len(clicks)} clicks, {len(stamps)} {kind} stamps"
        self.ms.setdefault(test, []).extend(
            round(stamp * 1000 - click["at"], 2)
            for click, stamp in zip(clicks, stamps, strict=True)
        )
        self.skew_ms.extend(abs(click["skew"]) for click in clicks)
        if not pooled:
            self.unpooled.add(test)

    def write(self, path: Path) -> None:
        """Write the report to ``path``; in a parallel run, merged with what the other
        workers of the same run wrote there (``MEAD_RUN_ID``, set by conftest.py)."""
        run = os.environ.get("MEAD_RUN_ID")
        with open(path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if run is not None and path.exists():
                try:
                    earlier = json.loads(path.read_text())
                except ValueError:
                    earlier = {}
                if earlier.get("run") == run:
                    for test, samples in earlier.get("tests", {}).items():
                        self.ms.setdefault(test, []).extend(samples)
                    self.unpooled.update(earlier.get("not_pooled", []))
                    self.skew_ms.extend(earlier.get("skew_ms", []))
            self._write(path, run)

    def _write(self, path: Path, run: str | None) -> None:
        values = sorted(
            v for test, samples in self.ms.items() if test not in self.unpooled for v in samples
        )
        report = {
            "unit": "milliseconds",
            "what": "from the page's click event (event.timeStamp + performance.timeOrigin) "
            "to the kernel's time.time() when the tool started (allowed calls) or the "
            "question returned (denials, choices)",
            "samples": len(values),
            "p50": percentile(values, 50),
            "p95": percentile(values, 95),
            "max_clock_skew": round(max(self.skew_ms), 3) if self.skew_ms else None,
            "tests": dict(sorted(self.ms.items())),
            "not_pooled": sorted(self.unpooled),
            "skew_ms": self.skew_ms,
            "run": run,
        }
        path.write_text(json.dumps(report, indent=2) + "\n")
        WRITTEN.update(report)


def percentile(values: list[float], p: float) -> float | None:
    """The nearest-rank percentile of sorted ``values`` (None when there are none)."""
    if not values:
        return None
    return values[max(0, math.ceil(p / 100 * len(values)) - 1)]


@pytest.fixture(scope="session")
def latencies(artifacts: Path) -> Iterator[Latencies]:
    found = Latencies()
    yield found
    if found.ms:
        found.write(LATENCY_FILE)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if WRITTEN:
        terminalreporter.write_line(
            f"click to kernel: p50 {WRITTEN['p50']} ms, p95 {WRITTEN['p95']} ms over "
            f"{WRITTEN['samples']} clicks ({LATENCY_FILE.relative_to(REPO)})"
        )
