"""An agent that fails to start says why, where a preset knows the reason: Claude's agent
started with ``command=`` inherits ``IS_SANDBOX``, and as root Claude Code then refuses its
``session/new`` with a bare internal error."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from mead_notebook import TurnError
from mead_notebook.adapters import acp
from mead_notebook.policies import AllowAll

pytestmark = pytest.mark.timeout(60)

CLAUDE_LIKE = """#!{python}
# Fails session/new as claude-agent-acp does as root when IS_SANDBOX is set but not "1".
import os, sys
import acp
from mead_notebook.adapters.acp import scripted

opened = scripted._Scripted.new_session


async def new_session(self, cwd, **kwargs):
    if os.environ.get("IS_SANDBOX", "1") != "1":
        raise acp.RequestError.internal_error()
    return await opened(self, cwd, **kwargs)


scripted._Scripted.new_session = new_session
scripted.main(['[[{{"text": "started"}}]]'])
"""


@pytest.fixture
def claude(tmp_path: Path) -> Path:
    """A stand-in for ``claude-agent-acp``: the scripted agent, refusing as Claude does."""
    path = tmp_path / "bin" / "claude-agent-acp"
    path.parent.mkdir()
    path.write_text(CLAUDE_LIKE.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)


@pytest.mark.usefixtures("root")
def test_a_claude_command_under_is_sandbox_says_why_it_failed(
    claude: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IS_SANDBOX", "yes")
    spec = acp.agent(command=[str(claude)])
    with pytest.raises(TurnError) as failed:
        acp.run(spec, "hello", interaction=AllowAll(), cwd=tmp_path)
    said = str(failed.value)
    assert "while starting; IS_SANDBOX='yes' is in its environment" in said, said
    assert "acp.agent('claude') leaves IS_SANDBOX out" in said

    # The preset leaves it out, and the same program starts.
    preset = acp.agent("claude", executable=str(claude), env={"PATH": os.environ["PATH"]})
    assert acp.run(preset, "hello", interaction=AllowAll(), cwd=tmp_path).text == "started"


@pytest.mark.usefixtures("root")
def test_no_reason_is_made_up_for_another_failure(
    claude: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IS_SANDBOX", "1")
    assert (
        acp.run(
            acp.agent(command=[str(claude)]), "hello", interaction=AllowAll(), cwd=tmp_path
        ).text
        == "started"
    )
    monkeypatch.delenv("IS_SANDBOX")
    other = tmp_path / "bin" / "other-agent"
    other.write_text(f"#!{sys.executable}\nimport sys; sys.exit(3)\n")
    other.chmod(other.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("IS_SANDBOX", "yes")
    with pytest.raises(TurnError) as failed:
        acp.run(acp.agent(command=[str(other)]), "hello", interaction=AllowAll(), cwd=tmp_path)
    assert "exited with code 3 while starting" in str(failed.value)
    assert "IS_SANDBOX" not in str(failed.value)
