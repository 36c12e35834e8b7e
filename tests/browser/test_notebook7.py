"""A person allowing a tool call in real Notebook 7."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import Latencies
from .pages import NotebookPage
from .scenarios import ALLOW_SYNC, PRELUDE

pytestmark = pytest.mark.browser


def test_allow_in_a_sync_cell(notebook7: NotebookPage, latencies: Latencies) -> None:
    nb = notebook7
    nb.open([PRELUDE + ALLOW_SYNC])
    nb.run_cell(0)
    allow = nb.turn().get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible(timeout=60_000)
    expect(nb.card("write_note")).to_contain_text("Waiting for you")
    nb.shot("asking")
    allow.click()
    nb.wait_output(0, "RESULT completed saved note: hello")
    expect(nb.card("write_note")).to_contain_text("Allowed by you")
    expect(nb.turn().locator(".mead-text")).to_contain_text("The tool said: saved note: hello")
    expect(nb.page.locator(".mead-load-error")).to_have_count(0)
    nb.shot("allowed")
    latencies.measure(nb, "notebook7_sync_allow", ("Allow",), "TOOL")
