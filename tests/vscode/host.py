"""A host between a real kernel and a page that runs VS Code's widget manager.

It does what VS Code's extension host and notebook webview do for widgets
(``/work``'s notes on VS Code, read from its sources): every kernel message
(iopub and shell replies) goes to the page; the page's messages go to the kernel
on the main shell, without a subshell id; the page never asks for kernel info,
comm info or widget state; a widget module that is not built in (anywidget) is
served from the kernel's environment (``share/jupyter/nbextensions``) when the
page asks for its script source, after an offline CDN check; the cells' outputs
live in the host (the notebook document) and a new webview gets them all, with
no widget restored. Everything runs in the test's thread.
"""

from __future__ import annotations

import json
import mimetypes
import queue
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from playwright.sync_api import BrowserContext, Page, Route

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ENVS = REPO / ".venv-kernels"
BASE = "https://vscode-webview.test/"
"""Where the webview's files appear to come from (served by the host, never fetched)."""
START_TIMEOUT = 60.0
CDN_CHECK = 1.0
"""How long VS Code's first script load waits for its CDN check when offline (seconds)."""
STAMP = re.compile(r"^(UNBLOCKED|TOOL) (\d+\.\d+)$", re.MULTILINE)


def kernel_python(version: str) -> Path:
    return ENVS / f"ipykernel-{version}" / "bin" / "python"


def _epoch(value: Any) -> float:
    if isinstance(value, datetime):
        return value.timestamp()
    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


@dataclass
class Cell:
    """One executed cell of the notebook document: its outputs and stdout."""

    msg_id: str
    outputs: list[dict[str, Any]] = field(default_factory=list)
    stdout: str = ""
    idle: bool = False
    reply: dict[str, Any] | None = None


class VSCodeHost:
    """One kernel, one notebook document, and the webview that shows it (reopenable)."""

    def __init__(self, version: str, workdir: Path, context: BrowserContext) -> None:
        python = kernel_python(version)
        if not python.exists():
            raise FileNotFoundError(
                f"no kernel environment at {python}: run scripts/kernel-envs.sh"
            )
        self.version = version
        self.env = python.parent.parent
        spec_dir = workdir / "kernels" / "vscode-host"
        spec_dir.mkdir(parents=True, exist_ok=True)
        argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        (spec_dir / "kernel.json").write_text(json.dumps({"argv": argv, "language": "python"}))
        specs = KernelSpecManager(kernel_dirs=[str(workdir / "kernels")])
        self.km = KernelManager(kernel_name="vscode-host", kernel_spec_manager=specs)
        self.km.start_kernel(cwd=str(workdir))
        self.kc = self.km.blocking_client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=START_TIMEOUT)
        self.context = context
        self.page: Page | None = None
        self.cells: dict[str, Cell] = {}
        self.order: list[str] = []
        self.displays: dict[str, list[tuple[str, int]]] = {}
        self.inbox: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        """Every message the page sent to the kernel, as sent."""
        self.kernel_msgs: list[dict[str, Any]] = []
        self.script_requests: list[tuple[str, float]] = []
        self._due: list[tuple[float, Callable[[], None]]] = []
        self.started = False
        self.failure: str | None = None
        self.client_id = uuid.uuid4().hex
        self.console: list[str] = []

    def close(self) -> None:
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)

    # -- the webview ---------------------------------------------------------------

    def open_webview(self, timeout: float = 60.0) -> Page:
        """A new webview (a new page) for the notebook: no widget in it, every output sent."""
        if self.page is not None:
            # What the page sent before it goes still reaches the kernel, as in VS Code;
            # closing it says nothing more.
            self.step()
            self.page.close()  # a closed editor: nothing is said to the kernel
        page = self.context.new_page()
        page.route(BASE + "**", self._serve)
        page.expose_function("hostPost", self._post)
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self._console_text(f"pageerror: {exc}"))
        self.page = page
        self.started = False
        page.goto(BASE + "index.html")
        self.drive(lambda: self.started or self.failure is not None, timeout, "the webview")
        if self.failure is not None:
            raise AssertionError(f"the webview failed: {self.failure}")
        for msg_id in self.order:
            self._show(msg_id)
        return page

    def _post(self, message: dict[str, Any]) -> None:
        self.inbox.append(message)

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self._console_text(f"{message.type}: {message.text}")

    def _console_text(self, text: str) -> None:
        self.console.append(text)

    def _serve(self, route: Route) -> None:
        path = route.request.url[len(BASE) :].split("?")[0]
        if path.startswith("nbextensions/"):
            file = self.env / "share" / "jupyter" / path
        elif path.startswith("node_modules/"):
            file = HERE / path
        else:
            file = HERE / "page" / path
        if not file.is_file():
            route.fulfill(status=404, body=f"not found: {path}")
            return
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        if file.suffix == ".js":
            kind = "text/javascript"
        route.fulfill(status=200, body=file.read_bytes(), content_type=kind)

    # -- running cells ---------------------------------------------------------------

    def execute(self, code: str) -> str:
        """Run a cell, as VS Code runs it from the extension host; return its msg_id."""
        msg_id = str(self.kc.execute(code, store_history=False, allow_stdin=False))
        self.cells[msg_id] = Cell(msg_id)
        self.order.append(msg_id)
        return msg_id

    def run(self, code: str, timeout: float = 60.0) -> Cell:
        msg_id = self.execute(code)
        self.drive(lambda: self.done(msg_id), timeout, f"cell {msg_id}")
        return self.cells[msg_id]

    def done(self, msg_id: str) -> bool:
        cell = self.cells[msg_id]
        return cell.idle and cell.reply is not None

    def stamps(self, kind: str) -> list[float]:
        """The kernel's ``time.time()`` readings that the cells printed as ``<kind> <t>``."""
        text = "\n".join(self.cells[m].stdout for m in self.order)
        return [float(t) for k, t in STAMP.findall(text) if k == kind]

    # -- the loop --------------------------------------------------------------------

    def drive(self, until: Callable[[], bool], timeout: float, what: str) -> None:
        """Carry messages both ways until ``until()``; fail after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out after {timeout} s waiting for {what}; "
                    f"the page said: {self.console[-5:]}"
                )
            self.step()

    def step(self) -> None:
        moved = self._from_kernel()
        if self.page is not None:
            # Lets Playwright run the page's calls to hostPost.
            self.page.wait_for_timeout(1 if moved else 10)
        now = time.monotonic()
        due = [d for d in self._due if d[0] <= now]
        self._due = [d for d in self._due if d[0] > now]
        for _, action in due:
            action()
        while self.inbox:
            self._from_page(self.inbox.pop(0))

    def _from_kernel(self) -> bool:
        moved = False
        for channel, get in (("shell", self.kc.get_shell_msg), ("iopub", self.kc.get_iopub_msg)):
            while True:
                try:
                    msg = get(timeout=0)
                except queue.Empty:
                    break
                moved = True
                msg["channel"] = channel
                self.kernel_msgs.append(msg)
                self._document(msg)
                self._to_page("deliver", _jsonable(msg))
        return moved

    def _to_page(self, method: str, *args: Any) -> None:
        if self.page is None or not self.started:
            return
        # Never wait for the page: its work may wait for the host (a script source).
        self.page.evaluate(f"(args) => {{ window.webview.{method}(...args); }}", list(args))

    def _from_page(self, message: dict[str, Any]) -> None:
        kind, payload = message.get("type"), message.get("payload")
        if kind == "IPyWidgets_Ready":
            options = {"id": self.km.kernel_id, "clientId": self.client_id, "userName": "vscode"}
            assert self.page is not None
            self.page.evaluate("(o) => window.webview.kernelOptions(o)", options)
        elif kind == "webview_started":
            self.started = True
        elif kind == "webview_failed":
            self.failure = str(payload)
        elif kind == "IPyWidgets_msg" and isinstance(payload, dict):
            self._send_to_kernel(json.loads(payload["data"]))
        elif kind == "IPyWidgets_WidgetScriptSourceRequest" and isinstance(payload, dict):
            module = str(payload.get("moduleName"))
            self.script_requests.append((module, time.time()))
            self._due.append((time.monotonic() + CDN_CHECK, lambda: self._script_source(module)))

    def _script_source(self, module: str) -> None:
        found = self.env / "share" / "jupyter" / "nbextensions" / module / "index.js"
        uri = f"{BASE}nbextensions/{module}/index.js" if found.is_file() else None
        self._to_page("sourceReply", {"moduleName": module, "scriptUri": uri})

    def _send_to_kernel(self, page_msg: dict[str, Any]) -> None:
        """The page's message on the main shell, with the page's own header (no subshell)."""
        header = page_msg["header"]
        allowed = {"comm_msg", "comm_open", "comm_close"}
        if header["msg_type"] not in allowed:
            raise AssertionError(f"the webview sent {header['msg_type']}, which VS Code never does")
        msg = self.kc.session.msg(
            header["msg_type"], page_msg["content"], metadata=page_msg.get("metadata") or {}
        )
        msg["header"].update(
            msg_id=header["msg_id"], username=header.get("username", "vscode"), date=header["date"]
        )
        msg["msg_id"] = header["msg_id"]
        self.sent.append(page_msg)
        self.kc.shell_channel.send(msg)

    # -- the notebook document -------------------------------------------------------

    def _document(self, msg: dict[str, Any]) -> None:
        parent = msg["parent_header"].get("msg_id", "")
        cell = self.cells.get(parent)
        kind, content = msg["msg_type"], msg["content"]
        if msg["channel"] == "shell":
            if cell is not None and kind == "execute_reply":
                cell.reply = content
            return
        if kind == "update_display_data":
            display_id = content.get("transient", {}).get("display_id")
            for msg_id, index in self.displays.get(display_id, []):
                target = self.cells[msg_id].outputs[index]
                target["data"], target["metadata"] = content["data"], content.get("metadata", {})
                self._show(msg_id, redraw=[index])
            return
        if cell is None:
            return
        if kind == "status" and content.get("execution_state") == "idle":
            cell.idle = True
        elif kind == "stream":
            if content.get("name") == "stdout":
                cell.stdout += content["text"]
            last = cell.outputs[-1] if cell.outputs else None
            if last and last["output_type"] == "stream" and last["name"] == content["name"]:
                last["text"] += content["text"]
            else:
                cell.outputs.append({"output_type": "stream", **content})
            self._show(parent)
        elif kind in ("display_data", "execute_result"):
            output = {"output_type": kind, "data": content["data"], "metadata": content["metadata"]}
            output["displayed_at"] = _epoch(msg["header"]["date"])
            display_id = content.get("transient", {}).get("display_id")
            if display_id:
                self.displays.setdefault(display_id, []).append((parent, len(cell.outputs)))
            cell.outputs.append(output)
            self._show(parent)
        elif kind == "clear_output":
            cell.outputs.clear()
            self._show(parent)

    def _show(self, msg_id: str, redraw: list[int] | None = None) -> None:
        """The cell's outputs to the page; those at ``redraw`` were replaced by the kernel."""
        outputs = [
            {k: v for k, v in o.items() if k != "displayed_at"} for o in self.cells[msg_id].outputs
        ]
        self._to_page("show", msg_id, outputs, redraw or [])

    # -- what the page did -----------------------------------------------------------

    def sent_custom(self, kind: str) -> list[dict[str, Any]]:
        """The page's custom widget messages of this ``type``, with the page's send time."""
        found = []
        for msg in self.sent:
            data = msg["content"].get("data") or {}
            content = data.get("content") if data.get("method") == "custom" else None
            if isinstance(content, dict) and content.get("type") == kind:
                found.append({**content, "at": _epoch(msg["header"]["date"])})
        return found

    def widget_displays(self) -> list[float]:
        """When the kernel displayed each widget output (its clock, epoch seconds)."""
        return [
            o["displayed_at"]
            for m in self.order
            for o in self.cells[m].outputs
            if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
        ]


def _jsonable(msg: dict[str, Any]) -> dict[str, Any]:
    out = {k: msg[k] for k in ("header", "parent_header", "metadata", "content", "channel")}
    return json.loads(json.dumps(out, default=str))
