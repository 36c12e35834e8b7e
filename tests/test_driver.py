"""``TurnDriver`` on its own: each method, the updates it sends and the records it keeps."""

from __future__ import annotations

import threading
from typing import Any

from mead_notebook import Allow, Call, Deny, TurnDriver
from mead_notebook.policies import AllowAll, DenyAll, Recording


def updates(rec: Recording) -> list[dict[str, Any]]:
    return [e.args[0] for e in rec.events if e.name == "tool_updated"]


def test_a_call_from_first_sight_to_its_end() -> None:
    rec = Recording(AllowAll())
    driver = TurnDriver(rec)
    diff = {"type": "diff", "path": "a.py", "old_text": "x", "new_text": "y"}
    record = driver.begin("c1", "Edit", "claude", None, {}, kind="edit", title="Edit a.py")
    driver.describe(
        record, arguments={"file": "a.py"}, content=[diff], locations=[{"path": "a.py", "line": 3}]
    )
    assert driver.permission(record) == Allow()
    driver.running(record, Call("c1", "Edit"))
    driver.complete(record, "done", content=[{"type": "text", "text": "edited"}])
    first, described, running, final = updates(rec)
    assert first["kind"] == "edit"
    assert first["class"] == "effect"
    assert first["title"] == "Edit a.py"
    assert first["arguments"] == {}
    assert described["status"] == "pending"
    assert described["arguments"] == {"file": "a.py"}
    assert described["content"] == [diff]
    assert described["locations"] == [{"path": "a.py", "line": 3}]
    request = next(e.args[0] for e in rec.events if e.name == "request_permission")
    assert request["content"] == [diff]
    assert request["title"] == "Edit a.py"
    assert request["arguments"] == {"file": "a.py"}
    assert "editable" not in request
    assert running["status"] == "in_progress"
    assert "decided_by" not in running
    assert final["content"] == [{"type": "text", "text": "edited"}]
    assert record.content == [{"type": "text", "text": "edited"}]
    assert record.kind == "edit"
    assert record.locations == [{"path": "a.py", "line": 3}]


def test_a_kind_gives_the_class_and_a_class_gives_the_kind() -> None:
    driver = TurnDriver(None)
    assert driver.begin("a", "t", "s", None, {}, kind="search").tool_class == "read"
    assert driver.begin("b", "t", "s", None, {}, kind="execute").tool_class == "effect"
    assert driver.begin("c", "t", "s", "read", {}).kind == "read"
    assert driver.begin("d", "t", "s", "effect", {}).kind == "other"


def test_describe_is_ignored_once_a_call_runs() -> None:
    rec = Recording(AllowAll())
    driver = TurnDriver(rec)
    record = driver.begin("c", "t", "s", "effect", {"a": 1})
    driver.running(record, Call("c", "t"), decided_by="agent")
    driver.describe(record, arguments={"a": 2})
    assert record.arguments == {"a": 1}
    assert [u["status"] for u in updates(rec)] == ["pending", "in_progress"]


def test_a_call_the_agent_ran_unasked_says_so_and_nobody_is_asked() -> None:
    rec = Recording(DenyAll())
    driver = TurnDriver(rec)
    record = driver.begin("c", "Read", "agent", None, {}, kind="read")
    driver.running(record, Call("c", "Read"), decided_by="agent")
    driver.complete(record, "text")
    assert "request_permission" not in rec.names
    assert updates(rec)[1]["decided_by"] == "agent"
    assert record.decided_by == "agent"


def test_a_source_that_cannot_carry_edits_says_so_in_the_request() -> None:
    rec = Recording(AllowAll())
    driver = TurnDriver(rec)
    driver.editable = False
    driver.permission(driver.begin("c", "t", "s", "effect", {}))
    request = next(e.args[0] for e in rec.events if e.name == "request_permission")
    assert request["editable"] is False


def test_a_denied_call_ends_failed_with_the_outcome_of_its_reason() -> None:
    driver = TurnDriver(DenyAll())
    record = driver.begin("c", "t", "s", "effect", {})
    assert driver.permission(record) == Deny("rejected")
    assert (record.status, record.outcome) == ("failed", "denied")
    assert "The tool did not run" in (record.error or "")


class Saying(DenyAll):
    def __init__(self, message: str) -> None:
        self.message = message

    def decide(self, request: Any) -> Deny:
        return Deny("rejected", self.message)


def test_a_denial_message_ends_its_sentence_once() -> None:
    for message, told in [
        ("just tell me.", "denied (rejected): just tell me. The tool did not run."),
        ("not now", "denied (rejected): not now. The tool did not run."),
        ("", "denied (rejected). The tool did not run."),
    ]:
        driver = TurnDriver(Saying(message))
        record = driver.begin("c1", "rm", "local", "effect", {})
        driver.permission(record)
        assert record.error == f"Permission to run rm was {told}"


def test_plan_and_thoughts_reach_an_interaction_that_hears_them() -> None:
    rec = Recording(AllowAll())
    driver = TurnDriver(rec)
    driver.thought("Let me ")
    driver.thought("think.")
    driver.text("Answer.")
    driver.plan(
        [{"content": "read", "status": "completed"}, {"content": "write", "status": "pending"}]
    )
    result = driver.end()
    assert result.text == "Answer."
    assert result.thoughts == "Let me think."
    assert result.plan[1] == {"content": "write", "status": "pending"}
    assert [e.args[0] for e in rec.events if e.name == "thought_delta"] == ["Let me ", "think."]
    assert rec.names[-1] == "plan_updated"


def test_an_interaction_without_plans_and_thoughts_keeps_working() -> None:
    seen: list[str] = []

    class Plain(AllowAll):
        def text_delta(self, context: object, text: str) -> None:
            seen.append(text)

    driver = TurnDriver(Plain())
    driver.thought("hidden")
    driver.plan([{"content": "x", "status": "pending"}])
    driver.text("shown")
    assert driver.end().thoughts == "hidden"
    assert seen == ["shown"]


def test_callbacks_from_several_threads_run_one_at_a_time() -> None:
    rec = Recording(AllowAll())
    driver = TurnDriver(rec)

    def one(n: int) -> None:
        record = driver.begin(f"c{n}", "t", "s", "effect", {})
        driver.permission(record)
        driver.thought("t")
        driver.complete(record, "ok")

    threads = [threading.Thread(target=one, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not rec.overlapped
    assert len(rec.events) == 8 * 4
