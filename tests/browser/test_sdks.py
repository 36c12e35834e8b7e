"""A person allows an OpenAI Agents SDK tool call and a Claude Code Write in real JupyterLab."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import Latencies
from .pages import NotebookPage

pytestmark = pytest.mark.browser

QUESTION_TIMEOUT = 90_000
RESULT_TIMEOUT = 90_000

OPENAI_AGENTS = """
import time
from agents import Agent, function_tool, set_tracing_disabled
from mead_notebook import NotebookInteraction, ToolCall
from mead_notebook.adapters import openai_agents

set_tracing_disabled(True)
STARTED = []

@function_tool
def write_note(text: str) -> str:
    \"\"\"Write a note.\"\"\"
    STARTED.append(time.time())
    return f"saved note: {text}"

model = openai_agents.scripted_model(
    [["Saving it. ", ToolCall("write_note", {"text": "hello"}, "w1")], ["All ", "done."]]
)
agent = Agent(name="notes", model=model, tools=[write_note])
result = openai_agents.run(agent, "write a note", interaction=NotebookInteraction())
told = [i.output for i in result.output.new_items if i.type == "tool_call_output_item"]
print("RESULT", result.calls[0].status, result.calls[0].result, "|", told[0], "|", result.text)
print(f"TOOL {STARTED[0]:.6f}")
"""

CLAUDE_AGENT = """
import os, tempfile
from pathlib import Path
from mead_notebook import NotebookInteraction, ToolCall
from mead_notebook.adapters import claude_agent
from mead_notebook.adapters.claude_agent import scripted

repo = Path(tempfile.mkdtemp(prefix="repo-"))
target = repo / "hello.txt"
write = {"file_path": str(target), "content": "hello from claude\\n"}
replies = [
    ["Writing it. ", ToolCall("Write", write, "w1")],
    ["All ", "done."],
]
with scripted.ScriptedServer(replies) as server:
    result = claude_agent.run(
        server.options(cwd=str(repo)), "write hello.txt", interaction=NotebookInteraction()
    )
    told, error = server.tool_results()["w1"]
written = target.read_text().strip()
print("RESULT", result.calls[0].status, "|", written, "|", error, "|", result.text)
print(f"TOOL {os.stat(target).st_mtime:.6f}")
"""


def test_allow_an_openai_agents_tool_call(lab: NotebookPage, latencies: Latencies) -> None:
    lab.open([OPENAI_AGENTS])
    lab.run_cell(0)
    allow = lab.turn().get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible(timeout=QUESTION_TIMEOUT)
    card = lab.card("write_note")
    expect(card).to_contain_text("Waiting for you")
    expect(card).to_contain_text("hello")
    expect(lab.turn().locator(".mead-transcript")).to_contain_text("Saving it.")
    lab.shot("asking")
    allow.click()
    lab.wait_output(
        0,
        "RESULT completed saved note: hello | saved note: hello | Saving it. All done.",
        timeout=RESULT_TIMEOUT,
    )
    expect(card).to_contain_text("Completed")
    expect(card).to_contain_text("Allowed by you")
    expect(lab.turn().locator(".mead-transcript")).to_contain_text("All done.")
    lab.shot("allowed")
    latencies.measure(lab, "lab_openai_agents_allow", ("Allow",), "TOOL")


def test_allow_a_claude_code_write_after_its_diff(lab: NotebookPage, latencies: Latencies) -> None:
    """The card shows the new file's diff before Allow; the TOOL stamp is the file's mtime
    (Claude Code runs the Write itself and reports no start)."""
    lab.open([CLAUDE_AGENT])
    lab.run_cell(0)
    allow = lab.turn().get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible(timeout=QUESTION_TIMEOUT)
    card = lab.card("Write")
    expect(card).to_contain_text("Waiting for you")
    diff = card.locator("table.mead-diff")
    expect(diff).to_be_visible()
    expect(diff).to_have_attribute("aria-label", re.compile(r"^Diff of .*hello\.txt$"))
    expect(diff.locator(".mead-diff-text")).to_contain_text(["hello from claude"])
    expect(card.locator(".mead-diff-stat")).to_contain_text("+1")
    expect(lab.turn().locator(".mead-transcript")).to_contain_text("Writing it.")
    lab.shot("asking")
    allow.click()
    lab.wait_output(
        0,
        "RESULT completed | hello from claude | False | Writing it. All done.",
        timeout=RESULT_TIMEOUT,
    )
    expect(card).to_contain_text("Completed")
    expect(card).to_contain_text("Allowed by you")
    expect(lab.turn().locator(".mead-transcript")).to_contain_text("All done.")
    lab.shot("allowed")
    latencies.measure(lab, "lab_claude_agent_allow", ("Allow",), "TOOL", pooled=False)
