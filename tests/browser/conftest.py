"""Fixtures of the browser tests: Jupyter servers, Chromium, pages, latencies."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

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


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    yield from _serve(tmp_path_factory, "lab")


@pytest.fixture(scope="module")
def notebook7_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    yield from _serve(tmp_path_factory, "notebook")


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
