"""Two people in one notebook: JupyterLab with jupyter-collaboration, two browser users.

Bob opens the notebook before Alice runs the cell: his page does not trust the
new output, so it draws no widget and reads the cell's text of what waits. He
trusts the notebook and gets the card. Alice allows while Bob's page hears nothing
from the kernel (its kernel websocket is held), so Bob clicks Allow on a card still
open for him: his answer reaches the kernel after Alice's and is ignored. Once his
page hears the rest, it says Alice allowed and that his answer came too late; hers
says "by you", and the audit records only Alice's decision, with the name her page
claimed.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, WebSocketRoute, expect

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

KERNEL_CHANNELS = re.compile(r"/api/kernels/[^/]+/channels")


class KernelGate:
    """Sits between a page and its kernel's websocket: holds what the kernel sends
    to the page while ``hold`` is on, passes everything the page sends."""

    def __init__(self, page: Page) -> None:
        self.holding = False
        self.held: list[tuple[WebSocketRoute, str | bytes]] = []
        self.sent: list[str | bytes] = []
        self.received: list[str | bytes] = []
        page.route_web_socket(KERNEL_CHANNELS, self._route)

    def _route(self, ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()
        ws.on_message(lambda message: self._to_kernel(server, message))
        server.on_message(lambda message: self._to_page(ws, message))

    def _to_kernel(self, server: WebSocketRoute, message: str | bytes) -> None:
        self.sent.append(message)
        server.send(message)

    def _to_page(self, ws: WebSocketRoute, message: str | bytes) -> None:
        self.received.append(message)
        if self.holding:
            self.held.append((ws, message))
        else:
            ws.send(message)

    def hold(self) -> None:
        self.holding = True

    def release(self) -> None:
        """Deliver what was held, in order, and stop holding."""
        self.holding = False
        held, self.held = self.held, []
        for ws, message in held:
            ws.send(message)

    def answers(self) -> list[str]:
        """The msg_ids of the answers the page sent its kernel."""
        return [m for m in (answer_id(message) for message in self.sent) if m is not None]

    def kernel_done_with(self, msg_id: str) -> bool:
        """Whether the kernel said it is idle after handling message ``msg_id``."""
        return any(
            msg_id.encode() in raw and b'"idle"' in raw
            for raw in (m if isinstance(m, bytes) else m.encode() for m in self.received)
        )


def answer_id(message: str | bytes) -> str | None:
    raw = message if isinstance(message, bytes) else message.encode()
    if b'"type": "answer"' not in raw and b'"type":"answer"' not in raw:
        return None
    found = re.search(rb'"msg_id":\s*"([^"]+)"', raw)
    return found.group(1).decode() if found else None


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
    page = context.new_page()
    # A page's own save can race the collaboration server's save of the shared notebook,
    # and JupyterLab then asks "File Changed" (overwrite or revert?) over the page. The
    # server goes on saving the shared document: the page's save is cancelled.
    page.add_locator_handler(
        page.get_by_role("dialog", name=re.compile(r"^File Changed")),
        lambda dialog: dialog.get_by_role("button", name="Cancel", exact=True).click(),
    )
    # On a loaded machine the shared document can take long enough to load that
    # JupyterLab asks whether to go on waiting: a person would.
    page.add_locator_handler(
        page.get_by_role("dialog", name=re.compile(r"^Loading")),
        lambda dialog: dialog.get_by_role("button", name="Continue waiting").click(),
    )
    return page


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
    gate = KernelGate(bob_page)
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

        # Bob's page hears nothing from the kernel while Alice allows and the kernel
        # settles; then Bob clicks Allow on his still open card: his answer reaches
        # the kernel, which ignores it as late; then his page hears it all.
        gate.hold()
        started = time.monotonic()
        card.get_by_role("button", name="Allow", exact=True).click()
        expect(card.locator(".mead-decision")).to_have_text("Allowed by you", timeout=OPEN_TIMEOUT)
        alice_settled = time.monotonic() - started
        bob_card.get_by_role("button", name="Allow", exact=True).click()
        deadline = time.monotonic() + 30
        while not (gate.answers() and gate.kernel_done_with(gate.answers()[-1])):
            assert time.monotonic() < deadline, "the kernel never handled Bob's answer"
            bob_page.wait_for_timeout(100)
        expect(bob_card.get_by_role("button", name="Allow", exact=True)).to_be_visible()
        released = time.monotonic()
        gate.release()

        expect(bob_card.locator(".mead-decision")).to_have_text(
            f"Allowed by {PEOPLE['alice']}", timeout=OPEN_TIMEOUT
        )
        expect(bob_card.locator(".mead-too-late")).to_have_text(
            f"Too late: {PEOPLE['alice']} already allowed this; your answer was not used."
        )
        expect(card.locator(".mead-decision")).to_have_text("Allowed by you")
        expect(card.locator(".mead-too-late")).to_have_count(0)
        bob_told = time.monotonic() - released
        alice.wait_output(0, re.compile("Done"))
        bob.wait_output(0, re.compile("Done"))
        # The turn's end updates the output; Bob's view still says his answer was late.
        expect(bob_card.locator(".mead-too-late")).to_have_text(
            f"Too late: {PEOPLE['alice']} already allowed this; your answer was not used."
        )
        expect(card.locator(".mead-decision")).to_have_text("Allowed by you")

        lines = [
            json.loads(line)
            for line in (collab_server.root / "calls.jsonl").read_text().splitlines()
        ]
        (decided,) = [line for line in lines if line["event"] == "decided"]
        assert (decided["decided_by"], decided["decision"]) == ("person", "allow")
        assert (decided["username"], decided["display_name"]) == ("alice", PEOPLE["alice"])
        assert isinstance(decided["page"], str)
        (artifacts / "collab.json").write_text(
            json.dumps(
                {
                    "alice_click_to_her_view_settled_s": round(alice_settled, 3),
                    "bob_release_to_too_late_notice_s": round(bob_told, 3),
                },
                indent=1,
            )
        )
    finally:
        for page, name in ((alice_page, "alice"), (bob_page, "bob")):
            page.screenshot(path=str(artifacts / f"collab-{name}.png"))
        for page in (alice_page, bob_page):
            page.context.close()
        collab_server.shutdown_kernels()
