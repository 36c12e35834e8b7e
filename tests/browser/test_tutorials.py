"""Every tutorial as a person meets it: run in JupyterLab by a person who allows
everything and by one who denies everything, and as nobody answers it (headless).

Each run fails on an error output, a cell that never ran, a line on stderr the
tutorial does not mean to print, or a page error; and on what the test marks as
depending on the answer (:data:`SAYS`: the model's replies, what the cells print)
when it disagrees with how the person answered. The headless run is the saved
notebook: nbval runs every tutorial headless and fails when an output differs from
the saved one (``notebooks/``), so checking the saved outputs checks that run.

One test per tutorial and person, each in an ``xdist_group`` of its own, so that a
parallel run spreads them over its workers (each worker starts one JupyterLab).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal

import nbformat
import pytest
from playwright.sync_api import Locator, expect

from .pages import OPEN_TIMEOUT, NotebookPage
from .servers import REPO

pytestmark = pytest.mark.browser

Person = Literal["allow", "deny", "nobody"]
PEOPLE: tuple[Person, ...] = ("allow", "deny", "nobody")
TUTORIALS = sorted(p.stem for p in (REPO / "notebooks").glob("[0-9][0-9]-*.ipynb"))
RUN_TIMEOUT = 420.0
"""The longest a whole tutorial may take, whoever answers (seconds)."""
READING = 1.5
"""How long the person reads a card before answering (seconds): a second's timeout
(02-policies-and-headless) is quicker than that, as for anyone."""
SETTLED = 2.0
"""How long the kernel stays idle, no cell waiting, before the run counts as finished."""

SAYS: dict[str, dict[Person, tuple[str, ...]]] = {
    "01-quickstart": {
        "allow": ("The summary is saved.", "I will add a reminder.", "summary.txt written: True"),
        "deny": ("The summary was not saved.", "No reminder, then.", "summary.txt written: False"),
        "nobody": (
            "The summary was not saved.",
            "Nobody answered, so no reminder.",
            "summary.txt written: False",
        ),
    },
    "02-policies-and-headless": dict.fromkeys(
        PEOPLE,
        (
            "list_files: expired, delete_file: expired",
            "call_1 expired by timeout",
            "ask_user -> The user gave no answer (no_answer).",
            "call_2 expired by fallback",
            "UnaskedWarning: this turn has no interaction",
        ),
    ),
    "03-tools-and-mcp": dict.fromkeys(
        PEOPLE, ("Done: counted to 60.", "14:00 in Tokyo is 10:30 in Kolkata")
    ),
    "04-real-models": {
        "allow": ("Porto: sunny, 21 °C. Enjoy your day!",),
        "deny": ("I could not check the weather",),
        "nobody": ("I could not check the weather",),
    },
    "05-your-own-agent": {
        "allow": (
            "Done: old.csv is deleted.",
            "Deleting it. old.csv is deleted.",
            "files left: ['data/new.csv']",
        ),
        "deny": (
            "I left old.csv where it is: the delete did not run.",
            "Then I leave old.csv.",
            "files left: ['data/new.csv', 'data/old.csv']",
        ),
        "nobody": (
            "I left old.csv where it is: the delete did not run.",
            "Nobody answered, so I leave old.csv.",
            "files left: ['data/new.csv', 'data/old.csv']",
        ),
    },
    "06-coding-agents": {
        "allow": ("Fixed the greeting.", 'greet.py now: print("hello")', "stop: end_turn"),
        "deny": (
            "You said no: greet.py stays as it is.",
            'greet.py now: print("helo")',
            "stop: end_turn",
        ),
        "nobody": ('greet.py now: print("helo")', "stop: interrupted"),
    },
    "07-agent-sdks": {
        "allow": (
            "the model was told: deleted old.csv",
            "The README is written and the stale file is gone.",
            "files left: ['new.csv']",
        ),
        "deny": (
            "was denied (rejected)",
            "The README is written; the stale file stays (the command did not run).",
            "files left: ['new.csv', 'old.csv']",
        ),
        "nobody": (
            "was denied (expired)",
            "The README is written; the stale file stays (the command did not run).",
            "files left: ['new.csv', 'old.csv']",
        ),
    },
    "08-agents-and-your-data": {
        "allow": ("None True",),
        "deny": ("denied False",),
        "nobody": ("expired False",),
    },
}
"""What a run says, by tutorial and person. A text marked for some people only depends
on the answer: a run by anyone else must not say it."""

STDERR: dict[str, tuple[str, ...]] = {
    "02-policies-and-headless": ("UnaskedWarning",),
}
"""The only lines a tutorial means to print on stderr (a line holding one of these)."""


def cases() -> list[Any]:
    return [
        pytest.param(name, person, marks=pytest.mark.xdist_group(f"tutorial-{name}-{person}"))
        for name in TUTORIALS
        for person in PEOPLE
    ]


@pytest.mark.timeout(RUN_TIMEOUT + 120)
@pytest.mark.parametrize(("tutorial", "person"), cases())
def test_a_tutorial_reads_right_whoever_answers(
    tutorial: str, person: Person, request: pytest.FixtureRequest
) -> None:
    if person == "nobody":
        nb = nbformat.read(REPO / "notebooks" / f"{tutorial}.ipynb", as_version=4)
    else:
        lab: NotebookPage = request.getfixturevalue("lab")
        nb = in_jupyterlab(lab, tutorial, person)
        assert lab.errors == [], lab.errors
        expect(lab.page.locator(".mead-load-error")).to_have_count(0)
    check(tutorial, person, nb)


def check(tutorial: str, person: Person, nb: Any) -> None:
    """Every cell ran without error, and what the run says agrees with the person.

    A cell an agent proposed (``propose_cell``: inserted, never run) is not the
    tutorial's own."""
    own = {c.id for c in fresh_copy(tutorial).cells if c.cell_type == "code"}
    cells = [c for c in nb.cells if c.cell_type == "code" and c.get("id") in own]
    assert len(cells) == len(own), f"{tutorial}: {len(cells)} of its {len(own)} code cells"
    never = [i for i, c in enumerate(cells) if c.get("execution_count") is None]
    assert never == [], f"code cells {never} of {tutorial} never ran"
    errors = [o for c in cells for o in c.outputs if o.output_type == "error"]
    assert errors == [], "\n".join(f"{o.ename}: {o.evalue}" for o in errors)
    stray = [
        line
        for c in cells
        for o in c.outputs
        if o.output_type == "stream" and o.name == "stderr"
        for line in o.text.splitlines()
        if line.strip() and not any(m in line for m in STDERR.get(tutorial, ()))
    ]
    stray = [line for line in stray if not line.startswith("  ")]  # a warning's source line
    assert stray == [], f"{tutorial} printed on stderr: {stray}"
    said = text_of(cells)
    marks = SAYS[tutorial]
    for text in marks[person]:
        assert text in said, f"{tutorial}, {person}: expected {text!r} in:\n{said}"
    for other, texts in marks.items():
        for text in texts:
            if other != person and text not in marks[person]:
                assert text not in said, f"{tutorial}, {person}: {text!r} is for {other}"


def text_of(cells: list[Any]) -> str:
    """What the outputs say as text: streams, and the text of results and displays."""
    parts: list[str] = []
    for cell in cells:
        for output in cell.outputs:
            if output.output_type == "stream":
                parts.append(output.text)
            elif output.output_type in ("display_data", "execute_result"):
                plain = output.get("data", {}).get("text/plain", "")
                parts.append("".join(plain) if isinstance(plain, list) else plain)
    return "\n".join(parts)


def fresh_copy(tutorial: str) -> Any:
    """The tutorial with no outputs, as a person opens it before running it."""
    nb = nbformat.read(REPO / "notebooks" / f"{tutorial}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("widgets", None)
    return nb


def in_jupyterlab(lab: NotebookPage, tutorial: str, person: Person) -> Any:
    """Run All in JupyterLab, answering every card as ``person`` does; the saved notebook."""
    path = lab.server.root / f"{lab.name}.ipynb"
    nbformat.write(fresh_copy(tutorial), path)
    lab.reopen()
    lab.shot("opened")
    run_all(lab)
    deadline = time.monotonic() + RUN_TIMEOUT
    idle_since: float | None = None
    answered = 0
    while time.monotonic() < deadline:
        if answer_one(lab, person, shoot=answered == 0):
            answered += 1
            idle_since = None
            continue
        if running(lab):
            idle_since = None
        elif idle_since is None:
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since >= SETTLED:
            break
        time.sleep(0.25)
    else:
        lab.shot("timed-out")
        raise AssertionError(f"{tutorial} did not finish within {RUN_TIMEOUT} s ({person})")
    lab.shot(f"done-{person}")
    before = path.stat().st_mtime
    lab.save()
    return saved_after(path, before)


def run_all(lab: NotebookPage) -> None:
    """Run > Run All Cells, from JupyterLab's menu."""
    page = lab.page
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.locator('li[data-command="runmenu:run-all"]').click()
    prompt = page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt").first
    expect(prompt).not_to_have_text("[ ]:", timeout=OPEN_TIMEOUT)


def running(lab: NotebookPage) -> bool:
    """Whether a cell runs or waits to, or the kernel is busy."""
    prompts = lab.page.locator(".jp-Notebook .jp-CodeCell .jp-InputPrompt").all_inner_texts()
    if any("*" in p for p in prompts):
        return True
    kernels = lab.server.kernels()
    return any(k["execution_state"] != "idle" for k in kernels)


MARK_READY = """(reading) => {
  const now = Date.now();
  let ready = 0;
  for (const q of document.querySelectorAll(".mead-question")) {
    delete q.dataset.meadTestReady;
    if (q.classList.contains("mead-answered") || q.dataset.meadTestDone) continue;
    q.dataset.meadTestSeen ??= String(now);
    if (ready === 0 && now - Number(q.dataset.meadTestSeen) >= reading) {
      q.dataset.meadTestReady = "1";
      ready += 1;
    }
  }
  return ready;
}"""
"""Notes when each open question was first seen, and marks one the person has read."""


def answer_one(lab: NotebookPage, person: Person, *, shoot: bool = False) -> bool:
    """Answer one question the person has had time to read; False when none is ready.

    ``shoot``: take a screenshot of the question first."""
    if not lab.page.evaluate(MARK_READY, READING * 1000):
        return False
    question = lab.page.locator('.mead-question[data-mead-test-ready="1"]')
    if shoot:
        question.scroll_into_view_if_needed()
        lab.shot("asking")
    question.evaluate("(q) => { q.dataset.meadTestDone = '1'; }")
    if "mead-question-choice" in (question.get_attribute("class") or ""):
        choose(question, person)
    else:
        decision = "Allow" if person == "allow" else "Deny"
        question.get_by_role("button", name=decision, exact=True).click()
    return True


def choose(question: Locator, person: Person) -> None:
    """The first option for a person who allows everything, the last for one who denies."""
    options = question.locator(".mead-option input")
    (options.first if person == "allow" else options.last).check()
    question.get_by_role("button", name="Submit", exact=True).click()


def saved_after(path: Path, before: float, timeout: float = 30.0) -> Any:
    """The notebook once the save that followed ``before`` is on disk."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.stat().st_mtime > before:
            try:
                return nbformat.read(path, as_version=4)
            except Exception:  # read while the server was writing it
                pass
        time.sleep(0.2)
    raise AssertionError(f"{path.name} was not saved within {timeout} s")


def test_every_tutorial_says_what_depends_on_the_answer() -> None:
    assert sorted(SAYS) == TUTORIALS


@pytest.mark.parametrize("tutorial", TUTORIALS)
def test_the_marks_tell_the_people_apart(tutorial: str) -> None:
    """The saved (headless) run passes as nobody and fails as anyone whose marks differ:
    a mark that every run says, or none, could not catch a reply that ignores the answer."""
    saved = nbformat.read(REPO / "notebooks" / f"{tutorial}.ipynb", as_version=4)
    check(tutorial, "nobody", saved)
    for person in ("allow", "deny"):
        if set(SAYS[tutorial][person]) != set(SAYS[tutorial]["nobody"]):
            with pytest.raises(AssertionError, match=f"{tutorial}, {person}"):
                check(tutorial, person, saved)
