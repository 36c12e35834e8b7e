"""A JupyterLab tab closed while a question waits, and the notebook opened again; a view
whose kernel restarted while a question waited."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest
from playwright.sync_api import expect

from mead_notebook.notebook.labels import KERNEL_GONE, KERNEL_GONE_NOTE, KERNEL_GONE_STATUS
from mead_notebook.notebook.waiting.views import Timing

from .conftest import Latencies
from .pages import NotebookPage
from .scenarios import AFTER_SYNC, CHOICE_SYNC, PRELUDE, TIMEOUT_SYNC
from .test_lab import QUESTION_TIMEOUT, wait_saved_with_widget

pytestmark = pytest.mark.browser

JUPYTERLAB_GAVE_UP = "Error: Canceled future for create_subshell_request message"
"""What JupyterLab's kernel connection throws, uncaught, for a subshell request to a kernel
that died before answering (it asks for one per comm target)."""

TIMING = Timing(ping_every=1.0, answer_within=0.5, announce_every=1.0)
"""Quicker checks on views than the defaults (which tests/notebook/test_presence.py covers)."""
KERNEL_PID = """
import os
print("KERNEL PID", os.getpid(), flush=True)
"""
QUICK = f"""
from mead_notebook.notebook.waiting import views
views.set_timing(views.{TIMING!r})
"""


def test_a_closed_tab_reopened_gets_the_waiting_question(
    lab: NotebookPage, latencies: Latencies
) -> None:
    lab.open([PRELUDE + QUICK + CHOICE_SYNC, AFTER_SYNC])
    lab.run_cell(0)
    expect(lab.turn().get_by_label("Green tea")).to_be_visible(timeout=QUESTION_TIMEOUT)
    lab.save()
    wait_saved_with_widget(lab.server, lab.name)
    # The tab goes (as a crashed or closed browser: no goodbye), long enough for the
    # kernel to find nobody there and announce the widget again, more than once.
    context = lab.page.context
    lab.page.close()
    time.sleep(TIMING.ping_every + TIMING.noticed_after() + 2 * TIMING.announce_every + 1)
    lab.use_page(context.new_page())
    lab.page.goto(lab.server.page_url(f"{lab.name}.ipynb"))
    reopened = time.monotonic()
    expect(lab.page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=QUESTION_TIMEOUT)
    drawn = time.monotonic()
    tea = lab.turn().get_by_label("Green tea")
    expect(tea).to_be_visible(timeout=QUESTION_TIMEOUT)
    back = time.monotonic()
    tea.check()
    lab.shot("reopened")
    lab.turn().get_by_role("button", name="Submit").click()
    expect(lab.turn()).to_contain_text("Chose “Green tea” by you", timeout=QUESTION_TIMEOUT)
    lab.run_cell(1)
    lab.wait_output(1, "RESULT completed")
    lab.wait_output(1, "Green tea")
    lab.shot("answered")
    latencies.measure(lab, "lab_closed_tab_reopened", ("Submit",), "UNBLOCKED")
    print(
        f"question visible {back - reopened:.2f} s after the notebook was opened again, "
        f"{back - drawn:.2f} s after its cells were drawn"
    )


def test_a_view_whose_kernel_went_away_says_so_and_stops_counting(lab: NotebookPage) -> None:
    lab.open([PRELUDE + KERNEL_PID + TIMEOUT_SYNC.replace("timeout=6", "timeout=120")])
    lab.run_cell(0)
    card = lab.card("write_note")
    countdown = card.locator(".mead-countdown")
    expect(countdown).to_be_visible(timeout=QUESTION_TIMEOUT)
    pid = int(re.findall(r"KERNEL PID (\d+)", lab.output_text(0))[0])
    # The kernel dies as a crash or an out-of-memory kill ends it: without a word.
    os.kill(pid, signal.SIGKILL)
    expect(card.locator(".mead-status")).to_have_text(KERNEL_GONE, timeout=QUESTION_TIMEOUT)
    expect(card.locator(".mead-kernel-gone")).to_have_text(KERNEL_GONE_NOTE)
    expect(lab.turn().locator(".mead-turn-status")).to_have_text(KERNEL_GONE_STATUS)
    expect(countdown).to_have_count(0)
    allow = lab.turn().get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_disabled()
    restarting = lab.page.get_by_role("button", name="Ok", exact=True)
    if restarting.is_visible():  # JupyterLab's own notice of the restart
        restarting.click()
    lab.shot("kernel-gone")
    # Still said a while later: nothing counts down or sends any more.
    time.sleep(2)
    expect(card.locator(".mead-status")).to_have_text(KERNEL_GONE)
    expect(card.locator(".mead-sent")).to_have_text("")
    # JupyterLab's own: the subshells it was asking the dead kernel for are given up.
    errors = [e for e in lab.errors if not e.startswith(JUPYTERLAB_GAVE_UP)]
    assert errors == [], lab.errors
