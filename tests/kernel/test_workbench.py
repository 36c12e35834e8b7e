"""The kernel's tools on real kernels: each through the Router, gated by the widget.

A kernel of the oldest and the newest supported ipykernel runs turns of a scripted
model that calls ``kernel_tools()``; the test frontend plays the widget and answers
its questions. What the code prints and shows must reach its card and nothing else
(no stream or display message of any cell), a denied call must leave the
namespace untouched, a raising one end ``failed``, and a Cancel or a kernel
interrupt must stop a loop within a second, leaving the kernel usable.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .cells import ALLOW, DENY, calls_of, next_cell_runs, result_of
from .frontend import Frontend, ready_kernel, reset

pytestmark = pytest.mark.kernel

VERSIONS = ("6.29.5", "7.4.0")
SETUP = """
import json, threading, time
import pandas as pd
from mead_notebook import NotebookInteraction, Router, ScriptedModel, ToolCall, kernel_tools
from mead_notebook.notebook import waiting

TOOLS = kernel_tools(timeout=20)
QUICK = kernel_tools(timeout=1)
df = pd.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.5, 6.0]})

def router(*calls, tools=TOOLS):
    return Router(ScriptedModel([[c] for c in calls] + [["done"]]), tools)

def widget():
    return NotebookInteraction(timeout=60, grace=30)

def report(res):
    calls = [
        {"tool": c.tool, "status": c.status, "outcome": c.outcome, "result": c.result,
         "error": c.error}
        for c in res.calls
    ]
    print("RESULT " + json.dumps({"stop": res.stop_reason, "text": res.text, "calls": calls}))

def tool_threads():
    return [t for t in threading.enumerate() if t.name.startswith("mead-tool-")]

from mead_notebook.workbench import stopping
LEFT = []
_leave = stopping.Guard._leave

def _noted_leave(self, me):
    _leave(self, me)
    LEFT.append(time.monotonic())

stopping.Guard._leave = _noted_leave

print("READY", waiting.mechanism())
"""
RUN = "total = int(df.a.sum())\nprint('sum', total)\ndf.head(2)"
PROPOSED = "print('proposed', total)"
FIVE = (
    "ToolCall('list_variables', {}), ToolCall('describe_variable', {'name': 'df'}), "
    "ToolCall('notebook_history', {'last': 5}), "
    f"ToolCall('run_python', {{'code': {RUN!r}}}), "
    f"ToolCall('propose_cell', {{'code': {PROPOSED!r}}})"
)
LOOP = "ToolCall('run_python', {'code': 'while True: pass'})"


@pytest.fixture(scope="module", params=VERSIONS)
def kernel(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Frontend]:
    workdir: Path = tmp_path_factory.mktemp(f"workbench-{request.param}")
    with ready_kernel(request.param, False, workdir, SETUP) as fe:
        yield fe


@pytest.fixture
def fe(kernel: Frontend) -> Frontend:
    return reset(kernel)


def turn(mode: str, calls: str, tools: str = "TOOLS") -> str:
    """The cell that runs a turn of ``calls`` in ``mode`` (``background``: it starts it)."""
    made = f"router({calls}, tools={tools})"
    if mode == "sync":
        return f"report({made}.run('go', interaction=widget()))"
    if mode == "async":
        return f"report(await {made}.arun('go', interaction=widget()))"
    return f"turn = {made}.start('go', interaction=widget())"


def run_turn(
    fe: Frontend, mode: str, calls: str, tools: str = "TOOLS"
) -> tuple[str, dict[str, Any]]:
    """Run a turn to its end; return the msg_id of the cell that ran it and its report."""
    msg_id = fe.execute(turn(mode, calls, tools))
    if mode == "background":
        reply = fe.wait_reply(msg_id, 30)["content"]
        assert reply["status"] == "ok", reply
        reply, out = fe.run("report(turn.result(60))", timeout=90)
        assert reply["status"] == "ok", reply
        return msg_id, result_of(out)
    reply = fe.wait_reply(msg_id, 90)["content"]
    assert reply["status"] == "ok", reply
    return msg_id, result_of(fe.stdout(msg_id))


def cards_of(fe: Frontend, tool: str) -> list[dict[str, Any]]:
    return [c for c in fe.cards() if c.get("tool") == tool]


def streamed(fe: Frontend) -> str:
    """Everything every cell printed, whichever cell it landed in (the reports aside)."""
    text = "".join(fe.streams_by_parent().values())
    return "".join(line for line in text.splitlines(True) if not line.startswith("RESULT "))


def displayed(fe: Frontend, msg_id: str | None = None) -> list[dict[str, Any]]:
    """The data of every display or result message a cell (or ``msg_id``) showed (widgets
    aside)."""
    kinds = ("display_data", "execute_result", "update_display_data")
    return [
        m["content"]["data"]
        for m in fe.iopub
        if m["msg_type"] in kinds
        and msg_id in (None, m["parent_header"].get("msg_id"))
        and "application/vnd.jupyter.widget-view+json" not in m["content"]["data"]
        and "NotebookInteraction" not in str(m["content"]["data"].get("text/plain", ""))
    ]


def payloads(fe: Frontend, msg_id: str) -> list[dict[str, Any]]:
    return list(fe.replies[msg_id]["content"].get("payload") or [])


@pytest.mark.parametrize("mode", ["sync", "async", "background"])
def test_each_tool_runs_through_the_gate(fe: Frontend, mode: str) -> None:
    asked: list[dict[str, Any]] = []

    def allow(card: dict[str, Any]) -> dict[str, Any]:
        asked.append(card)
        return ALLOW

    fe.responder = allow
    msg_id, result = run_turn(fe, mode, FIVE)
    tools = [
        "list_variables",
        "describe_variable",
        "notebook_history",
        "run_python",
        "propose_cell",
    ]
    assert [(c["tool"], c["status"]) for c in result["calls"]] == [(t, "completed") for t in tools]
    assert [c["tool"] for c in asked] == tools, "every call was asked about"
    by_tool = {c["tool"]: c for c in result["calls"]}
    assert "pandas.DataFrame" in by_tool["list_variables"]["result"]
    assert "shape (3, 2)" in by_tool["describe_variable"]["result"]
    assert "b: float64" in by_tool["describe_variable"]["result"]
    assert "sum 6" in by_tool["run_python"]["result"]
    # Before Allow, the card showed the code exactly.
    code_asked = next(c for c in asked if c["tool"] == "run_python")
    assert code_asked["content"] == [{"type": "code", "language": "python", "code": RUN, "cut": 0}]
    proposed_asked = next(c for c in asked if c["tool"] == "propose_cell")
    assert proposed_asked["content"][0]["code"] == PROPOSED
    # After it ran, the card shows what a cell would: its output and the DataFrame's table.
    [card] = cards_of(fe, "run_python")
    kinds = [(b["type"], b.get("name")) for b in card["content"]]
    assert kinds == [("code", None), ("output", "stdout"), ("html", None)]
    assert card["content"][1]["text"] == "sum 6\n"
    assert "<table>" in card["content"][2]["html"]
    assert "<script" not in card["content"][2]["html"]
    # None of it reached a cell's output.
    assert "sum 6" not in streamed(fe)
    assert not any("<table" in str(d.get("text/html", "")) for d in displayed(fe))
    # The code's variable stays; the proposed cell goes below the turn's cell while it runs.
    [proposed] = cards_of(fe, "propose_cell")
    note = proposed["content"][1]["text"]
    if mode == "background":
        assert note.startswith("Not inserted: the cell that ran this turn has ended")
        assert payloads(fe, msg_id) == []
    else:
        assert note.startswith("The cell will appear below")
        assert payloads(fe, msg_id) == [
            {"source": "set_next_input", "text": PROPOSED, "replace": False}
        ]
    reply, out = fe.run("print(total)")
    assert (reply["status"], out) == ("ok", "6\n")
    assert reply.get("payload") in (None, []), "no payload lands in a later cell"


def test_a_denied_call_leaves_the_namespace_untouched(fe: Frontend) -> None:
    fe.responder = lambda card: DENY
    code = "touched = 1\ndf['c'] = 0"
    _msg_id, result = run_turn(fe, "sync", f"ToolCall('run_python', {{'code': {code!r}}})")
    assert [(c["tool"], c["status"], c["outcome"]) for c in result["calls"]] == [
        ("run_python", "failed", "denied")
    ]
    _reply, out = fe.run("print('touched' in globals(), list(df.columns))")
    assert out == "False ['a', 'b']\n", out
    [card] = cards_of(fe, "run_python")
    assert card["content"][0]["code"] == code


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_raising_cell_ends_failed_with_its_traceback(fe: Frontend, mode: str) -> None:
    fe.responder = lambda card: ALLOW
    code = "print('before')\ndef f():\n    return 1 / 0\nf()"
    _, result = run_turn(fe, mode, f"ToolCall('run_python', {{'code': {code!r}}})")
    [call] = result["calls"]
    assert (call["status"], call["outcome"]) == ("failed", "error")
    assert "ZeroDivisionError" in call["error"]
    assert "return 1 / 0" in call["error"]
    assert "before" in call["error"]
    [card] = cards_of(fe, "run_python")
    assert [(b["type"], b.get("name")) for b in card["content"]] == [
        ("code", None),
        ("output", "stdout"),
        ("output", "error"),
    ]
    assert "ZeroDivisionError: division by zero" in card["content"][2]["text"]
    assert card["outcome"] == "error"
    assert "before" not in streamed(fe)
    next_cell_runs(fe)


def running_card(fe: Frontend, tool: str) -> dict[str, Any] | None:
    return next((c for c in cards_of(fe, tool) if c["status"] == "in_progress"), None)


def stopped_within(fe: Frontend, since: float) -> float:
    """Seconds from ``since`` (this machine's monotonic clock, the kernel's too) until the
    code left its guard; and no tool thread runs any more."""
    reply, out = fe.run(
        "deadline = time.monotonic() + 10\n"
        "while tool_threads() and time.monotonic() < deadline:\n"
        "    time.sleep(0.005)\n"
        "print(len(tool_threads()), LEFT[-1])",
        timeout=30,
    )
    assert reply["status"] == "ok", reply
    left, at = out.split()
    assert left == "0", "the tool's thread still runs"
    return float(at) - since


@pytest.mark.parametrize("mode", ["sync", "background"])
def test_cancel_stops_a_loop_and_the_kernel_goes_on(
    fe: Frontend, mode: str, record_property: Any
) -> None:
    fe.responder = lambda card: ALLOW
    msg_id = fe.execute(turn(mode, LOOP))
    fe.drive(lambda: running_card(fe, "run_python") is not None, 30, "the loop running")
    card = running_card(fe, "run_python")
    assert card is not None
    time.sleep(0.3)
    widget = next(iter(fe.widgets))
    cancelled = time.monotonic()
    fe.send_custom(widget, {"type": "cancel", "tool_call_id": card["tool_call_id"]})
    if mode == "sync":
        reply = fe.wait_reply(msg_id, 30)["content"]
        assert reply["status"] == "ok", reply
        assert calls_of(fe.stdout(msg_id)) == [("run_python", "failed", "cancelled")]
    else:
        reply, out = fe.run("report(turn.result(30))")
        assert calls_of(out) == [("run_python", "failed", "cancelled")]
    took = stopped_within(fe, cancelled)
    record_property("cancel_to_stopped_s", round(took, 3))
    assert took < 1.0, f"the loop stopped {took:.2f} s after Cancel"
    next_cell_runs(fe)


@pytest.mark.parametrize(("mode", "ename"), [("sync", "KeyboardInterrupt"), ("async", None)])
def test_a_kernel_interrupt_stops_a_loop(
    fe: Frontend, mode: str, ename: str | None, record_property: Any
) -> None:
    fe.responder = lambda card: ALLOW
    msg_id = fe.execute(turn(mode, LOOP))
    fe.drive(lambda: running_card(fe, "run_python") is not None, 30, "the loop running")
    time.sleep(0.3)
    interrupted = time.monotonic()
    fe.km.interrupt_kernel()
    reply = fe.wait_reply(msg_id, 30)["content"]
    assert reply["status"] == "error", reply
    if ename is not None:
        assert reply["ename"] == ename, reply
    took = stopped_within(fe, interrupted)
    record_property("interrupt_to_stopped_s", round(took, 3))
    assert took < 1.0, f"the loop stopped {took:.2f} s after the interrupt"
    next_cell_runs(fe)


def test_the_time_limit_stops_a_loop(fe: Frontend) -> None:
    fe.responder = lambda card: ALLOW
    started = time.monotonic()
    _, result = run_turn(fe, "sync", LOOP, tools="QUICK")
    [call] = result["calls"]
    assert (call["status"], call["outcome"]) == ("failed", "timeout")
    assert "did not finish within 1 s" in call["error"]
    assert time.monotonic() - started < 15
    stopped_within(fe, 0.0)
    next_cell_runs(fe)


FIGURE = (
    "import matplotlib\nimport matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots(figsize=(3, 2))\nax.plot([1, 3, 2])\nax.set_title('drawn')"
)


@pytest.mark.parametrize("show", [False, True])
def test_a_figure_reaches_the_card_and_no_cell(fe: Frontend, show: bool) -> None:
    fe.responder = lambda card: ALLOW
    code = FIGURE + ("\nplt.show()" if show else "")
    _msg_id, result = run_turn(fe, "sync", f"ToolCall('run_python', {{'code': {code!r}}})")
    [call] = result["calls"]
    assert call["status"] == "completed", call
    assert "image/png shown to the person" in call["result"]
    [card] = cards_of(fe, "run_python")
    images = [b for b in card["content"] if b["type"] == "image"]
    assert len(images) == 1, card["content"]
    assert images[0]["mime_type"] == "image/png"
    assert images[0]["data"].startswith("iVBORw0KGgo")
    assert "Figure" in images[0]["alt"]
    assert not any("image/png" in d for d in displayed(fe)), "the figure reached a cell"
    _reply, out = fe.run("print(matplotlib.get_backend(), plt.get_fignums())")
    assert out.endswith("[]\n"), out


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_answer_mid_cell_leaves_the_cells_own_figure_to_the_cells_end(
    fe: Frontend, mode: str
) -> None:
    """The widget's answer is handled while the cell still runs: the kernel's end-of-cell
    hooks (matplotlib's flush, which shows and closes every open figure) must not run then,
    or a figure the cell (or a tool of its turn) has open is shown early and closed."""
    fe.responder = lambda card: ALLOW
    code = (
        "import matplotlib.pyplot as plt\nmine, ax = plt.subplots(figsize=(2, 1))\n"
        + turn(mode, "ToolCall('run_python', {'code': 'print(6 * 7)'})")
        + "\nprint('OPEN', plt.get_fignums() == [mine.number])"
    )
    msg_id = fe.execute(code)
    reply = fe.wait_reply(msg_id, 90)["content"]
    assert reply["status"] == "ok", reply
    out = fe.stdout(msg_id)
    assert calls_of(out) == [("run_python", "completed", None)], out
    assert "OPEN True" in out, out
    shown = [d for d in displayed(fe, msg_id) if "image/png" in d]
    assert len(shown) == 1, "the cell's figure is shown once, at the cell's end"
    _reply, out = fe.run("print(plt.get_fignums())")
    assert out.endswith("[]\n"), out


def test_what_the_code_prints_never_lands_in_another_cell(fe: Frontend) -> None:
    """A background turn prints while the person's own cell prints at the same time."""
    fe.responder = lambda card: ALLOW
    code = "for i in range(40):\n    print('tool', i)\n    time.sleep(0.01)"
    started = fe.execute(turn("background", f"ToolCall('run_python', {{'code': {code!r}}})"))
    assert fe.wait_reply(started, 30)["content"]["status"] == "ok"
    reply, out = fe.run(
        "for i in range(60):\n    print('main', i)\n    time.sleep(0.01)\nreport(turn.result(30))",
        timeout=60,
    )
    assert reply["status"] == "ok", reply
    assert calls_of(out) == [("run_python", "completed", None)]
    everything = streamed(fe)
    assert "tool" not in everything.replace("tool_threads", "")
    assert everything.count("main ") == 60
    [card] = cards_of(fe, "run_python")
    [printed] = [b["text"] for b in card["content"] if b["type"] == "output"]
    assert printed == "".join(f"tool {i}\n" for i in range(40))
    widget_messages = [str(c) for w in fe.widgets.values() for c in w.custom]
    assert not any("tool 1\\n" in m and "text" in m and "delta" in m for m in widget_messages)
