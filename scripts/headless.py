"""Run a notebook top to bottom without a browser and print what a person would read.

    .venv/bin/python scripts/headless.py notebooks/01-quickstart.ipynb [--timeout 120]

Each Markdown cell as it is written (the prose that says what a cell shows and
why), each code cell's source and its outputs as text: streams, ``text/plain`` of
results and displays (a finished turn's transcript among them), and errors.
Widget state and HTML are left out. ``--saved`` prints the outputs the
file already holds instead of running it. The exit status is 1 when a cell raised.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _plain(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return str(output.get("text", ""))
    if kind == "error":
        return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}\n"
    data = output.get("data", {})
    text = data.get("text/plain", "")
    return "".join(text) if isinstance(text, list) else str(text)


def _cell_outputs(outputs: list[dict[str, Any]]) -> list[str]:
    """The cell's outputs as text; a widget's one-line summary is dropped when the
    transcript that follows it already opens with it."""
    texts = [_plain(o) for o in outputs]
    shown = []
    for i, (output, text) in enumerate(zip(outputs, texts, strict=True)):
        summary = text.strip()
        repeated = WIDGET_VIEW in output.get("data", {}) and any(
            summary and later.startswith(summary) for later in texts[i + 1 :]
        )
        if text.strip() and not repeated:
            shown.append(text)
    return shown


def render(nb: Any) -> str:
    """What a person reads in ``nb`` (an nbformat notebook), as plain text."""
    parts: list[str] = []
    for cell in nb.cells:
        source = "".join(cell.source) if isinstance(cell.source, list) else cell.source
        if cell.cell_type == "markdown":
            if source.strip():
                parts.extend((source.strip("\n"), ""))
            continue
        if cell.cell_type != "code" or not source.strip():
            continue
        count = cell.get("execution_count")
        parts.append(f"In [{count if count is not None else ' '}]:")
        parts.append(textwrap.indent(source.rstrip("\n"), "    "))
        outputs = _cell_outputs(cell.get("outputs", []))
        if outputs:
            parts.append("Out:")
            text = "".join(t if t.endswith("\n") else t + "\n" for t in outputs)
            parts.append(textwrap.indent(text.rstrip("\n"), "    "))
        parts.append("")
    return "\n".join(parts).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per cell")
    parser.add_argument("--saved", action="store_true", help="print saved outputs, run nothing")
    args = parser.parse_args(argv)
    nb = nbformat.read(args.notebook, as_version=4)
    failed = None
    if not args.saved:
        client = NotebookClient(
            nb,
            timeout=args.timeout,
            kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
            resources={"metadata": {"path": str(args.notebook.resolve().parent)}},
        )
        try:
            client.execute()
        except CellExecutionError as exc:
            failed = exc
    sys.stdout.write(render(nb))
    if failed is not None:
        print(f"\nA cell raised, the run stopped there:\n{failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
