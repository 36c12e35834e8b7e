from __future__ import annotations

import _thread
import asyncio
import logging
import signal
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from mead_notebook import (
    Allow,
    Call,
    Deny,
    Message,
    Picked,
    Router,
    ScriptedModel,
    ToolCall,
    TurnError,
    Unanswered,
    tool,
)
from mead_notebook.driver import SHORT, TurnDriver
from mead_notebook.interaction import DefaultTurnHooks
from mead_notebook.policies import AllowAll, AllowReads, DenyAll, Recording
from mead_notebook.router import UnaskedWarning
from mead_notebook.turn import Turn

log: list[tuple[str, str]] = []


@tool(read_only=True)
def read_file(path: str) -> str:
    """Read a text file."""
    log.append(("tool", threading.current_thread().name))
    return f"contents of {path}"


@tool
def write_file(path: str, text: str = "") -> str:
    """Write a text file."""
    log.append(("tool", threading.current_thread().name))
    return f"wrote {len(text)} characters to {path}"


@tool
def explode() -> None:
    """Always fails."""
    raise OSError("disk on fire")


def script(*replies: list[Any]) -> ScriptedModel:
    return ScriptedModel([list(r) for r in replies])


def updates(rec: Recording) -> list[dict[str, Any]]:
    return [e.args[0] for e in rec.events if e.name == "tool_updated"]


@pytest.fixture(autouse=True)
def _clear_log() -> None:
    log.clear()


def test_allowed_call_follows_the_contract_in_order() -> None:
    rec = Recording(AllowAll())
    router = Router(
        script(["Writing. ", ToolCall("write_file", {"path": "a.txt", "text": "hi"})], ["Done."]),
        tools=[write_file],
    )
    result = router.run("write", interaction=rec)

    assert rec.names == [
        "text_delta",
        "tool_updated",
        "request_permission",
        "register_call",
        "tool_updated",
        "tool_updated",
        "text_delta",
    ]
    pending, running, final = updates(rec)
    assert pending["status"] == "pending"
    assert pending["cancellable"] is False
    assert running["status"] == "in_progress"
    assert running["cancellable"] is True
    assert final["status"] == "completed"
    assert final["cancellable"] is False
    assert {u["tool_call_id"] for u in (pending, running, final)} == {"call_1"}
    request = dict(rec.events[2].args[0])
    assert callable(request.pop("preview"))  # what edited arguments would do
    assert request == {
        "tool_call_id": "call_1",
        "tool": "write_file",
        "server": "local",
        "class": "effect",
        "arguments": {"path": "a.txt", "text": "hi"},
        "parameters": write_file.parameters,
        "kind": "other",
    }
    tool_call_id, call = rec.events[3].args
    assert tool_call_id == "call_1"
    assert isinstance(call, Call)
    assert result.calls[0].status == "completed"
    assert result.calls[0].result == "wrote 2 characters to a.txt"
    assert result.messages[2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "wrote 2 characters to a.txt",
        "is_error": False,
    }
    assert result.text == "Writing. Done."
    assert result.stop_reason == "end_turn"


def test_every_callback_runs_in_the_turns_thread_one_at_a_time() -> None:
    rec = Recording(AllowAll())
    router = Router(
        script(
            ["a", ToolCall("read_file", {"path": "x"}), ToolCall("write_file", {"path": "y"})],
            ["b", ToolCall("ask_user", {"prompt": "?", "options": [{"id": "o", "label": "O"}]})],
            ["c"],
        ),
        tools=[read_file, write_file],
    )
    router.run("go", interaction=rec)
    assert {e.thread_id for e in rec.events} == {threading.get_ident()}
    assert not rec.overlapped
    # the tools themselves run in threads of their own
    assert [name for _, name in log] == ["mead-tool-read_file", "mead-tool-write_file"]

    rec2 = Recording(AllowAll())
    turn = Router(script(["a", ToolCall("read_file", {"path": "x"})], ["b"]), tools=[read_file])
    handle = turn.start("go", interaction=rec2)
    handle.result(timeout=10)
    threads = {e.thread_id for e in rec2.events}
    assert len(threads) == 1
    assert threads != {threading.get_ident()}
    assert not rec2.overlapped


def test_the_tool_runs_between_in_progress_and_the_final_update() -> None:
    order: list[str] = []

    class Watch(AllowAll):
        def tool_updated(self, context: Any, update: Any) -> None:
            order.append(update["status"])

    @tool
    def mark() -> str:
        order.append("tool")
        return "ok"

    Router(script([ToolCall("mark")], ["."]), tools=[mark]).run("go", interaction=Watch())
    assert order == ["pending", "in_progress", "tool", "completed"]


@pytest.mark.parametrize(
    ("decision", "reason", "outcome"),
    [
        (Deny("rejected"), "rejected", "denied"),
        (Deny("expired"), "expired", "expired"),
        (Deny("interrupted"), "interrupted", "interrupted"),
    ],
)
def test_a_denied_call_never_runs_and_the_model_hears_why(
    decision: Deny, reason: str, outcome: str
) -> None:
    class Refuse(AllowAll):
        def request_permission(self, context: Any, request: Any) -> Deny:
            return decision

    seen: list[Sequence[Message]] = []

    def model_fn(messages: Sequence[Message]) -> list[Any]:
        seen.append(list(messages))
        if len(seen) == 1:
            return [ToolCall("write_file", {"path": "a"})]
        return ["ok"]

    rec = Recording(Refuse())
    result = Router(ScriptedModel(model_fn), tools=[write_file]).run("go", interaction=rec)
    assert log == []
    assert rec.names == ["tool_updated", "request_permission", "tool_updated", "text_delta"]
    final = updates(rec)[-1]
    assert (final["status"], final.get("outcome")) == ("failed", outcome)
    tool_result = seen[1][-1]
    assert tool_result["role"] == "tool"
    assert tool_result["is_error"] is True
    assert reason in tool_result["content"]
    assert "denied" in tool_result["content"]
    assert final.get("error") == tool_result["content"] == result.calls[0].error
    assert result.calls[0].outcome == outcome


def test_a_deny_message_reaches_the_model() -> None:
    class Refuse(AllowAll):
        def request_permission(self, context: Any, request: Any) -> Deny:
            return Deny("rejected", "use the staging folder instead")

    result = Router(
        script([ToolCall("write_file", {"path": "a"})], ["ok"]), tools=[write_file]
    ).run("go", interaction=Refuse())
    assert "use the staging folder instead" in result.messages[2]["content"]


@pytest.mark.parametrize(
    ("call", "expected", "outcome"),
    [
        (ToolCall("wirte_file", {"path": "a"}), "no tool named 'wirte_file'", "unknown"),
        (ToolCall("write_file", {}), "path", "invalid_arguments"),
        (ToolCall("write_file", {"path": 3}), "path", "invalid_arguments"),
        (ToolCall("write_file", {"path": "a", "mode": "w"}), "mode", "invalid_arguments"),
        (
            ToolCall("write_file", ["a"]),  # type: ignore[arg-type]
            "arguments must be an object",
            "invalid_arguments",
        ),
    ],
)
def test_a_wrong_tool_or_bad_arguments_fail_without_asking(
    call: ToolCall, expected: str, outcome: str
) -> None:
    rec = Recording(AllowAll())
    result = Router(script([call], ["sorry"]), tools=[write_file]).run("go", interaction=rec)
    assert rec.names == ["tool_updated", "tool_updated", "text_delta"]
    pending, final = updates(rec)
    assert pending["status"] == "pending"
    assert pending.get("tool") == call.name
    assert (final["status"], final.get("outcome")) == ("failed", outcome)
    assert log == []
    tool_result = result.messages[2]
    assert tool_result["is_error"] is True
    assert expected in tool_result["content"]
    assert final.get("error") == tool_result["content"]
    assert (result.calls[0].status, result.calls[0].outcome) == ("failed", outcome)


def test_ask_user_calls_ask_choice_and_nothing_else() -> None:
    class Pick(AllowAll):
        def ask_choice(self, context: Any, choice: Any) -> Picked:
            return Picked("b")

    rec = Recording(Pick())
    options = [{"id": "a", "label": "Apples"}, {"id": "b", "label": "Bananas"}]
    result = Router(
        script([ToolCall("ask_user", {"prompt": "Which?", "options": options})], ["fine"])
    ).run("go", interaction=rec)
    assert rec.names == ["tool_updated", "ask_choice", "tool_updated", "text_delta"]
    pending, final = updates(rec)
    assert (pending["status"], pending.get("tool"), pending.get("class")) == (
        "pending",
        "ask_user",
        "read",
    )
    assert (final["status"], final.get("outcome")) == ("completed", None)
    assert "Bananas" in (final.get("result") or "")
    assert rec.events[1].args[0] == {
        "tool_call_id": "call_1",
        "prompt": "Which?",
        "options": options,
    }
    tool_result = result.messages[2]
    assert tool_result["is_error"] is False
    assert '"option_id": "b"' in tool_result["content"]
    assert "Bananas" in tool_result["content"]


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (Unanswered("expired"), "expired"),
        (Unanswered("no_answer"), "no_answer"),
        (Picked("zzz"), "no_answer"),
        ("yes", "no_answer"),
    ],
)
def test_an_unanswered_question_is_an_error_naming_why(answer: object, reason: str) -> None:
    class Shrug(AllowAll):
        def ask_choice(self, context: Any, choice: Any) -> Any:
            return answer

    options = [{"id": "a", "label": "A"}]
    result = Router(script([ToolCall("ask_user", {"prompt": "?", "options": options})], ["k"])).run(
        "go", interaction=Shrug()
    )
    assert result.messages[2]["is_error"] is True
    assert reason in result.messages[2]["content"]
    assert (result.calls[0].status, result.calls[0].outcome) == ("failed", reason)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"prompt": "?", "options": []}, "options"),
        ({"prompt": "?"}, "options"),
        ({"prompt": "", "options": [{"id": "a", "label": "A"}]}, "prompt"),
        (
            {"prompt": "?", "options": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]},
            "duplicate option id 'a'",
        ),
        ({"prompt": "?", "options": [{"id": "a"}]}, "label"),
        ({"prompt": "?", "options": ["a", "b"]}, "option"),
    ],
)
def test_malformed_ask_user_is_an_error_and_nobody_is_asked(
    arguments: dict[str, Any], expected: str
) -> None:
    rec = Recording(AllowAll())
    result = Router(script([ToolCall("ask_user", arguments)], ["k"])).run("go", interaction=rec)
    assert "ask_choice" not in rec.names
    assert result.messages[2]["is_error"] is True
    assert expected in result.messages[2]["content"]
    assert result.calls[0].outcome == "invalid_arguments"


def test_a_streaming_model_sends_every_fragment_in_order() -> None:
    fragments = [f"w{i} " for i in range(50)]
    rec = Recording(AllowAll())
    result = Router(script(fragments)).run("go", interaction=rec)
    assert [e.args[0] for e in rec.events] == fragments
    assert result.text == "".join(fragments)


def test_a_model_that_cannot_stream_never_causes_a_text_delta() -> None:
    rec = Recording(AllowAll())
    model = ScriptedModel(
        [["a", "b", ToolCall("read_file", {"path": "p"})], ["c"]], streaming=False
    )
    result = Router(model, tools=[read_file]).run("go", interaction=rec)
    assert "text_delta" not in rec.names
    assert result.text == "abc"


def test_without_an_interaction_tools_run_unasked_and_questions_get_no_answer() -> None:
    options = [{"id": "a", "label": "A"}]
    result = Router(
        script(
            [
                ToolCall("write_file", {"path": "p"}),
                ToolCall("ask_user", {"prompt": "?", "options": options}),
            ],
            ["k"],
        ),
        tools=[write_file],
    ).run("go")
    assert result.calls[0].status == "completed"
    assert log == [("tool", "mead-tool-write_file")]
    assert result.messages[3]["is_error"] is True
    assert "no_answer" in result.messages[3]["content"]


def test_a_tool_that_raises_fails_with_its_error_and_the_turn_goes_on() -> None:
    rec = Recording(AllowAll())
    result = Router(script([ToolCall("explode")], ["recovered"]), tools=[explode]).run(
        "go", interaction=rec
    )
    final = updates(rec)[-1]
    assert (final["status"], final.get("outcome")) == ("failed", "error")
    assert "OSError: disk on fire" in (final.get("error") or "")
    assert "OSError: disk on fire" in result.messages[2]["content"]
    assert result.calls[0].outcome == "error"
    assert result.messages[2]["is_error"] is True
    assert result.text == "recovered"


def test_cancel_ends_a_call_promptly_even_if_the_tool_ignores_it() -> None:
    release = threading.Event()

    @tool
    def stubborn() -> str:
        """Ignores cancellation."""
        release.wait(30)
        return "too late"

    class CancelSoon(AllowAll):
        def register_call(self, context: Any, tool_call_id: str, call: Call) -> None:
            threading.Timer(0.2, call.cancel).start()

    rec = Recording(CancelSoon())
    started = time.monotonic()
    try:
        result = Router(script([ToolCall("stubborn")], ["ok"]), tools=[stubborn]).run(
            "go", interaction=rec
        )
    finally:
        release.set()
    assert time.monotonic() - started < 5
    final = updates(rec)[-1]
    assert (final["status"], final.get("outcome")) == ("failed", "cancelled")
    assert final.get("error") == result.messages[2]["content"]
    assert result.calls[0].outcome == "cancelled"


def test_a_tool_taking_a_call_reports_progress_and_sees_cancellation() -> None:
    saw_cancel = threading.Event()

    @tool
    def crawl(pages: int, call: Call) -> str:
        """Crawl some pages."""
        for i in range(pages):
            call.progress(i / pages, f"page {i + 1}")
            if call.wait_cancelled(0.02):
                saw_cancel.set()
                return "stopped"
        return "all done"

    assert "call" not in crawl.parameters["properties"]
    rec = Recording(AllowAll())
    Router(script([ToolCall("crawl", {"pages": 4})], ["ok"]), tools=[crawl]).run(
        "go", interaction=rec
    )
    running = [u for u in updates(rec) if u["status"] == "in_progress"]
    assert [u["current_step"] for u in running] == [None, "page 1", "page 2", "page 3", "page 4"]
    assert [u["progress"] for u in running] == [None, 0.0, 0.25, 0.5, 0.75]
    assert all(u["cancellable"] for u in running)

    class CancelOnProgress(AllowAll):
        def tool_updated(self, context: Any, update: Any) -> None:
            if update["current_step"] == "page 2":
                self.call.cancel()

        def register_call(self, context: Any, tool_call_id: str, call: Call) -> None:
            self.call = call

    result = Router(script([ToolCall("crawl", {"pages": 50})], ["ok"]), tools=[crawl]).run(
        "go", interaction=CancelOnProgress()
    )
    assert saw_cancel.wait(5)
    assert result.calls[0].outcome == "cancelled"


def test_a_raising_request_permission_counts_as_rejected(caplog: pytest.LogCaptureFixture) -> None:
    class Broken(AllowAll):
        def request_permission(self, context: Any, request: Any) -> Allow:
            raise RuntimeError("boom")

    with caplog.at_level(logging.ERROR, logger="mead_notebook.driver"):
        result = Router(
            script([ToolCall("write_file", {"path": "p"})], ["k"]), tools=[write_file]
        ).run("go", interaction=Broken())
    assert log == []
    assert (result.calls[0].outcome, result.messages[2]["is_error"]) == ("denied", True)
    assert result.calls[0].error == result.messages[2]["content"]
    assert "request_permission raised" in caplog.text


def test_a_non_decision_from_request_permission_is_denied() -> None:
    class Sloppy(AllowAll):
        def request_permission(self, context: Any, request: Any) -> Any:
            return True

    result = Router(script([ToolCall("write_file", {"path": "p"})], ["k"]), tools=[write_file]).run(
        "go", interaction=Sloppy()
    )
    assert log == []
    assert result.calls[0].outcome == "denied"


@pytest.mark.parametrize("name", ["tool_updated", "register_call", "text_delta", "ask_choice"])
def test_other_raising_callbacks_are_logged_and_the_turn_goes_on(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(AllowAll):
        pass

    def boom(*args: Any) -> None:
        raise RuntimeError("boom")

    broken = Broken()
    setattr(broken, name, boom)
    options = [{"id": "a", "label": "A"}]
    with caplog.at_level(logging.ERROR, logger="mead_notebook.driver"):
        result = Router(
            script(
                [
                    "x",
                    ToolCall("write_file", {"path": "p"}),
                    ToolCall("ask_user", {"prompt": "?", "options": options}),
                ],
                ["done"],
            ),
            tools=[write_file],
        ).run("go", interaction=broken)
    assert result.calls[0].status == "completed"
    assert result.text == "xdone"
    assert f"interaction.{name} raised" in caplog.text or f"{name} raised" in caplog.text


def test_a_model_that_keeps_calling_tools_stops_after_max_rounds() -> None:
    model = ScriptedModel(lambda messages: ["again ", ToolCall("read_file", {"path": "p"})])
    result = Router(model, tools=[read_file], max_rounds=3).run("go", interaction=AllowAll())
    assert result.stop_reason == "max_rounds"
    assert result.rounds == 3
    assert len(result.calls) == 3
    with pytest.raises(ValueError, match="max_rounds"):
        Router(model, max_rounds=0)


def test_running_past_the_script_is_a_clear_error_that_keeps_the_text() -> None:
    router = Router(script(["first ", ToolCall("read_file", {"path": "p"})]), tools=[read_file])
    with pytest.raises(TurnError, match="script has no reply left") as info:
        router.run("go")
    assert info.value.result.text == "first "
    assert info.value.result.calls[0].status == "completed"


def test_a_model_that_breaks_mid_stream_ends_the_turn_with_its_text() -> None:
    class Flaky:
        name = "flaky"
        streaming = True

        def reply(self, messages: Any, tools: Any) -> Any:
            yield "partial "
            raise ConnectionError("connection dropped")

    with pytest.raises(TurnError, match="flaky: ConnectionError: connection dropped") as info:
        Router(Flaky()).run("go", interaction=AllowAll())
    assert info.value.result.text == "partial "


def test_a_hanging_tool_times_out_and_the_turn_goes_on() -> None:
    release = threading.Event()

    @tool
    def hang(call: Call) -> str:
        release.wait(30)
        return "never"

    try:
        result = Router(
            script([ToolCall("hang")], ["moving on"]), tools=[hang], tool_timeout=0.3
        ).run("go", interaction=AllowAll())
    finally:
        release.set()
    assert result.calls[0].outcome == "timeout"
    assert "did not finish within 0.3 s" in result.messages[2]["content"]
    assert result.text == "moving on"


def test_keyboard_interrupt_cancels_running_calls_and_propagates() -> None:
    handles: list[Call] = []
    stopped = threading.Event()

    @tool
    def slow(call: Call) -> str:
        handles.append(call)
        call.wait_cancelled(30)
        stopped.set()
        return "stopped"

    rec = Recording(AllowAll())
    threading.Timer(0.3, _thread.interrupt_main).start()
    with pytest.raises(KeyboardInterrupt):
        Router(script([ToolCall("slow")], ["never"]), tools=[slow]).run("go", interaction=rec)
    assert handles[0].cancelled
    assert stopped.wait(5)
    final = updates(rec)[-1]
    assert (final["status"], final.get("outcome")) == ("failed", "interrupted")


def test_a_turn_whose_thread_does_not_start_frees_what_it_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    freed: list[str] = []

    def refuse(thread: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    with pytest.raises(RuntimeError, match="can't start new thread"):
        Turn(lambda: "ran", driver=TurnDriver(), cancel=list, unstarted=lambda: freed.append("x"))
    assert freed == ["x"]


def test_an_interrupt_as_a_turn_starts_cancels_it_and_leaves_the_freeing_to_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Once the thread runs, ``work`` frees what the turn holds: ``unstarted`` must not too."""
    freed: list[str] = []
    cancelled = threading.Event()
    start = threading.Thread.start

    def start_then_interrupt(thread: threading.Thread) -> None:
        start(thread)
        _thread.interrupt_main()

    def work() -> str:
        try:
            cancelled.wait(10)
            return "stopped"
        finally:
            freed.append("by the turn")

    monkeypatch.setattr(threading.Thread, "start", start_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        Turn(
            work,
            driver=TurnDriver(),
            cancel=cancelled.set,
            unstarted=lambda: freed.append("unstarted"),
        )
    assert cancelled.is_set()
    assert freed == ["by the turn"]


def test_an_interrupt_first_seen_inside_a_finalizer_still_ends_the_waited_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pyzmq checks for signals as it frees a message, a finalizer whose exception Python
    drops: an interrupt first seen there, while the main thread waits, must still end the turn."""

    class Freed:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGINT)  # lands as the object is freed

    cancelled = threading.Event()
    driver = TurnDriver()
    idles: list[None] = []

    def idle() -> None:
        if not idles:
            idles.append(None)
            Freed()

    monkeypatch.setattr(driver, "idle", idle)
    turn = Turn(
        lambda: "stopped" if cancelled.wait(10) else "ran on", driver=driver, cancel=cancelled.set
    )
    with pytest.raises(KeyboardInterrupt):
        turn.result(timeout=5)
    assert idles == [None]
    assert cancelled.is_set()
    assert turn.result(timeout=5) == "stopped"


def test_keyboard_interrupt_while_asking_closes_the_call() -> None:
    class Freeze(AllowAll):
        def request_permission(self, context: Any, request: Any) -> Allow:
            raise KeyboardInterrupt

    rec = Recording(Freeze())
    with pytest.raises(KeyboardInterrupt):
        Router(script([ToolCall("write_file", {"path": "p"})]), tools=[write_file]).run(
            "go", interaction=rec
        )
    assert log == []
    assert updates(rec)[-1]["status"] == "failed"


def test_history_carries_the_conversation_into_the_next_turn() -> None:
    seen: list[list[Message]] = []

    def model_fn(messages: Sequence[Message]) -> list[Any]:
        seen.append(list(messages))
        return [f"reply {len(seen)}"]

    router = Router(ScriptedModel(model_fn), system="Be brief.")
    first = router.run("one")
    second = router.run("two", history=first.messages)
    assert seen[0][0] == {"role": "system", "content": "Be brief."}
    assert [m["content"] for m in seen[1]] == ["Be brief.", "one", "reply 1", "two"]
    assert [m["role"] for m in second.messages] == ["user", "assistant", "user", "assistant"]


def test_start_returns_at_once_and_the_turn_can_be_awaited_or_waited_for() -> None:
    gate = threading.Event()

    @tool
    def gated() -> str:
        gate.wait(10)
        return "open"

    router = Router(script([ToolCall("gated")], ["done"]), tools=[gated])
    turn = router.start("go", interaction=AllowAll())
    assert not turn.done()
    with pytest.raises(TimeoutError):
        turn.result(timeout=0.1)
    gate.set()
    assert turn.result(timeout=10).text == "done"

    async def main() -> str:
        again = Router(script(["async ", "turn"]))
        res = await again.arun("go", interaction=AllowAll())
        started = Router(script(["bg"])).start("x")
        return res.text + "|" + (await asyncio.wait_for(_await(started), 10)).stop_reason

    async def _await(t: Any) -> Any:
        return await t

    assert asyncio.run(main()) == "async turn|end_turn"


def test_cancelling_a_turn_wakes_the_open_question_and_ends_it_interrupted() -> None:
    class Waiting(AllowAll, DefaultTurnHooks):
        def __init__(self) -> None:
            self.asked = threading.Event()
            self.wake = threading.Event()
            self.interrupted_from: str | None = None

        def request_permission(self, context: Any, request: Any) -> Deny:
            self.asked.set()
            self.wake.wait(10)
            return Deny("rejected")

        def interrupt(self, context: Any) -> None:
            self.interrupted_from = threading.current_thread().name
            self.wake.set()

    waiting = Waiting()
    turn = Router(
        script([ToolCall("write_file", {"path": "p"})], ["never"]), tools=[write_file]
    ).start("go", interaction=waiting)
    assert waiting.asked.wait(5)
    turn.cancel()
    result = turn.result(timeout=5)
    assert result.stop_reason == "interrupted"
    assert waiting.interrupted_from == threading.current_thread().name
    assert log == []
    assert result.calls[0].status == "failed"
    # the history stays usable: every tool call has a result
    assert result.messages[-1]["role"] == "tool"


def test_an_async_cell_cancelled_while_awaiting_cancels_the_turn() -> None:
    calls: list[Call] = []

    @tool
    def slow(call: Call) -> str:
        calls.append(call)
        call.wait_cancelled(30)
        return "stopped"

    async def main() -> None:
        router = Router(script([ToolCall("slow")], ["never"]), tools=[slow])
        task = asyncio.ensure_future(router.arun("go", interaction=AllowAll()))
        for _ in range(100):
            if calls:
                break
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert calls[0].cancelled


def test_tool_names_must_be_unique_and_ask_user_is_reserved() -> None:
    @tool(name="ask_user")
    def mine() -> str:
        return ""

    with pytest.raises(ValueError, match="router's own tool"):
        Router(script([]), tools=[mine])
    with pytest.raises(ValueError, match="two tools are named 'read_file'"):
        Router(script([]), tools=[read_file, read_file])


def test_policies_decide_by_class_and_stand_in_for_a_person() -> None:
    rec = Recording(AllowReads())
    result = Router(
        script(
            [ToolCall("read_file", {"path": "p"}), ToolCall("write_file", {"path": "q"})], ["k"]
        ),
        tools=[read_file, write_file],
    ).run("go", interaction=rec)
    assert [c.status for c in result.calls] == ["completed", "failed"]
    assert [c.outcome for c in result.calls] == [None, "denied"]
    assert [e.result for e in rec.events if e.name == "request_permission"] == [Allow(), Deny()]
    result = Router(script([ToolCall("read_file", {"path": "p"})], ["k"]), tools=[read_file]).run(
        "go", interaction=DenyAll()
    )
    assert result.calls[0].outcome == "denied"


def test_the_call_carries_its_result_or_error_by_the_final_update() -> None:
    seen: dict[str, tuple[Any, ...]] = {}

    class Watch(AllowAll):
        def tool_updated(self, context: Any, update: Any) -> None:
            if update["status"] in ("completed", "failed"):
                seen[update["tool_call_id"]] = (
                    update["outcome"],
                    update["result"],
                    update["error"],
                )

    result = Router(
        script([ToolCall("write_file", {"path": "a", "text": "xy"}), ToolCall("explode")], ["k"]),
        tools=[write_file, explode],
    ).run("go", interaction=Watch())
    assert seen["call_1"] == (None, "wrote 2 characters to a", None)
    assert seen["call_2"] == ("error", None, "explode failed: OSError: disk on fire")
    assert [(c.outcome, c.result, c.error) for c in result.calls] == list(seen.values())


def test_a_long_result_reaches_the_update_short_and_the_record_whole() -> None:
    @tool
    def long() -> str:
        return "x" * 5000

    finals: list[Any] = []

    class Watch(AllowAll):
        def tool_updated(self, context: Any, update: Any) -> None:
            if update["status"] == "completed":
                finals.append(update)

    result = Router(script([ToolCall("long")], ["k"]), tools=[long]).run("go", interaction=Watch())
    assert len(finals[0]["result"]) == SHORT
    assert finals[0]["result"].endswith("…")
    assert result.calls[0].result == "x" * 5000


def test_a_reused_call_id_gets_a_card_and_a_question_of_its_own() -> None:
    """Each call under a repeated id is asked for itself; the model hears back under its id."""
    seen: list[Sequence[Message]] = []

    def model_fn(messages: Sequence[Message]) -> list[Any]:
        seen.append(list(messages))
        if len(seen) == 1:
            return [ToolCall("write_file", {"path": "a.txt", "text": "one"}, "same")]
        if len(seen) == 2:
            return [ToolCall("write_file", {"path": "b.txt", "text": "two"}, "same")]
        return ["ok"]

    rec = Recording(AllowAll())
    result = Router(ScriptedModel(model_fn), tools=[write_file]).run("go", interaction=rec)
    asked = [e.args[0] for e in rec.events if e.name == "request_permission"]
    assert [r["arguments"]["path"] for r in asked] == ["a.txt", "b.txt"]
    assert [r["tool_call_id"] for r in asked] == ["same", "same~2"]
    cards = {u["tool_call_id"] for u in updates(rec)}
    assert cards == {"same", "same~2"}
    assert [c.source_id for c in result.calls] == ["same", "same"]
    replies = [m for m in seen[2] if m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in replies] == ["same", "same"]


def test_a_turn_without_an_interaction_outside_a_kernel_says_nothing(
    recwarn: pytest.WarningsRecorder,
) -> None:
    Router(ScriptedModel([["plain"]])).run("hi")
    assert [w for w in recwarn if issubclass(w.category, UnaskedWarning)] == []
