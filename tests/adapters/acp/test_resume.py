"""Continuing an earlier session by its id: never a new session in its place."""

from __future__ import annotations

from pathlib import Path

import pytest

from mead_notebook import TurnError
from mead_notebook.adapters import acp
from mead_notebook.policies import AllowAll

from .conftest import Script

pytestmark = pytest.mark.timeout(60)


def test_a_sessions_id_is_the_agents(script: Script, tmp_path: Path) -> None:
    with acp.session(script.agent([[{"text": "hi"}]]), cwd=tmp_path) as session:
        assert session.id is None  # not opened before its first turn
        session.run("go", interaction=AllowAll())
        assert session.id == "s1"
        assert session.resumed_by is None


def test_an_agent_that_cannot_resume_fails_the_turn_and_starts_no_session(
    script: Script, tmp_path: Path
) -> None:
    """The scripted agent offers neither ``session/resume`` nor ``session/load``."""
    session = acp.session(script.agent([[{"text": "hi"}]]), cwd=tmp_path, resume="s0")
    assert session.id == "s0"
    with session, pytest.raises(TurnError, match="offers neither session/resume nor session/load"):
        session.run("go", interaction=AllowAll())
    assert script.events("new_session") == []
    assert script.events("prompt") == []


@pytest.mark.parametrize("given", ["", 42])
def test_resume_takes_a_session_id(script: Script, tmp_path: Path, given: object) -> None:
    with pytest.raises(TypeError, match="resume must be a session id"):
        acp.session(script.agent([]), cwd=tmp_path, resume=given)  # type: ignore[arg-type]


def test_an_agent_that_lists_no_sessions_says_so(script: Script, tmp_path: Path) -> None:
    with pytest.raises(acp.AgentError, match=r"does not list its sessions \(no session/list\)"):
        acp.sessions(script.agent([]), cwd=tmp_path)
    assert [e["event"] for e in script.events()] == ["initialize"]
