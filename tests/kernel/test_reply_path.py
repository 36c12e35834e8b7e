"""ipykernel 7.0 - 7.3 can leave a request unread when a reply goes out as it arrives.

Those versions send each reply with a raw send on the shell socket, which can
swallow the signal of a request arriving at that moment: the request then waits
unread and the kernel looks hung (a reloading page gets no ``kernel_info_reply``,
the next cell never runs). A kernel that has run a turn sends replies through the
shell stream, as 7.4 does. The scenario is made exact: the shell channel thread is
held while the request arrives, then sends a reply the way the kernel sends every
reply (through the callback its reply channel has registered).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .cells import ALLOW, SYNC_TURN, calls_of, next_cell_runs
from .conftest import KERNEL_VERSIONS, SETUP
from .frontend import Frontend

pytestmark = pytest.mark.kernel

HOLD_THEN_REPLY = """
import select
from ipykernel.kernelbase import Kernel

def _hold_then_reply():
    k = Kernel.instance()
    parent = k.get_parent("shell")
    holding = {"name": "stdout", "text": "HOLDING\\n"}
    k.session.send(k.iopub_socket, "stream", holding, parent=parent)
    # Wait (bounded) until a request has arrived: the socket's descriptor is signalled.
    select.select([k.shell_stream.socket.FD], [], [], 5.0)
    reply = k.session.msg("stream", {"name": "stdout", "text": "a reply"}, parent=parent)
    frames = k.session.serialize(reply, ident=k._parent_ident["shell"])
    k.shell_channel_thread.manager._main_to_shell_channel.to_stream._recv_callback(frames)

Kernel.instance().shell_channel_thread.io_loop.add_callback(_hold_then_reply)
"""
"""Hold the shell channel thread until a request arrives, then send a reply."""

FAULTY = [v for v in KERNEL_VERSIONS if v.startswith("7.") and v < "7.4"]
SEVEN = [v for v in KERNEL_VERSIONS if v.startswith("7.")]


def request_while_a_reply_goes_out(fe: Frontend) -> bool:
    """Whether a ``kernel_info_request`` sent while the thread is held gets its reply."""
    msg_id = fe.execute(HOLD_THEN_REPLY)
    fe.drive(lambda: "HOLDING" in fe.stdout(msg_id), 10, "the shell channel thread to hold")
    info = fe.send_main("kernel_info_request", {})
    try:
        fe.drive(lambda: info in fe.replies, 5, "the kernel_info_reply")
    except AssertionError:
        return False
    reply = fe.wait_reply(msg_id, 10)["content"]
    assert reply["status"] == "ok", reply
    return True


@pytest.mark.parametrize("version", SEVEN)
def test_after_a_turn_a_request_arriving_as_a_reply_goes_out_is_answered(
    version: str, tmp_path: Path
) -> None:
    fe = Frontend(version, tmp_path)
    try:
        reply, _ = fe.run(SETUP, timeout=60)
        assert reply["status"] == "ok", reply
        fe.responder = lambda card: ALLOW
        reply, out = fe.run(SYNC_TURN, timeout=60)
        assert calls_of(out) == [("write_note", "completed", None)], out
        for _ in range(3):
            assert request_while_a_reply_goes_out(fe)
        next_cell_runs(fe)
    finally:
        fe.close()


@pytest.mark.parametrize("version", FAULTY)
def test_a_kernel_that_never_ran_a_turn_leaves_that_request_unread(
    version: str, tmp_path: Path
) -> None:
    """The fault itself, on a kernel where the library never ran (what the test above guards)."""
    fe = Frontend(version, tmp_path)
    try:
        assert not request_while_a_reply_goes_out(fe)
    finally:
        fe.close()
