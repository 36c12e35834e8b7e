"""Helpers for the ACP adapter's tests: the scripted agent, its log, a person that records."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from mead_notebook.adapters import acp


class Script:
    """A scripted agent and the log of what it received."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.log = tmp / "agent.jsonl"

    def agent(self, turns: Sequence[Sequence[dict[str, Any]]], **options: Any) -> acp.AgentSpec:
        return acp.scripted_agent(turns, log=self.log, **options)

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        found = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [e for e in found if name is None or e["event"] == name]


@pytest.fixture
def script(tmp_path: Path) -> Script:
    return Script(tmp_path)
