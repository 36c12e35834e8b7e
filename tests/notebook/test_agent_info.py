"""Who runs the turn: the widget's ``agent`` trait, the static transcript, Markdown, summary."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from widget_helpers import update

from mead_notebook import AgentDetails, AgentInfo, TurnDriver
from mead_notebook.notebook import agent_info, static, transcript
from mead_notebook.notebook.transcript import TurnState
from mead_notebook.policies import AllowAll
from mead_notebook.testing import Recording
from mead_notebook.turn import TurnResult

AGENT_TURN = json.loads((Path(__file__).parents[1] / "shared" / "copy-turn-agent.json").read_text())
"""A turn with its agent described, shared with js/test/agent.test.js."""


def example() -> TurnState:
    state: TurnState = copy.deepcopy(AGENT_TURN["state"])
    return state


def test_the_widget_hears_of_the_agent_and_syncs_it(make: Any) -> None:
    w, c = make()
    assert isinstance(w, AgentDetails)
    w.turn_started(None, "go")
    w.agent_described(None, AgentInfo(agent="codex", mode="untrusted", sandbox="workspace-write"))
    assert w.agent == {"agent": "codex", "mode": "untrusted", "sandbox": "workspace-write"}
    assert c.updates()[-1] == {"agent": w.agent}
    # Only the known fields, as strings, each bounded.
    w.agent_described(None, {"agent": "x" * 500, "mode": 3, "extra": "y"})  # type: ignore[typeddict-item]
    assert w.agent == {"agent": "x" * agent_info.MAX_CHARS}
    w.turn_ended(None, TurnResult(), None)
    assert w._turn_state()["agent"] == {"agent": "x" * agent_info.MAX_CHARS}
    # A new turn starts with nobody described.
    w.turn_started(None, "again")
    assert w.agent == {}
    assert c.updates()[-1]["agent"] == {}


def test_the_driver_keeps_the_description_in_the_result_and_passes_it_on(make: Any) -> None:
    w, _ = make()
    driver = TurnDriver(w)
    driver.start("go")
    driver.agent(AgentInfo(agent="claude", mode="default", settings="user"))
    result = driver.end()
    assert result.agent == {"agent": "claude", "mode": "default", "settings": "user"}
    assert w.agent == {"agent": "claude", "mode": "default", "settings": "user"}


def test_recording_records_it_and_an_interaction_without_the_hook_is_not_told() -> None:
    inner = AllowAll()
    assert not isinstance(inner, AgentDetails)
    rec = Recording(inner)
    driver = TurnDriver(rec)
    driver.agent(AgentInfo(agent="gemini", mode="default"))
    assert [(e.name, e.args) for e in rec.events] == [
        ("agent_described", ({"agent": "gemini", "mode": "default"},))
    ]
    bare = TurnDriver(inner)
    bare.agent(AgentInfo(agent="gemini"))
    assert bare.result.agent == {"agent": "gemini"}


def test_the_header_line_and_the_count_of_calls_run_unasked() -> None:
    assert agent_info.agent_text(example()["agent"]) == AGENT_TURN["header"]
    assert agent_info.agent_text({}) == ""
    assert agent_info.agent_text("claude") == ""
    assert agent_info.agent_text({"mode": "yolo"}) == "the agent · mode yolo"
    assert agent_info.ran_by_agent(example()["calls"].values()) == 1
    assert agent_info.ran_by_agent_text(0) == ""


def test_markdown_says_the_agent_and_the_calls_it_ran_as_the_copy_button_does() -> None:
    paragraphs = transcript.to_markdown(example()).split("\n\n")
    assert paragraphs[1] == AGENT_TURN["agent_markdown"]
    assert paragraphs[-1] == AGENT_TURN["ran_markdown"] + "\n"
    unsaid = example()
    unsaid["agent"] = AgentInfo()
    unsaid["calls"], unsaid["order"] = {}, []
    assert "Agent:" not in transcript.to_markdown(unsaid)
    assert "own rules" not in transcript.to_markdown(unsaid)


def test_the_summary_counts_the_calls_the_agent_ran_on_its_own(make: Any) -> None:
    w, _ = make()
    w.turn_started(None, "go")
    w.tool_updated(None, update("c1", "pending", tool="Bash", server="claude"))
    w.tool_updated(None, update("c1", "in_progress", decided_by="agent"))
    assert "1 run under the agent's own rules" in repr(w)
    assert "own rules" not in transcript.summary("done", [], 0)


def test_the_static_transcript_shows_the_agent_escaped() -> None:
    html = static.to_html(example(), 3)
    header = html[html.index('<div class="mead-static-header">') :]
    header = header[: header.index("</div>")]
    assert (
        '<p class="mead-static-agent mead-static-muted">Agent: claude · mode default · '
        "no sandbox (danger-full-access) · its user settings only · model sonnet_&lt;b&gt;</p>"
    ) in header
    assert (
        '<p class="mead-static-agent-ran">1 call ran under the agent&#x27;s own rules, '
        "without asking anyone here.</p>"
    ) in html
    plain = example()
    del plain["agent"]
    plain["calls"], plain["order"] = {}, []
    assert 'class="mead-static-agent' not in static.to_html(plain, 3)


USAGE_TEXT = json.loads((Path(__file__).parents[1] / "shared" / "usage-text.json").read_text())
"""The header's words for a usage, shared with js/test/agent.test.js."""


def test_the_agents_usage_is_said_as_the_live_view_says_it_an_unknown_figure_as_unknown() -> None:
    for case in USAGE_TEXT["cases"]:
        assert agent_info.usage_text(case["usage"]) == case["text"], case
    said = agent_info.agent_of({"agent": "claude", "usage": {"used": None, "size": 200000}})
    assert said == {
        "agent": "claude",
        "usage": {"used": None, "size": 200000, "cost": None, "currency": None},
    }
    assert agent_info.agent_text(said) == "claude · ? / 200k tokens"
    assert agent_info.agent_of({"agent": "claude", "usage": {"used": "5"}}) == {"agent": "claude"}
