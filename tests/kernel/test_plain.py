"""Outside a kernel, waiting is a plain bounded ``Event.wait``."""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from typing import Any

import pytest

from mead_notebook.notebook import waiting


class Probe:
    comm = None

    def __init__(self) -> None:
        self.delivered: list[dict[str, Any]] = []

    def deliver(self, content: dict[str, Any]) -> None:
        self.delivered.append(content)


def test_plain_python_uses_event_wait() -> None:
    assert waiting.mechanism() == "plain"
    event = threading.Event()
    started = time.monotonic()
    assert waiting.wait_for(Probe(), event, 0.05) is False
    assert time.monotonic() - started >= 0.05
    threading.Timer(0.02, event.set).start()
    assert waiting.wait_for(Probe(), event, 5.0) is True


def test_poll_and_serve_while_do_nothing_outside_a_kernel() -> None:
    probe = Probe()
    waiting.poll(probe)
    waiting.watch(probe)
    flag = threading.Event()
    threading.Timer(0.05, flag.set).start()
    asyncio.run(asyncio.wait_for(waiting.serve_while(flag.is_set, probe), 5.0))
    assert flag.is_set()
    assert probe.delivered == []


def pump_work(steps: list[str], *, in_handler: bool) -> None:
    """What the pump does when SIGINT arrives: in its own steps, or in a comm handler."""
    with waiting.interrupts_held() as interrupts:
        if in_handler:
            interrupts.handler_starts()
        try:
            signal.raise_signal(signal.SIGINT)
            steps.append("went on")
        except KeyboardInterrupt:
            steps.append("stopped")  # ipykernel swallows it around a comm handler
        interrupts.handler_ends()
        steps.append("the pump went on")


@pytest.mark.parametrize(
    ("in_handler", "expected"), [(False, "went on"), (True, "stopped")], ids=["pump", "handler"]
)
def test_an_interrupt_while_the_pump_works_is_raised_after_it(
    in_handler: bool, expected: str
) -> None:
    before = signal.getsignal(signal.SIGINT)
    steps: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        pump_work(steps, in_handler=in_handler)
    assert steps == [expected, "the pump went on"]
    assert signal.getsignal(signal.SIGINT) is before
