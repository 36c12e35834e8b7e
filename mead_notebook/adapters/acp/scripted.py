"""A scripted ACP agent, for tests, tutorials and benchmarks (``acp.scripted_agent(turns)``).

It speaks ACP on stdio as any agent does (the SDK's agent side) and plays one
list of steps per prompt::

    {"text": "..."}  {"thought": "..."}  {"plan": [{"content", "status", "priority"}]}
    {"user": "...", "message_id": "m1"}   a chunk of the person's message (as a replay
    sends it; ``message_id`` optional)
    {"call": {...}}  a tool call (below)      {"sleep": 0.5}   (cancel wakes it)
    {"ask": {"message": "...", "schema": {...}}}   an elicitation form
    {"ask": {"message": "...", "url": "https://..."}}   a URL elicitation (``elicitation_id``)
    {"spawn": "pidfile"}  start a child process that sleeps, write its pid there
    {"crash": "message", "code": 3}   write to stderr and exit
    {"stop": "max_tokens"}   end the turn with this stop reason
    {"raw": {...}}   a ``session/update`` with this update, sent unvalidated
    {"notify": {"method": "...", "params": {...}}}   a notification of any method
    {"mode": "auto"}   switch to this session mode and say so (``current_mode_update``)
    {"mcp": {...}}   call a tool of the MCP server given at ``session/new`` (:mod:`._scripted_mcp`)

A call: ``id``, ``title``, ``kind``, ``input`` (rawInput), ``meta`` (``_meta``),
``diff`` ``{path, old, new}``, ``command``, ``terminal`` (a terminal of the
agent's own, known by id only), ``locations``; ``ask`` (request permission;
``ask_first``: before any ``tool_call``; ``unasked_in_progress``: after a
``tool_call`` that says it is in progress, as Codex 2.x does; ``in_progress_while_asking``:
says it is in progress while its question is open, as OpenCode does), ``late`` (the input follows in
a later update), ``write`` ``{path, content}`` / ``run`` (a shell command) done
for real once allowed, ``result`` or ``fail``, ``sleep`` (seconds it runs),
``no_in_progress``, ``open`` (never finishes), ``silent`` (no final update after a
reject), ``does`` (logged as ``did`` once it runs). Each call's end is logged as
``told`` ``{id, text, error}``: what the agent learned of it. A reject goes on
(``reject_ends_turn``: ends the turn ``cancelled``; ``rejected``: says this text
and ends the turn, as an agent that stops at a refusal); a cancelled question
ends the turn ``cancelled``.

Its session modes are ``default`` and ``auto`` (it starts in ``auto``);
``MEAD_SCRIPTED_MODES`` in its environment lists others (comma-separated; empty:
it offers none), ``MEAD_SCRIPTED_MODE_FAILS=1`` makes ``session/set_mode`` fail,
``MEAD_SCRIPTED_MODES_AS_OPTION=1`` offers them as its ``mode`` option only. It
says it speaks MCP over HTTP unless ``MEAD_SCRIPTED_MCP_HTTP=0`` (then it starts
stdio servers).
``session/new``'s ``_meta`` is logged with ``new_session``.
``MEAD_SCRIPTED_HISTORY`` (steps as JSON) makes it offer ``session/load``, which
plays those steps as its replay of the session before it answers (logged as
``load_session``; ``MEAD_SCRIPTED_REPLAY_LATE=1``: it answers first and replays
after, a step every 20 ms, as Gemini CLI does).
``MEAD_SCRIPTED_OPTIONS=1`` makes it offer config options (``model``: ``small`` or
``large``; ``mode``, category mode, its session modes; ``effort``: ``low`` or
``high``; ``fast``: a boolean) and, after ``session/new``, the slash commands
``review`` and ``compact``; ``session/set_config_option`` is logged as ``config``
(``MEAD_SCRIPTED_CONFIG_FAILS=1`` makes it fail), and each ``prompt`` logs the
``model`` in use.

Run as ``python -m mead_notebook.adapters.acp.scripted SCRIPT [LOG.jsonl]`` (SCRIPT: the
turns as JSON, a file holding them, or ``@FILE``: a file holding one turn's steps,
read again at every prompt, so that one agent can play a new turn each time);
with a log, every answer it receives is written there as a JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> None:
    """Run the scripted agent on stdio."""
    import acp

    args = list(sys.argv[1:] if argv is None else argv)
    given = args[0]
    log = Path(args[1]) if len(args) > 1 else None
    agent = _Scripted([], log)
    if given.startswith("@"):
        agent.each = Path(given[1:])
    else:
        agent.turns = json.loads(
            given if given.lstrip().startswith("[") else Path(given).read_text()
        )
    asyncio.run(acp.run_agent(cast(Any, agent), use_unstable_protocol=True))


class _Scripted:
    """The agent side: one scripted turn per prompt."""

    def __init__(self, turns: list[list[dict[str, Any]]], log: Path | None) -> None:
        self.turns = turns
        self.each: Path | None = None
        self.log_path = log
        self.conn: Any = None
        self.turn = 0
        self.mode = "auto"
        self.cancelled = asyncio.Event()
        self.children: list[subprocess.Popen[bytes]] = []
        self.mcp_servers: list[Any] = []
        self.mcp_link: Any = None
        self.config: dict[str, str | bool] = {"model": "small", "effort": "low", "fast": False}
        self.announcing: asyncio.Future[None] | None = None
        self.replaying: asyncio.Future[None] | None = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    def log(self, event: str, **fields: Any) -> None:
        if self.log_path is None:
            return
        with self.log_path.open("a") as file:
            file.write(json.dumps({"event": event, "at": time.monotonic(), **fields}) + "\n")

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        from acp.schema import AgentCapabilities, InitializeResponse, McpCapabilities

        given = kwargs.get("client_capabilities")
        elicitation = getattr(given, "elicitation", None)
        self.log(
            "initialize",
            env=os.environ.get("MEAD_SCRIPTED_ECHO"),
            pid=os.getpid(),
            elicitation=None if elicitation is None else elicitation.model_dump(mode="json"),
        )
        http = os.environ.get("MEAD_SCRIPTED_MCP_HTTP", "1") != "0"
        capabilities = AgentCapabilities(
            mcp_capabilities=McpCapabilities(http=http),
            load_session="MEAD_SCRIPTED_HISTORY" in os.environ,
        )
        return InitializeResponse(
            protocol_version=protocol_version, agent_capabilities=capabilities
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> Any:
        from acp.schema import NewSessionResponse

        skip = ("mcp_servers", "additional_directories")
        meta = {k: v for k, v in kwargs.items() if k not in skip}
        self.mcp_servers = list(kwargs.get("mcp_servers") or [])
        servers = [
            {"name": s.name, "http": bool(getattr(s, "url", None))} for s in self.mcp_servers
        ]
        self.log("new_session", cwd=cwd, meta=meta, mcp=servers)
        modes, options = self.session_state()
        return NewSessionResponse(session_id="s1", modes=modes, config_options=options)

    def session_state(self) -> tuple[Any, Any]:
        """Its session modes and config options, as a new or loaded session has them."""
        from acp.schema import SessionMode, SessionModeState

        listed = os.environ.get("MEAD_SCRIPTED_MODES")
        names = ["default", "auto"] if listed is None else [m for m in listed.split(",") if m]
        options = self.options(names) if os.environ.get("MEAD_SCRIPTED_OPTIONS") == "1" else None
        if options is not None:
            asyncio.get_running_loop().call_later(0.05, self.announce_commands)
        if not names or os.environ.get("MEAD_SCRIPTED_MODES_AS_OPTION") == "1":
            return None, options
        self.mode = self.mode if self.mode in names else names[0]
        modes = SessionModeState(
            current_mode_id=self.mode,
            available_modes=[SessionMode(id=name, name=name.capitalize()) for name in names],
        )
        return modes, options

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> Any:
        """Replay ``MEAD_SCRIPTED_HISTORY``'s steps, then answer (late: answer, then replay)."""
        from acp.schema import LoadSessionResponse

        self.log("load_session", cwd=cwd, session_id=session_id)
        steps = json.loads(os.environ.get("MEAD_SCRIPTED_HISTORY") or "[]")
        if os.environ.get("MEAD_SCRIPTED_REPLAY_LATE") == "1":
            self.replaying = asyncio.ensure_future(self.replay(session_id, steps, 0.02))
        else:
            await self.replay(session_id, steps, 0)
        modes, options = self.session_state()
        return LoadSessionResponse(modes=modes, config_options=options)

    async def replay(self, session_id: str, steps: list[dict[str, Any]], pause: float) -> None:
        for step in steps:
            await asyncio.sleep(pause)
            await self.step(session_id, step)
        self.log("replayed")

    def options(self, modes: list[str]) -> list[Any]:
        """Its config options, each at its current value."""
        from acp.schema import (
            SessionConfigOptionBoolean,
            SessionConfigOptionSelect,
            SessionConfigSelectOption,
        )

        def select(id: str, category: str, values: list[str], current: str) -> Any:
            offered = [SessionConfigSelectOption(value=v, name=v.capitalize()) for v in values]
            return SessionConfigOptionSelect(
                id=id,
                name=id.capitalize(),
                category=cast(Any, category),
                current_value=current,
                options=offered,
                type="select",
            )

        found = [
            select("model", "model", ["small", "large"], str(self.config["model"])),
            select("effort", "thought_level", ["low", "high"], str(self.config["effort"])),
            SessionConfigOptionBoolean(
                id="fast", name="Fast", current_value=bool(self.config["fast"]), type="boolean"
            ),
        ]
        if modes:
            found.insert(1, select("mode", "mode", modes, self.mode))
        return found

    def announce_commands(self) -> None:
        from acp.schema import (
            AvailableCommand,
            AvailableCommandInput,
            AvailableCommandsUpdate,
            UnstructuredCommandInput,
        )

        commands = [
            AvailableCommand(
                name="review",
                description="Review the changes.",
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint="what to look at")),
            ),
            AvailableCommand(name="compact", description="Summarize the conversation."),
        ]
        update = AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=commands
        )
        self.announcing = asyncio.ensure_future(self.send("s1", update))

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> Any:
        import acp
        from acp.schema import SetSessionConfigOptionResponse

        self.log("config", id=config_id, value=value)
        if os.environ.get("MEAD_SCRIPTED_CONFIG_FAILS") == "1":
            raise acp.RequestError.invalid_params({config_id: f"{value} is not allowed here"})
        if config_id == "mode":
            self.mode = str(value)
        else:
            self.config[config_id] = value
        listed = os.environ.get("MEAD_SCRIPTED_MODES")
        names = ["default", "auto"] if listed is None else [m for m in listed.split(",") if m]
        return SetSessionConfigOptionResponse(config_options=self.options(names))

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> None:
        import acp

        self.log("mode", mode=mode_id)
        if os.environ.get("MEAD_SCRIPTED_MODE_FAILS") == "1":
            raise acp.RequestError.invalid_params({"mode": f"{mode_id} is not allowed here"})
        self.mode = mode_id

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.log("cancel")
        self.cancelled.set()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        from acp.schema import PromptResponse

        self.cancelled.clear()
        text = "".join(getattr(block, "text", "") for block in prompt)
        self.log("prompt", text=text, model=self.config["model"])
        if self.each is not None:
            steps = json.loads(self.each.read_text())
        elif self.turn < len(self.turns):
            steps = self.turns[self.turn]
        else:
            steps = [{"text": "(no script)"}]
        self.turn += 1
        reason = "end_turn"
        for step in steps:
            if self.cancelled.is_set():
                reason = "cancelled"
                break
            stopped = await self.step(session_id, step)
            if stopped is not None:
                reason = stopped
                break
        if self.cancelled.is_set():
            reason = "cancelled"
        self.log("end", stop_reason=reason)
        return PromptResponse(stop_reason=cast(Any, reason))

    async def send(self, session_id: str, update: Any) -> None:
        await self.conn.session_update(session_id=session_id, update=update)

    async def send_later(self, seconds: float, session_id: str, update: Any) -> None:
        await asyncio.sleep(seconds)
        await self.send(session_id, update)

    async def pause(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless cancelled first; return whether it was cancelled."""
        try:
            await asyncio.wait_for(self.cancelled.wait(), seconds)
        except asyncio.TimeoutError:
            return False
        return True

    async def step(self, session_id: str, step: dict[str, Any]) -> str | None:
        import acp
        from acp.helpers import update_current_mode
        from acp.schema import PlanEntry

        if "text" in step:
            await self.send(session_id, acp.update_agent_message_text(step["text"]))
        elif "user" in step:
            chunk = acp.update_user_message_text(step["user"])
            chunk.message_id = step.get("message_id")
            await self.send(session_id, chunk)
        elif "thought" in step:
            await self.send(session_id, acp.update_agent_thought_text(step["thought"]))
        elif "plan" in step:
            entries = [
                PlanEntry(
                    content=e["content"],
                    status=e.get("status", "pending"),
                    priority=e.get("priority", "medium"),
                )
                for e in step["plan"]
            ]
            await self.send(session_id, acp.update_plan(entries))
        elif "sleep" in step:
            if await self.pause(float(step["sleep"])):
                return "cancelled"
        elif "spawn" in step:
            child = subprocess.Popen(["sleep", "300"])
            self.children.append(child)
            Path(step["spawn"]).write_text(str(child.pid))
        elif "crash" in step:
            sys.stderr.write(f"{step['crash']}\n")
            sys.stderr.flush()
            os._exit(int(step.get("code", 3)))
        elif "stop" in step:
            return str(step["stop"])
        elif "raw" in step:
            # As sent, malformed or not: the connection's own sender does not validate.
            params = {"sessionId": session_id, "update": step["raw"]}
            await self.conn._conn.send_notification("session/update", params)
        elif "notify" in step:
            note = step["notify"]
            await self.conn._conn.send_notification(str(note["method"]), note.get("params"))
        elif "mode" in step:
            self.mode = str(step["mode"])
            await self.send(session_id, update_current_mode(self.mode))
        elif "ask" in step:
            return await self.elicit(session_id, step["ask"])
        elif "call" in step:
            return await self.call(session_id, step["call"])
        elif "mcp" in step:
            from ._scripted_mcp import call_step

            return await call_step(self, session_id, step["mcp"])
        return None

    async def elicit(self, session_id: str, spec: dict[str, Any]) -> str | None:
        import acp
        from acp.schema import (
            ElicitationFormSessionMode,
            ElicitationSchema,
            ElicitationUrlSessionMode,
        )

        mode: Any
        if "url" in spec:
            elicitation_id = str(spec.get("elicitation_id", "e1"))
            mode = ElicitationUrlSessionMode(
                session_id=session_id, elicitation_id=elicitation_id, url=spec["url"]
            )
        else:
            schema = ElicitationSchema.model_validate(spec["schema"])
            mode = ElicitationFormSessionMode(session_id=session_id, requested_schema=schema)
        answer = await self.conn.create_elicitation(message=spec["message"], mode=mode)
        dumped = answer.model_dump(mode="json", exclude_none=True)
        self.log("elicitation", answer=dumped)
        told = json.dumps(dumped)
        self.log("told", id=spec.get("id"), text=told, error=dumped.get("action") != "accept")
        await self.send(session_id, acp.update_agent_message_text(f"answer: {json.dumps(dumped)}"))
        return None

    async def call(self, session_id: str, spec: dict[str, Any]) -> str | None:
        import acp
        from acp.schema import TerminalToolCallContent, ToolCallLocation, ToolCallUpdate

        call_id = str(spec["id"])
        raw_input = spec.get("input", {})
        content: list[Any] = []
        if "diff" in spec:
            diff = spec["diff"]
            content.append(acp.tool_diff_content(diff["path"], diff["new"], diff.get("old")))
        if "command" in spec:
            content.append(acp.tool_content(acp.text_block(f"$ {spec['command']}")))
        if spec.get("terminal"):
            content.append(TerminalToolCallContent(type="terminal", terminal_id=call_id))
        locations = [
            ToolCallLocation(path=loc["path"], line=loc.get("line"))
            for loc in spec.get("locations", [])
        ]
        start = acp.start_tool_call(
            call_id,
            spec.get("title", call_id),
            kind=spec.get("kind", "other"),
            status="in_progress" if spec.get("unasked_in_progress") else "pending",
            content=content or None,
            locations=locations or None,
            raw_input={} if spec.get("late") else raw_input,
        )
        if spec.get("meta"):
            start.field_meta = spec["meta"]
        allowed = True
        if spec.get("ask") and self.mode != "auto":
            if not spec.get("ask_first"):
                await self.send(session_id, start)
                if spec.get("late"):
                    await asyncio.sleep(float(spec.get("late_delay", 0.05)))
                    await self.send(session_id, acp.update_tool_call(call_id, raw_input=raw_input))
            asked = ToolCallUpdate(
                tool_call_id=call_id,
                title=spec.get("title", call_id),
                kind=spec.get("kind", "other"),
                raw_input=None if spec.get("no_raw_input") else raw_input,
                content=content or None,
                locations=locations or None,
            )
            self.log("asking", id=call_id)
            asking = self.conn.request_permission(
                session_id=session_id, tool_call=asked, options=_options()
            )
            if spec.get("in_progress_while_asking"):
                running = acp.update_tool_call(call_id, status="in_progress")
                asking = asyncio.gather(asking, self.send_later(0.1, session_id, running))
                response = (await asking)[0]
            else:
                response = await asking
            outcome = response.outcome
            option = getattr(outcome, "option_id", None)
            self.log("permission", id=call_id, outcome=outcome.outcome, option=option)
            if outcome.outcome == "cancelled":
                self.log("told", id=call_id, text="cancelled", error=True)
                return "cancelled"
            allowed = option in ("allow", "always")
            if not allowed:
                self.log("told", id=call_id, text="rejected", error=True)
                if not spec.get("silent"):
                    await self.send(
                        session_id,
                        acp.update_tool_call(
                            call_id,
                            status="failed",
                            content=[acp.tool_content(acp.text_block("rejected"))],
                        ),
                    )
                if "rejected" in spec:
                    words = acp.update_agent_message_text(str(spec["rejected"]))
                    await self.send(session_id, words)
                    return "end_turn"
                return "cancelled" if spec.get("reject_ends_turn") else None
        else:
            await self.send(session_id, start)
        if spec.get("open"):
            return None
        if not spec.get("no_in_progress"):
            await self.send(session_id, acp.update_tool_call(call_id, status="in_progress"))
        if spec.get("sleep") and await self.pause(float(spec["sleep"])):
            self.log("told", id=call_id, text="cancelled", error=True)
            return "cancelled"
        output = self.perform(spec)
        if "does" in spec:
            self.log("did", id=call_id, text=spec["does"])
        if "fail" in spec:
            self.log("told", id=call_id, text=str(spec["fail"]), error=True)
            failed = [acp.tool_content(acp.text_block(str(spec["fail"])))]
            await self.send(
                session_id, acp.update_tool_call(call_id, status="failed", content=failed)
            )
            return None
        said = str(spec.get("result", output))
        self.log("told", id=call_id, text=said, error=False)
        done = [acp.tool_content(acp.text_block(said))]
        await self.send(
            session_id,
            acp.update_tool_call(call_id, status="completed", content=done, raw_output=output),
        )
        return None

    def perform(self, spec: dict[str, Any]) -> str:
        if "write" in spec:
            Path(spec["write"]["path"]).write_text(spec["write"]["content"])
            self.log("wrote", path=spec["write"]["path"])
            return f"wrote {spec['write']['path']}"
        if "run" in spec:
            done = subprocess.run(
                spec["run"], shell=True, capture_output=True, text=True, timeout=30, check=False
            )
            self.log("ran", command=spec["run"], code=done.returncode)
            return done.stdout
        return "done"


def _options() -> list[Any]:
    from acp.schema import PermissionOption

    return [
        PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
        PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
        PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
        PermissionOption(option_id="never", name="Never", kind="reject_always"),
    ]


if __name__ == "__main__":
    main()
