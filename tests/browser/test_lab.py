"""A person steering turns in real JupyterLab (default settings, comms over subshells)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from playwright.sync_api import Locator, expect

from .conftest import Latencies
from .pages import NotebookPage
from .scenarios import (
    AFTER_SYNC,
    ALLOW_SYNC,
    ASYNC_ALLOW,
    BACKGROUND_ALLOW,
    BACKGROUND_CHOICE,
    BACKGROUND_RESULT,
    CANCEL_SYNC,
    CHOICE_SYNC,
    DENY_SYNC,
    HOSTILE,
    MANY_ALLOWS,
    NO_CODE,
    PAYLOADS,
    PRELUDE,
    SECOND_TURN,
    TIMEOUT_SYNC,
)
from .servers import JupyterServer, ServerError

pytestmark = pytest.mark.browser

QUESTION_TIMEOUT = 60_000
THEMES = "@jupyterlab/apputils-extension:themes"
WIDGETS = "@jupyter-widgets/jupyterlab-manager:plugin"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def allow_and_check(nb: NotebookPage, latencies: Latencies, test: str) -> None:
    allow = nb.turn().get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible(timeout=QUESTION_TIMEOUT)
    expect(nb.card("write_note")).to_contain_text("Waiting for you")
    nb.shot("asking")
    allow.click()
    nb.wait_output(0, "RESULT completed saved note: hello")
    card = nb.card("write_note")
    expect(card).to_contain_text("Completed")
    expect(card).to_contain_text("Allowed by you")
    expect(nb.turn().locator(".mead-text")).to_contain_text("The tool said: saved note: hello")
    expect(nb.page.locator(".mead-load-error")).to_have_count(0)
    nb.shot("allowed")
    latencies.measure(nb, test, ("Allow",), "TOOL")


def test_allow_in_a_sync_cell(lab: NotebookPage, latencies: Latencies) -> None:
    lab.open([PRELUDE + ALLOW_SYNC])
    lab.run_cell(0)
    allow_and_check(lab, latencies, "lab_sync_allow")


def test_allow_in_an_async_cell(lab: NotebookPage, latencies: Latencies) -> None:
    lab.open([PRELUDE + ASYNC_ALLOW])
    lab.run_cell(0)
    allow_and_check(lab, latencies, "lab_async_allow")


def test_allow_a_background_turn(lab: NotebookPage, latencies: Latencies) -> None:
    lab.open([PRELUDE + BACKGROUND_ALLOW, BACKGROUND_RESULT])
    lab.run_cell(0)
    lab.wait_output(0, "STARTED")
    allow = lab.turn().get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible(timeout=QUESTION_TIMEOUT)
    lab.shot("asking")
    allow.click()
    expect(lab.card("write_note")).to_contain_text("Completed", timeout=QUESTION_TIMEOUT)
    lab.run_cell(1)
    lab.wait_output(1, "RESULT completed saved note: hello")
    lab.shot("allowed")
    latencies.measure(lab, "lab_background_allow", ("Allow",), "TOOL")


def test_deny_reaches_the_model(lab: NotebookPage, latencies: Latencies) -> None:
    lab.open([PRELUDE + DENY_SYNC])
    lab.run_cell(0)
    deny = lab.turn().get_by_role("button", name="Deny", exact=True)
    expect(deny).to_be_visible(timeout=QUESTION_TIMEOUT)
    deny.click()
    lab.wait_output(0, "RESULT denied")
    card = lab.card("write_note")
    expect(card).to_contain_text("Denied")
    expect(card).to_have_attribute("data-outcome", "denied")
    reply = "The tool failed: Permission to run write_note was denied (rejected)"
    expect(lab.turn().locator(".mead-text")).to_contain_text(reply)
    lab.wait_output(0, "TEXT " + reply)
    lab.shot("denied")
    latencies.measure(lab, "lab_sync_deny", ("Deny",), "UNBLOCKED")


def test_answer_a_choice(lab: NotebookPage, latencies: Latencies) -> None:
    lab.open([PRELUDE + CHOICE_SYNC])
    lab.run_cell(0)
    coffee = lab.turn().get_by_label("Black coffee")
    expect(coffee).to_be_visible(timeout=QUESTION_TIMEOUT)
    expect(lab.turn()).to_contain_text("Which drink?")
    coffee.check()
    lab.shot("choosing")
    lab.turn().get_by_role("button", name="Submit").click()
    lab.wait_output(0, 'RESULT completed {"option_id": "coffee", "label": "Black coffee"}')
    expect(lab.turn()).to_contain_text("Chose “Black coffee” by you")
    lab.shot("chosen")
    latencies.measure(lab, "lab_sync_choice", ("Submit",), "UNBLOCKED")


def test_cancel_a_slow_tool(lab: NotebookPage) -> None:
    lab.open([PRELUDE + CANCEL_SYNC])
    lab.run_cell(0)
    allow = lab.turn().get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible(timeout=QUESTION_TIMEOUT)
    allow.click()
    card = lab.card("slow_count")
    bar = card.get_by_role("progressbar")
    first = wait_progress_above(bar, 0.0)
    moved = wait_progress_above(bar, first)
    assert 0 < first < moved < 1, (first, moved)
    lab.shot("running")
    card.get_by_role("button", name="Cancel").click()
    lab.wait_output(0, "RESULT cancelled")
    expect(card).to_have_attribute("data-outcome", "cancelled")
    expect(card.locator(".mead-status")).to_have_text("Cancelled")
    lab.shot("cancelled")


def wait_progress_above(bar: Locator, floor: float, timeout: float = 30.0) -> float:
    """Wait until the progress bar's value exceeds ``floor``; return the value seen."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        raw = bar.get_attribute("value")
        if raw is not None and float(raw) > floor:
            return float(raw)
        time.sleep(0.05)
    raise AssertionError(f"the progress bar stayed at or below {floor} for {timeout} s")


def test_a_question_times_out(lab: NotebookPage) -> None:
    lab.open([PRELUDE + TIMEOUT_SYNC])
    lab.run_cell(0)
    timer = lab.turn().get_by_role("timer")
    expect(timer).to_have_text(re.compile(r"^Denies in [1-6] s$"), timeout=QUESTION_TIMEOUT)
    first = int(re.findall(r"\d+", timer.inner_text())[0])
    lab.shot("countdown")
    expect(timer).to_have_text(re.compile(rf"^Denies in [0-{first - 1}] s$"), timeout=5_000)
    lab.wait_output(0, "RESULT expired", timeout=30_000)
    card = lab.card("write_note")
    expect(card).to_have_attribute("data-outcome", "expired")
    expect(card).to_contain_text("Expired")
    expect(lab.turn().get_by_role("button", name="Allow", exact=True)).to_have_count(0)
    lab.shot("expired")


@pytest.mark.parametrize(
    ("cells", "kernel_idle"),
    [
        pytest.param(
            [PRELUDE + BACKGROUND_CHOICE, "result = turn.result(timeout=30)\n" + AFTER_SYNC],
            True,
            id="background-turn",
        ),
        # The kernel stays busy with the blocked cell, so the page never reads "Idle".
        pytest.param([PRELUDE + CHOICE_SYNC, AFTER_SYNC], False, id="sync-cell-waiting"),
    ],
)
def test_reload_then_answer_from_the_new_view(
    lab: NotebookPage, latencies: Latencies, cells: list[str], kernel_idle: bool
) -> None:
    lab.open(cells)
    lab.run_cell(0)
    expect(lab.turn().get_by_label("Green tea")).to_be_visible(timeout=QUESTION_TIMEOUT)
    lab.save()
    wait_saved_with_widget(lab.server, lab.name)
    lab.shot("before-reload")
    lab.page.reload()
    if kernel_idle:
        lab.wait_ready()
    tea = lab.turn().get_by_label("Green tea")
    expect(tea).to_be_visible(timeout=QUESTION_TIMEOUT)
    tea.check()
    lab.shot("reloaded")
    lab.turn().get_by_role("button", name="Submit").click()
    expect(lab.turn()).to_contain_text("Chose “Green tea” by you", timeout=QUESTION_TIMEOUT)
    lab.run_cell(1)
    lab.wait_output(1, "RESULT completed")
    lab.wait_output(1, "Green tea")
    lab.shot("answered")
    test = f"lab_reload_{'background' if kernel_idle else 'sync'}"
    latencies.measure(lab, test, ("Submit",), "UNBLOCKED")


def wait_saved_with_widget(server: JupyterServer, name: str, timeout: float = 20.0) -> None:
    """Wait until the saved notebook holds the widget's view output."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            model = server.api("GET", f"api/contents/{name}.ipynb")
        except ServerError:
            model = None  # read while the server was writing it
        if model and "application/vnd.jupyter.widget-view+json" in json.dumps(model["content"]):
            return
        time.sleep(0.2)
    raise AssertionError(f"{name}.ipynb was not saved with the widget's view in {timeout} s")


def test_latency_of_many_answers(lab: NotebookPage, latencies: Latencies) -> None:
    questions = 15
    lab.open([PRELUDE + f"QUESTIONS = {questions}\n" + MANY_ALLOWS])
    lab.run_cell(0)
    allow = lab.turn().get_by_role("button", name="Allow", exact=True)
    answered = lab.turn().get_by_text("Allowed by you", exact=True)
    for i in range(questions):
        expect(allow).to_have_count(1, timeout=QUESTION_TIMEOUT)
        allow.click()
        expect(answered).to_have_count(i + 1)
    lab.wait_output(0, f"RESULT {questions} completed")
    lab.shot("all-allowed")
    latencies.measure(lab, "lab_sync_allow_many", ("Allow",), "TOOL")


def test_saved_widget_state_renders_without_the_kernel_that_made_it(lab: NotebookPage) -> None:
    lab.server.set_lab_setting(WIDGETS, {"saveState": True})
    try:
        lab.open([PRELUDE + ALLOW_SYNC, SECOND_TURN])
        lab.run_cell(0)
        allow = lab.turn(0).get_by_role("button", name="Allow", exact=True)
        expect(allow).to_be_visible(timeout=QUESTION_TIMEOUT)
        allow.click()
        lab.wait_output(0, "RESULT completed saved note: hello")
        lab.run_cell(1)
        lab.wait_output(1, "SECOND A second **turn**, no tools.")
        expect(lab.turn(1).locator(".mead-text strong")).to_have_text("turn")
        # Two widgets, one import of the code and one stylesheet in the page.
        imported = lab.page.evaluate(
            "() => globalThis[Symbol.for('mead_notebook.frontend')]?.size ?? 0"
        )
        assert imported == 1
        expect(lab.page.locator("style[id^='mead-notebook-css-']")).to_have_count(1)
        (kernel,) = lab.server.kernels()
        lab.save()
        state = wait_saved_with_state(lab.server, lab.name)
        shared = [m for m, s in state.items() if "code" in s["state"]]
        turns = [s["state"] for s in state.values() if "_frontend" in s["state"]]
        assert len(shared) == 1, "the saved state should hold the code once"
        assert len(turns) == 2
        for turn in turns:
            assert turn["_frontend"] == f"IPY_MODEL_{shared[0]}"
            assert len(turn["_esm"]) < 5_000, "a turn's saved state should not hold the code"
        lab.turn(0).scroll_into_view_if_needed()
        lab.shot("saved")

        lab.server.shutdown_kernels()
        lab.reopen()
        (fresh,) = lab.server.kernels()
        assert fresh["id"] != kernel["id"]
        card = lab.card("write_note", 0)
        expect(card).to_contain_text("Completed", timeout=QUESTION_TIMEOUT)
        expect(card).to_contain_text("Allowed by you")
        expect(lab.turn(0).locator(".mead-text")).to_contain_text("saved note: hello")
        expect(lab.turn(1).locator(".mead-text strong")).to_have_text("turn")
        expect(lab.turn(0).get_by_role("button", name="Allow", exact=True)).to_have_count(0)
        expect(lab.page.locator(".mead-load-error")).to_have_count(0)
        lab.turn(0).scroll_into_view_if_needed()
        lab.shot("reopened")
    finally:
        lab.server.set_lab_setting(WIDGETS, {})


def test_a_widget_without_its_code_says_so(lab: NotebookPage) -> None:
    lab.open([NO_CODE])
    lab.run_cell(0)
    failure = lab.output(0).get_by_role("alert")
    expect(failure).to_contain_text("this turn cannot be shown", timeout=QUESTION_TIMEOUT)
    expect(failure).to_contain_text("the shared frontend widget holds no code")
    lab.shot("no-code")


def wait_saved_with_state(
    server: JupyterServer, name: str, timeout: float = 20.0
) -> dict[str, dict[str, Any]]:
    """Wait until the saved notebook holds widget state with the shared frontend; return it."""
    deadline = time.monotonic() + timeout
    saved = "nothing readable"
    while time.monotonic() < deadline:
        try:
            model = server.api("GET", f"api/contents/{name}.ipynb")
        except ServerError:
            model = None  # read while the server was writing it
        widgets = (model or {}).get("content", {}).get("metadata", {}).get("widgets", {})
        state: dict[str, dict[str, Any]] = widgets.get(WIDGET_STATE, {}).get("state", {})
        if any("code" in s.get("state", {}) for s in state.values()):
            return state
        if model is not None:
            names = sorted(str(s.get("model_name")) for s in state.values())
            saved = f"widget state of {len(state)} models ({', '.join(names)})"
        time.sleep(0.2)
    raise AssertionError(
        f"{name}.ipynb was not saved with the shared frontend's state in {timeout} s; "
        f"it holds {saved}"
    )


def test_model_text_and_arguments_render_inert(lab: NotebookPage) -> None:
    lab.open([PRELUDE + HOSTILE])
    lab.run_cell(0)
    turn = lab.turn()
    allow = turn.get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible(timeout=QUESTION_TIMEOUT)
    expect(turn.locator(".mead-text strong")).to_have_text("bold")
    args = lab.card("write_note").locator(".mead-question-args")
    for payload in PAYLOADS:
        expect(args).to_contain_text(json.dumps(payload)[1:-1])
    assert_inert(lab)
    allow.click()
    lab.wait_output(0, "RESULT completed")
    expect(turn.locator(".mead-transcript")).to_contain_text("done:")
    for anchor in turn.locator("a").all():
        href = (anchor.get_attribute("href") or "").strip().lower()
        assert not href.startswith("javascript"), href
        if not href:
            anchor.click()
    lab.page.wait_for_timeout(500)
    assert_inert(lab)
    lab.shot("inert")


def assert_inert(nb: NotebookPage) -> None:
    assert nb.page.evaluate("() => typeof window.__pwned") == "undefined"
    assert nb.dialogs == []
    turn = nb.turn()
    for selector in ("script", "iframe", "svg[onload]", "img[onerror]", "[onerror]", "[onload]"):
        assert turn.locator(selector).count() == 0, selector


def test_dark_theme(lab: NotebookPage, artifacts: object) -> None:
    lab.server.set_lab_setting(THEMES, {"theme": "JupyterLab Dark"})
    try:
        lab.open([PRELUDE + ASYNC_ALLOW])
        expect(lab.page.locator("body")).to_have_attribute(
            "data-jp-theme-light", "false", timeout=30_000
        )
        lab.run_cell(0)
        allow = lab.turn().get_by_role("button", name="Allow", exact=True)
        expect(allow).to_be_visible(timeout=QUESTION_TIMEOUT)
        lab.shot("dark-asking")
        allow.click()
        lab.wait_output(0, "RESULT completed")
        lab.shot("dark-allowed")
    finally:
        lab.server.set_lab_setting(THEMES, {})
