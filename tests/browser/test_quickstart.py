"""JupyterLab as ``scripts/quickstart.sh`` starts it: the quickstart opens, real-time
collaboration is off (jupyter-collaboration is in the dev extra, for the tests that ask for
it), and no ``.jupyter_ystore.db`` is left in the folder it runs in."""

from __future__ import annotations

import json
import shlex
import shutil
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .servers import REPO, JupyterServer, python_for_kernels

pytestmark = pytest.mark.browser

QUICKSTART = REPO / "scripts" / "quickstart.sh"
SETTLE = 5.0
"""Seconds the open notebook is left to its server (a collaborative room writes its store
as soon as the document opens)."""


def quickstart_lab_args(root: Path) -> list[str]:
    """The arguments ``scripts/quickstart.sh`` gives ``jupyter lab``, its ``$root`` at ``root``."""
    line = next(line for line in QUICKSTART.read_text().splitlines() if "/bin/jupyter lab " in line)
    words = shlex.split(line.replace("$root", str(root)))
    return words[words.index("lab") + 1 :]


class QuickstartLab(JupyterServer):
    """JupyterLab with the quickstart's own arguments, in a copy of the checkout's layout."""

    def command(self) -> list[str]:
        return [
            str(python_for_kernels()),
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--port-retries=0",
            f"--IdentityProvider.token={self.token}",
            "--ServerApp.allow_root=True",
            *quickstart_lab_args(self.root),
        ]

    def page_url(self, notebook: str) -> str:
        return f"{self.url}lab/tree/{notebook}?token={self.token}"


def test_the_quickstart_opens_without_collaboration(page: Page, tmp_path: Path) -> None:
    server = QuickstartLab(tmp_path)
    (server.root / "notebooks").mkdir()
    shutil.copy(REPO / "notebooks" / "01-quickstart.ipynb", server.root / "notebooks")
    server.start()
    try:
        page.goto(server.page_url("01-quickstart.ipynb"), timeout=60_000)
        expect(page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=60_000)
        expect(page.locator(".jp-Notebook")).to_contain_text("Quickstart", timeout=60_000)
        config = json.loads(page.locator("#jupyter-config-data").text_content() or "{}")
        assert config.get("disableRTC") is True, config.get("disableRTC")
        time.sleep(SETTLE)
        assert not list(server.root.rglob(".jupyter_ystore*")), list(server.root.rglob("*"))
    finally:
        server.stop()
