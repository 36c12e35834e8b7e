"""A real ACP agent calls the kernel's own tools over the kernel's MCP server, in a real kernel.

Claude's agent (``claude-agent-acp``, against the fake Anthropic server) calls
``run_python`` from ``kernel_tools()``, served by ``acp.session(..., tools=)``.
Claude asks before an MCP tool: that request is the call's one card, with the
arguments and the code; Allow runs the code in the kernel (the next cell reads
the variable it set), Deny runs nothing. Codex does not ask before an MCP tool:
the call asks when it reaches the kernel, on the card of Codex's report. The
server's token appears in no message of the kernel (outputs, widget state).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kernel.frontend import Frontend, kernel_python
from servers.agent_launch import BIN, EXECUTABLES, launch
from servers.agent_models import AnthropicAgentServer, ResponsesAgentServer, Say, UseTool

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(240)]

VERSION = "7.4.0"
CODE = "answer = 6 * 7\nprint('answer is', answer)"
AGENTS = {
    "claude": (AnthropicAgentServer, "mcp__mead__run_python"),
    "codex": (ResponsesAgentServer, "mcp__mead__run_python"),
}


def cell(name: str, start: Any, cwd: Path, token_file: Path) -> str:
    return (
        "import json\n"
        "from mead_notebook import NotebookInteraction, kernel_tools\n"
        "from mead_notebook.adapters import acp\n"
        f"spec = acp.agent({name!r}, executable={str(BIN / EXECUTABLES[name])!r},"
        f" env=json.loads({json.dumps(start.env)!r}))\n"
        f"session = acp.session(spec, cwd={str(cwd)!r}, tools=kernel_tools(timeout=30))\n"
        "try:\n"
        "    result = session.run('Compute the answer',"
        " interaction=NotebookInteraction(timeout=90, grace=30))\n"
        f"    open({str(token_file)!r}, 'w').write(session.served.server.secret())\n"
        "finally:\n"
        "    session.close()\n"
        "calls = [(c.tool, c.server, c.status, c.outcome) for c in result.calls]\n"
        "print('RESULT', json.dumps({'stop': result.stop_reason, 'calls': calls}))\n"
    )


def blocks(card: dict[str, Any]) -> list[dict[str, Any]]:
    """A card's content blocks without what the view adds (how much was cut)."""
    return [{k: v for k, v in b.items() if k != "cut"} for b in card["content"]]


@pytest.mark.parametrize("decision", ["allow", "deny"])
@pytest.mark.parametrize("name", list(AGENTS))
def test_a_real_agent_runs_python_in_the_kernel_only_on_allow(
    tmp_path: Path, name: str, decision: str
) -> None:
    if not kernel_python(VERSION).exists():
        pytest.fail(f"no kernel environment for ipykernel {VERSION}: run scripts/kernel-envs.sh")
    if not (BIN / EXECUTABLES[name]).exists():
        pytest.fail(f"{name} is not installed: run scripts/setup.sh (npm ci in tests/agents)")
    server_type, tool_name = AGENTS[name]
    cwd = tmp_path / "work"
    cwd.mkdir()
    token_file = tmp_path / "token"
    steps = (UseTool(tool_name, {"code": CODE}), Say("Done."))
    with server_type(*steps, cwd=str(cwd)) as server:
        start = launch(name, server.url, tmp_path)
        fe = Frontend(VERSION, tmp_path, subshell=True)
        try:
            answer = {"decision": decision}
            if decision == "deny":
                answer["note"] = "not in my kernel"
            questioned: list[dict[str, Any]] = []

            def respond(card: dict[str, Any]) -> dict[str, Any]:
                questioned.append(card)
                return answer

            fe.responder = respond
            reply, out = fe.run(cell(name, start, cwd, token_file), timeout=180)
            assert reply["status"] == "ok", (reply, out)
            result = json.loads(out.split("RESULT ", 1)[1])
            [card] = fe.cards()
            [asked] = questioned
            assert (asked["tool"], asked["server"], asked["kind"]) == (
                "run_python",
                "mead",
                "execute",
            )
            assert asked["arguments"] == {"code": CODE}
            assert blocks(asked) == [{"type": "code", "language": "python", "code": CODE}]
            assert card["tool_call_id"] == asked["tool_call_id"]
            assert card["question"]["answer"]["by"] == "person"
            reply, read = fe.run("print('answer' in globals(), globals().get('answer'))", 30)
            assert reply["status"] == "ok"
            seen = json.dumps(fe.iopub, default=str)
        finally:
            fe.close()
    token = token_file.read_text()
    assert len(token) >= 32
    assert token not in seen
    if decision == "allow":
        assert read == "True 42\n"
        assert result["calls"] == [["run_python", "mead", "completed", None]]
        assert card["status"] == "completed"
        assert {"type": "output", "name": "stdout", "text": "answer is 42\n"} in blocks(card)
    else:
        assert read == "False None\n"
        assert result["calls"] == [["run_python", "mead", "failed", "denied"]]
