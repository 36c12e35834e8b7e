"""A person deciding in real JupyterLab and Notebook 7: Allow always, deny with a
reason, edited arguments, Other and several options, and keys; each checked in
the kernel (what ran, with which arguments, what the model was told)."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Locator, expect

from .pages import NotebookPage
from .scenarios import CHOICE_MODEL, PAYLOADS, PRELUDE

pytestmark = pytest.mark.browser

QUESTION_TIMEOUT = 60_000
QUIET_MS = 1_500
"""How long a key that must do nothing is given to do something anyway."""
REPLY_TIMEOUT = 30_000
"""How long the kernel may take to answer the page on a loaded machine (ms)."""

TOOLS = '''
RAN = []


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    RAN.append(("delete_file", path))
    return f"deleted {path}"


@tool(read_only=True)
def read_file(path: str) -> str:
    """Read a file."""
    RAN.append(("read_file", path))
    return f"contents of {path}"


@tool
def resize(path: str, width: int) -> str:
    """Resize an image."""
    RAN.append(("resize", path, width))
    return f"{path} is {width} wide"


def one_call_a_round(*calls):
    """A model making these calls, one a round, then echoing the last result."""

    def model(messages):
        done = sum(1 for m in messages if m["role"] == "tool")
        return [ToolCall(*calls[done])] if done < len(calls) else echo_tool_result(messages)

    return ScriptedModel(model)


def show(w, result):
    print("RAN", RAN)
    print("OUTCOMES", [c.outcome or c.status for c in result.calls])
    print("BY", [c["question"]["answer"]["by"] for c in w.calls.values() if c["question"]])
    print("RULES", [str(r) for r in w.rules])
    print("APPROVED", [c.approved_arguments for c in result.calls])
    print("TEXT", result.text)
'''

ALLOW_ALWAYS = (
    PRELUDE
    + TOOLS
    + """
w = Timed()
model = one_call_a_round(
    ("delete_file", {"path": "a.txt"}),
    ("delete_file", {"path": "b.txt"}),
    ("resize", {"path": "c.png", "width": 10}),
)
show(w, Router(model, tools=[delete_file, resize]).run("tidy up", interaction=w))
"""
)

EDIT = (
    PRELUDE
    + TOOLS
    + """
w = Timed()
model = one_call_a_round(("resize", {"path": "a.png", "width": 4000}))
show(w, Router(model, tools=[resize]).run("shrink it", interaction=w))
"""
)

DENY_WITH_REASON = (
    PRELUDE
    + TOOLS
    + """
w = Timed()
model = one_call_a_round(("delete_file", {"path": "archive.zip"}))
show(w, Router(model, tools=[delete_file]).run("clean up", interaction=w))
"""
)

ENTER = (
    PRELUDE
    + TOOLS
    + """
w = Timed()
model = one_call_a_round(("delete_file", {"path": "a.txt"}), ("read_file", {"path": "a.txt"}))
show(w, Router(model, tools=[delete_file, read_file]).run("look", interaction=w))
"""
)

KEYBOARD_OFF = (
    PRELUDE
    + TOOLS
    + """
w = Timed(keyboard=False)
model = one_call_a_round(("read_file", {"path": "a.txt"}))
show(w, Router(model, tools=[read_file]).run("look", interaction=w))
"""
)

LATE_CHOICE = (
    PRELUDE
    + CHOICE_MODEL
    + """
def late(messages):
    if messages[-1]["role"] == "user":
        time.sleep(4)
        return [choice]
    return echo_tool_result(messages)


result = Router(ScriptedModel(late)).run("ask me", interaction=Timed())
print("RESULT", result.calls[0].status, result.calls[0].result)
"""
)

CHOICE = (
    PRELUDE
    + CHOICE_MODEL
    + """
result = Router(model).run("ask me", interaction=Timed())
print("RESULT", result.calls[0].status, result.calls[0].result)
print("TEXT", result.text)
"""
)

MULTIPLE = (
    PRELUDE
    + f"""
labels = ["Keep", "Archive", *{PAYLOADS[:3]!r}]
ask = ToolCall(
    "ask_user",
    {{
        "prompt": "Which ones?",
        "multiple": True,
        "options": [{{"id": f"o{{i}}", "label": label}} for i, label in enumerate(labels)],
    }},
)
model = ScriptedModel(
    lambda messages: [ask] if messages[-1]["role"] == "user" else echo_tool_result(messages)
)
result = Router(model).run("ask me", interaction=Timed())
print("RESULT", result.calls[0].status, result.calls[0].result)
"""
)


def question(nb: NotebookPage, tool: str) -> Locator:
    """The open question on the card of ``tool`` (waits for it)."""
    q = nb.card(tool).locator(".mead-question:not(.mead-answered)")
    expect(q).to_be_visible(timeout=QUESTION_TIMEOUT)
    return q


def focus(q: Locator) -> None:
    """Put focus on the question itself, as a click on its text does."""
    q.locator(".mead-question-prompt").first.click()
    expect(q).to_be_focused()


def outputs(nb: NotebookPage, index: int = 0) -> dict[str, str]:
    """The lines the cell printed as ``KEY value``, by key."""
    return dict(
        line.split(" ", 1)
        for line in nb.output_text(index).splitlines()
        if re.match(r"^[A-Z]+ ", line)
    )


def assert_inert(nb: NotebookPage) -> None:
    assert nb.page.evaluate("() => typeof window.__pwned") == "undefined"
    assert nb.dialogs == []
    for selector in ("script", "iframe", "svg[onload]", "img[onerror]", "[onerror]", "[onload]"):
        assert nb.turn().locator(selector).count() == 0, selector


def allow_always_for_the_tool(nb: NotebookPage) -> None:
    """Allow delete_file always; the second delete is not asked, a resize is (denied)."""
    nb.open([ALLOW_ALWAYS])
    nb.run_cell(0)
    q = question(nb, "delete_file")
    scope = q.get_by_label("Remember for")
    options = [o.strip() for o in scope.locator("option").all_inner_texts()]
    assert options == ["every call of delete_file on local", "every tool on local"], options
    scope.select_option("tool")
    nb.shot("allow-always")
    q.get_by_role("button", name="Allow always").click()
    deny = question(nb, "resize").get_by_role("button", name="Deny", exact=True)
    deny.click()
    nb.wait_output(0, "TEXT")
    out = outputs(nb)
    assert out["RAN"] == "[('delete_file', 'a.txt'), ('delete_file', 'b.txt')]"
    assert out["OUTCOMES"] == "['completed', 'completed', 'denied']"
    assert out["BY"] == "['person', 'rule', 'person']"
    assert out["RULES"] == "['allow every call of delete_file on local']"
    made, answered = nb.card("delete_file").all()
    rule = "every call of delete_file on local"
    expect(made).to_contain_text(f"Allowed by you, and always from now on for {rule}")
    expect(answered).to_contain_text(f"Allowed by your “Allow always” rule for {rule}")
    expect(nb.turn().get_by_role("button", name="Allow")).to_have_count(0)
    assert [c["label"] for c in nb.clicks("Allow", "Allow always", "Deny")] == [
        "Allow always",
        "Deny",
    ]
    nb.shot("rule-answered")


def edit_the_arguments(nb: NotebookPage) -> None:
    """Bad JSON is refused in the page, a bad width by the kernel; a good edit runs."""
    nb.open([EDIT])
    nb.run_cell(0)
    q = question(nb, "resize")
    q.get_by_text("Edit arguments").click()
    editor = q.get_by_label("Arguments (JSON)")
    assert json.loads(editor.input_value()) == {"path": "a.png", "width": 4000}
    allow = q.get_by_role("button", name="Allow", exact=True)

    editor.fill('{"path": "a.png", "width": 800')
    allow.click()
    expect(q.locator(".mead-edit-error")).to_contain_text("not valid JSON")
    expect(q.locator(".mead-rejected")).to_be_hidden()
    expect(allow).to_be_enabled()
    nb.shot("invalid-json")

    editor.fill('{"path": "a.png", "width": "wide"}')
    allow.click()
    rejected = q.locator(".mead-rejected")
    expect(rejected).to_contain_text(
        "Not accepted: the edited arguments do not fit the tool", timeout=REPLY_TIMEOUT
    )
    expect(rejected).to_contain_text("'wide' is not of type 'integer'")
    expect(allow).to_be_enabled()
    expect(nb.card("resize")).to_contain_text("Waiting for you")
    nb.shot("refused-by-kernel")

    path = PAYLOADS[0] + ".png"
    editor.fill(json.dumps({"path": path, "width": 800}))
    allow.click()
    nb.wait_output(0, "TEXT")
    out = outputs(nb)
    assert out["RAN"] == repr([("resize", path, 800)])
    assert out["OUTCOMES"] == "['completed']"
    assert out["APPROVED"] == repr([{"path": path, "width": 800}])
    card = nb.card("resize")
    expect(card).to_contain_text("Completed")
    card.get_by_role("button", name="Details of resize").click()  # a finished card is one line
    asked = card.locator(".mead-asked-args")
    approved = card.locator(".mead-approved-args")
    expect(asked).to_be_visible()
    assert json.loads(asked.inner_text()) == {"path": "a.png", "width": 4000}
    assert json.loads(approved.inner_text()) == {"path": path, "width": 800}
    expect(nb.turn().locator(".mead-transcript")).to_contain_text("is 800 wide")
    assert_inert(nb)
    nb.shot("edited")


def test_allow_always_in_lab(lab: NotebookPage) -> None:
    allow_always_for_the_tool(lab)


def test_allow_always_in_notebook7(notebook7: NotebookPage) -> None:
    allow_always_for_the_tool(notebook7)


def test_edited_arguments_in_lab(lab: NotebookPage) -> None:
    edit_the_arguments(lab)


def test_edited_arguments_in_notebook7(notebook7: NotebookPage) -> None:
    edit_the_arguments(notebook7)


def test_a_deny_reason_reaches_the_model(lab: NotebookPage) -> None:
    lab.open([DENY_WITH_REASON])
    lab.run_cell(0)
    q = question(lab, "delete_file")
    reason = "keep the archive " + PAYLOADS[0]
    q.get_by_label("Reason if denied (optional)").fill(reason)
    q.get_by_role("button", name="Deny", exact=True).click()
    lab.wait_output(0, "TEXT")
    out = outputs(lab)
    assert out["RAN"] == "[]"
    assert out["OUTCOMES"] == "['denied']"
    assert f"denied (rejected): {reason}" in out["TEXT"]
    card = lab.card("delete_file")
    expect(card.locator(".mead-decision")).to_have_text(f"Denied by you: {reason}")
    expect(card.locator(".mead-error")).to_contain_text(reason)
    expect(lab.turn().locator(".mead-transcript")).to_contain_text("keep the archive")
    assert_inert(lab)
    lab.shot("denied-with-reason")


def test_enter_never_allows_a_delete_but_allows_a_read(lab: NotebookPage) -> None:
    lab.open([ENTER])
    lab.run_cell(0)
    delete = question(lab, "delete_file")
    expect(delete.locator(".mead-hint")).to_contain_text("Enter is off")
    focus(delete)
    lab.page.keyboard.press("Enter")
    lab.page.wait_for_timeout(QUIET_MS)
    expect(lab.card("delete_file")).to_contain_text("Waiting for you")
    expect(delete.get_by_role("button", name="Allow", exact=True)).to_be_enabled()
    lab.shot("enter-did-nothing")
    lab.page.keyboard.press("Escape")
    read = question(lab, "read_file")
    focus(read)
    lab.page.keyboard.press("Enter")
    lab.wait_output(0, "TEXT")
    out = outputs(lab)
    assert out["OUTCOMES"] == "['denied', 'completed']"
    assert out["RAN"] == "[('read_file', 'a.txt')]"
    assert out["BY"] == "['person', 'person']"
    expect(lab.card("delete_file").locator(".mead-decision")).to_have_text("Denied by you")
    expect(lab.card("read_file").locator(".mead-decision")).to_have_text("Allowed by you")
    # The keys went to the questions, not to the notebook (no new cell, still a code cell).
    expect(lab.page.locator(".jp-Notebook .jp-Cell")).to_have_count(1)
    expect(lab.cell(0)).to_have_class(re.compile(r"\bjp-CodeCell\b"))
    lab.shot("enter-allowed-read")


def test_keys_switched_off(lab: NotebookPage) -> None:
    lab.open([KEYBOARD_OFF])
    lab.run_cell(0)
    q = question(lab, "read_file")
    focus(q)
    for key in ("Enter", "Escape", "1"):
        lab.page.keyboard.press(key)
    lab.page.wait_for_timeout(QUIET_MS)
    expect(lab.card("read_file")).to_contain_text("Waiting for you")
    expect(q.locator(".mead-hint").first).to_have_text("")
    q.get_by_role("button", name="Allow", exact=True).click()
    lab.wait_output(0, "TEXT")
    assert outputs(lab)["OUTCOMES"] == "['completed']"
    lab.shot("keys-off")


def test_number_keys_pick_and_enter_submits(lab: NotebookPage) -> None:
    lab.open([CHOICE])
    lab.run_cell(0)
    q = question(lab, "ask_user")
    focus(q)
    lab.page.keyboard.press("2")
    expect(q.get_by_label("Black coffee")).to_be_checked()
    lab.page.keyboard.press("1")
    expect(q.get_by_label("Green tea")).to_be_checked()
    lab.page.keyboard.press("Enter")
    lab.wait_output(0, 'RESULT completed {"option_id": "tea", "label": "Green tea"}')
    expect(lab.card("ask_user").locator(".mead-decision")).to_have_text("Chose “Green tea” by you")
    expect(lab.cell(0)).to_have_class(re.compile(r"\bjp-CodeCell\b"))
    lab.shot("picked-by-keys")


def test_an_other_answer_reaches_the_model(lab: NotebookPage) -> None:
    lab.open([CHOICE])
    lab.run_cell(0)
    q = question(lab, "ask_user")
    other = q.get_by_label("Other (your own answer)")
    other.fill("a glass of water")
    other.press("1")
    other.press("Enter")
    lab.page.wait_for_timeout(QUIET_MS)
    expect(lab.card("ask_user")).to_contain_text("Waiting for you")
    expect(other).to_have_value("a glass of water1")
    other.fill("a glass of water")
    q.get_by_role("button", name="Submit").click()
    lab.wait_output(0, 'RESULT completed {"answer": "a glass of water"}')
    lab.wait_output(0, 'TEXT The tool said: {"answer": "a glass of water"}')
    expect(lab.card("ask_user").locator(".mead-decision")).to_have_text(
        "Answered “a glass of water” by you"
    )
    lab.shot("other-answer")


def test_several_options_with_hostile_labels(lab: NotebookPage) -> None:
    lab.open([MULTIPLE])
    lab.run_cell(0)
    q = question(lab, "ask_user")
    boxes = q.locator(".mead-option input")
    expect(boxes).to_have_count(5)
    for i in range(5):
        expect(boxes.nth(i)).to_have_attribute("type", "checkbox")
    labels = q.locator(".mead-option label").all_inner_texts()
    assert labels == ["Keep", "Archive", *PAYLOADS[:3]], labels
    assert_inert(lab)
    q.get_by_label("Archive").check()
    boxes.nth(3).check()
    lab.shot("ticked")
    q.get_by_role("button", name="Submit").click()
    picked = json.dumps({"option_ids": ["o1", "o3"], "labels": ["Archive", PAYLOADS[1]]})
    lab.wait_output(0, f"RESULT completed {picked}")
    decision = lab.card("ask_user").locator(".mead-decision")
    expect(decision).to_have_text(f"Chose “Archive”, “{PAYLOADS[1]}” by you")
    assert_inert(lab)
    lab.shot("several")


def test_a_question_never_takes_the_keys_typed_in_another_cell(lab: NotebookPage) -> None:
    """Typing ``x = 2⏎`` in the next cell while a question opens types it there, and answers
    nothing: focus stays in the editor, and keys act only on a card the person focused."""
    lab.open([LATE_CHOICE, ""])
    lab.run_cell(0)
    editor = lab.cell(1).locator(".cm-content")
    editor.click()
    lab.page.keyboard.type("x = 2")
    lab.page.keyboard.press("Enter")
    q = question(lab, "ask_user")
    lab.page.keyboard.type("y = 1")
    lab.page.keyboard.press("Enter")
    lab.page.keyboard.press("2")
    lab.page.keyboard.press("Escape")
    lab.page.wait_for_timeout(QUIET_MS)
    expect(lab.card("ask_user")).to_contain_text("Waiting for you")
    expect(q.get_by_label("Black coffee")).not_to_be_checked()
    expect(q.get_by_label("Green tea")).not_to_be_checked()
    expect(editor).to_contain_text("x = 2")
    expect(editor).to_contain_text("y = 1")
    lab.shot("typing-elsewhere")
    q.get_by_label("Green tea").check()
    q.get_by_role("button", name="Submit").click()
    lab.wait_output(0, 'RESULT completed {"option_id": "tea", "label": "Green tea"}')
