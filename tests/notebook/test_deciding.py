"""What a person can decide in the widget: Allow always, deny with a reason, edited
arguments, Other answers, several options; and the audit log of it all."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import answer_when_asked

from mead_notebook import (
    Allow,
    Answered,
    Call,
    Deny,
    Picked,
    Router,
    ScriptedModel,
    ToolCall,
    TurnDriver,
    audit,
    tool,
)
from mead_notebook.notebook.rules import Rule
from mead_notebook.policies import AllowAll, AllowList, AllowReads, DenyAll

pytestmark = pytest.mark.timeout(60)

ran: list[tuple[str, dict[str, Any]]] = []


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    ran.append(("delete_file", {"path": path}))
    return f"deleted {path}"


@tool(read_only=True)
def read_file(path: str) -> str:
    """Read a file."""
    ran.append(("read_file", {"path": path}))
    return f"contents of {path}"


@tool
def resize(path: str, width: int) -> str:
    """Resize an image."""
    ran.append(("resize", {"path": path, "width": width}))
    return f"{path} is {width} wide"


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


def request(tool_call_id: str, name: str, cls: str = "effect", server: str = "files") -> Any:
    return {
        "tool_call_id": tool_call_id,
        "tool": name,
        "server": server,
        "class": cls,
        "arguments": {"path": "a"},
    }


def ask_in_thread(w: Any, req: Any) -> tuple[list[Any], threading.Thread]:
    got: list[Any] = []
    t = threading.Thread(target=lambda: got.append(w.request_permission(None, req)), daemon=True)
    t.start()
    return got, t


def open_question(w: Any, tool_call_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        q = (w.calls.get(tool_call_id) or {}).get("question")
        if q and q["answer"] is None:
            return dict(q)
        time.sleep(0.005)
    raise AssertionError(f"no open question on {tool_call_id}")


# -- Allow always -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scope", "same", "other"),
    [
        ("tool", request("c2", "delete_file"), request("c3", "delete_file", server="other")),
        ("server", request("c2", "move_file"), request("c3", "delete_file", server="web")),
    ],
)
def test_allow_always_answers_later_matching_requests_without_asking(
    make: Any, scope: str, same: Any, other: Any
) -> None:
    w, c = make(timeout=30.0)
    w.turn_started(None, "x")
    w.deliver({"type": "rendered"})
    person = answer_when_asked(w, c, "c1", decision="allow", remember=scope)
    assert w.request_permission(None, request("c1", "delete_file")) == Allow()
    person.join(10)
    label = "every call of delete_file on files" if scope == "tool" else "every tool on files"
    assert [r.label for r in w.rules] == [label]
    assert w.calls["c1"]["question"]["answer"]["rule"] == label
    assert w.request_permission(None, same) == Allow()
    answer = w.calls["c2"]["question"]["answer"]
    assert (answer["by"], answer["rule"]) == ("rule", label)
    got, t = ask_in_thread(w, other)
    question = open_question(w, "c3")
    assert got == []
    w.deliver({"type": "answer", "question_id": question["id"], "decision": "deny"})
    t.join(10)
    assert got == [Deny("rejected", "")]


def test_allow_always_for_reads_covers_every_read_and_no_effect(make: Any) -> None:
    w, _c = make(timeout=30.0)
    w.turn_started(None, "x")
    w.deliver({"type": "rendered"})
    q = None

    def person() -> None:
        nonlocal q
        q = open_question(w, "c1")
        w.deliver(
            {"type": "answer", "question_id": q["id"], "decision": "allow", "remember": "class"}
        )

    t = threading.Thread(target=person, daemon=True)
    t.start()
    assert w.request_permission(None, request("c1", "read_file", cls="read")) == Allow()
    t.join(10)
    assert q is not None
    assert [o["scope"] for o in q["scopes"]] == ["tool", "class", "server"]
    assert w.rules == [Rule("class", "files", None, "read")]
    assert w.request_permission(None, request("c2", "cat", cls="read")) == Allow()
    got, t = ask_in_thread(w, request("c3", "delete_file"))
    question = open_question(w, "c3")
    assert "class" not in [o["scope"] for o in question["scopes"]]
    # an effect never gets a class rule, even if a page asks for one
    w.deliver(
        {"type": "answer", "question_id": question["id"], "decision": "allow", "remember": "class"}
    )
    refused = open_question(w, "c3")
    assert "not offered" in (refused["rejected"] or "")
    assert got == []
    assert w.rules == [Rule("class", "files", None, "read")]
    w.deliver({"type": "answer", "question_id": question["id"], "decision": "deny"})
    t.join(10)
    assert got == [Deny("rejected", "")]


def test_a_new_rule_settles_the_matching_requests_already_waiting(make: Any) -> None:
    w, _c = make(timeout=30.0)
    w.turn_started(None, "x")
    w.deliver({"type": "rendered"})
    first, t1 = ask_in_thread(w, request("c1", "delete_file"))
    second, t2 = ask_in_thread(w, request("c2", "delete_file"))
    third, t3 = ask_in_thread(w, request("c3", "move_file"))
    q1 = open_question(w, "c1")
    open_question(w, "c2")
    open_question(w, "c3")
    w.deliver({"type": "answer", "question_id": q1["id"], "decision": "allow", "remember": "tool"})
    t1.join(10)
    t2.join(10)
    assert first == second == [Allow()]
    assert w.calls["c2"]["question"]["answer"]["by"] == "rule"
    assert third == []
    w.interrupt(None)
    t3.join(10)


def test_rules_can_be_listed_and_revoked(make: Any) -> None:
    w, c = make(timeout=30.0)
    w.turn_started(None, "x")
    w.deliver({"type": "rendered"})
    for tool_call_id, name, scope in [("c1", "delete_file", "tool"), ("c2", "x", "server")]:
        person = answer_when_asked(w, c, tool_call_id, decision="allow", remember=scope)
        w.request_permission(None, request(tool_call_id, name))
        person.join(10)
    assert [str(r) for r in w.rules] == [
        "allow every call of delete_file on files",
        "allow every tool on files",
    ]
    w.forget("allow every tool on files")
    assert w.rules == [Rule("tool", "files", "delete_file")]
    with pytest.raises(ValueError, match="no such rule"):
        w.forget("allow every call of nothing on files")
    w.forget()
    assert w.rules == []
    got, t = ask_in_thread(w, request("c3", "delete_file"))
    open_question(w, "c3")
    assert got == []
    w.interrupt(None)
    t.join(10)


# -- deny with a reason, edited arguments --------------------------------------------------


def test_a_deny_reason_reaches_the_model_and_the_card(make: Any) -> None:
    seen: list[Any] = []

    def model(messages: Any) -> list[Any]:
        seen.append(list(messages))
        return [ToolCall("delete_file", {"path": "a"})] if len(seen) == 1 else ["ok"]

    w, c = make(timeout=30.0, display=False)
    w.deliver({"type": "rendered"})
    person = answer_when_asked(w, c, "call_1", decision="deny", note="keep the archive")
    result = Router(ScriptedModel(model), [delete_file]).run("go", interaction=w)
    person.join(10)
    assert ran == []
    assert "keep the archive" in seen[1][-1]["content"]
    card = w.calls["call_1"]
    assert (card["outcome"], card["question"]["answer"]["note"]) == ("denied", "keep the archive")
    assert "keep the archive" in card["error"]
    assert result.calls[0].error == card["error"]


def test_edited_arguments_are_checked_and_the_tool_runs_with_exactly_them(make: Any) -> None:
    model = ScriptedModel([[ToolCall("resize", {"path": "a.png", "width": 4000})], ["done"]])
    w, _c = make(timeout=30.0, display=False)
    w.deliver({"type": "rendered"})
    refusals: list[str] = []

    def person() -> None:
        q = open_question(w, "call_1")
        assert q["schema"]["properties"]["width"]["type"] == "integer"
        for bad in ({"path": "a.png", "width": "wide"}, {"path": "a.png"}):
            w.deliver(
                {"type": "answer", "question_id": q["id"], "decision": "allow", "arguments": bad}
            )
            refusals.append(open_question(w, "call_1")["rejected"])
        w.deliver(
            {
                "type": "answer",
                "question_id": q["id"],
                "decision": "allow",
                "arguments": {"path": "a.png", "width": 800},
            }
        )

    t = threading.Thread(target=person, daemon=True)
    t.start()
    result = Router(model, [resize]).run("go", interaction=w)
    t.join(10)
    assert "width" in refusals[0]
    assert "integer" in refusals[0]
    assert "width" in refusals[1]
    assert "required" in refusals[1]
    assert ran == [("resize", {"path": "a.png", "width": 800})]
    record = result.calls[0]
    assert record.arguments == {"path": "a.png", "width": 4000}
    assert record.approved_arguments == {"path": "a.png", "width": 800}
    card = w.calls["call_1"]
    assert card["arguments"] == {"path": "a.png", "width": 4000}
    assert card["approved_arguments"] == {"path": "a.png", "width": 800}
    assert card["question"]["answer"]["arguments"] == {"path": "a.png", "width": 800}
    assert result.messages[2]["content"] == "a.png is 800 wide"


def test_each_refusal_changes_the_question_even_for_the_same_reason(make: Any) -> None:
    w, _c = make(timeout=30.0)
    w.turn_started(None, "x")
    w.deliver({"type": "rendered"})
    req = {**request("c1", "resize"), "parameters": resize.parameters}
    got, t = ask_in_thread(w, req)
    q = open_question(w, "c1")
    assert (q["rejected"], q["rejections"]) == (None, 0)
    seen = []
    for path in ("a.png", "b.png"):
        bad = {"type": "answer", "question_id": q["id"], "decision": "allow"}
        w.deliver({**bad, "arguments": {"path": path}})
        seen.append(dict(w.calls["c1"]["question"]))
    assert seen[0]["rejected"] == seen[1]["rejected"]
    assert "required" in (seen[0]["rejected"] or "")
    assert [s["rejections"] for s in seen] == [1, 2]
    assert seen[0] != seen[1]
    assert got == []
    w.deliver({"type": "answer", "question_id": q["id"], "decision": "deny"})
    t.join(10)
    assert got == [Deny("rejected", "")]


def test_approved_arguments_that_break_the_tool_never_run_it() -> None:
    class Sloppy(AllowAll):
        def request_permission(self, context: Any, request: Any) -> Allow:
            return Allow(arguments={"path": "a.png", "width": "wide"})

    model = ScriptedModel([[ToolCall("resize", {"path": "a.png", "width": 1})], ["k"]])
    result = Router(model, [resize]).run("go", interaction=Sloppy())
    assert ran == []
    assert result.calls[0].outcome == "invalid_arguments"
    assert "did not run" in result.messages[2]["content"]


def test_edited_arguments_with_markup_stay_data(make: Any) -> None:
    payload = '<img src=x onerror="alert(1)">'
    w, c = make(timeout=30.0)
    w.turn_started(None, "x")
    w.deliver({"type": "rendered"})
    person = answer_when_asked(w, c, "c1", decision="allow", arguments={"path": payload})
    req = {**request("c1", "delete_file"), "parameters": delete_file.parameters}
    assert w.request_permission(None, req) == Allow(arguments={"path": payload})
    person.join(10)
    assert w.calls["c1"]["question"]["answer"]["arguments"] == {"path": payload}


# -- choices -------------------------------------------------------------------------------


def ask_user(arguments: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel([[ToolCall("ask_user", arguments)], ["thanks"]])


OPTIONS = [
    {"id": "a", "label": "Keep"},
    {"id": "b", "label": "Archive"},
    {"id": "c", "label": "Drop"},
]


def test_an_other_answer_reaches_the_model_as_text(make: Any) -> None:
    w, c = make(timeout=30.0, display=False)
    w.deliver({"type": "rendered"})
    person = answer_when_asked(w, c, "call_1", text="move it to cold storage")
    result = Router(ask_user({"prompt": "Archive?", "options": OPTIONS})).run("go", interaction=w)
    person.join(10)
    assert json.loads(result.messages[2]["content"]) == {"answer": "move it to cold storage"}
    assert result.calls[0].status == "completed"
    answer = w.calls["call_1"]["question"]["answer"]
    assert (answer["decision"], answer["text"]) == ("picked", "move it to cold storage")


def test_several_options_when_the_model_asks_for_them(make: Any) -> None:
    w, c = make(timeout=30.0, display=False)
    w.deliver({"type": "rendered"})
    person = answer_when_asked(w, c, "call_1", option_ids=["a", "c"])
    result = Router(ask_user({"prompt": "Which?", "options": OPTIONS, "multiple": True})).run(
        "go", interaction=w
    )
    person.join(10)
    assert json.loads(result.messages[2]["content"]) == {
        "option_ids": ["a", "c"],
        "labels": ["Keep", "Drop"],
    }
    assert w.calls["call_1"]["question"]["multiple"] is True


def test_a_single_choice_refuses_several_options(make: Any) -> None:
    w, _c = make(timeout=30.0)
    w.turn_started(None, "x")
    w.deliver({"type": "rendered"})
    got: list[Any] = []
    choice = {"tool_call_id": "c1", "prompt": "Which?", "options": OPTIONS}
    t = threading.Thread(target=lambda: got.append(w.ask_choice(None, choice)), daemon=True)
    t.start()
    q = open_question(w, "c1")
    assert q["multiple"] is False
    w.deliver({"type": "answer", "question_id": q["id"], "option_ids": ["a", "b"]})
    time.sleep(0.1)
    assert got == []
    w.deliver({"type": "answer", "question_id": q["id"], "option_ids": ["b"]})
    t.join(10)
    assert got == [Picked("b")]


@pytest.mark.parametrize(
    ("given", "typed"), [("answer", "answer"), ("other", "other"), (None, "other"), ("x", "other")]
)
def test_a_choice_says_what_an_answer_in_words_is(make: Any, given: Any, typed: str) -> None:
    w, _c = make(timeout=30.0)
    w.turn_started(None, "x")
    w.deliver({"type": "rendered"})
    choice: dict[str, Any] = {"tool_call_id": "c1", "prompt": "Your name?", "options": OPTIONS}
    if given is not None:
        choice["typed"] = given
    got: list[Any] = []
    t = threading.Thread(target=lambda: got.append(w.ask_choice(None, choice)), daemon=True)
    t.start()
    q = open_question(w, "c1")
    assert q["typed"] == typed
    w.deliver({"type": "answer", "question_id": q["id"], "text": "Ada"})
    t.join(10)
    assert got == [Answered("Ada")]
    assert w.calls["c1"]["question"]["typed"] == typed


def test_answers_from_code_keep_working() -> None:
    class Person(AllowAll):
        def ask_choice(self, context: Any, choice: Any) -> Answered:
            return Answered("neither")

    result = Router(ask_user({"prompt": "?", "options": OPTIONS})).run("go", interaction=Person())
    assert json.loads(result.messages[2]["content"]) == {"answer": "neither"}


# -- text and cards in order ------------------------------------------------------------------


def test_each_card_knows_where_it_belongs_in_the_text(make: Any) -> None:
    model = ScriptedModel(
        [
            ["Reading 😀 first. ", ToolCall("read_file", {"path": "a"})],
            ["Now deleting: ", ToolCall("delete_file", {"path": "a"})],
            ["Done."],
        ]
    )
    w, _c = make(policy=AllowAll(), display=False)
    Router(model, [read_file, delete_file]).run("go", interaction=w)
    offsets = [w.calls[i]["text_offset"] for i in w.order]
    units = len("Reading 😀 first. ".encode("utf-16-le")) // 2
    assert offsets == [units, units + len("Now deleting: ")]


def test_keyboard_answers_can_be_switched_off(make: Any) -> None:
    on, _ = make()
    off, _ = make(keyboard=False)
    assert (on.keyboard, off.keyboard) == (True, False)


# -- audit ------------------------------------------------------------------------------------


def test_every_request_and_its_outcome_is_audited(make: Any, tmp_path: Path) -> None:
    path = tmp_path / "audit" / "calls.jsonl"
    model = ScriptedModel(
        [
            [
                ToolCall("read_file", {"path": "a"}),
                ToolCall("delete_file", {"path": "a"}),
                ToolCall("delete_file", {"path": "b"}),
                ToolCall("nope", {}),
                ToolCall("resize", {"path": "p", "width": 9}),
            ],
            ["done"],
        ]
    )
    w, c = make(policy=AllowReads(), timeout=30.0, audit=path, display=False)
    w.deliver({"type": "rendered"})
    people = [
        answer_when_asked(w, c, "call_2", decision="allow", remember="tool"),
        answer_when_asked(w, c, "call_5", decision="allow", arguments={"path": "p", "width": 10}),
    ]
    Router(model, [read_file, delete_file, resize]).run("go", interaction=w)
    for p in people:
        p.join(10)
    records = audit.read(path)
    by_id = {r["tool_call_id"]: r for r in records}
    assert [r["tool_call_id"] for r in records] == [
        "call_1",
        "call_2",
        "call_3",
        "call_4",
        "call_5",
    ]
    assert [(by_id[i]["decided_by"], by_id[i]["decision"]) for i in by_id] == [
        ("policy", "allow"),
        ("person", "allow"),
        ("rule", "allow"),
        (None, None),
        ("person", "allow"),
    ]
    assert by_id["call_3"]["rule"] == "every call of delete_file on local"
    assert by_id["call_1"]["note"] == "AllowReads()", "the audit names the policy that allowed"
    assert (by_id["call_4"]["status"], by_id["call_4"]["outcome"]) == ("failed", "unknown")
    assert by_id["call_5"]["arguments"] == {"path": "p", "width": 9}
    assert by_id["call_5"]["approved_arguments"] == {"path": "p", "width": 10}
    for r in records[:3]:
        assert r["asked_at"] <= r["decided_at"] <= r["ended_at"]
        assert (r["status"], r["tool"], r["kind"]) == ("completed", r["tool"], "permission")
    frame = audit.read(path, as_frame=True)
    assert list(frame["tool_call_id"]) == [r["tool_call_id"] for r in records]


def test_a_decision_is_on_disk_before_the_call_ends(make: Any, tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    on_disk: list[Any] = []

    @tool
    def look(call: Call) -> str:
        """Look at the audit log while running."""
        on_disk.extend(audit.read(path))
        return "ok"

    w, _c = make(policy=AllowList(tools=["look"]), audit=path, display=False)
    Router(ScriptedModel([[ToolCall("look")], ["k"]]), [look]).run("go", interaction=w)
    assert len(on_disk) == 1
    assert (on_disk[0]["decision"], on_disk[0]["status"]) == ("allow", None)
    # a kernel that died mid-write leaves half a line; the rest still reads
    with path.open("a") as f:
        f.write('{"event": "decided", "tool_call_id": "x", "decis')
    assert [r["tool_call_id"] for r in audit.read(path)] == ["call_1"]


def test_a_policy_standing_alone_still_runs_through_the_driver() -> None:
    driver = TurnDriver(DenyAll())
    record = driver.begin("c1", "delete_file", "files", "effect", {"path": "a"})
    assert driver.permission(record) == Deny("rejected")
    assert (record.status, record.outcome) == ("failed", "denied")
