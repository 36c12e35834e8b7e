"""Outside a kernel, waiting is a plain bounded ``Event.wait``; what every kernel shares."""

from __future__ import annotations

import asyncio
import gc
import signal
import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from mead_notebook.notebook import waiting
from mead_notebook.notebook.waiting.common import Watched


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
    waiting.check()
    waiting.poll(probe)
    waiting.watch(probe)
    waiting.unwatch(probe)
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


def test_a_watched_widget_gets_only_custom_messages_and_is_dropped_when_gone() -> None:
    watched = Watched()
    changes: list[int] = []
    watched.subscribe(lambda: changes.append(len(watched)))
    probe = Probe()
    probe.comm = SimpleNamespace(comm_id="c1")
    watched.add(probe)
    watched.add(probe)
    assert watched.deliver("c1", {"method": "update", "state": {}}) is False
    assert watched.deliver("c2", {"method": "custom", "content": {"type": "x"}}) is False
    assert watched.deliver("c1", {"method": "custom", "content": {"type": "x"}}) is True
    assert probe.delivered == [{"type": "x"}]
    del probe
    gc.collect()
    assert len(watched) == 0
    assert changes == [1, 0]
