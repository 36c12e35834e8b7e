"""Fixtures of the real-kernel matrix: one kernel per ipykernel version and routing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .frontend import Frontend, ready_kernel, reset

KERNEL_VERSIONS = ("6.29.5", "6.31.0", "7.0.1", "7.3.0", "7.4.0")
"""Keep in step with scripts/kernel-envs.sh."""

CONFIGS = [
    pytest.param((version, subshell), id=f"{version}-{'subshell' if subshell else 'main'}")
    for version in KERNEL_VERSIONS
    for subshell in ((False, True) if not version.startswith("6.") else (False,))
]

SETUP = '''
import json, threading, time
from mead_notebook import Call, NotebookInteraction, Router, ScriptedModel, ToolCall, tool
from mead_notebook.notebook import waiting

@tool
def write_note(text: str) -> str:
    """Write a note."""
    return f"wrote {text}"

@tool
def slow(call: Call) -> str:
    """Wait until cancelled (at most 60 s)."""
    call.progress(0.1, "waiting")
    return "cancelled" if call.wait_cancelled(60) else "finished"

def router(*replies):
    return Router(ScriptedModel([list(r) for r in replies]), [write_note, slow])

def permission_router():
    return router([ToolCall("write_note", {"text": "hi"})], ["all done"])

def widget():
    return NotebookInteraction(timeout=60, grace=30)

def report(res):
    calls = [
        {"tool": c.tool, "status": c.status, "outcome": c.outcome, "result": c.result}
        for c in res.calls
    ]
    print("RESULT " + json.dumps({"stop": res.stop_reason, "text": res.text, "calls": calls}))

print("READY", waiting.mechanism())
'''


@pytest.fixture(scope="package", params=CONFIGS)
def frontend(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Frontend]:
    """A kernel of one matrix version with the project's helpers loaded, shared by every
    module here (a parallel run keeps each version's tests on one worker: conftest.py)."""
    version, subshell = request.param
    workdir: Path = tmp_path_factory.mktemp(f"kernel-{version}")
    with ready_kernel(version, subshell, workdir, SETUP) as fe:
        yield fe


@pytest.fixture
def fe(frontend: Frontend) -> Frontend:
    """The module's kernel, with the frontend reset for one scenario."""
    return reset(frontend)
