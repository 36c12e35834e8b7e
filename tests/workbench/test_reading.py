"""What the model reads of the kernel: its variables, one described, the cells it ran; and
what a run's outputs become, for the card and for the model, bounded."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mead_notebook.interaction import ContentBlock
from mead_notebook.workbench import cells as cells_module
from mead_notebook.workbench.capture import Rich, Stream
from mead_notebook.workbench.cells import Cells
from mead_notebook.workbench.execute import Ran
from mead_notebook.workbench.history import history
from mead_notebook.workbench.report import cut, plain, run_content, run_text
from mead_notebook.workbench.variables import MAX_DESCRIPTION, describe, listing, summary


class Odd:
    @property
    def shape(self) -> Any:
        raise RuntimeError("no shape")


def test_the_listing_leaves_out_modules_and_ipythons_names(shell: Any) -> None:
    shell.user_ns.update(
        DataFrame=pd.DataFrame,
        sqrt=math.sqrt,
        df=pd.DataFrame({"a": [1, 2]}),
        arr=np.zeros((3, 4)),
        name="x" * 200,
        math=math,
        _private=1,
        items=[1, 2, 3],
        odd=Odd(),
    )
    exec("f = lambda x, y=2: x", shell.user_ns)  # a function of the notebook's own
    text, count = listing(shell)
    rows = {line.split()[0]: line for line in text.splitlines()}
    assert set(rows) == {"arr", "df", "f", "items", "name", "odd"}
    assert count == 6
    assert rows["df"].split()[1:] == ["pandas.DataFrame", "shape", "(2,", "1)"]
    assert rows["arr"].split()[1] == "numpy.ndarray"
    assert "3 items" in rows["items"]
    assert "(no summary: RuntimeError)" in rows["odd"]
    assert "<lambda>(x, y=2)" in rows["f"]
    assert len(rows["name"]) < 120


def test_a_dataframe_is_described_by_shape_dtypes_and_head() -> None:
    frame = pd.DataFrame({"a": range(100), "b": [0.5] * 100, "c": ["x"] * 100})
    text = describe("frame", frame)
    assert text.startswith(
        "frame: pandas.DataFrame\nshape (100, 3)\ncolumns and dtypes:\n  a: int64"
    )
    assert "head(5):" in text
    assert len(text.splitlines()) < 20


def test_an_array_and_anything_else_are_bounded() -> None:
    text = describe("arr", np.arange(10_000).reshape(100, 100))
    assert "shape (100, 100), dtype int64" in text
    assert "..." in text
    huge = list(range(1_000_000))
    described = describe("huge", huge)
    assert "length 1000000" in described
    assert len(described) <= MAX_DESCRIPTION
    assert describe("odd", Odd()).startswith("odd: ")


def test_a_summary_never_raises() -> None:
    class Broken:
        def __repr__(self) -> str:
            raise ValueError("nope")

    assert summary(Broken()) == "", "an address says nothing the type does not"
    assert summary(object()) == ""
    assert summary(np.int64(6)) == "np.int64(6)"


def test_history_gives_the_last_cells_with_their_outputs(shell: Any) -> None:
    shell.user_ns["In"] = ["", "x = 1", "x + 1", "", "print(x)"]
    shell.user_ns["Out"] = {2: 2}
    text, count = history(shell, 2)
    assert count == 2
    assert text == "[1 earlier cells not shown]\nIn [2]:\nx + 1\nOut[2]: 2\nIn [4]:\nprint(x)"
    assert history(shell, 0) == ("No cells with history were run in this kernel.", 0)


def test_text_is_cut_in_the_middle_with_a_note() -> None:
    text = "a" * 500 + "b" * 500
    shown = cut(text, 200)
    assert shown.startswith("a" * 100)
    assert shown.endswith("b" * 50)
    assert "[… 8" in shown
    assert len(shown) <= 200
    assert cut("short", 200) == "short"
    assert plain("\x1b[31mred\x1b[0m") == "red"


def test_the_model_gets_bounded_text_and_the_card_every_output() -> None:
    ran = Ran(
        outputs=[
            Stream("stdout", "line\n" * 5000),
            Rich({"text/plain": "<Figure>", "image/png": "iVBORw0KGgo="}),
            Rich({"text/plain": "   a\n0  1", "text/html": "<table></table>"}, result=True),
        ],
        error="Traceback (most recent call last):\n" + "  frame\n" * 2000 + "ValueError: no\n",
        error_name="ValueError",
        dropped=12,
    )
    text = run_text(ran, 3000)
    assert len(text) <= 3000
    assert text.startswith("stdout:\nline\n")
    assert "characters cut" in text
    assert text.endswith("ValueError: no\n"), "a traceback keeps its end"
    content: list[ContentBlock] = run_content("print(1)", ran)
    assert [b["type"] for b in content] == ["code", "output", "image", "html", "text", "output"]
    assert content[-1] == {"type": "output", "name": "error", "text": ran.error}


def test_a_proposed_cell_goes_below_a_running_cell_once(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    current = {"id": "cell-1"}
    monkeypatch.setattr(cells_module, "request_id", lambda: current["id"])
    cells = Cells(shell)
    shell.payload_manager.clear_payload()
    assert cells.propose("a = 1") == "inserted"
    assert cells.propose("b = 2") == "taken"
    assert shell.payload_manager.read_payload() == [
        {"source": "set_next_input", "text": "a = 1", "replace": False}
    ]
    shell.events.trigger("post_run_cell", None)
    assert cells.propose("c = 3") == "ended", "the cell has ended: nothing may land elsewhere"
    current["id"] = "cell-2"
    shell.events.trigger("pre_run_cell", None)
    current["id"] = "cell-1"  # the turn's thread still belongs to the first cell
    assert cells.propose("d = 4") == "ended", "another cell runs: not the turn's"
    current["id"] = "cell-2"
    assert cells.propose("e = 5") == "inserted", "a turn of the running cell may"
    shell.payload_manager.clear_payload()
    assert sys.modules[Cells.__module__] is cells_module


@given(
    st.lists(st.tuples(st.sampled_from(["stdout", "stderr"]), st.text(max_size=3000)), max_size=30),
    st.one_of(st.none(), st.text(max_size=9000)),
    st.integers(min_value=500, max_value=9000),
)
@settings(max_examples=200, deadline=None)
def test_the_models_text_never_passes_its_limit(
    streams: list[tuple[Any, str]], error: str | None, limit: int
) -> None:
    ran = Ran(
        outputs=[Stream(name, text) for name, text in streams],
        error=error,
        error_name="E" if error is not None else None,
    )
    assert len(run_text(ran, limit)) <= limit
