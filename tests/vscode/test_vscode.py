"""Turns in VS Code's own widget manager, through a host that behaves as VS Code does."""

from __future__ import annotations

import pytest
from browser.scenarios import ALLOW_SYNC, PRELUDE

from .host import VSCodeHost

pytestmark = pytest.mark.browser

QUESTION_TIMEOUT = 60.0


def allow_button(host: VSCodeHost):
    assert host.page is not None
    return host.page.locator(".mead-turn").get_by_role("button", name="Allow", exact=True)


def test_allow_in_a_sync_cell(host: VSCodeHost) -> None:
    host.run(PRELUDE)
    msg_id = host.execute(ALLOW_SYNC)
    host.drive(lambda: allow_button(host).count() == 1, QUESTION_TIMEOUT, "the Allow button")
    allow_button(host).click()
    host.drive(lambda: host.done(msg_id), 30, "the cell's end")
    assert "RESULT completed saved note: hello" in host.cells[msg_id].stdout
