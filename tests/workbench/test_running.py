"""Running code as a cell would, in one thread, its output kept for that run alone."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mead_notebook import NoKernelError, Router, ScriptedModel, ToolCall, kernel_tools
from mead_notebook.policies import AllowAll
from mead_notebook.workbench import capture
from mead_notebook.workbench.execute import run_code
from mead_notebook.workbench.stopping import CodeCancelled, Guard, StopCode

pytestmark = pytest.mark.timeout(60)


def test_outside_a_kernel_the_tools_are_refused_clearly() -> None:
    with pytest.raises(NoKernelError, match="inside an IPython kernel"):
        kernel_tools()


def test_a_time_limit_must_be_positive(shell: Any) -> None:
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="positive number of seconds"):
            kernel_tools(bad)


def test_what_the_code_defines_stays_and_its_last_value_is_formatted(shell: Any) -> None:
    shell.user_ns["base"] = 40
    ran = run_code(shell, "answer = base + 2\nprint('set')\nanswer", Guard(), 1000)
    assert (ran.error, ran.stopped) == (None, None)
    assert shell.user_ns["answer"] == 42
    [printed, value] = ran.outputs
    assert (printed.name, printed.text) == ("stdout", "set\n")  # type: ignore[union-attr]
    assert value.data["text/plain"] == "42"  # type: ignore[union-attr]
    assert value.result  # type: ignore[union-attr]
    assert "_" not in shell.user_ns or shell.user_ns["_"] != 42, "Out and _ are left alone"


def test_top_level_await_runs(shell: Any) -> None:
    ran = run_code(shell, "import asyncio\nawait asyncio.sleep(0)\n'awaited'", Guard(), 1000)
    assert ran.outputs[-1].data["text/plain"] == "'awaited'"  # type: ignore[union-attr]


def test_a_raising_run_keeps_its_output_and_its_own_frames(shell: Any) -> None:
    ran = run_code(
        shell, "print('before')\ndef f():\n    raise ValueError('no')\nf()", Guard(), 1000
    )
    assert ran.error_name == "ValueError"
    assert ran.error is not None
    assert ran.error.startswith('Traceback (most recent call last):\n  File "<run_python-')
    assert "    raise ValueError('no')\n" in ran.error
    assert "execute.py" not in ran.error, "the tool's own frames are left out"
    assert ran.outputs[0].text == "before\n"  # type: ignore[union-attr]


def test_a_syntax_error_names_the_line(shell: Any) -> None:
    ran = run_code(shell, "x = 1\ny = (", Guard(), 1000)
    assert ran.error_name == "SyntaxError"
    assert ran.error is not None
    assert "line 2" in ran.error


def test_each_thread_keeps_its_own_output(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    results: dict[str, list[Any]] = {}
    go = threading.Barrier(3)

    def run(name: str) -> None:
        go.wait()
        code = f"for i in range(30):\n    print('{name}', i)"
        results[name] = run_code(shell, code, Guard(), 10_000).outputs

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    go.wait()
    for i in range(30):
        print("main", i)
    for t in threads:
        t.join(10)
    for name in ("a", "b"):
        [out] = results[name]
        assert out.text == "".join(f"{name} {i}\n" for i in range(30))
    printed = capsys.readouterr().out
    assert printed == "".join(f"main {i}\n" for i in range(30))


def test_a_capture_keeps_at_most_its_limit_and_counts_the_rest(shell: Any) -> None:
    ran = run_code(shell, "print('x' * 95)\nprint('y' * 50)", Guard(), 100)
    assert sum(len(o.text) for o in ran.outputs) == 100  # type: ignore[union-attr]
    assert ran.dropped == 47


def test_a_display_and_clear_output_stay_in_the_run(shell: Any) -> None:
    code = (
        "from IPython.display import display, clear_output\n"
        "display('first')\nclear_output()\nh = display('second', display_id=True)\n"
        "h.update('third')"
    )
    ran = run_code(shell, code, Guard(), 1000)
    assert [o.data["text/plain"] for o in ran.outputs] == ["'third'"]  # type: ignore[union-attr]


def test_a_figure_left_open_becomes_an_image_and_is_closed(shell: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.close("all")
    kept = plt.figure()
    code = "import matplotlib.pyplot as plt\nplt.figure()\nplt.plot([1, 2])"
    ran = run_code(shell, code, Guard(), 1000)
    images = [o for o in ran.outputs if "image/png" in o.data]  # type: ignore[union-attr]
    assert len(images) == 1
    assert plt.get_fignums() == [kept.number], "only the run's own figure is closed"
    plt.close("all")


def test_a_guard_stops_a_loop_and_nothing_lands_after(shell: Any) -> None:
    guard = Guard()
    done: list[Any] = []
    worker = threading.Thread(
        target=lambda: done.append(run_code(shell, "while True:\n    pass", guard, 100))
    )
    worker.start()
    time.sleep(0.2)
    started = time.monotonic()
    guard.stop(CodeCancelled)
    worker.join(5)
    assert time.monotonic() - started < 1.0
    assert done[0].stopped == "cancelled"
    time.sleep(0.6)  # a second attempt would land here if the guard still aimed at the thread


def test_a_guard_stopped_before_its_code_starts_never_runs_it() -> None:
    guard = Guard()
    guard.stop(CodeCancelled)
    with pytest.raises(StopCode), guard.running():
        raise AssertionError("the code ran")


def test_code_that_catches_the_stop_is_stopped_again(shell: Any) -> None:
    guard = Guard()
    code = (
        "caught = 0\nwhile True:\n    try:\n        while True:\n            pass\n"
        "    except BaseException:\n        caught += 1\n        if caught > 2:\n            raise"
    )
    done: list[Any] = []
    worker = threading.Thread(target=lambda: done.append(run_code(shell, code, guard, 100)))
    worker.start()
    time.sleep(0.2)
    guard.stop(CodeCancelled)
    worker.join(5)
    assert done[0].stopped == "cancelled"
    assert shell.user_ns["caught"] == 3


def test_other_threads_print_through_a_hooked_stream(
    shell: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    capture.install(shell)
    print("plain")
    assert capsys.readouterr().out == "plain\n"


def test_the_tools_through_the_router(shell: Any) -> None:
    shell.user_ns["numbers"] = [3, 1, 2]
    calls = [
        ToolCall("list_variables", {}),
        ToolCall("run_python", {"code": "numbers.sort()\nnumbers"}),
        ToolCall("describe_variable", {"name": "missing"}),
        ToolCall("notebook_history", {"last": 0}),
    ]
    router = Router(ScriptedModel([calls, ["done"]]), tools=kernel_tools(timeout=5))
    result = router.run("go", interaction=AllowAll())
    outcomes = [(c.tool, c.status, c.outcome) for c in result.calls]
    assert outcomes == [
        ("list_variables", "completed", None),
        ("run_python", "completed", None),
        ("describe_variable", "failed", "error"),
        ("notebook_history", "failed", "invalid_arguments"),
    ]
    assert "numbers  list  3 items" in (result.calls[0].result or "")
    assert result.calls[1].result == "Out:\n[1, 2, 3]"
    assert "no variable named 'missing'" in (result.calls[2].error or "")
