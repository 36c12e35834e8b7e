"""The opencode preset: the configuration that makes OpenCode ask, in a folder of the preset's
own; the project's settings kept out unless asked; a password on OpenCode's own server."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from mead_notebook.adapters import acp
from mead_notebook.adapters.acp import _opencode

from .test_presets import program


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    folder = tmp_path / "bin"
    program(folder, "opencode")
    return folder


def config_of(spec: acp.AgentSpec) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(Path(spec.env["OPENCODE_CONFIG"]).read_text())
    return loaded


def test_opencode_asks_before_every_tool_that_acts(tools: Path) -> None:
    spec = acp.agent("opencode", env={"PATH": str(tools)})
    assert spec.command == (str(tools / "opencode"), "acp")
    assert (spec.mode, spec.forward_always, spec.package) == (None, False, "opencode-ai")
    assert spec.late_input == _opencode.LATE_QUESTION
    permission = config_of(spec)["permission"]
    assert isinstance(permission, dict)
    # OpenCode takes the last rule that matches: everything asks, then the reads are allowed.
    assert next(iter(permission)) == "*"
    asked = ("*", "edit", "bash", "webfetch", "websearch", "task", "external_directory")
    assert {name: permission[name] for name in asked} == dict.fromkeys(asked, "ask")
    assert {name: permission[name] for name in ("glob", "grep", "list")} == dict.fromkeys(
        ("glob", "grep", "list"), "allow"
    )
    assert permission["read"] == {
        "*": "allow",
        "*.env": "ask",
        "*.env.*": "ask",
        "*.env.example": "allow",
    }
    assert spec.info("build") == {"agent": "opencode", "mode": "build", "settings": "user"}


def test_its_configuration_is_its_own_and_written_again_before_each_start(
    tools: Path, tmp_path: Path
) -> None:
    spec = acp.agent("opencode", env={"PATH": str(tools)})
    path = Path(spec.env["OPENCODE_CONFIG"])
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    written = path.read_text()
    other = acp.agent("opencode", env={"PATH": str(tools)})
    assert Path(other.env["OPENCODE_CONFIG"]).parent != path.parent
    path.write_text(json.dumps({"permission": "allow"}))
    assert spec.command_in(str(tmp_path)) == (str(tools / "opencode"), "acp")
    assert path.read_text() == written
    path.unlink()
    path.parent.rmdir()
    spec.command_in(str(tmp_path))
    assert path.read_text() == written
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_opencode_loads_the_persons_settings_only_unless_asked(
    tools: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the kernel's environment says is neither inherited nor kept.
    monkeypatch.setenv("OPENCODE_DISABLE_PROJECT_CONFIG", "0")
    monkeypatch.setenv("OPENCODE_CONFIG", "/somewhere/else.json")
    env = {"PATH": str(tools)}
    user = acp.agent("opencode", env=env).environment()
    assert user["OPENCODE_DISABLE_PROJECT_CONFIG"] == "1"
    assert user["OPENCODE_CONFIG"].endswith("/opencode.json")
    assert user["OPENCODE_CONFIG"] != "/somewhere/else.json"
    project = acp.agent("opencode", env=env, settings="project")
    assert "OPENCODE_DISABLE_PROJECT_CONFIG" not in project.environment()
    assert project.info()["settings"] == "project"
    with pytest.raises(ValueError, match="settings='project'"):
        acp.agent("opencode", env={**env, "OPENCODE_DISABLE_PROJECT_CONFIG": "0"})
    with pytest.raises(ValueError, match="OPENCODE_CONFIG"):
        acp.agent("opencode", env={**env, "OPENCODE_CONFIG": "/mine.json"})


def test_its_server_has_a_password_of_its_own_that_no_repr_shows(tools: Path) -> None:
    one = acp.agent("opencode", env={"PATH": str(tools)})
    two = acp.agent("opencode", env={"PATH": str(tools)})
    password = one.env["OPENCODE_SERVER_PASSWORD"]
    assert len(password) >= 40
    assert password != two.env["OPENCODE_SERVER_PASSWORD"]
    assert password not in repr(one)
    assert one.environment()["OPENCODE_SERVER_PASSWORD"] == password
    mine = acp.agent("opencode", env={"PATH": str(tools), "OPENCODE_SERVER_PASSWORD": "mine"})
    assert mine.env["OPENCODE_SERVER_PASSWORD"] == "mine"


def test_a_missing_opencode_names_its_npm_package(tmp_path: Path) -> None:
    with pytest.raises(acp.AgentNotFoundError, match="npm install -g opencode-ai"):
        acp.agent("opencode", env={"PATH": str(tmp_path)})
