"""The pictures of the README and the docs (``docs/images/``), taken in real JupyterLab from the
tutorials' own turns: the coding agent of tutorial 06 waiting on its diff (light and dark), and
tutorial 08's ``run_python`` before Allow and after it ran.

Each picture is the widget's element alone, shrunk to a 256-colour PNG. The test always writes
it to ``tests/artifacts/pictures/``; with ``MEAD_PICTURES=write`` it also replaces the committed
one, else it checks that the committed picture still has about the size of the fresh one (the
same width, a height within a quarter): a widget that changed its look fails here until its
pictures are taken again. No pixel is compared.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Locator, expect

from .pages import NotebookPage
from .servers import REPO
from .test_cards import dark_theme

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

PICTURES = REPO / "docs" / "images"
TUTORIALS = REPO / "notebooks"
WRITE = os.environ.get("MEAD_PICTURES") == "write"
WAIT = 90_000
COLOURS = 256
HEIGHT_SLACK = 0.25
THEMES = "@jupyterlab/apputils-extension:themes"
TALL = {"width": 1280, "height": 2000}
"""A viewport that holds a whole finished card, so that no status bar lies over it."""


@pytest.fixture
def light(lab: NotebookPage) -> Iterator[NotebookPage]:
    """The page in JupyterLab's default (light) theme, whatever a test before chose; the
    theme is the default again after."""
    lab.server.set_lab_setting(THEMES, {})
    try:
        yield lab
    finally:
        lab.server.set_lab_setting(THEMES, {})


def tutorial_cell(notebook: str, index: int, starts: str) -> str:
    """The source of a tutorial's code cell, checked to be the one meant."""
    cells = json.loads((TUTORIALS / notebook).read_text())["cells"]
    source = "".join(cells[index]["source"])
    assert cells[index]["cell_type"] == "code", f"{notebook} cell {index} is not code"
    assert source.startswith(starts), f"{notebook} cell {index} no longer starts with {starts!r}"
    return source


def asks_a_person(source: str) -> str:
    """A tutorial's cell whose turn a person answers (no policy, the default ``grace``), as
    the pictures show it."""
    assert source.count("NotebookInteraction()") == 1, "the tutorial's cell no longer asks a person"
    return source


def small_png(raw: bytes) -> bytes:
    """A screenshot as a palette PNG (a few tens of kB instead of a few hundred)."""
    image = Image.open(io.BytesIO(raw)).convert("RGB").quantize(colors=COLOURS)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def picture(lab: NotebookPage, element: Locator, name: str) -> Path:
    """Take ``element``'s picture as ``name.png``; write or loosely check the committed one."""
    element.scroll_into_view_if_needed()
    fresh = small_png(element.screenshot(animations="disabled", caret="hide"))
    taken = lab.artifacts / "pictures" / f"{name}.png"
    taken.parent.mkdir(parents=True, exist_ok=True)
    taken.write_bytes(fresh)
    committed = PICTURES / f"{name}.png"
    if WRITE:
        PICTURES.mkdir(parents=True, exist_ok=True)
        committed.write_bytes(fresh)
        return committed
    assert committed.exists(), f"{committed} is missing: take it with MEAD_PICTURES=write"
    width, height = Image.open(io.BytesIO(fresh)).size
    was_width, was_height = Image.open(committed).size
    assert abs(width - was_width) <= 0.02 * was_width, (
        f"{name}: {width} px wide, the committed picture {was_width}: take the pictures again "
        "(MEAD_PICTURES=write pytest tests/browser/test_pictures.py)"
    )
    assert abs(height - was_height) <= HEIGHT_SLACK * was_height, (
        f"{name}: {height} px high, the committed picture {was_height}: the widget changed; "
        "take the pictures again (MEAD_PICTURES=write pytest tests/browser/test_pictures.py)"
    )
    return committed


def test_the_coding_agents_diff_card(light: NotebookPage) -> None:
    """Tutorial 06's turn, answered by a person: the edit waits on its diff."""
    lab = light
    agent = tutorial_cell("06-coding-agents.ipynb", 1, "import shutil")
    turn = asks_a_person(
        tutorial_cell("06-coding-agents.ipynb", 3, "interaction = NotebookInteraction(")
    )
    ended = "print('RESULT', result.stop_reason, (workspace / 'greet.py').read_text().strip())"
    lab.open([agent, turn, ended])
    lab.run_cell(0)
    expect(lab.cell(0).locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[1\]"), timeout=WAIT)
    lab.run_cell(1)
    card = lab.card("Edit", 1)
    expect(card.locator(".mead-question")).to_be_visible(timeout=WAIT)
    expect(card.locator(".mead-diff-add .mead-diff-text")).to_have_text(['print("hello")'])
    expect(card.get_by_role("button", name="Allow", exact=True)).to_be_visible()
    widget = lab.turn(1)
    expect(lab.page.locator("body")).to_have_attribute("data-jp-theme-light", "true")
    picture(lab, widget, "coding-agent-light")
    dark_theme(lab)
    picture(lab, widget, "coding-agent-dark")

    card.get_by_role("button", name="Allow", exact=True).click()
    show = lab.card("Bash", 1)
    expect(show.get_by_role("button", name="Allow", exact=True)).to_be_visible(timeout=WAIT)
    show.get_by_role("button", name="Allow", exact=True).click()
    expect(lab.cell(1).locator(".jp-InputPrompt")).to_have_text(re.compile(r"\[2\]"), timeout=WAIT)
    lab.run_cell(2)
    lab.wait_output(2, 'RESULT end_turn print("hello")', timeout=WAIT)
    assert lab.errors == []


def test_run_python_before_and_after_allow(light: NotebookPage) -> None:
    """Tutorial 08's plot, live: the code on the card before Allow; output, table, figure after."""
    lab = light
    lab.page.set_viewport_size(TALL)
    data = tutorial_cell("08-agents-and-your-data.ipynb", 1, "import pandas as pd")
    plot = asks_a_person(tutorial_cell("08-agents-and-your-data.ipynb", 5, 'plot = """'))
    lab.open([data, plot])
    expect(lab.page.locator("body")).to_have_attribute("data-jp-theme-light", "true")
    lab.run_cell(0)
    lab.wait_output(0, "run_python", timeout=WAIT)
    lab.run_cell(1)
    card = lab.card("run_python", 1)
    expect(card.locator(".mead-question")).to_be_visible(timeout=WAIT)
    expect(card).to_contain_text("by_region.plot.barh")
    picture(lab, card, "run-python-asking")

    card.get_by_role("button", name="Allow", exact=True).click()
    lab.wait_output(1, "None True", timeout=WAIT)
    card.click()  # a finished card folds; a click opens it
    expect(card.locator("img")).to_be_visible(timeout=WAIT)
    expect(card.locator("table")).to_be_visible()
    expect(card).to_contain_text("south sells the most")
    picture(lab, card, "run-python-ran")
    assert lab.errors == []
