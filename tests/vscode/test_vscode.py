"""Turns in VS Code's own widget manager, through a host that behaves as VS Code does."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from browser.conftest import ARTIFACTS, Latencies
from browser.scenarios import (
    ALLOW_SYNC,
    ASYNC_ALLOW,
    BACKGROUND_ALLOW,
    BACKGROUND_RESULT,
    CHOICE_SYNC,
    PRELUDE,
)
from playwright.sync_api import Locator

from .host import VSCodeHost

pytestmark = pytest.mark.browser

QUESTION_TIMEOUT = 60.0
FIRST_VIEW_GRACE = 30.0
"""How long a question waits for the webview's first view. The webview loads anywidget's
script after VS Code's CDN check (1 s offline, as the host does it) and then the
frontend: on a busy machine that takes longer than NotebookInteraction's 3 s grace, and a
question that no view showed in time would go unanswered before the test could click."""
PAGE = (
    PRELUDE
    + f"""
class Timed(Timed):
    def __init__(self, **kwargs):
        kwargs.setdefault("grace", {FIRST_VIEW_GRACE!r})
        super().__init__(**kwargs)
"""
)
LOAD_FILE = ARTIFACTS / "vscode-load.json"
LOADS: dict[str, float] = {}
"""Display to rendered of each test's first widget, in ms (written to LOAD_FILE)."""


class Clicks:
    """What ``Latencies.measure`` reads: the page's clicks and the kernel's stamps."""

    def __init__(self, host: VSCodeHost) -> None:
        self.host = host

    def clicks(self, *labels: str) -> list[dict[str, Any]]:
        assert self.host.page is not None
        found: list[dict[str, Any]] = self.host.page.evaluate("() => window.__meadClicks ?? []")
        return [c for c in found if c["label"] in labels]

    def kernel_stamps(self, kind: str) -> list[float]:
        return self.host.stamps(kind)


def turn(host: VSCodeHost) -> Locator:
    assert host.page is not None
    return host.page.locator(".vsc-widget .mead-turn")


def button(host: VSCodeHost, name: str) -> Locator:
    return turn(host).get_by_role("button", name=name, exact=True)


def visible(locator: Locator) -> bool:
    return locator.count() == 1 and locator.is_visible()


def record_load(host: VSCodeHost, test: str) -> None:
    """Display (kernel clock) to the first view's ``rendered`` (page clock), in ms."""
    shown = host.widget_displays()
    rendered = host.sent_custom("rendered")
    assert shown, "no widget output was displayed"
    assert rendered, "no view said it rendered"
    LOADS[f"{test}_{host.version}"] = round((rendered[0]["at"] - shown[0]) * 1000, 1)
    write_loads()


def write_loads() -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    LOAD_FILE.write_text(
        json.dumps(
            {
                "unit": "milliseconds",
                "what": "from the kernel's display of the first widget of a fresh kernel to the "
                "page's first 'rendered' message, in the VS Code host (script-source round "
                "trip and a 1 s offline CDN check included); vscode_reopen_to_question: from "
                "a reopened editor's new webview to the waiting question shown in it "
                "(reopened so many seconds after the question was shown)",
                "tests": dict(sorted(LOADS.items())),
            },
            indent=2,
        )
        + "\n"
    )


def what_vscode_sends(host: VSCodeHost) -> None:
    """The page sent comm messages only, never a state or info request."""
    types = {m["header"]["msg_type"] for m in host.sent}
    assert types == {"comm_msg"}, types
    assert all("subshell_id" not in m["header"] for m in host.sent)
    methods = {(m["content"].get("data") or {}).get("method") for m in host.sent}
    assert "request_states" not in methods, methods
    assert "request_state" not in methods, methods
    assert {module for module, _ in host.script_requests} == {"anywidget"}


def allow_and_check(host: VSCodeHost, msg_id: str, latencies: Latencies, test: str) -> None:
    host.drive(lambda: visible(button(host, "Allow")), QUESTION_TIMEOUT, "the Allow button")
    assert "Waiting for you" in (turn(host).text_content() or "")
    button(host, "Allow").click()
    card = turn(host).locator('.mead-card[data-tool="write_note"]')
    host.drive(lambda: "Allowed by you" in (card.text_content() or ""), 30, "the allowed card")
    host.drive(lambda: host.done(msg_id), 30, "the cell's end")
    reply = host.cells[msg_id].reply
    assert reply is not None
    assert reply["status"] == "ok", reply
    host.drive(
        lambda: "The tool said: saved note: hello" in (turn(host).text_content() or ""),
        10,
        "the text",
    )
    assert "Completed" in (card.text_content() or "")
    latencies.measure(Clicks(host), f"{test}_{host.version}", ("Allow",), "TOOL")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cell", "test"),
    [
        pytest.param(ALLOW_SYNC, "vscode_sync_allow", id="sync"),
        pytest.param(ASYNC_ALLOW, "vscode_async_allow", id="async"),
    ],
)
def test_allow_in_a_cell(host: VSCodeHost, latencies: Latencies, cell: str, test: str) -> None:
    host.run(PAGE)
    msg_id = host.execute(cell)
    allow_and_check(host, msg_id, latencies, test)
    assert "RESULT completed saved note: hello" in host.cells[msg_id].stdout
    record_load(host, test)
    what_vscode_sends(host)


def test_allow_a_background_turn(host: VSCodeHost, latencies: Latencies) -> None:
    host.run(PAGE)
    started = host.run(BACKGROUND_ALLOW)
    assert "STARTED" in started.stdout
    assert started.reply is not None
    assert started.reply["status"] == "ok"
    host.drive(lambda: visible(button(host, "Allow")), QUESTION_TIMEOUT, "the Allow button")
    button(host, "Allow").click()
    card = turn(host).locator('.mead-card[data-tool="write_note"]')
    host.drive(lambda: "Completed" in (card.text_content() or ""), 30, "the completed card")
    result = host.run(BACKGROUND_RESULT, timeout=30)
    assert "RESULT completed saved note: hello" in result.stdout
    latencies.measure(Clicks(host), f"vscode_background_allow_{host.version}", ("Allow",), "TOOL")  # type: ignore[arg-type]
    record_load(host, "vscode_background_allow")
    what_vscode_sends(host)


REOPEN_AFTER = (0.0, 0.5, 1.0, 1.5)
"""Seconds after the question is shown that the editor is reopened, once each: the
reopen falls at other points of the kernel's ping schedule."""


def pause(host: VSCodeHost, seconds: float) -> None:
    """Keep serving the page and the kernel for ``seconds``."""
    until = time.monotonic() + seconds
    host.drive(lambda: time.monotonic() >= until, seconds + 5, f"{seconds} s")


def reopen_editor(host: VSCodeHost, shown: Callable[[], bool]) -> float:
    """Close the editor and open it again; return seconds until ``shown()`` holds."""
    # A new webview, no widget restored, nothing said to the kernel. The output
    # first falls back to its next MIME type.
    host.open_webview()
    reopened = time.monotonic()
    assert host.page is not None
    assert host.page.locator(".vsc-widget").count() == 0
    fallback = host.page.locator(".vsc-html, .vsc-plain")
    assert fallback.count() >= 1, host.page.content()[:2000]
    host.drive(shown, 30, "the question in the reopened editor")
    return time.monotonic() - reopened


QUICK = """
from mead_notebook.notebook.waiting import views
views.set_timing(views.Timing(ping_every=1.0, answer_within=0.5, announce_every=1.0))
"""
"""Quicker checks on views than the defaults (which tests/notebook/test_presence.py covers)."""


def test_a_reopened_editor_gets_the_waiting_question(
    host: VSCodeHost, latencies: Latencies
) -> None:
    host.run(PAGE + QUICK)
    msg_id = host.execute(CHOICE_SYNC)
    tea = lambda: turn(host).get_by_label("Green tea")  # noqa: E731
    shown = lambda: visible(tea())  # noqa: E731
    host.drive(shown, QUESTION_TIMEOUT, "the question")
    backs = []
    for delay in REOPEN_AFTER:
        pause(host, delay)
        backs.append(reopen_editor(host, shown))
    tea().check()
    button(host, "Submit").click()
    host.drive(lambda: host.done(msg_id), 30, "the cell's end")
    out = host.cells[msg_id].stdout
    assert 'RESULT completed {"option_id": "tea", "label": "Green tea"}' in out
    assert "Chose “Green tea” by you" in (turn(host).text_content() or "")
    latencies.measure(
        Clicks(host), f"vscode_reopened_choice_{host.version}", ("Submit",), "UNBLOCKED"
    )  # type: ignore[arg-type]
    for delay, back in zip(REOPEN_AFTER, backs, strict=True):
        LOADS[f"vscode_reopen_to_question_{host.version}_after_{delay:g}s"] = round(back * 1000, 1)
    write_loads()
    what_vscode_sends(host)
