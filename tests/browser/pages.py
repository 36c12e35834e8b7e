"""Driving a notebook page as a person would: open it, run cells, read outputs."""

from __future__ import annotations

import contextlib
import json
import re
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import ConsoleMessage, Dialog, Locator, Page, Response, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from .servers import JupyterServer

OPEN_TIMEOUT = 60_000
RUN_TIMEOUT = 60_000
SAVE_TIMEOUT = 30_000
STAMP = re.compile(r"^(UNBLOCKED|TOOL) (\d+\.\d+)$", re.MULTILINE)

CLICK_RECORDER = """
window.__meadClicks = [];
window.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("button") : null;
  if (button === null || button.closest(".mead-turn") === null) return;
  window.__meadClicks.push({
    label: button.textContent.trim(),
    at: performance.timeOrigin + event.timeStamp,
    skew: Date.now() - (performance.timeOrigin + performance.now()),
  });
}, { capture: true });
"""
"""Records, in every document of the page, when each button of a turn was clicked:
the click event's ``timeStamp`` as epoch milliseconds (through
``performance.timeOrigin``), and how far ``Date.now()`` is from that clock."""


def write_notebook(root: Path, name: str, cells: list[str]) -> str:
    """Write a notebook of code cells into the server's root; return its file name."""
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {
                "name": "python3",
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
            }
        },
        "cells": [
            {
                "cell_type": "code",
                "id": f"cell-{i}",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
    }
    file_name = f"{name}.ipynb"
    (root / file_name).write_text(json.dumps(notebook, indent=1))
    return file_name


class NotebookPage:
    """One notebook open in JupyterLab or Notebook 7 in a Chromium page."""

    def __init__(self, page: Page, server: JupyterServer, name: str, artifacts: Path) -> None:
        self.page = page
        self.server = server
        self.name = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")
        self.artifacts = artifacts
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.console: list[str] = []
        """The pages' console errors and warnings (printed at the end, shown on a failure)."""
        self._shots = 0
        self._listen(page)

    def _listen(self, page: Page) -> None:
        page.on("dialog", self._on_dialog)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("console", self._on_console)

    def use_page(self, page: Page) -> None:
        """Go on in ``page`` (a tab opened anew), its dialogs, errors and console heard too."""
        self.page = page
        self._listen(page)

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning"):
            self.console.append(f"{message.type}: {message.text}"[:2000])

    def _on_dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        if dialog.type == "beforeunload":
            dialog.accept()
        else:
            dialog.dismiss()

    # -- notebooks -------------------------------------------------------------------

    def open(self, cells: list[str]) -> None:
        """Write a notebook with these cells, open it and wait for its kernel."""
        write_notebook(self.server.root, self.name, cells)
        self.reopen()

    def reopen(self) -> None:
        """Open the notebook as saved (a new page load) and wait for its kernel."""
        self.page.goto(self.server.page_url(f"{self.name}.ipynb"), timeout=OPEN_TIMEOUT)
        self.wait_ready()

    def wait_ready(self) -> None:
        """Wait until the notebook shows and its kernel is connected and idle."""
        expect(self.page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=OPEN_TIMEOUT)
        if self.server.app == "lab":
            idle = self.page.locator("#jp-main-statusbar").get_by_role(
                "button", name=re.compile(r"\| Idle$")
            )
            expect(idle).to_be_visible(timeout=OPEN_TIMEOUT)
        deadline = time.monotonic() + OPEN_TIMEOUT / 1000
        while time.monotonic() < deadline:
            kernels = self.server.kernels()
            if any(k["connections"] > 0 and k["execution_state"] == "idle" for k in kernels):
                return
            time.sleep(0.2)
        raise AssertionError(f"no kernel connected to {self.name} in {OPEN_TIMEOUT / 1000} s")

    def cell(self, index: int) -> Locator:
        return self.page.locator(".jp-Notebook .jp-Cell").nth(index)

    def run_cell(self, index: int) -> None:
        """Run one cell in place (Ctrl+Enter in its editor), as a person would."""
        prompt = self.cell(index).locator(".jp-InputPrompt")
        for _ in range(3):
            self.cell(index).locator(".cm-content").click()
            self.page.keyboard.press("Control+Enter")
            try:
                expect(prompt).not_to_have_text(re.compile(r"^\[ \]:?$"), timeout=5_000)
            except AssertionError:
                continue
            return
        raise AssertionError(f"cell {index} of {self.name} did not start running")

    def output(self, index: int) -> Locator:
        return self.cell(index).locator(".jp-OutputArea")

    def wait_output(
        self, index: int, text: str | re.Pattern[str], timeout: int = RUN_TIMEOUT
    ) -> None:
        expect(self.output(index)).to_contain_text(text, timeout=timeout)

    def output_text(self, index: int) -> str:
        return self.output(index).inner_text()

    def kernel_stamps(self, kind: str) -> list[float]:
        """The kernel's ``time.time()`` readings the cells printed as ``<kind> <seconds>``.

        ``UNBLOCKED``: a question returned to the turn; ``TOOL``: a tool started.
        """
        texts = self.page.locator(".jp-Notebook .jp-OutputArea").all_inner_texts()
        return [float(t) for k, t in STAMP.findall("\n".join(texts)) if k == kind]

    def clicks(self, *labels: str) -> list[dict[str, Any]]:
        """The clicks on the turns' buttons with these labels in this document, in order."""
        found: list[dict[str, Any]] = self.page.evaluate("() => window.__meadClicks ?? []")
        return [c for c in found if c["label"] in labels]

    def save(self) -> None:
        """Save the notebook with the toolbar's save button; wait until the server answered
        the page's save, or fail saying what the page shows instead (a dialog that holds
        the save, such as "File Changed")."""
        toolbar = self.page.locator(".jp-NotebookPanel-toolbar")
        button = toolbar.get_by_role("button", name=re.compile(r"^Save")).first
        path = f"/api/contents/{self.name}.ipynb"

        def is_save(response: Response) -> bool:
            return response.request.method == "PUT" and response.url.split("?")[0].endswith(path)

        try:
            with self.page.expect_response(is_save, timeout=SAVE_TIMEOUT) as saved:
                button.click()
        except PlaywrightTimeoutError:
            shown = self.page.locator(".jp-Dialog").all_inner_texts()
            raise AssertionError(
                f"{self.name}.ipynb was not saved within {SAVE_TIMEOUT / 1000:g} s of the click; "
                f"dialogs: {shown or self.dialogs or 'none'}"
            ) from None
        response = saved.value
        assert response.ok, f"saving {self.name}.ipynb: HTTP {response.status} {response.text()}"

    # -- the widget ------------------------------------------------------------------

    def turn(self, index: int = 0) -> Locator:
        """The widget's view in a cell's output."""
        return self.output(index).locator(".mead-turn")

    def card(self, tool: str, index: int = 0) -> Locator:
        """The cards of ``tool``'s calls (a question from ``ask_user`` too, titled "Question")."""
        return self.turn(index).locator(f'.mead-card[data-tool="{tool}"]')

    # -- evidence --------------------------------------------------------------------

    def shot(self, state: str) -> Path:
        """Save a screenshot of the page as ``<test>-<n>-<state>.png``."""
        self._shots += 1
        path = self.artifacts / f"{self.name}-{self._shots}-{state}.png"
        self.page.screenshot(path=str(path))
        return path

    def finish(self) -> None:
        with contextlib.suppress(Exception):
            self.shot("final")
        if self.console:
            print("the pages' console said:", *self.console[-40:], sep="\n  ")
