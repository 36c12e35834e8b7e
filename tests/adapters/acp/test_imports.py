"""The ACP SDK stays optional: only ``mead_notebook.adapters.acp`` imports it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "acp":
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, Block())
"""


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )


def test_import_mead_notebook_never_imports_the_acp_sdk() -> None:
    done = python(
        "import sys, mead_notebook, mead_notebook.adapters, mead_notebook.adapters.base\n"
        "from mead_notebook import NotebookInteraction\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'acp'))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_adapter_without_the_sdk_names_the_extra() -> None:
    done = python(
        BLOCK
        + "try:\n    import mead_notebook.adapters.acp\n"
        + "except ImportError as exc:\n    print('ERROR', exc)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "ERROR mead_notebook.adapters.acp needs its framework: pip install 'mead-notebook[acp]'"
    )


def test_the_adapter_imports_no_other_framework() -> None:
    done = python(
        "import sys, mead_notebook.adapters.acp\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'langchain', 'langgraph', 'pydantic_ai'}))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
