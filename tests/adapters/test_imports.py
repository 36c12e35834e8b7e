"""The frameworks stay optional: nothing imports them but their own adapter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FRAMEWORKS = (
    "langchain",
    "langchain_core",
    "langgraph",
    "pydantic_ai",
    "pydantic_graph",
    "agents",
    "claude_agent_sdk",
)

BLOCK = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}")
        return None
sys.meta_path.insert(0, Block())
"""


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_import_mead_notebook_imports_no_framework() -> None:
    done = python(
        "import sys, mead_notebook, mead_notebook.adapters, mead_notebook.adapters.base\n"
        "from mead_notebook import NotebookInteraction, Router\n"
        "from mead_notebook.adapters import AgentResult\n"
        "from mead_notebook.adapters.base import AgentTurn\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r}))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_widget_imports_jsonschema_only_when_it_checks() -> None:
    """Its import can build an IRI grammar for a second or more (rfc3987-syntax)."""
    done = python(
        "import sys\n"
        "from mead_notebook import NotebookInteraction, Router, kernel_tools\n"
        "print('jsonschema' in sys.modules)\n"
        "from mead_notebook.schema import check\n"
        "print(check({'n': 'x'}, {'properties': {'n': {'type': 'integer'}}}))\n"
        "print('jsonschema' in sys.modules)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["False", "n: 'x' is not of type 'integer'", "True"]


def test_asking_a_person_imports_jsonschema_in_the_background() -> None:
    """So that the person's edited arguments are checked without that wait."""
    done = python(
        "import sys\n"
        "from mead_notebook import NotebookInteraction\n"
        "w = NotebookInteraction(display=False, grace=0.01)\n"
        "w.turn_started(None, 'go')\n"
        "w.tool_updated(None, {'tool_call_id': 'c1', 'title': 't', 'status': 'pending',\n"
        "                      'arguments': {}, 'tool': 't', 'server': 'local'})\n"
        "print(w.request_permission(None, {'tool_call_id': 'c1', 'tool': 't',\n"
        "                                  'server': 'local', 'arguments': {}}).reason)\n"
        "from mead_notebook import schema\n"
        "thread = schema._warming\n"
        "print(thread.name)\n"
        "thread.join(60)\n"
        "print('jsonschema' in sys.modules)\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["expired", "mead-jsonschema-import", "True"]


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("pydantic_ai", ("pydantic_ai",), "pydantic-ai"),
        ("langchain", ("langchain", "langgraph"), "langchain"),
        ("openai_agents", ("agents",), "openai-agents"),
        ("claude_agent", ("claude_agent_sdk",), "claude-agent"),
    ],
)
def test_an_adapter_without_its_framework_names_the_extra(
    module: str, blocked: tuple[str, ...], extra: str
) -> None:
    done = python(
        BLOCK.format(blocked=set(blocked))
        + "try:\n"
        + f"    import mead_notebook.adapters.{module}\n"
        + "except ImportError as exc:\n"
        + "    print('ERROR', exc)\n"
        + "    print('CAUSE', exc.__cause__)\n"
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        f"ERROR mead_notebook.adapters.{module} needs its framework: "
        f"pip install 'mead-notebook[{extra}]'"
    )
    assert lines[1].startswith("CAUSE No module named")


def test_each_adapter_imports_only_its_own_framework() -> None:
    done = python(
        "import sys, mead_notebook.adapters.pydantic_ai\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'langchain', 'langgraph'}))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
