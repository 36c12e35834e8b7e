from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from typing import Any

import comm
import pytest
from fakes import RecordingComm
from servers.provider_server import ProviderServer

from mead_notebook import NotebookInteraction


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C raises KeyboardInterrupt in the tests that interrupt themselves, as in a
    kernel, also where pytest was started in the background (SIGINT ignored)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    """A fake model provider on loopback, speaking the providers' streaming formats."""
    with ProviderServer() as s:
        yield s


@pytest.fixture
def comms(monkeypatch: pytest.MonkeyPatch) -> list[RecordingComm]:
    created: list[RecordingComm] = []

    def create(*args: Any, **kwargs: Any) -> RecordingComm:
        c = RecordingComm(**kwargs)
        created.append(c)
        return c

    monkeypatch.setattr(comm, "create_comm", create)
    return created


@pytest.fixture
def make(
    comms: list[RecordingComm],
) -> Iterator[Callable[..., tuple[NotebookInteraction, RecordingComm]]]:
    widgets: list[NotebookInteraction] = []

    def build(**kwargs: Any) -> tuple[NotebookInteraction, RecordingComm]:
        kwargs.setdefault("grace", 0.2)
        w = NotebookInteraction(**kwargs)
        widgets.append(w)
        return w, comms[-1]

    yield build
    for w in widgets:
        w.interrupt(None)
        w.close()
