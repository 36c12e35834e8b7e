"""A person's mistakes in a real kernel get one clear answer.

A kernel of its own (the newest ipykernel), not the matrix's shared one: "once per
kernel" needs a kernel where no other test has run a turn without an interaction.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .cells import asking, next_cell_runs
from .conftest import KERNEL_VERSIONS, SETUP
from .frontend import Frontend, ready_kernel, reset

pytestmark = pytest.mark.kernel

UNASKED_TURN = (
    "print(router(['unasked ', ToolCall('write_note', {'text': 'hi'})], ['done']).run('go'))"
)


@pytest.fixture(scope="module")
def own_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Frontend]:
    workdir: Path = tmp_path_factory.mktemp("mistakes")
    setup = "from mead_notebook.policies import AllowAll\n" + SETUP
    with ready_kernel(KERNEL_VERSIONS[-1], False, workdir, setup) as fe:
        yield fe


@pytest.fixture
def fe(own_kernel: Frontend) -> Frontend:
    return reset(own_kernel)


def outputs(fe: Frontend, msg_id: str) -> list[dict[str, Any]]:
    """The iopub outputs (streams, errors) of one cell, in order."""
    kinds = ("stream", "error", "display_data", "execute_result")
    return [
        m["content"] | {"msg_type": m["msg_type"]}
        for m in fe.iopub
        if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] in kinds
    ]


def stderr(fe: Frontend, msg_id: str) -> str:
    return "".join(
        o["text"]
        for o in outputs(fe, msg_id)
        if o["msg_type"] == "stream" and o["name"] == "stderr"
    )


def test_a_turn_without_an_interaction_says_so_once_per_kernel(fe: Frontend) -> None:
    first = fe.execute(UNASKED_TURN)
    reply = fe.wait_reply(first, 30)["content"]
    assert reply["status"] == "ok", reply
    said = stderr(fe, first)
    assert said.count("UnaskedWarning") == 1, said
    assert "its tools run without asking anyone" in said
    assert "interaction=NotebookInteraction()" in said
    assert "write_note: completed" in fe.stdout(first)

    second = fe.execute(UNASKED_TURN)
    reply = fe.wait_reply(second, 30)["content"]
    assert reply["status"] == "ok", reply
    assert stderr(fe, second) == ""
    # A turn that has an interaction never says it.
    quiet = fe.execute("permission_router().run('go', interaction=AllowAll())")
    assert fe.wait_reply(quiet, 30)["content"]["status"] == "ok"
    assert stderr(fe, quiet) == ""


@pytest.mark.parametrize(
    ("cell", "ename"),
    [
        ("permission_router().run('go', interaction=widget())", "KeyboardInterrupt"),
        ("await permission_router().arun('go', interaction=widget())", "CancelledError"),
        ("permission_router().start('go', interaction=widget()).result()", "KeyboardInterrupt"),
    ],
    ids=["sync", "async", "background"],
)
def test_an_interrupted_waiting_cell_ends_with_one_line(
    fe: Frontend, cell: str, ename: str
) -> None:
    msg_id, _ = asking(fe, cell)
    fe.km.interrupt_kernel()
    reply = fe.wait_reply(msg_id, 30)["content"]
    assert (reply["status"], reply.get("ename")) == ("error", ename), reply
    errors = [o for o in outputs(fe, msg_id) if o["msg_type"] == "error"]
    assert len(errors) == 1, outputs(fe, msg_id)
    assert errors[0]["traceback"] == [
        f"{ename}: the turn was interrupted; write_note was stopped and did not finish. "
        "Run the cell again for a new turn."
    ]
    next_cell_runs(fe)
