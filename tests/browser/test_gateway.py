"""Turns steered in JupyterLab whose kernels run under a Jupyter Kernel Gateway.

JupyterLab runs with ``--gateway-url`` against ``jupyter kernelgateway`` on loopback:
the kernel is the gateway's child, and every message between the page and the kernel
(the widget's comm messages too) passes JupyterLab's server and then the gateway.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, WebSocket, expect

from .conftest import Latencies, notebook_page
from .gateway import KernelGateway, gateway_and_lab
from .pages import NotebookPage, write_notebook
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

CONNECT_TIMEOUT = 20_000
"""How long a freshly opened notebook may take to show an idle kernel before a reconnect."""

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


def open_notebook(nb: NotebookPage, cells: list[str]) -> None:
    """Open a notebook of ``cells``; reconnect its kernel if the page never hears from it.

    JupyterLab's server answers a page's first kernel websocket without the kernel
    protocol the page asked for, so the page drops it and connects again without one.
    The server has already opened a gateway connection for the dropped socket, and never
    closes it. When that orphan reaches the gateway after the page's own connection, the
    gateway takes the page's for the stale one of the session id they share: it closes
    it, or keeps both and routes the kernel's replies to one that nobody reads. Either
    way the page's ``kernel_info_request`` goes unanswered and its status bar says
    "Unknown". Kernel > Reconnect to Kernel then opens one connection after the orphan,
    which the kernel answers (a reload would race again). A person does that; so does
    this, and says so in a warning.
    """
    write_notebook(nb.server.root, nb.name, cells)
    nb.page.goto(nb.server.page_url(f"{nb.name}.ipynb"), timeout=60_000)
    idle = nb.page.locator("#jp-main-statusbar").get_by_role("button", name=re.compile(r"\| Idle$"))
    try:
        expect(idle).to_be_visible(timeout=CONNECT_TIMEOUT)
    except AssertionError:
        nb.shot("never-connected")
        warnings.warn(
            f"{nb.name}: the page did not hear from its kernel through the gateway in "
            f"{CONNECT_TIMEOUT / 1000:.0f} s; reconnecting to the kernel",
            stacklevel=2,
        )
        reconnect_kernel(nb)
    nb.wait_ready()


def reconnect_kernel(nb: NotebookPage) -> None:
    """Kernel > Reconnect to Kernel, once the notebook has a kernel to reconnect to."""
    expect(nb.page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=60_000)
    item = nb.page.get_by_role("menuitem", name="Reconnect to Kernel")
    for _ in range(20):
        nb.page.get_by_role("menuitem", name="Kernel", exact=True).click()
        if item.is_enabled():
            item.click()
            return
        nb.page.keyboard.press("Escape")
        nb.page.wait_for_timeout(500)
    raise AssertionError("Kernel > Reconnect to Kernel stayed disabled for 10 s")


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
    open_notebook(lab, [PRELUDE + ALLOW_SYNC, WHERE])
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
    open_notebook(lab, [PRELUDE + ASYNC_ALLOW, WHERE])
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
    open_notebook(lab, [PRELUDE + f"QUESTIONS = {questions}\n" + MANY_ALLOWS, WHERE])
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


def test_a_connection_opened_after_an_orphan_of_its_session_is_answered(
    tmp_path: Path,
) -> None:
    """What ``open_notebook``'s reconnect relies on, on the gateway's own protocol.

    An orphan (a connection nobody reads) that reaches the gateway after the page's own
    connection with the same session id leaves the page's unanswered; a connection
    opened after the orphan is answered.
    """
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import (
        WebSocketClientConnection,
        WebSocketClosedError,
        websocket_connect,
    )

    gateway = KernelGateway(tmp_path / "gateway").start()
    try:
        kernel_id = gateway.api("POST", "api/kernels", {"name": "python3"})["id"]
        session = uuid.uuid4().hex
        url = f"{gateway.url.replace('http', 'ws')}api/kernels/{kernel_id}/channels"
        request = HTTPRequest(
            f"{url}?session_id={session}", headers={"Authorization": f"token {gateway.token}"}
        )

        async def answered(ws: WebSocketClientConnection, within: float) -> bool:
            info = {"msg_id": uuid.uuid4().hex, "msg_type": "kernel_info_request"}
            header = {**info, "session": session, "username": "", "date": "", "version": "5.3"}
            message = {"header": header, "parent_header": {}, "metadata": {}, "content": {}}
            try:
                await ws.write_message(json.dumps({**message, "channel": "shell", "buffers": []}))
            except WebSocketClosedError:
                return False
            deadline = asyncio.get_running_loop().time() + within
            while (left := deadline - asyncio.get_running_loop().time()) > 0:
                try:
                    raw = await asyncio.wait_for(ws.read_message(), left)
                except TimeoutError:
                    return False
                if raw is None:
                    return False
                reply = json.loads(raw)
                if reply["parent_header"].get("msg_id") == info["msg_id"]:
                    return reply["msg_type"] == "kernel_info_reply"
            return False

        async def scenario() -> tuple[bool, bool]:
            page = await websocket_connect(request)
            orphan = await websocket_connect(request)
            first = await answered(page, 5.0)
            again = await websocket_connect(request)
            second = await answered(again, 30.0)
            for ws in (page, orphan, again):
                ws.close()
            return first, second

        # Playwright's sync API runs an event loop in this thread already.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            first, second = pool.submit(asyncio.run, scenario()).result(timeout=120)
    finally:
        gateway.stop()
    assert not first, "the gateway answered the page despite its orphan: the quirk is gone"
    assert second, "a connection opened after the orphan was not answered"
