"""Fixtures of the VS Code tests: Chromium, the VS Code host on a real kernel, latencies."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser.conftest import CHROMIUM, CHROMIUM_ARGS, Latencies  # noqa: F401
from browser.conftest import artifacts as artifacts
from browser.conftest import latencies as latencies
from browser.pages import CLICK_RECORDER
from playwright.sync_api import Browser, sync_playwright

from .host import HERE, VSCodeHost, kernel_python

MANAGER = HERE / "node_modules" / "@vscode" / "jupyter-ipywidgets8" / "dist" / "ipywidgets.js"


@pytest.fixture(scope="package")
def chromium() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is missing at {CHROMIUM}: install Debian's chromium package")
    if not MANAGER.exists():
        pytest.fail(f"VS Code's widget manager is missing at {MANAGER}: run scripts/setup.sh")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS, timeout=60_000
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """One group: a parallel run keeps the VS Code tests and their Chromium on one worker."""
    for item in items:
        if item.nodeid.startswith("tests/vscode/"):
            item.add_marker(pytest.mark.xdist_group("vscode"))


@pytest.fixture(params=["6.29.5", "7.4.0"])
def host(request: pytest.FixtureRequest, chromium: Browser, tmp_path: Path) -> Iterator[VSCodeHost]:
    """A kernel of the oldest or newest supported ipykernel, shown in a VS Code webview."""
    version = request.param
    if not kernel_python(version).exists():
        pytest.fail(f"the kernel environment for ipykernel {version} is missing", pytrace=False)
    context = chromium.new_context(viewport={"width": 1280, "height": 960})
    context.set_default_timeout(30_000)
    context.add_init_script(CLICK_RECORDER)
    vs = VSCodeHost(version, tmp_path, context)
    try:
        vs.open_webview()
        yield vs
    finally:
        vs.close()
        context.close()
