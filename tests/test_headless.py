"""``scripts/headless.py``: a notebook run without a browser, printed as a person reads it."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("headless", REPO / "scripts" / "headless.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_saved_quickstart_reads_as_text() -> None:
    headless = load_script()
    nb = nbformat.read(REPO / "notebooks" / "01-quickstart.ipynb", as_version=4)
    text = headless.render(nb)
    assert "# Quickstart" in text.splitlines()[0]
    assert '    result = router.run("Summarise notes.txt into summary.txt"' in text
    assert (
        "    **Tool call** `read_file` on `local`: Completed · Allowed by policy: AllowReads()"
        in text
    )
    assert "    Permission to run write_file was denied (expired). The tool did not run." in text
    summary = re.compile(
        r"NotebookInteraction: done, 3 tool calls \(1 completed, 1 expired, 1 no_answer\), "
        r"\d+ characters of text"
    )
    # Once from the transcript, once printed by `print(interaction)`: never the widget's copy.
    assert len(summary.findall(text)) == 2
    for machine in ("application/vnd.jupyter", "<div", "model_id", '"cells"'):
        assert machine not in text
    assert len(text) < 10_000


@pytest.mark.kernel
def test_a_run_prints_the_turn_and_a_failing_cell(tmp_path: Path) -> None:
    turn = """
from mead_notebook import NotebookInteraction, Router, ScriptedModel, ToolCall, tool

@tool
def write_note(text: str) -> str:
    \"\"\"Write a note.\"\"\"
    return text

model = ScriptedModel([["Let me **write**.", ToolCall("write_note", {"text": "hi"})], ["Done."]])
Router(model, tools=[write_note]).run("note", interaction=NotebookInteraction(grace=0.2))
print("after the turn")
"""
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# A turn\n\nSome prose."),
            nbformat.v4.new_code_cell(turn),
            nbformat.v4.new_code_cell("1 / 0"),
            nbformat.v4.new_code_cell("print('never')"),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Py", "language": "python"}
    path = tmp_path / "turn.ipynb"
    nbformat.write(nb, path)
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "headless.py"), "--timeout", "60", str(path)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert run.returncode == 1, run.stderr
    out = run.stdout
    # The prose is printed as written: it says what the outputs below it mean.
    assert out.startswith("# A turn\n\nSome prose.\n\nIn [1]:\n")
    summary = "NotebookInteraction: done, 1 tool call (1 expired), 22 characters of text"
    assert out.count(summary) == 1
    assert f"Out:\n    {summary}\n\n    > note\n\n    Let me **write**." in out
    assert "    after the turn" in out
    assert "In [2]:\n    1 / 0\nOut:\n    ZeroDivisionError: division by zero" in out
    assert out.endswith("In [ ]:\n    print('never')\n")  # shown, never run
    assert "ZeroDivisionError" in run.stderr
