"""The code of the notebooks the browser tests open, one cell per string."""

from __future__ import annotations

PRELUDE = '''
import time
from mead_notebook import Call, NotebookInteraction, Router, ScriptedModel, ToolCall, tool


UNBLOCKED_AT = []
TOOL_STARTED_AT = []


class Timed(NotebookInteraction):
    """Notes the kernel's clock whenever a question returns to the turn's thread."""

    def request_permission(self, context, request):
        decision = super().request_permission(context, request)
        UNBLOCKED_AT.append(time.time())
        return decision

    def ask_choice(self, context, choice):
        answer = super().ask_choice(context, choice)
        UNBLOCKED_AT.append(time.time())
        return answer


def report():
    for stamp in UNBLOCKED_AT:
        print(f"UNBLOCKED {stamp:.6f}")
    for stamp in TOOL_STARTED_AT:
        print(f"TOOL {stamp:.6f}")


@tool
def write_note(text: str) -> str:
    """Write a note."""
    TOOL_STARTED_AT.append(time.time())
    return f"saved note: {text}"


@tool
def slow_count(steps: int, call: Call) -> str:
    """Count slowly, reporting progress."""
    for i in range(steps):
        if call.cancelled:
            return "stopped"
        call.progress((i + 1) / steps, f"step {i + 1} of {steps}")
        time.sleep(0.1)
    return "counted"


def echo_tool_result(messages):
    last = messages[-1]
    if last.get("is_error"):
        return [f"The tool failed: {last['content']}"]
    return [f"The tool said: {last['content']}"]


def note_model():
    return ScriptedModel(
        lambda messages: [ToolCall("write_note", {"text": "hello"})]
        if messages[-1]["role"] == "user"
        else echo_tool_result(messages)
    )
'''

ALLOW_SYNC = """
router = Router(note_model(), tools=[write_note])
result = router.run("write a note", interaction=Timed())
print("RESULT", result.calls[0].status, result.calls[0].result)
report()
print("TEXT", result.text)
"""

DENY_SYNC = """
router = Router(note_model(), tools=[write_note])
result = router.run("write a note", interaction=Timed())
print("RESULT", result.calls[0].outcome)
report()
print("TEXT", result.text)
"""

CHOICE_MODEL = """
choice = ToolCall(
    "ask_user",
    {
        "prompt": "Which drink?",
        "options": [{"id": "tea", "label": "Green tea"}, {"id": "coffee", "label": "Black coffee"}],
    },
)
model = ScriptedModel(
    lambda messages: [choice] if messages[-1]["role"] == "user" else echo_tool_result(messages)
)
"""

CHOICE_SYNC = (
    CHOICE_MODEL
    + """
result = Router(model).run("ask me", interaction=Timed())
print("RESULT", result.calls[0].status, result.calls[0].result)
report()
"""
)

CANCEL_SYNC = """
model = ScriptedModel(
    lambda messages: [ToolCall("slow_count", {"steps": 300})]
    if messages[-1]["role"] == "user"
    else echo_tool_result(messages)
)
result = Router(model, tools=[slow_count]).run("count", interaction=Timed())
print("RESULT", result.calls[0].outcome)
report()
"""

TIMEOUT_SYNC = """
router = Router(note_model(), tools=[write_note])
result = router.run("write a note", interaction=Timed(timeout=6))
print("RESULT", result.calls[0].outcome, result.calls[0].error)
report()
"""

ASYNC_ALLOW = """
router = Router(note_model(), tools=[write_note])
result = await router.arun("write a note", interaction=Timed())
print("RESULT", result.calls[0].status, result.calls[0].result)
report()
"""

BACKGROUND_ALLOW = """
router = Router(note_model(), tools=[write_note])
turn = router.start("write a note", interaction=Timed())
print("STARTED")
"""

BACKGROUND_RESULT = """
result = turn.result(timeout=30)
print("RESULT", result.calls[0].status, result.calls[0].result)
report()
"""

MANY_ALLOWS = """
def one_note_a_round(messages):
    done = sum(1 for m in messages if m["role"] == "tool")
    if done < QUESTIONS:
        return [ToolCall("write_note", {"text": f"note {done + 1}"})]
    return [f"wrote {done} notes"]


router = Router(ScriptedModel(one_note_a_round), tools=[write_note], max_rounds=QUESTIONS + 1)
result = router.run("write notes", interaction=Timed())
print("RESULT", [c.status for c in result.calls].count("completed"), "completed")
report()
"""

SECOND_TURN = """
second = Router(ScriptedModel([["A second **turn**, no tools."]]))
print("SECOND", second.run("say more", interaction=NotebookInteraction()).text)
"""

NO_CODE = """
from mead_notebook import NotebookInteraction
from mead_notebook.notebook.frontend import Frontend

NotebookInteraction(_frontend=Frontend(code=""))
"""

AFTER_SYNC = """
print("RESULT", result.calls[0].status, result.calls[0].result)
report()
"""

BACKGROUND_CHOICE = (
    CHOICE_MODEL
    + """
turn = Router(model).start("ask me", interaction=Timed())
print("STARTED")
"""
)

PAYLOADS = [
    "<img src=x onerror=\"window.__pwned = 'img'; alert(1)\">",
    "<script>window.__pwned = 'script'; alert(2)</script>",
    "[click me](javascript:window.__pwned='link';alert(3))",
    "<a href=\"javascript:window.__pwned='a'\">html link</a>",
    "<svg onload=\"window.__pwned='svg'\"></svg>",
    "<iframe src=\"javascript:parent.__pwned='iframe'\"></iframe>",
]
"""Markup that would set ``window.__pwned`` (or open a dialog) if it ever ran."""

HOSTILE = f"""
payloads = {PAYLOADS!r}
text = "Here is **bold** text and payloads:\\n\\n" + "\\n\\n".join(payloads) + "\\n\\n"
model = ScriptedModel(
    lambda messages: [text, ToolCall("write_note", {{"text": "\\n".join(payloads)}})]
    if messages[-1]["role"] == "user"
    else ["done: " + payloads[0]]
)
result = await Router(model, tools=[write_note]).arun(
    "hostile " + payloads[1], interaction=Timed()
)
print("RESULT", result.calls[0].status)
report()
"""
