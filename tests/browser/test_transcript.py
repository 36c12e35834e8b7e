"""The turn as a transcript in real JupyterLab and Notebook 7: order, collapse, copy, a long
turn, and the static transcript a saved notebook keeps (reloaded without the kernel, nbconvert)."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from .pages import NotebookPage
from .scenarios import PAYLOADS, PRELUDE
from .servers import ServerError

pytestmark = pytest.mark.browser

WAIT = 60_000
RENDER_FILE = "render.json"

STEPS = (
    PRELUDE
    + '''
from mead_notebook.policies import AllowReads


@tool(read_only=True)
def list_notes() -> list[str]:
    """List the notes."""
    return ["a.txt", "b.txt"]


drinks = {
    "prompt": "Which drink?",
    "options": [{"id": "tea", "label": "Green tea"}, {"id": "coffee", "label": "Black coffee"}],
}
model = ScriptedModel(
    [
        ["First I **look** around.", ToolCall("list_notes", {})],
        [
            "Now two writes.",
            ToolCall("write_note", {"text": "kept"}),
            ToolCall("write_note", {"text": "dropped"}),
        ],
        ["One question.", ToolCall("ask_user", drinks)],
        ["All done."],
    ]
)
interaction = NotebookInteraction(policy=AllowReads())
result = Router(model, tools=[list_notes, write_note]).run("tidy up", interaction=interaction)
print("RESULT", [c.outcome or c.status for c in result.calls])
'''
)
"""Four rounds: a read the policy allows, a write you allow, a write you deny with a
reason, a question you answer; each round's text before its calls."""

STEPS_FLOW = [
    "text:First I look around.",
    "card:list_notes",
    "text:Now two writes.",
    "card:write_note",
    "card:write_note",
    "text:One question.",
    "card:Question",
    "text:All done.",
]

POLICY_ONLY = (
    PRELUDE
    + '''
from mead_notebook.policies import AllowAll


@tool(read_only=True)
def lookup(n: int) -> str:
    """Look an entry up."""
    return f"entry {n}: " + "details " * 5


def rounds(messages):
    done = sum(1 for m in messages if m["role"] == "tool")
    if done >= CALLS:
        return [f"All {done} lookups are done."]
    return [
        f"Round {done // PER_ROUND + 1}: **{done}** so far.",
        *[ToolCall("lookup", {"n": done + i}) for i in range(PER_ROUND)],
    ]


router = Router(ScriptedModel(rounds), tools=[lookup], max_rounds=CALLS // PER_ROUND + 2)
result = router.run("look entries up", interaction=NotebookInteraction(policy=AllowAll()))
print("RESULT", [c.status for c in result.calls].count("completed"), "completed")
'''
)
"""``CALLS`` lookups, ``PER_ROUND`` a round, each round's text first; no questions."""

HOSTILE = (
    PRELUDE
    + f'''
from mead_notebook.policies import AllowReads

payloads = {PAYLOADS!r}
evil = "\\n\\n".join(payloads)


@tool(read_only=True)
def echo(text: str) -> str:
    """Echo the text."""
    return text


@tool(read_only=True)
def explode(text: str) -> str:
    """Fail with the text."""
    raise ValueError(text)


model = ScriptedModel(
    [
        [
            evil + "\\n\\n",
            ToolCall("echo", {{"text": evil}}),
            ToolCall("explode", {{"text": evil}}),
            ToolCall("write_note", {{"text": evil}}),
        ],
        ["done: " + payloads[0]],
    ]
)


class Described(NotebookInteraction):
    """Says what each call will do with payloads: a diff, a command, text, a location; and a
    plan and thoughts made of payloads."""

    def turn_started(self, context, prompt):
        super().turn_started(context, prompt)
        self.plan_updated(context, [{{"content": p, "status": "in_progress"}} for p in payloads])
        self.thought_delta(context, evil)

    def tool_updated(self, context, update):
        if update["status"] == "pending" and "tool" in update:
            update = {{
                **update,
                "content": [
                    {{"type": "diff", "path": payloads[2], "old_text": evil,
                      "new_text": payloads[5]}},
                    {{"type": "terminal", "command": payloads[4], "cwd": payloads[3],
                      "output": evil}},
                    {{"type": "text", "text": evil}},
                ],
                "locations": [{{"path": payloads[0], "line": 1}}],
            }}
        super().tool_updated(context, update)


result = Router(model, tools=[echo, explode, write_note]).run(
    "hostile " + payloads[1], interaction=Described(policy=AllowReads())
)
print("RESULT", [c.outcome or c.status for c in result.calls])
'''
)
"""Payloads in the text, the prompt, arguments, a result, an error, a denial's note, content
blocks, locations, the plan and the thoughts."""

FLOW = """(root) => [...root.querySelectorAll(".mead-transcript")].at(-1) === undefined ? [] :
  [...[...root.querySelectorAll(".mead-transcript")].at(-1).children].map((child) =>
    child.classList.contains("mead-card")
      ? `card:${child.querySelector(".mead-card-title").textContent}`
      : `text:${child.textContent.trim()}`)"""
"""The live transcript's children as ``text:<text>`` and ``card:<title>``."""

STATIC_FLOW = """(root) => [...(root ?? document).querySelector(".mead-static").children]
  .filter((child) => child.matches(".mead-static-text, details"))
  .map((child) => child.matches("details")
    ? `card:${child.querySelector("summary").innerText.replace(/\\s+/g, " ").trim()}`
    : `text:${child.innerText.trim()}`)"""
"""The static transcript's text and cards; a card as its summary line."""


def flow(nb: NotebookPage, index: int = 0) -> list[str]:
    result: list[str] = nb.output(index).evaluate(FLOW)
    return result


def play_steps(nb: NotebookPage) -> None:
    """Answer the turn of STEPS as a person: allow, deny with a reason, pick a drink."""
    turn = nb.turn()
    allow = turn.get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible(timeout=WAIT)
    # The card that waits is open; the read the policy allowed is one line.
    allow_here = nb.page.get_by_role("button", name="Allow", exact=True)
    waiting = turn.locator(".mead-card", has=allow_here)
    expect(waiting).not_to_have_attribute("data-collapsed", "true")
    expect(nb.card("list_notes")).to_have_attribute("data-collapsed", "true")
    nb.shot("waiting")
    allow.click()
    deny = turn.get_by_role("button", name="Deny", exact=True)
    expect(deny).to_be_visible(timeout=WAIT)
    turn.get_by_label(re.compile(r"^Reason")).fill("not that one")
    deny.click()
    coffee = turn.get_by_label("Black coffee")
    expect(coffee).to_be_visible(timeout=WAIT)
    coffee.check()
    turn.get_by_role("button", name="Submit").click()
    nb.wait_output(0, "RESULT ['completed', 'completed', 'denied', 'completed']")


def save(nb: NotebookPage, needle: str, tries: int = 4, each: float = 8.0) -> str:
    """Save the notebook (again if the saved file lacks ``needle`` after a while); its text."""
    for _ in range(tries):
        nb.save()
        deadline = time.monotonic() + each
        while time.monotonic() < deadline:
            try:
                model = nb.server.api("GET", f"api/contents/{nb.name}.ipynb")
            except ServerError:
                model = None  # read while the server was writing it
            text = json.dumps(model["content"]) if model else ""
            if needle in text:
                return text
            time.sleep(0.2)
    raise AssertionError(f"{nb.name}.ipynb was not saved with {needle!r} in {tries} tries")


def reopen_without_kernel(nb: NotebookPage) -> None:
    """Shut the kernel down and open the saved notebook again (a new kernel, no widgets)."""
    nb.server.shutdown_kernels()
    nb.reopen()


def nbconvert(notebook: Path, out: Path) -> Path:
    """Render the saved notebook with ``jupyter nbconvert --to html``; return the HTML file."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "nbconvert",
            "--to",
            "html",
            "--output-dir",
            str(out),
            str(notebook),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out / f"{notebook.stem}.html"


class StaticParts(HTMLParser):
    """The tags, attributes and text inside each ``div.mead-static`` of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.count = 0
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if self.depth == 0 and tag == "div" and found.get("class") == "mead-static":
            self.count += 1
            self.depth = 1
            return
        if self.depth:
            self.tags.append((tag, found))
            self._style = tag == "style"
            if tag not in ("br", "hr"):
                self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag not in ("br", "hr"):
            self.depth -= 1
            self._style = False

    def handle_data(self, data: str) -> None:
        if self.depth and not self._style:
            self.text.append(data)


def static_parts(html: str) -> StaticParts:
    parts = StaticParts()
    parts.feed(html)
    parts.close()
    return parts


def open_file_offline(page: Page, path: Path) -> None:
    """Open a local HTML file with every request off the machine refused."""
    page.route(re.compile(r"^https?://"), lambda route: route.abort())
    page.goto(path.as_uri(), wait_until="domcontentloaded")


# -- order, collapse, copy ------------------------------------------------------------


def test_order_collapse_copy_and_reload_in_lab(lab: NotebookPage) -> None:
    lab.page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=lab.server.url)
    lab.open([STEPS])
    lab.run_cell(0)
    play_steps(lab)
    assert flow(lab) == STEPS_FLOW
    turn = lab.turn()
    cards = turn.locator(".mead-card")
    expect(cards).to_have_count(4)
    expect(turn.locator(".mead-card[data-collapsed]")).to_have_count(4)
    denied = cards.nth(2)
    expect(denied.locator(".mead-card-oneline")).to_have_text('{"text":"dropped"}')
    expect(denied.locator(".mead-status")).to_have_text("Denied")
    expect(denied.locator(".mead-card-decision")).to_have_text("(denied by you: not that one)")
    expect(denied.locator(".mead-card-body")).to_be_hidden()
    question = cards.nth(3)
    expect(question).to_have_attribute("data-kind", "question")
    expect(question.locator(".mead-card-oneline")).to_have_text("Which drink?")
    expect(question.locator(".mead-card-decision")).to_have_text("(chose “Black coffee” by you)")
    expect(question).not_to_contain_text("ask_user")
    lab.shot("collapsed")

    denied.locator(".mead-card-title").click()
    expect(denied.locator(".mead-card-body")).to_be_visible()
    expect(denied.locator(".mead-args")).to_contain_text('"dropped"')
    question.get_by_role("button", name="Details of the question").click()
    expect(question.locator(".mead-choice-options li")).to_have_text(
        ["Green tea", re.compile("Black coffee")]
    )
    lab.shot("expanded")
    denied.get_by_role("button", name="Details of write_note").click()
    expect(denied.locator(".mead-card-body")).to_be_hidden()

    turn.get_by_role("button", name="Copy the turn as Markdown").click()
    expect(turn.locator(".mead-copy-status")).to_have_text("Copied")
    copied: str = lab.page.evaluate("() => navigator.clipboard.readText()")
    order = [
        "> tidy up",
        "First I **look** around.",
        "**Tool call** `list_notes` on `local`: Completed · Allowed by policy: AllowReads()",
        "**Tool call** `write_note` on `local`: Completed · Allowed by you",
        '{"text":"kept"}',
        "Result:\n\n```text\nsaved note: kept\n```",
        "**Tool call** `write_note` on `local`: Denied · Denied by you: not that one",
        '{"text":"dropped"}',
        "**Question:** Which drink? (Answered · Chose “Black coffee” by you)",
        "- [ ] Green tea\n- [x] Black coffee",
        "All done.",
    ]
    positions = [copied.index(part) for part in order]
    assert positions == sorted(positions), copied

    save(lab, "mead-static")
    lab.page.reload()
    lab.wait_ready()
    expect(lab.turn().locator(".mead-card")).to_have_count(4, timeout=WAIT)
    assert flow(lab) == STEPS_FLOW
    expect(lab.turn().locator(".mead-card[data-collapsed]")).to_have_count(4)
    expect(lab.output(0).locator(".mead-static")).to_be_hidden()
    lab.shot("reloaded")


def test_order_live_and_after_reload_in_notebook7(notebook7: NotebookPage) -> None:
    nb = notebook7
    nb.open([POLICY_ONLY.replace("CALLS", "6").replace("PER_ROUND", "2")])
    nb.run_cell(0)
    nb.wait_output(0, "RESULT 6 completed")
    expected = [
        "text:Round 1: 0 so far.",
        "card:lookup",
        "card:lookup",
        "text:Round 2: 2 so far.",
        "card:lookup",
        "card:lookup",
        "text:Round 3: 4 so far.",
        "card:lookup",
        "card:lookup",
        "text:All 6 lookups are done.",
    ]
    assert flow(nb) == expected
    expect(nb.output(0).locator(".mead-static")).to_be_hidden()
    nb.shot("live")
    save(nb, "mead-static")
    nb.page.reload()
    nb.wait_ready()
    expect(nb.turn().locator(".mead-card")).to_have_count(6, timeout=WAIT)
    assert flow(nb) == expected
    nb.shot("reloaded")


# -- a saved notebook ---------------------------------------------------------------------


def test_a_saved_notebook_shows_the_transcript_without_its_kernel(
    lab: NotebookPage, tmp_path: Path, chromium: Browser
) -> None:
    lab.open([STEPS])
    lab.run_cell(0)
    play_steps(lab)
    expect(lab.output(0).locator(".mead-static")).to_have_count(1)
    expect(lab.output(0).locator(".mead-static")).to_be_hidden()
    saved = save(lab, "mead-static")
    assert "NotebookInteraction: done, 4 tool calls (3 completed, 1 denied)" in saved
    assert "NotebookInteraction: running" not in saved

    reopen_without_kernel(lab)
    static = lab.output(0).locator(".mead-static")
    expect(static).to_be_visible(timeout=WAIT)
    expect(lab.output(0).locator(".mead-turn")).to_have_count(0)
    expect(lab.output(0).get_by_text("Error displaying widget")).to_be_hidden()
    expected = [
        "text:First I look around.",
        "card:list_notes {} Completed (allowed by policy: AllowReads())",
        "text:Now two writes.",
        'card:write_note {"text":"kept"} Completed (allowed by you)',
        'card:write_note {"text":"dropped"} Denied (denied by you: not that one)',
        "text:One question.",
        "card:Question Which drink? Answered (chose “Black coffee” by you)",
        "text:All done.",
    ]
    assert lab.output(0).evaluate(STATIC_FLOW) == expected
    expect(static.locator("strong").first).to_have_text("look")
    static.locator("summary").nth(2).click()
    expect(static.locator("details").nth(2)).to_contain_text("Error: Permission to run write_note")
    lab.shot("static")

    html = nbconvert(lab.server.root / f"{lab.name}.ipynb", tmp_path).read_text()
    parts = static_parts(html)
    assert parts.count == 1
    text = " ".join(" ".join(parts.text).split())
    order = [
        "tidy up",
        "First I look around.",
        "list_notes {} Completed (allowed by policy: AllowReads())",
        'write_note {"text":"kept"} Completed (allowed by you)',
        'write_note {"text":"dropped"} Denied (denied by you: not that one)',
        "Question Which drink? Answered (chose “Black coffee” by you)",
        "Green tea",
        "Black coffee (picked)",
        "All done.",
        "Finished",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions), text
    assert "NotebookInteraction: done, 4 tool calls (3 completed, 1 denied)" in html

    rendered = chromium.new_page()
    try:
        open_file_offline(rendered, tmp_path / f"{lab.name}.html")
        expect(rendered.locator(".mead-static")).to_be_visible()
        assert (
            rendered.evaluate(STATIC_FLOW.replace("(root) => ", "(root = document) => "))[:4]
            == expected[:4]
        )
    finally:
        rendered.close()


def test_payloads_stay_inert_in_the_static_transcript(
    lab: NotebookPage, tmp_path: Path, chromium: Browser
) -> None:
    lab.open([HOSTILE])
    lab.run_cell(0)
    deny = lab.turn().get_by_role("button", name="Deny", exact=True)
    expect(deny).to_be_visible(timeout=WAIT)
    lab.turn().get_by_label(re.compile(r"^Reason")).fill(PAYLOADS[0] + PAYLOADS[1])
    deny.click()
    lab.wait_output(0, "RESULT ['completed', 'error', 'denied']")
    save(lab, "mead-static")

    reopen_without_kernel(lab)
    static = lab.output(0).locator(".mead-static")
    expect(static).to_be_visible(timeout=WAIT)
    for summary in static.locator("summary").all():
        summary.click()
    expect(static).to_contain_text("Error: explode failed: ValueError")
    expect(static).to_contain_text(PAYLOADS[0])
    expect(static).to_contain_text("Denied by you: " + PAYLOADS[0])
    expect(static.locator(".mead-static-command").first).to_have_text(f"$ {PAYLOADS[4]}")
    expect(static.locator(".mead-static-diff").first).to_contain_text(PAYLOADS[5])
    expect(static.locator(".mead-static-plan")).to_contain_text(PAYLOADS[1])
    expect(static.locator(".mead-static-thoughts")).to_contain_text("window.__pwned")
    for anchor in static.locator("a").all():
        href = (anchor.get_attribute("href") or "").strip().lower()
        assert href.startswith(("http://", "https://", "mailto:")) or not href, href
    lab.page.wait_for_timeout(500)
    assert lab.page.evaluate("() => typeof window.__pwned") == "undefined"
    assert lab.dialogs == []
    for selector in ("script", "iframe", "svg", "img", "object", "embed", "[onerror]", "[onload]"):
        assert static.locator(selector).count() == 0, selector
    lab.shot("inert")

    html = nbconvert(lab.server.root / f"{lab.name}.ipynb", tmp_path).read_text()
    parts = static_parts(html)
    assert parts.count == 1
    names = {tag for tag, _ in parts.tags}
    assert not names & {"script", "img", "iframe", "svg", "math", "object", "embed", "form"}, names
    for tag, attrs in parts.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name, value)
            if name == "href":
                assert (value or "").startswith(("http://", "https://", "mailto:")), value
    assert [tag for tag, _ in parts.tags].count("style") == 1
    text = "".join(parts.text)
    assert PAYLOADS[1] in text  # shown as text
    assert f"$ {PAYLOADS[4]}" in text  # a command, as text
    assert PAYLOADS[3] in text  # its cwd

    rendered = chromium.new_page()
    dialogs: list[str] = []
    rendered.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        open_file_offline(rendered, tmp_path / f"{lab.name}.html")
        expect(rendered.locator(".mead-static")).to_contain_text(PAYLOADS[2])
        for summary in rendered.locator(".mead-static summary").all():
            summary.click()
        rendered.wait_for_timeout(300)
        assert rendered.evaluate("() => typeof window.__pwned") == "undefined"
        assert dialogs == []
    finally:
        rendered.close()


# -- a long turn ----------------------------------------------------------------------------

PROBES = """
window.__meadLongTasks = [];
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__meadLongTasks.push([e.startTime, e.duration]);
  }).observe({ type: "longtask", buffered: true });
} catch (error) {
  window.__meadLongTasks = null;
}

// Each new view's render (a synchronous build of the whole turn), and until it painted:
// the page cache of the imported frontend is wrapped before the loader creates it.
window.__meadViews = [];
class TimedFrontends extends Map {
  set(key, promise) {
    return super.set(key, promise.then((widget) => {
      const render = widget.render;
      widget.render = (props) => {
        const start = performance.now();
        const out = render(props);
        const sync = performance.now() - start;
        const cards = props.el.querySelectorAll(".mead-card").length;
        requestAnimationFrame(() => setTimeout(() => window.__meadViews.push(
          { at: start, cards, render_ms: sync, painted_ms: performance.now() - start }), 0));
        return out;
      };
      return widget;
    }));
  }
}
globalThis[Symbol.for("mead_notebook.frontend")] = new TimedFrontends();

// The view's later renders run in animation frames: time every frame callback, and keep
// those that changed something inside a turn's view.
window.__meadFrameRenders = [];
const changes = new MutationObserver(() => {});
const watch = () => changes.observe(document.documentElement,
  { subtree: true, childList: true, characterData: true, attributes: true });
if (document.documentElement) watch(); else document.addEventListener("DOMContentLoaded", watch);
const frame = window.requestAnimationFrame.bind(window);
window.requestAnimationFrame = (callback) => frame((time) => {
  changes.takeRecords();
  const start = performance.now();
  try {
    callback(time);
  } finally {
    const ms = performance.now() - start;
    const ours = changes.takeRecords().some((r) => {
      const node = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      return node !== null && node.closest(".mead-turn") !== null;
    });
    if (ours) window.__meadFrameRenders.push([start, ms]);
  }
});
"""
"""Installed in the page before JupyterLab loads: long tasks, each view's first render,
and every later render of a view (the animation frames that change a turn's view)."""

FRAMES = """() => {
  window.__meadFrames = [];
  window.__meadFramesOn = true;
  const step = (t) => {
    window.__meadFrames.push(t);
    if (window.__meadFramesOn) requestAnimationFrame(step);
  };
  requestAnimationFrame(step);
}"""
"""Starts recording the time of every frame the page draws."""


def stats(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    if not ordered:
        return {"count": 0}
    return {
        "count": len(ordered),
        "total_ms": round(sum(ordered), 1),
        "p50_ms": round(ordered[len(ordered) // 2], 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
        "max_ms": round(ordered[-1], 1),
    }


def frame_gaps(page: Page) -> dict[str, Any]:
    times: list[float] = page.evaluate(
        "() => { window.__meadFramesOn = false; return window.__meadFrames; }"
    )
    gaps = [b - a for a, b in itertools.pairwise(times)]
    return {**stats(gaps), "over_50ms": sum(1 for g in gaps if g > 50)}


def between(page: Page, name: str, start: float, end: float) -> list[float]:
    """Durations of the entries of ``window[name]`` (``[start, duration]``) in the window."""
    found: list[list[float]] | None = page.evaluate(f"() => window.{name}")
    return [d for s, d in found or [] if start <= s <= end]


def test_two_hundred_calls_render_and_scroll(lab: NotebookPage, artifacts: Path) -> None:
    calls, per_round = 200, 10
    report: dict[str, Any] = {
        "what": f"a turn of {calls} tool calls ({per_round} a round, each round's text first) "
        "in JupyterLab, headless Chromium; times in milliseconds; render_ms is the view's own "
        "work, painted_ms until the next frame was drawn",
    }
    lab.page.context.add_init_script(PROBES)
    cell = POLICY_ONLY.replace("CALLS", str(calls)).replace("PER_ROUND", str(per_round))
    lab.open([cell])
    lab.page.evaluate(FRAMES)
    start = lab.page.evaluate("() => performance.now()")
    lab.run_cell(0)
    lab.wait_output(0, f"RESULT {calls} completed", timeout=180_000)
    turn = lab.turn()
    expect(turn.locator(".mead-card")).to_have_count(calls)
    expect(turn.locator(".mead-card[data-collapsed]")).to_have_count(calls)
    end = lab.page.evaluate("() => performance.now()")
    report["live_turn"] = {
        "wall_ms": round(end - start, 1),
        "view_renders": stats(between(lab.page, "__meadFrameRenders", start, end)),
        "long_tasks": stats(between(lab.page, "__meadLongTasks", start, end)),
        "frame_gaps": frame_gaps(lab.page),
    }
    labels = flow(lab)
    assert len(labels) == calls + calls // per_round + 1
    assert labels[: per_round + 2] == [
        "text:Round 1: 0 so far.",
        *["card:lookup"] * per_round,
        "text:Round 2: 10 so far.",
    ]
    assert labels[-1] == f"text:All {calls} lookups are done."
    lab.shot("long-turn")

    # A second view of the finished turn builds all of it at once.
    lab.output(0).locator(".mead-turn").click(button="right", position={"x": 5, "y": 5})
    lab.page.get_by_role("menuitem", name="Create New View for Cell Output").click()
    views = lab.page.locator(".mead-turn")
    expect(views).to_have_count(2, timeout=WAIT)
    expect(views.nth(1).locator(".mead-card")).to_have_count(calls)
    lab.page.wait_for_function(f"() => window.__meadViews.some((v) => v.cards === {calls})")
    report["second_view"] = lab.page.evaluate(
        f"() => window.__meadViews.find((v) => v.cards === {calls})"
    )
    lab.shot("second-view")
    output_view = lab.page.locator(".lm-TabBar-tab", has_text="Output View")
    output_view.locator(".lm-TabBar-tabCloseIcon").click()
    expect(views).to_have_count(1)

    # Scrolling the notebook through the whole turn, a wheel step every 50 ms.
    turn.locator(".mead-card").first.scroll_into_view_if_needed()
    box = turn.bounding_box()
    assert box is not None
    lab.page.mouse.move(box["x"] + box["width"] / 2, 500)
    last = turn.locator(".mead-card").last
    in_view = "(el) => el.getBoundingClientRect().bottom <= window.innerHeight"
    lab.page.evaluate(FRAMES)
    start = lab.page.evaluate("() => performance.now()")
    steps = 0
    while steps < 100 and not last.evaluate(in_view):
        lab.page.mouse.wheel(0, 240)
        lab.page.wait_for_timeout(50)
        steps += 1
    end = lab.page.evaluate("() => performance.now()")
    report["scroll"] = {
        "wheel_steps_of_240px": steps,
        "frame_gaps": frame_gaps(lab.page),
        "long_tasks": stats(between(lab.page, "__meadLongTasks", start, end)),
    }
    expect(last).to_be_in_viewport()
    lab.shot("scrolled")

    # Opening a collapsed card: from the click to the next frame.
    report["expand"] = lab.page.evaluate(
        """() => new Promise((resolve) => {
          const card = document.querySelectorAll(".mead-turn .mead-card")[150];
          const start = performance.now();
          card.querySelector(".mead-card-title").click();
          requestAnimationFrame(() => setTimeout(() => resolve({
            painted_ms: Math.round((performance.now() - start) * 10) / 10,
            open: !card.querySelector(".mead-card-body").hidden,
          }), 0));
        })"""
    )
    assert report["expand"]["open"] is True

    # A reload with the kernel alive renders the whole turn from the synced state.
    save(lab, "mead-static")
    lab.page.reload()
    lab.wait_ready()
    expect(lab.turn().locator(".mead-card")).to_have_count(calls, timeout=WAIT)
    lab.page.wait_for_function(f"() => window.__meadViews.some((v) => v.cards === {calls})")
    report["reload"] = lab.page.evaluate(
        f"() => window.__meadViews.find((v) => v.cards === {calls})"
    )
    report["reload"]["long_tasks_during_page_load"] = stats(
        between(lab.page, "__meadLongTasks", 0, report["reload"]["at"] + 1000)
    )
    (artifacts / RENDER_FILE).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
