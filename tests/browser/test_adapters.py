"""A person allows a LangChain agent's and a pydantic-ai agent's tool call in real JupyterLab."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .pages import NotebookPage

pytestmark = pytest.mark.browser

QUESTION_TIMEOUT = 60_000

SCRIPT = """
from mead_notebook import NotebookInteraction, ToolCall

def write_note(text: str) -> str:
    \"\"\"Write a note.\"\"\"
    return f"saved note: {text}"

REPLIES = [["Saving it. ", ToolCall("write_note", {"text": "hello"}, "w1")], ["All ", "done."]]
"""

CELLS = {
    "langchain": SCRIPT
    + """
from langchain.agents import create_agent
from langchain_core.tools import tool
from mead_notebook.adapters import langchain as mead_langchain

agent = create_agent(mead_langchain.scripted_model(REPLIES), tools=[tool(write_note)])
result = mead_langchain.run(agent, "write a note", interaction=NotebookInteraction())
told = [m.content for m in result.output["messages"] if m.type == "tool"]
print("RESULT", result.calls[0].status, result.calls[0].result, "|", told[0], "|", result.text)
""",
    "pydantic_ai": SCRIPT
    + """
from pydantic_ai import Agent
from pydantic_ai.messages import ToolReturnPart
from mead_notebook.adapters import pydantic_ai as mead_pydantic_ai

agent = Agent(mead_pydantic_ai.scripted_model(REPLIES), tools=[write_note])
result = mead_pydantic_ai.run(agent, "write a note", interaction=NotebookInteraction())
parts = [p for m in result.output.all_messages() for p in getattr(m, "parts", ())]
told = [p.content for p in parts if isinstance(p, ToolReturnPart)]
print("RESULT", result.calls[0].status, result.calls[0].result, "|", told[0], "|", result.text)
""",
}


@pytest.mark.parametrize("framework", ["langchain", "pydantic_ai"])
def test_allow_a_frameworks_tool_call(lab: NotebookPage, framework: str) -> None:
    lab.open([CELLS[framework]])
    lab.run_cell(0)
    allow = lab.turn().get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible(timeout=QUESTION_TIMEOUT)
    card = lab.card("write_note")
    expect(card).to_contain_text("Waiting for you")
    expect(lab.turn().locator(".mead-transcript")).to_contain_text("Saving it.")
    lab.shot("asking")
    allow.click()
    lab.wait_output(
        0, "RESULT completed saved note: hello | saved note: hello | Saving it. All done."
    )
    expect(card).to_contain_text("Completed")
    expect(card).to_contain_text("Allowed by you")
    expect(lab.turn().locator(".mead-transcript")).to_contain_text("All done.")
    lab.shot("allowed")
