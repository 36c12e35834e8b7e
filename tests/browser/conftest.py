"""Fixtures of the browser tests: Jupyter servers, Chromium, pages, latencies."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from .pages import NotebookPage
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
    """Click-to-unblock latencies in seconds, by test."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def record(self, test: str, seconds: float) -> None:
        self.seconds[test] = round(seconds, 4)

    def write(self, path: Path) -> None:
        values = sorted(self.seconds.values())
        report = {
            "unit": "seconds",
            "what": "from the Playwright click to the turn's thread returning from the question",
            "median": statistics.median(values) if values else None,
            "tests": dict(sorted(self.seconds.items())),
        }
        path.write_text(json.dumps(report, indent=2) + "\n")


@pytest.fixture(scope="session")
def latencies(artifacts: Path) -> Iterator[Latencies]:
    found = Latencies()
    yield found
    if found.seconds:
        found.write(LATENCY_FILE)
