"""What the Claude Agent SDK tests share: a project folder, and the Claude CLI processes a test
started, none of which may outlive it."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest


@pytest.fixture(name="cwd")
def repo_folder(tmp_path: Path) -> Path:
    """An empty project folder for Claude Code to work in."""
    path = tmp_path / "repo"
    path.mkdir()
    return path


def command_line(process: psutil.Process) -> str:
    """``process``'s command line; empty once it has ended (it can end as it is read)."""
    try:
        return "" if process.status() == psutil.STATUS_ZOMBIE else " ".join(process.cmdline())
    except psutil.Error:
        return ""


def clis() -> list[psutil.Process]:
    """The Claude CLI processes this test process started that are still alive."""
    children = psutil.Process(os.getpid()).children(recursive=True)
    return [child for child in children if "claude" in command_line(child)]


@pytest.fixture(autouse=True, name="no_orphans")
def every_cli_ends() -> Iterator[None]:
    """Every Claude CLI a test started has ended within 10 s of its end."""
    yield
    deadline = time.monotonic() + 10
    while clis() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert clis() == []
