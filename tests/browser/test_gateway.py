"""Turns steered in JupyterLab whose kernels run under a Jupyter Kernel Gateway.

JupyterLab runs with ``--gateway-url`` against ``jupyter kernelgateway`` on loopback:
the kernel is the gateway's child, and every message between the page and the kernel
(the widget's comm messages too) passes JupyterLab's server and then the gateway.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, WebSocket, expect

from .conftest import Latencies, notebook_page
from .gateway import KernelGateway, gateway_and_lab
from .pages import NotebookPage
from .scenarios import ALLOW_SYNC, ASYNC_ALLOW, MANY_ALLOWS, PRELUDE
from .servers import REPO, JupyterServer
from .test_lab import QUESTION_TIMEOUT, allow_and_check

pytestmark = pytest.mark.browser

WHERE = """
import json, os, ipykernel.connect, mead_notebook
print("MODULE", mead_notebook.__file__)
print("PARENT", os.getppid())
print("CONNECTION", os.path.basename(ipykernel.connect.get_connection_file()))
print("SUBSHELLS", json.dumps(get_ipython().kernel.shell_channel_thread.manager.list_subshell()))
"""
"""Where the kernel runs: its package, its parent process, its id, its subshells."""

KERNEL_ID = re.compile(r"kernel-([0-9a-f-]+)\.json")


class Frames:
    """The kernel messages a page sent over its kernel websockets (JSON text frames)."""

    def __init__(self, page: Page) -> None:
        self.sent: list[dict[str, Any]] = []
        self.binary = 0
        page.on("websocket", self._watch)

    def _watch(self, ws: WebSocket) -> None:
        if "/api/kernels/" in ws.url and "/channels" in ws.url:
            ws.on("framesent", self._sent)

    def _sent(self, payload: str | bytes) -> None:
        if isinstance(payload, bytes):
            self.binary += 1
            return
        try:
            message = json.loads(payload)
        except ValueError:
            return
        if isinstance(message, dict) and isinstance(message.get("header"), dict):
            self.sent.append(message)

    def summary(self) -> list[tuple[str, str, str | None]]:
        """Each message's channel, type and subshell, in order."""
        return [
            (m.get("channel", ""), m["header"].get("msg_type", ""), m["header"].get("subshell_id"))
            for m in self.sent
        ]

    def of_type(self, msg_type: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["header"].get("msg_type") == msg_type]


@pytest.fixture
def gateway_servers(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[KernelGateway, JupyterServer]]:
    with gateway_and_lab(tmp_path_factory.mktemp("gateway")) as servers:
        yield servers


@pytest.fixture
def frames(page: Page) -> Frames:
    return Frames(page)


@pytest.fixture
def lab(
    page: Page,
    frames: Frames,
    gateway_servers: tuple[KernelGateway, JupyterServer],
    artifacts: Path,
    request: pytest.FixtureRequest,
) -> Iterator[NotebookPage]:
    yield from notebook_page(page, gateway_servers[1], artifacts, request)


def where(nb: NotebookPage, index: int) -> dict[str, str]:
    """Run the ``WHERE`` cell at ``index``; return what it printed, by key."""
    nb.run_cell(index)
    nb.wait_output(index, "SUBSHELLS")
    lines = nb.output_text(index).splitlines()
    return dict(line.split(" ", 1) for line in lines if " " in line)


def assert_under_the_gateway(
    nb: NotebookPage, gateway: KernelGateway, found: dict[str, str]
) -> None:
    """The kernel is the gateway's child, is the one JupyterLab lists, and runs this code."""
    assert Path(found["MODULE"]).resolve().is_relative_to(REPO), found["MODULE"]
    assert int(found["PARENT"]) == gateway.pid
    match = KERNEL_ID.fullmatch(found["CONNECTION"])
    assert match is not None, found["CONNECTION"]
    kernel_id = match[1]
    assert [k["id"] for k in nb.server.kernels()] == [kernel_id]
    assert [k["id"] for k in gateway.kernels()] == [kernel_id]
    # One page, one gateway connection: none was left behind for the socket the page dropped.
    assert [k["connections"] for k in gateway.kernels()] == [1]


def answer_over_a_subshell(nb: NotebookPage, frames: Frames, found: dict[str, str]) -> None:
    """The page sent the widget's messages over a kernel subshell that the kernel has."""
    subshells = json.loads(found["SUBSHELLS"])
    assert subshells, f"the kernel has no subshell; the page sent {frames.summary()}"
    created = frames.of_type("create_subshell_request")
    assert created, "the page asked for no subshell"
    assert {m["channel"] for m in created} == {"control"}
    sent = [m["header"].get("subshell_id") for m in frames.of_type("comm_msg")]
    assert sent, "the page sent no comm message"
    assert sent[-1] in subshells, sent


def test_allow_in_a_sync_cell(
    lab: NotebookPage,
    frames: Frames,
    gateway_servers: tuple[KernelGateway, JupyterServer],
    latencies: Latencies,
) -> None:
    lab.open([PRELUDE + ALLOW_SYNC, WHERE])
    lab.run_cell(0)
    allow_and_check(lab, latencies, "gateway_sync_allow")
    found = where(lab, 1)
    assert_under_the_gateway(lab, gateway_servers[0], found)
    answer_over_a_subshell(lab, frames, found)


def test_allow_in_an_async_cell(
    lab: NotebookPage,
    frames: Frames,
    gateway_servers: tuple[KernelGateway, JupyterServer],
    latencies: Latencies,
) -> None:
    lab.open([PRELUDE + ASYNC_ALLOW, WHERE])
    lab.run_cell(0)
    allow_and_check(lab, latencies, "gateway_async_allow")
    found = where(lab, 1)
    assert_under_the_gateway(lab, gateway_servers[0], found)
    answer_over_a_subshell(lab, frames, found)


def test_latency_of_many_answers(
    lab: NotebookPage,
    gateway_servers: tuple[KernelGateway, JupyterServer],
    latencies: Latencies,
) -> None:
    questions = 15
    lab.open([PRELUDE + f"QUESTIONS = {questions}\n" + MANY_ALLOWS, WHERE])
    lab.run_cell(0)
    allow = lab.turn().get_by_role("button", name="Allow", exact=True)
    answered = lab.turn().get_by_text("Allowed by you", exact=True)
    for i in range(questions):
        expect(allow).to_have_count(1, timeout=QUESTION_TIMEOUT)
        allow.click()
        expect(answered).to_have_count(i + 1)
    lab.wait_output(0, f"RESULT {questions} completed")
    lab.shot("all-allowed")
    latencies.measure(lab, "gateway_sync_allow_many", ("Allow",), "TOOL")
    assert_under_the_gateway(lab, gateway_servers[0], where(lab, 1))
