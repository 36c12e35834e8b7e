"""A session's controls: the agent's config options (read, kept current, set from code),
its slash commands and its usage, shown on the turn's header and in the result."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import pytest

from adapters.helpers import recorded
from mead_notebook import TurnError
from mead_notebook.adapters import acp
from mead_notebook.adapters.acp._controls import (
    MAX_TEXT,
    Command,
    Controls,
    OptionError,
    Usage,
)
from mead_notebook.testing import Recording

from .conftest import Script

OPTIONS = {"MEAD_SCRIPTED_OPTIONS": "1"}


def described(rec: Recording) -> list[dict[str, Any]]:
    return [e.args[0] for e in rec.events if e.name == "agent_described"]


def usage_update(**fields: Any) -> dict[str, Any]:
    return {"raw": {"sessionUpdate": "usage_update", **fields}}


def commands_listed(session: acp.Conversation, within: float = 5.0) -> tuple[Command, ...]:
    deadline = time.monotonic() + within
    while not session.commands and time.monotonic() < deadline:
        time.sleep(0.02)
    return session.commands


def test_the_options_are_read_when_the_session_opens_and_set_from_code(script: Script) -> None:
    rec, _ = recorded()
    spec = script.agent([[{"text": "one"}], [{"text": "two"}]], env=OPTIONS)
    with acp.session(spec) as session:
        assert session.options == {}
        options = session.configure(model="large", effort="high", fast=True)
        assert options["model"].current == "large"
        assert options["model"].category == "model"
        assert options["model"].allowed == ("small", "large")
        assert [v.name for v in options["model"].values] == ["Small", "Large"]
        assert options["effort"].current == "high"
        assert options["fast"].current is True
        assert options["fast"].kind == "boolean"
        with pytest.raises(TypeError):
            options["model"] = options["effort"]  # type: ignore[index]
        with pytest.raises(dataclasses.FrozenInstanceError):
            options["model"].current = "small"  # type: ignore[misc]
        result = session.run("go", interaction=rec)
    sent = script.events("config")
    assert [(e["id"], e["value"]) for e in sent] == [
        ("model", "large"),
        ("effort", "high"),
        ("fast", True),
    ]
    # The agent's model is the chosen one at the prompt, and the header says so.
    assert [e["model"] for e in script.events("prompt")] == ["large"]
    assert result.agent is not None
    assert result.agent.get("model") == "large"


def test_an_unknown_option_or_value_is_refused_before_anything_is_sent(script: Script) -> None:
    spec = script.agent([[{"text": "one"}]], env=OPTIONS)
    with acp.session(spec) as session:
        with pytest.raises(OptionError, match="'small', 'large'") as bad_value:
            session.configure(model="huge")
        assert "'huge'" in str(bad_value.value)
        with pytest.raises(OptionError, match="its options: model, mode, effort, fast"):
            session.configure(temperature="hot")
        with pytest.raises(OptionError, match="allows False, True"):
            session.configure(fast="yes")
        with pytest.raises(OptionError):
            # A good one first: nothing is sent when any of them is bad.
            session.configure(effort="high", model="huge")
        assert session.options["effort"].current == "low"
    assert script.events("config") == []


def test_the_agents_refusal_is_an_error_naming_the_allowed_values(script: Script) -> None:
    spec = script.agent([[{"text": "one"}]], env={**OPTIONS, "MEAD_SCRIPTED_CONFIG_FAILS": "1"})
    with acp.session(spec) as session:
        with pytest.raises(acp.AgentError, match=r"refused 'model' = 'large'.*'small', 'large'"):
            session.configure(model="large")
        assert session.options["model"].current == "small"


def test_a_mode_set_from_code_is_on_the_header(script: Script) -> None:
    """Setting a mode that approves on its own is the person's choice; the header shows it."""
    rec, _ = recorded()
    spec = script.agent([[{"text": "one"}]], env=OPTIONS)
    with acp.session(spec) as session:
        session.configure(mode="auto")
        result = session.run("go", interaction=rec)
    assert [(e["id"], e["value"]) for e in script.events("config")] == [("mode", "auto")]
    assert [e["mode"] for e in script.events("mode")] == ["default"]
    assert result.agent is not None
    assert result.agent.get("mode") == "auto"
    assert described(rec)[0]["mode"] == "auto"


def test_legacy_modes_are_the_mode_option_and_set_with_set_mode(script: Script) -> None:
    rec, _ = recorded()
    spec = script.agent([[{"text": "one"}]])
    with acp.session(spec) as session:
        options = session.configure(mode="auto")
        assert list(options) == ["mode"]
        assert options["mode"].legacy
        assert options["mode"].current == "auto"
        assert options["mode"].allowed == ("default", "auto")
        result = session.run("go", interaction=rec)
    assert [e["mode"] for e in script.events("mode")] == ["default", "auto"]
    assert script.events("config") == []
    assert result.agent is not None
    assert result.agent.get("mode") == "auto"


def test_modes_offered_as_an_option_only_are_on_the_header_and_set_as_one(
    script: Script,
) -> None:
    """OpenCode offers its modes as a ``mode`` option, without ACP session modes: the
    header says the one it is in, and a preset's mode is set through the option."""
    env = {**OPTIONS, "MEAD_SCRIPTED_MODES_AS_OPTION": "1"}
    own = acp.run(script.agent([[{"text": "one"}]], env=env, mode=None), "go", interaction=rec())
    assert own.agent is not None
    assert own.agent.get("mode") == "auto"
    chosen = acp.run(script.agent([[{"text": "two"}]], env=env), "go", interaction=rec())
    assert [(e["id"], e["value"]) for e in script.events("config")] == [("mode", "default")]
    assert script.events("mode") == []
    assert chosen.agent is not None
    assert chosen.agent.get("mode") == "default"
    unknown = script.agent([[{"text": "three"}]], env=env, mode="plan")
    with pytest.raises(TurnError, match="cannot run in session mode 'plan': it offers default"):
        acp.run(unknown, "go", interaction=rec())


def rec() -> Recording:
    return recorded()[0]


def test_an_option_the_agent_changes_mid_turn_is_kept_and_on_the_header(script: Script) -> None:
    rec, _ = recorded()
    changed = {
        "sessionUpdate": "config_option_update",
        "configOptions": [
            {
                "type": "select",
                "id": "model",
                "name": "Model",
                "category": "model",
                "currentValue": "large",
                "options": [{"value": "small", "name": "S"}, {"value": "large", "name": "L"}],
            }
        ],
    }
    spec = script.agent([[{"raw": changed}, {"text": "done"}]], env=OPTIONS)
    with acp.session(spec) as session:
        session.run("go", interaction=rec)
        assert list(session.options) == ["model"]
        assert session.options["model"].current == "large"
    models = [d.get("model") for d in described(rec)]
    assert models[0] == "small"
    assert models[-1] == "large"


def test_the_commands_are_listed_and_kept_current(script: Script) -> None:
    rec, _ = recorded()
    listed = {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [{"name": "plan", "description": "<b>Plan</b> first", "input": None}],
    }
    spec = script.agent([[{"raw": listed}, {"text": "done"}]], env=OPTIONS)
    with acp.session(spec) as session:
        session.configure()
        assert commands_listed(session) == (
            Command("review", "Review the changes.", "what to look at"),
            Command("compact", "Summarize the conversation.", None),
        )
        session.run("go", interaction=rec)
        assert session.commands == (Command("plan", "<b>Plan</b> first", None),)


def test_usage_is_on_the_header_and_in_the_result(script: Script) -> None:
    rec, _ = recorded()
    cost = {"amount": 0.04, "currency": "USD"}
    spec = script.agent(
        [[usage_update(used=12300, size=200000, cost=cost), {"text": "done"}]], env=OPTIONS
    )
    with acp.session(spec) as session:
        result = session.run("go", interaction=rec)
        assert session.usage == Usage(12300, 200000, 0.04, "USD")
    assert result.usage == Usage(12300, 200000, 0.04, "USD")
    assert described(rec)[-1]["usage"] == {
        "used": 12300,
        "size": 200000,
        "cost": 0.04,
        "currency": "USD",
    }


def test_an_absent_usage_figure_is_unknown_never_zero(script: Script) -> None:
    """Claude's agent sends ``used: null``: the SDK cannot read it; its size is kept."""
    rec, _ = recorded()
    spec = script.agent(
        [
            [usage_update(used=500, size=1000), {"text": "one"}],
            [usage_update(used=None, size=200000), {"text": "two"}],
        ]
    )
    with acp.session(spec) as session:
        first = session.run("go", interaction=rec)
        second = session.run("again", interaction=rec)
    assert first.usage == Usage(500, 1000)
    assert second.usage == Usage(None, 200000)
    assert described(rec)[-1]["usage"]["used"] is None


def test_a_malformed_update_is_ignored_and_the_turn_goes_on(script: Script) -> None:
    rec, _ = recorded()
    bad = [
        {"sessionUpdate": "config_option_update", "configOptions": "model"},
        {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": 3}]},
        {"sessionUpdate": "usage_update", "used": "lots", "size": -1, "cost": {"amount": "x"}},
        {"sessionUpdate": "usage_update", "used": -5},
    ]
    spec = script.agent([[*({"raw": b} for b in bad), {"text": "still here"}]], env=OPTIONS)
    with acp.session(spec) as session:
        session.configure()
        before = dict(session.options)
        result = session.run("go", interaction=rec)
        assert dict(session.options) == before
    assert result.text == "still here"
    assert result.stop_reason == "end_turn"
    assert result.usage in (None, Usage())


def test_what_the_agent_says_is_bounded() -> None:
    controls = Controls()
    from acp.schema import (
        AvailableCommand,
        AvailableCommandsUpdate,
        SessionConfigOptionSelect,
        SessionConfigSelectOption,
    )

    long = "x" * 10_000
    option = SessionConfigOptionSelect(
        id=long,
        name=long,
        current_value=long,
        options=[SessionConfigSelectOption(value=str(i), name=long) for i in range(1000)],
        type="select",
    )
    controls.set_options([option])
    [kept] = controls.options.values()
    assert len(kept.id) == len(kept.name) == len(str(kept.current)) == MAX_TEXT
    assert len(kept.values) == 200
    listed = AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[AvailableCommand(name=long, description=long)] * 500,
    )
    controls.update(listed)
    assert len(controls.commands) == 200
    assert len(controls.commands[0].name) == MAX_TEXT


def interrupt_a_turn(session: Any, script: Script, rec: Any) -> None:
    """Start a turn, cancel it once the agent has the prompt, and check it ended interrupted
    (the agent is then started again, with a new session, for the next turn)."""
    turn = session.start("go", interaction=rec)
    deadline = time.monotonic() + 10
    while not script.events("prompt") and time.monotonic() < deadline:
        time.sleep(0.02)
    turn.cancel()
    assert turn.result(timeout=20).stop_reason == "interrupted"


def test_what_configure_set_is_set_again_in_a_session_opened_anew(script: Script) -> None:
    """After an interrupt the agent is started again with a new session: the model chosen
    in code is chosen again before the next prompt."""
    rec, _ = recorded()
    # Each agent started plays the first turn: a pause the first one does not finish.
    spec = script.agent([[{"sleep": 1.5}]], env=OPTIONS)
    with acp.session(spec) as session:
        session.configure(model="large")
        interrupt_a_turn(session, script, rec)
        session.run("again", interaction=rec)
    assert len(script.events("new_session")) == 2
    assert [e["model"] for e in script.events("prompt")][-1] == "large"
    assert [(e["id"], e["value"]) for e in script.events("config")] == [
        ("model", "large"),
        ("model", "large"),
    ]


def test_a_mode_chosen_in_code_is_chosen_again_and_on_the_header_after_a_restart(
    script: Script,
) -> None:
    """The preset's mode is set when the session opens, then the person's choice over it:
    the header of the next turn says the mode the agent is really in."""
    rec, _ = recorded()
    spec = script.agent([[{"sleep": 1.5}]])
    with acp.session(spec) as session:
        session.configure(mode="auto")
        interrupt_a_turn(session, script, rec)
        again = session.run("again", interaction=rec)
        assert session.options["mode"].current == "auto"
    # Each start: the preset's default, then the person's auto.
    assert [e["mode"] for e in script.events("mode")] == ["default", "auto", "default", "auto"]
    assert again.agent is not None
    assert again.agent.get("mode") == "auto"
    assert described(rec)[-1]["mode"] == "auto"


def test_a_legacy_mode_stays_when_the_agent_updates_its_other_options() -> None:
    from acp.schema import (
        ConfigOptionUpdate,
        SessionConfigOptionSelect,
        SessionConfigSelectOption,
        SessionMode,
        SessionModeState,
    )

    controls = Controls()
    modes = SessionModeState(
        current_mode_id="default",
        available_modes=[SessionMode(id="default", name="D"), SessionMode(id="auto", name="A")],
    )
    controls.opened(None, modes)
    model = SessionConfigOptionSelect(
        id="model",
        name="Model",
        category="model",
        current_value="m",
        options=[SessionConfigSelectOption(value="m", name="M")],
        type="select",
    )
    assert controls.update(
        ConfigOptionUpdate(session_update="config_option_update", config_options=[model])
    )
    assert list(controls.options) == ["model", "mode"]
    assert controls.current("mode") == "default"
    # A new session says its own: the old one's legacy mode is not kept.
    controls.opened([model], None)
    assert list(controls.options) == ["model"]
