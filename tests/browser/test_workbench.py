"""The kernel as the agent's workbench, in real JupyterLab and Notebook 7: the code on the
card before Allow, in the theme's editor colours; its output, table and figure on the card
after; a proposed cell inserted below the turn's cell."""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, expect

from .pages import NotebookPage

pytestmark = pytest.mark.browser

WAIT = 60_000
CODE = (
    "import matplotlib.pyplot as plt\n"
    "total = int(df.a.sum())  # the sum\n"
    "print('sum', total)\n"
    "fig, ax = plt.subplots(figsize=(3, 2))\n"
    "ax.plot(df.a, df.b)\n"
    "df.head(2)"
)
PROPOSED = "df.describe()"
TURN = f"""
import pandas as pd
from mead_notebook import NotebookInteraction, Router, ScriptedModel, ToolCall, kernel_tools

df = pd.DataFrame({{"a": [1, 2, 3], "b": [4.0, 5.5, 6.0]}})
router = Router(
    ScriptedModel([
        [ToolCall("run_python", {{"code": {CODE!r}}})],
        [ToolCall("propose_cell", {{"code": {PROPOSED!r}}})],
        ["Done."],
    ]),
    tools=kernel_tools(),
)
result = router.run("look at df", interaction=NotebookInteraction(timeout=300))
print("DONE", [c.status for c in result.calls])
"""
PROPOSE_ONLY = f"""
from mead_notebook import NotebookInteraction, Router, ScriptedModel, ToolCall, kernel_tools

router = Router(
    ScriptedModel([[ToolCall("propose_cell", {{"code": {PROPOSED!r}}})], ["Done."]]),
    tools=kernel_tools(),
)
result = router.run("propose", interaction=NotebookInteraction(timeout=300))
print("DONE", [c.status for c in result.calls])
"""


def allow(nb: NotebookPage, card: Locator) -> None:
    button = card.get_by_role("button", name="Allow", exact=True)
    expect(button).to_be_visible(timeout=WAIT)
    button.click()


def sources(nb: NotebookPage) -> list[str]:
    """Every cell's source, as the editor shows it."""
    return [
        text.replace("\u200b", "")
        for text in nb.page.locator(
            ".jp-Notebook .jp-Cell .jp-InputArea .cm-content"
        ).all_inner_texts()
    ]


def test_the_code_shows_before_allow_and_its_outputs_after(lab: NotebookPage) -> None:
    lab.open([TURN])
    lab.run_cell(0)
    card = lab.card("run_python")
    code = card.locator(".mead-content-code pre.mead-code code")
    expect(code).to_be_visible(timeout=WAIT)
    assert code.inner_text() == CODE
    # Drawn in the theme's own editor colours.
    drawn = code.evaluate(
        """(el) => {
          const root = getComputedStyle(document.body);
          const probe = document.createElement("span");
          document.body.append(probe);
          const colour = (name) => {
            probe.style.color = root.getPropertyValue(name).trim();
            return getComputedStyle(probe).color;
          };
          const of = (sel) => getComputedStyle(el.querySelector(sel)).color;
          const found = {
            keyword: [of(".mead-tok-keyword"), colour("--jp-mirror-editor-keyword-color")],
            comment: [of(".mead-tok-comment"), colour("--jp-mirror-editor-comment-color")],
            number: [of(".mead-tok-number"), colour("--jp-mirror-editor-number-color")],
            string: [of(".mead-tok-string"), colour("--jp-mirror-editor-string-color")],
          };
          probe.remove();
          return found;
        }"""
    )
    for token, (shown, theme) in drawn.items():
        assert shown == theme, (token, shown, theme)
    expect(card).to_contain_text("Waiting for you")
    lab.shot("code-before-allow")
    allow(lab, card)
    expect(card).to_have_attribute("data-status", "completed", timeout=WAIT)
    if card.get_attribute("data-collapsed") == "true":
        card.locator(".mead-card-toggle").click()
    expect(card.locator(".mead-output-stdout pre")).to_have_text("sum 6\n")
    table = card.locator(".mead-output-html table")
    expect(table).to_be_visible()
    expect(table.locator("td").first).to_have_text("1")
    image = card.locator("img.mead-output-image")
    expect(image).to_be_visible()
    assert image.evaluate("(img) => img.complete && img.naturalWidth > 100")
    # Nothing of it landed in the cell's own output.
    own = lab.output(0).locator(".jp-OutputArea-child:not(:has(.mead-turn))")
    assert "sum 6" not in " ".join(own.all_inner_texts())
    expect(lab.output(0).locator("img:not(.mead-output-image)")).to_have_count(0)
    lab.shot("outputs-after")
    proposal = lab.card("propose_cell")
    expect(proposal.locator(".mead-content-code code")).to_have_text(PROPOSED, timeout=WAIT)
    allow(lab, proposal)
    lab.wait_output(0, "DONE ['completed', 'completed']")
    expect(lab.page.locator(".jp-Notebook .jp-Cell")).to_have_count(2, timeout=WAIT)
    assert sources(lab)[1] == PROPOSED
    expect(lab.cell(1).locator(".jp-InputPrompt")).to_have_text("[ ]:")
    lab.cell(1).scroll_into_view_if_needed()
    lab.shot("cell-proposed")


def test_a_proposed_cell_appears_in_notebook7(notebook7: NotebookPage) -> None:
    nb = notebook7
    nb.open([PROPOSE_ONLY])
    nb.run_cell(0)
    proposal = nb.card("propose_cell")
    expect(proposal.locator(".mead-content-code code")).to_have_text(PROPOSED, timeout=WAIT)
    nb.shot("proposing")
    allow(nb, proposal)
    nb.wait_output(0, "DONE ['completed']")
    expect(nb.page.locator(".jp-Notebook .jp-Cell")).to_have_count(2, timeout=WAIT)
    assert sources(nb)[1] == PROPOSED
    nb.shot("cell-proposed")
