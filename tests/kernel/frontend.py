"""A test frontend: a real kernel driven over the Jupyter protocol.

``Frontend`` starts a kernel from one of the matrix environments, runs cells and
plays the widget's frontend: it answers ``comm_open`` with ``{"type": "rendered"}``
(and each ``ping`` with a ``pong``) while ``render`` is true, and answers open
questions with whatever its ``responder`` returns. Everything runs in the test's
thread (the client's sockets are not thread-safe).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import zmq
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

REPO = Path(__file__).resolve().parents[2]
ENVS = REPO / ".venv-kernels"
START_ATTEMPTS = 3
"""Starts of a kernel that exits before it is ready, at most (see ``Frontend``)."""
START_TIMEOUT = 60.0

CONTROL = "jupyter.widget.control"
"""ipywidgets' comm through which a (re)loaded page asks for every widget's state."""

UNBOUNDED_IOPUB = """
def _unbound():
    import zmq
    thread = get_ipython().kernel.iopub_thread
    thread.schedule(lambda: thread.socket.setsockopt(zmq.SNDHWM, 0))
_unbound()
del _unbound
"""
"""Lifts the kernel's limit of queued IOPub messages (ZeroMQ applies it to connected
peers too), in the IOPub thread that owns the socket: with a limit, a burst this
frontend has not read yet is dropped, never late."""

INSIDE = """
import gc as _gc, sys as _sys, threading as _threading, traceback as _traceback
for _t in _threading.enumerate():
    _f = _sys._current_frames().get(_t.ident)
    print("THREAD", _t.name, "".join(_traceback.format_stack(_f)[-12:]) if _f else "")
for _o in _gc.get_objects():
    _q = getattr(_o, "_questions", None) if type(_o).__name__ == "NotebookInteraction" else None
    if _q is not None:
        print("QUESTIONS interrupted=", _q.interrupted, "open=", sorted(_q._open))
"""
"""A cell that prints what the kernel is doing (see :meth:`Frontend.inside`)."""

Responder = Callable[[dict[str, Any]], "dict[str, Any] | None"]


def kernel_python(version: str) -> Path:
    """The python of the matrix environment for ``ipykernel==version``."""
    return ENVS / f"ipykernel-{version}" / "bin" / "python"


@contextlib.contextmanager
def ready_kernel(
    version: str, subshell: bool, workdir: Path, setup: str, timeout: float = 60.0
) -> Iterator[Frontend]:
    """A kernel of the matrix that has run ``setup`` (which prints ``READY ...``); closed after.

    Fails the test, saying how to make it, when the version's environment is missing.
    """
    if not kernel_python(version).exists():
        pytest.fail(
            f"the kernel environment for ipykernel {version} is missing: "
            "run scripts/kernel-envs.sh",
            pytrace=False,
        )
    fe = Frontend(version, workdir, subshell=subshell)
    try:
        reply, out = fe.run(setup, timeout=timeout)
        assert reply["status"] == "ok", reply
        assert out.startswith("READY"), out
        yield fe
    finally:
        fe.close()


def reset(frontend: Frontend) -> Frontend:
    """``frontend`` with what the previous scenario saw and did forgotten."""
    frontend.widgets.clear()
    frontend.answered.clear()
    frontend.responder = None
    frontend.render = True
    return frontend


@dataclass
class Widget:
    """What the frontend knows of one widget model."""

    comm_id: str
    state: dict[str, Any]
    cards: dict[str, dict[str, Any]] = field(default_factory=dict)
    custom: list[dict[str, Any]] = field(default_factory=list)
    updates: int = 0


class Frontend:
    """One kernel of one ipykernel version, and a scripted frontend for its widgets."""

    def __init__(
        self,
        version: str,
        workdir: Path,
        *,
        subshell: bool = False,
        log: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        """``log``: a file for the kernel process's own output (default: this process's);
        ``env``: variables added to the kernel's environment (``PYTHONPATH`` to import
        the project from another checkout, as ``bench/latency.py --against`` does)."""
        python = kernel_python(version)
        if not python.exists():
            raise FileNotFoundError(
                f"no kernel environment for ipykernel {version} at {python.parent.parent}: "
                "run scripts/kernel-envs.sh"
            )
        self.version = version
        spec_dir = workdir / "kernels" / "mead-matrix"
        spec_dir.mkdir(parents=True, exist_ok=True)
        spec = {
            "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": f"ipykernel {version}",
            "language": "python",
        }
        (spec_dir / "kernel.json").write_text(json.dumps(spec))
        specs = KernelSpecManager(kernel_dirs=[str(workdir / "kernels")])
        self._log = None if log is None else log.open("ab")
        options: dict[str, Any] = (
            {} if self._log is None else {"stdout": self._log, "stderr": self._log}
        )
        if env:
            options["env"] = {**os.environ, **env}
        # A port picked free can be taken by another process before the kernel binds it
        # (many kernels start at once in a parallel run): the kernel then exits at once,
        # and a new start picks new ports. (Unix sockets would avoid that, but their small
        # buffers make the kernel drop IOPub messages a busy client has not read yet.)
        # A page's server reads IOPub as it comes; these tests read it in Python, slower
        # than a cell can flood it (hundreds of widgets a second) on a loaded machine. With
        # ZeroMQ's default limit of 1000 queued messages a side, the kernel then drops what
        # does not fit. Both sides are unbounded here (the kernel's by UNBOUNDED_IOPUB):
        # ZeroMQ's own thread drains the kernel's queue when it runs, and when it does not
        # run for a while (a loaded 2-core machine), the kernel's queue waits for it.
        self._context = zmq.Context()
        self._context.setsockopt(zmq.RCVHWM, 0)
        for attempt in range(START_ATTEMPTS):
            self.km = KernelManager(kernel_name="mead-matrix", kernel_spec_manager=specs)
            self.km.start_kernel(cwd=str(workdir), **options)
            self.kc = self.km.client(context=self._context)
            self.kc.start_channels()
            try:
                self.kc.wait_for_ready(timeout=START_TIMEOUT)
                break
            except RuntimeError:
                died = not self.km.is_alive()
                self.kc.stop_channels()
                self.km.shutdown_kernel(now=True)
                if not died or attempt == START_ATTEMPTS - 1:
                    raise
        self.iopub: list[dict[str, Any]] = []
        self._idle: set[str] = set()
        self._busy: set[str] = set()
        self._stdout: dict[str, list[str]] = {}
        self._comm_sent: dict[tuple[str | None, str], list[dict[str, Any]]] = {}
        self.replies: dict[str, dict[str, Any]] = {}
        self.widgets: dict[str, Widget] = {}
        self.answered: dict[str, float] = {}
        self.responder: Responder | None = None
        self.render = True
        self.subshell_id: str | None = self._create_subshell() if subshell else None
        reply, _ = self.run(UNBOUNDED_IOPUB, timeout=START_TIMEOUT)
        if reply["status"] != "ok":
            self.close()
            raise RuntimeError(f"the kernel's IOPub limit could not be lifted: {reply}")

    def close(self) -> None:
        """Stop the kernel (bounded)."""
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)
            self._context.destroy(linger=0)
            if self._log is not None:
                self._log.close()

    @property
    def pid(self) -> int:
        """The kernel process's id."""
        return int(self.km.provisioner.pid)

    # -- protocol --------------------------------------------------------------------

    def _create_subshell(self) -> str:
        msg = self.kc.session.msg("create_subshell_request", {})
        self.kc.control_channel.send(msg)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            reply = self.kc.get_control_msg(timeout=10)
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                content = reply["content"]
                assert content.get("status") == "ok", content
                return str(content["subshell_id"])
        raise AssertionError("no create_subshell_reply")

    def execute(self, code: str) -> str:
        """Send a cell; return its ``msg_id``."""
        return str(self.kc.execute(code, store_history=False, allow_stdin=False))

    def send_custom(self, comm_id: str, content: dict[str, Any]) -> str:
        """Send a widget ``custom`` message, over the subshell when there is one; return its id."""
        return self.send_comm(comm_id, {"method": "custom", "content": content})

    def send_comm(
        self,
        comm_id: str,
        data: dict[str, Any],
        msg_type: str = "comm_msg",
        *,
        escaped: bool = False,
    ) -> str:
        """Send a ``comm_msg`` (or ``msg_type``), over the subshell when there is one; return
        its ``msg_id``.

        ``escaped``: the content as a browser's ``JSON.stringify`` writes it, every
        character outside ASCII (a lone surrogate too) as a ``\\u`` escape.
        """
        msg = self.kc.session.msg(msg_type, {"comm_id": comm_id, "data": data})
        if escaped:
            msg["content"] = json.dumps(msg["content"]).encode("ascii")
        if self.subshell_id is not None:
            msg["header"]["subshell_id"] = self.subshell_id
        self.kc.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def send_main(
        self, msg_type: str, content: dict[str, Any], metadata: dict[str, Any] | None = None
    ) -> str:
        """Send a message on the main shell, as a page that just connected does."""
        msg = self.kc.session.msg(msg_type, content, metadata=metadata)
        self.kc.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def request(self, msg_type: str, content: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send a request on the main shell and return its reply."""
        msg_id = self.send_main(msg_type, content)
        self.drive(lambda: msg_id in self.replies, timeout, f"the reply to {msg_type}")
        return self.replies[msg_id]

    def comm_data(self, comm_id: str, method: str) -> dict[str, Any] | None:
        """The data of the last ``comm_msg`` the kernel sent on ``comm_id`` with ``method``."""
        sent = self.comm_sent(comm_id, method)
        return sent[-1] if sent else None

    def comm_sent(self, comm_id: str | None, method: str) -> list[dict[str, Any]]:
        """The data of every ``comm_msg`` with ``method`` the kernel sent on ``comm_id``
        (``None``: on any comm)."""
        return list(self._comm_sent.get((comm_id, method), ()))

    def open_control(self) -> str:
        """Open ipywidgets' control comm, as a (re)loading page does first; return its id."""
        control = uuid.uuid4().hex
        opening = {"comm_id": control, "target_name": CONTROL, "data": {}}
        self.send_main("comm_open", opening, metadata={"version": "1.0.0"})
        return control

    def request_states(self, control: str) -> None:
        """Ask for every widget's state on the control comm (``update_states`` answers)."""
        self.send_main("comm_msg", {"comm_id": control, "data": {"method": "request_states"}})

    def answer(self, comm_id: str, content: dict[str, Any]) -> str:
        """Answer a question now (and note when, for latency); return the message's id."""
        self.answered[f"{comm_id}/{content.get('question_id')}"] = time.monotonic()
        return self.send_custom(comm_id, content)

    # -- reading ---------------------------------------------------------------------

    def drive(self, until: Callable[[], bool], timeout: float, what: str) -> None:
        """Read and react to kernel messages until ``until()`` or fail after ``timeout``."""
        deadline = time.monotonic() + timeout
        while not until():
            if time.monotonic() > deadline:
                tail = [(m["msg_type"], str(m.get("content"))[:200]) for m in self.iopub[-8:]]
                raise AssertionError(f"timed out after {timeout} s waiting for {what}; {tail}")
            self._read(0.02)

    def wait_reply(self, msg_id: str, timeout: float = 60.0) -> dict[str, Any]:
        """The cell's ``execute_reply``, once its outputs are in (driving the frontend)."""
        self.drive(
            lambda: msg_id in self.replies and self.idle(msg_id),
            timeout,
            f"the reply to {msg_id}",
        )
        return self.replies[msg_id]

    def idle(self, msg_id: str) -> bool:
        """Whether the kernel said it is done with ``msg_id`` (status ``idle``)."""
        return msg_id in self._idle

    def busy(self, msg_id: str) -> bool:
        """Whether the kernel said it started on ``msg_id`` (status ``busy``)."""
        return msg_id in self._busy

    def run(self, code: str, timeout: float = 60.0) -> tuple[dict[str, Any], str]:
        """Run a cell to its end; return its reply content and its stdout."""
        msg_id = self.execute(code)
        reply = self.wait_reply(msg_id, timeout)
        return reply["content"], self.stdout(msg_id)

    def stdout(self, msg_id: str) -> str:
        return "".join(self._stdout.get(msg_id, ()))

    def inside(self, timeout: float = 15.0) -> str:
        """What the kernel is doing (every thread's stack, every widget's open questions),
        for a failure message; what went wrong instead when the kernel cannot say."""
        try:
            reply, out = self.run(INSIDE, timeout)
        except AssertionError as exc:
            return f"the kernel did not say what it is doing: {exc}"
        return out if reply["status"] == "ok" else f"{out}{reply}"

    def streams_by_parent(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for m in self.iopub:
            if m["msg_type"] == "stream":
                parent = m["parent_header"].get("msg_id", "")
                out[parent] = out.get(parent, "") + m["content"]["text"]
        return out

    def _read(self, timeout: float) -> None:
        try:
            msg = self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            pass
        else:
            msg["_received"] = time.monotonic()
            self.iopub.append(msg)
            self._index(msg)
            self._react(msg)
        while True:
            try:
                reply = self.kc.get_shell_msg(timeout=0)
            except queue.Empty:
                break
            self.replies[reply["parent_header"].get("msg_id", "")] = reply

    def _index(self, msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        parent = msg["parent_header"].get("msg_id", "")
        if kind == "status" and content.get("execution_state") == "idle":
            self._idle.add(parent)
        elif kind == "status" and content.get("execution_state") == "busy":
            self._busy.add(parent)
        elif kind == "stream" and content.get("name") == "stdout":
            self._stdout.setdefault(parent, []).append(content["text"])
        elif kind == "comm_msg":
            data = content.get("data") or {}
            method = str(data.get("method"))
            for comm_id in (content.get("comm_id"), None):
                self._comm_sent.setdefault((comm_id, method), []).append(dict(data))

    def _react(self, msg: dict[str, Any]) -> None:
        kind = msg["msg_type"]
        content = msg["content"]
        if kind == "comm_open":
            state = (content.get("data") or {}).get("state") or {}
            if "calls" in state and "order" in state:
                widget = Widget(content["comm_id"], state)
                self.widgets[widget.comm_id] = widget
                if self.render:
                    self.send_custom(widget.comm_id, {"type": "rendered"})
            return
        if kind != "comm_msg":
            return
        found = self.widgets.get(content.get("comm_id", ""))
        data = content.get("data") or {}
        if found is None:
            return
        if data.get("method") == "update":
            found.updates += 1
            found.state.update(data.get("state") or {})
            for card in (data.get("state") or {}).get("calls", {}).values():
                found.cards[card["tool_call_id"]] = card
            return
        custom = data.get("content")
        if data.get("method") != "custom" or not isinstance(custom, dict):
            return
        found.custom.append(custom)
        if custom.get("type") == "ping" and self.render:
            self.send_custom(found.comm_id, {"type": "pong", "seq": custom.get("seq")})
            return
        if custom.get("type") != "call":
            return
        card = custom["card"]
        found.cards[card["tool_call_id"]] = card
        question = card.get("question")
        if (
            self.responder is not None
            and question
            and question.get("answer") is None
            and f"{found.comm_id}/{question['id']}" not in self.answered
        ):
            reply = self.responder(card)
            if reply is not None:
                self.answer(
                    found.comm_id, {"type": "answer", "question_id": question["id"], **reply}
                )

    # -- what the widget shows -------------------------------------------------------

    def cards(self) -> list[dict[str, Any]]:
        """Every card of every widget, latest version of each."""
        return [card for w in self.widgets.values() for card in w.cards.values()]

    def open_question(self) -> dict[str, Any] | None:
        for card in self.cards():
            q = card.get("question")
            if q and q.get("answer") is None:
                return card
        return None
