"""Two people in one notebook: JupyterLab with jupyter-collaboration, two browser users.

Bob opens the notebook before Alice runs the cell: his page does not trust the
new output, so it draws no widget and reads the cell's text of what waits. He
trusts the notebook and gets the card. Both click at once: Alice's answer counts,
each page says who decided, and the audit records the name Alice's page claimed.
(The too-late notice of Bob's page is checked in js/test/who.test.js only.)
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from .identities import COOKIE, PEOPLE
from .pages import CLICK_RECORDER, OPEN_TIMEOUT, NotebookPage
from .servers import JupyterServer

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

CELL = """
from mead_notebook import NotebookInteraction, Router, ScriptedModel, ToolCall, tool

@tool
def write_file(path: str) -> str:
    \"\"\"Write a file.\"\"\"
    return f"wrote {path}"

w = NotebookInteraction(audit="calls.jsonl", timeout=240)
m = ScriptedModel([[ToolCall("write_file", {"path": "a.txt"})], ["Done."]])
Router(m, [write_file]).run("write it", interaction=w)
"""


@pytest.fixture(scope="module")
def collab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    server = JupyterServer(
        tmp_path_factory.mktemp("collab"),
        "lab",
        collaborative=True,
        args=("--ServerApp.identity_provider_class=tests.browser.identities.NamedUsers",),
    ).start()
    try:
        yield server
    finally:
        server.stop()


def person(chromium: Browser, server: JupyterServer, name: str) -> Page:
    context = chromium.new_context(viewport={"width": 1280, "height": 960})
    context.set_default_timeout(30_000)
    context.add_init_script(CLICK_RECORDER)
    context.add_cookies([{"name": COOKIE, "value": name, "url": server.url}])
    return context.new_page()


def trust(page: Page) -> None:
    """Trust the notebook as a person would: the command palette's "Trust Notebook"."""
    page.locator(".jp-Notebook").first.click()
    page.keyboard.press("Control+Shift+C")
    palette = page.locator(".lm-CommandPalette-input")
    palette.fill("Trust Notebook")
    page.keyboard.press("Enter")
    page.get_by_role("button", name="Trust").click()


def test_two_people_see_who_decided_and_the_audit_names_the_claimed_user(
    chromium: Browser, collab_server: JupyterServer, artifacts: Path
) -> None:
    bob_page = person(chromium, collab_server, "bob")
    alice_page = person(chromium, collab_server, "alice")
    try:
        bob = NotebookPage(bob_page, collab_server, "two-people", artifacts)
        bob.open([CELL])
        alice = NotebookPage(alice_page, collab_server, "two-people", artifacts)
        alice.reopen()
        for page, name in ((alice_page, "alice"), (bob_page, "bob")):
            me = page.evaluate(
                "async () => (await (await fetch('/api/me')).json()).identity.username"
            )
            assert me == name
        alice.run_cell(0)
        card = alice.card("write_file")
        expect(card.get_by_role("button", name="Allow", exact=True)).to_be_visible(
            timeout=OPEN_TIMEOUT
        )

        fallback = bob.output(0).locator(".mead-waiting")
        expect(fallback).to_contain_text(
            "waiting for a person: allow write_file on local?", timeout=OPEN_TIMEOUT
        )
        expect(fallback).to_contain_text("trust the notebook")
        expect(bob.output(0).locator(".mead-turn")).to_have_count(0)

        trust(bob_page)
        bob_card = bob.card("write_file")
        expect(bob_card.get_by_role("button", name="Deny", exact=True)).to_be_visible(
            timeout=OPEN_TIMEOUT
        )
        expect(bob.output(0).locator(".mead-waiting")).to_be_hidden()
        # Trusting in Bob's page rewrites the shared outputs, and Alice's page drops
        # its live view (jupyter-collaboration 5.0.4): a reload brings the question back.
        alice_page.reload()
        alice.wait_ready()

        click = "el => el.click()"
        started = time.monotonic()
        card.get_by_role("button", name="Allow", exact=True).evaluate(click)
        # Bob's click right after Alice's: it may find the card settled already.
        bob_page.evaluate(
            "() => document.querySelector("
            "'.mead-card[data-tool=\"write_file\"] .mead-deny')?.click()"
        )

        expect(card.locator(".mead-decision")).to_have_text("Allowed by you", timeout=OPEN_TIMEOUT)
        expect(bob_card.locator(".mead-decision")).to_have_text(f"Allowed by {PEOPLE['alice']}")
        expect(card.locator(".mead-too-late")).to_have_count(0)
        seen_by_both = time.monotonic() - started
        alice.wait_output(0, re.compile("Done"))

        lines = [
            json.loads(line)
            for line in (collab_server.root / "calls.jsonl").read_text().splitlines()
        ]
        (decided,) = [line for line in lines if line["event"] == "decided"]
        assert (decided["decided_by"], decided["decision"]) == ("person", "allow")
        assert (decided["username"], decided["display_name"]) == ("alice", PEOPLE["alice"])
        assert isinstance(decided["page"], str)
        (artifacts / "collab.json").write_text(
            json.dumps({"both_views_settled_s": round(seen_by_both, 3)}, indent=1)
        )
    finally:
        for page, name in ((alice_page, "alice"), (bob_page, "bob")):
            page.screenshot(path=str(artifacts / f"collab-{name}.png"))
        for page in (alice_page, bob_page):
            page.context.close()
        collab_server.shutdown_kernels()
