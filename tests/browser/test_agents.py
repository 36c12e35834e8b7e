"""A person allows a real Claude Code agent's file write from its diff card in JupyterLab.

The agent (``@zed-industries/claude-agent-acp``, from ``tests/agents``) runs in the
notebook's kernel against a fake Anthropic server in the test's process that asks
to write a file. The card shows the diff before anyone decides; Allow writes the
file and the turn ends. Click to tool: from the click to the file's modification
time (the agent's Write, on the same clock as the kernel's ``time.time()``); the
click to the answer's return in the kernel is recorded beside it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect
from servers.agent_launch import BIN, EXECUTABLES, launch
from servers.agent_models import AnthropicAgentServer, WriteFile

from .conftest import Latencies
from .pages import NotebookPage

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

QUESTION_TIMEOUT = 90_000
TEXT = "hello\nfrom the agent\n"

CELL = """
import json, time
from pathlib import Path
from mead_notebook import NotebookInteraction
from mead_notebook.adapters import acp

UNBLOCKED_AT = []


class Timed(NotebookInteraction):
    def request_permission(self, context, request):
        decision = super().request_permission(context, request)
        UNBLOCKED_AT.append(time.time())
        return decision


spec = acp.agent("claude", executable={executable!r}, env=json.loads({env!r}))
result = acp.run(spec, "Write hello.txt", interaction=Timed(), cwd={cwd!r})
target = Path({cwd!r}) / "hello.txt"
print("RESULT", result.stop_reason, [c.status for c in result.calls], repr(target.read_text()))
print(f"UNBLOCKED {{UNBLOCKED_AT[0]:.6f}}")
print(f"TOOL {{target.stat().st_mtime:.6f}}")
"""


def test_allow_on_a_claude_diff_card_writes_the_file(
    lab: NotebookPage, latencies: Latencies, tmp_path: Path
) -> None:
    executable = BIN / EXECUTABLES["claude"]
    if not executable.exists():
        pytest.fail("claude-agent-acp is not installed: run scripts/setup.sh (tests/agents)")
    cwd = tmp_path / "work"
    cwd.mkdir()
    target = cwd / "hello.txt"
    with AnthropicAgentServer(WriteFile("hello.txt", TEXT), cwd=str(cwd)) as server:
        env = launch("claude", server.url, tmp_path).env
        lab.open([CELL.format(executable=str(executable), env=json.dumps(env), cwd=str(cwd))])
        lab.run_cell(0)
        allow = lab.turn().get_by_role("button", name="Allow", exact=True)
        expect(allow).to_be_visible(timeout=QUESTION_TIMEOUT)
        card = lab.card("Write")
        expect(card).to_contain_text("Waiting for you")
        expect(card.locator(".mead-content-diff .mead-path")).to_have_text(str(target))
        expect(card.locator(".mead-diff-stat")).to_have_text(re.compile(r"\+2\b"))
        expect(card.locator(".mead-diff-add .mead-diff-text")).to_have_text(
            ["hello", "from the agent"]
        )
        expect(card.locator(".mead-not-editable")).to_be_visible()
        assert not target.exists(), "the file was written before anyone allowed it"
        lab.shot("asking")
        allow.click()
        lab.wait_output(0, "RESULT end_turn ['completed'] 'hello\\nfrom the agent\\n'", 90_000)
    assert target.read_text() == TEXT
    expect(card).to_contain_text("Completed")
    expect(card).to_contain_text("Allowed by you")
    lab.shot("allowed")
    latencies.measure(lab, "lab_claude_allow_diff", ("Allow",), "TOOL", pooled=False)
    latencies.measure(lab, "lab_claude_allow_diff_answered", ("Allow",), "UNBLOCKED")
