"""What every adapter shares: a framework's run reported through the contract.

An adapter maps one framework's run onto an :class:`AgentTurn` (one turn of the
agent under one interaction), and nothing else::

    from mead_notebook.adapters.base import AgentResult, AgentTurn, CallCancelled, result_text

    def start(agent, prompt, *, interaction) -> Turn[AgentResult]:
        session = AgentTurn(interaction)

        async def main() -> None:           # on an event loop of the turn's own thread
            async for event in agent.stream(prompt):
                if event.is_text:
                    session.text(event.text)                  # text_delta, in order
                elif event.is_tool_call:
                    record, allowed = await session.call(     # pending, request_permission
                        session.admit, event.id, event.name, "my-framework", None,
                        event.arguments, event.schema, kind=event.kind, content=event.diff,
                    )
                    if not allowed:
                        await event.deny(record.error)        # the denial reaches the model
                        continue
                    try:                                      # in_progress; a card's Cancel
                        value = await session.execute(record, event.run)   # cancels the task
                    except CallCancelled as cancelled:
                        await event.fail(cancelled.message)
                        continue
                    await session.call(session.complete, record, result_text(value))
            session.result.output = ...       # what the framework's run returned

        return session.turn(prompt, main)     # run: start(...).result(); arun: await start(...)

The pieces:

- :class:`AgentTurn`: the run's event loop in a thread of its own (``turn``,
  ``run``; ``hosted`` for a run on a loop of your own), every interaction
  callback on one callback thread in order (``call``, ``call_now``, ``post``);
  a call's lifecycle (``begin``, ``admit``, ``refuse``, ``execute``,
  ``execute_blocking``; ``decide``, ``running``, ``describe``, ``complete``,
  ``fail`` through ``call``, so every call's life goes through it: a call runs
  only after its Allow, or says the agent ran it), the agent's text, thoughts
  and plan (``text``, ``thought``, ``plan``), questions (``ask``), and the run's end
  (``cancel``: a cancelled turn ends ``interrupted``). ``kind``, ``title``,
  ``content`` and ``locations`` of a call pass through to the driver;
  ``execute(..., decided_by="agent")`` reports a call the agent ran without
  asking; ``session.driver.editable = False`` for a source that cannot carry
  edited arguments or a denial message.
- :class:`FrameworkQuestion` / :func:`question_from`: a framework's own question (a
  LangGraph ``interrupt``, a deferred call) as a multiple choice, settled by
  ``AgentTurn.ask`` like ``ask_user`` (an option, several, or the person's own
  words) and answered in the framework's form (:meth:`FrameworkQuestion.value`).
- :data:`active_turn`: the turn whose run the current task belongs to.
- :class:`AgentResult`, :func:`missing_extra`, :data:`ASK_USER_MARK`,
  :class:`AskUserOption` / :func:`ask_user_arguments` (a framework's
  ``ask_user`` tool), :func:`declared_kind` (a tool's kind from its metadata),
  :class:`ScriptedReplies` (an offline model's replies), :func:`result_text`.
- :mod:`.own_tools`: the package's own tools in a framework's run (each
  adapter's ``as_tools``): the mark a gate reads, the tool's own validation and
  preview for the card, :func:`~.own_tools.invoke` whose cancel reaches the
  tool's ``Call``, and how the call ends (:func:`~.own_tools.ending`);
  :mod:`.passes`: an Allow given through an agent's own permission request,
  good for exactly one call of that tool with those arguments.

A new framework is a folder ``mead_notebook/adapters/<framework>/`` holding only
mapping code, an extra in ``pyproject.toml``, and a harness for the conformance
suite (``tests/adapters/conformance.py`` says what a harness provides).
"""

from __future__ import annotations

import warnings
from typing import Any

from mead_notebook.ask_user import Settled
from mead_notebook.tools.base import result_text

from .agent_turn import (
    NO_INTERACTION,
    SETTLE_TIMEOUT,
    AgentTurn,
    CallCancelled,
    active_turn,
    failure,
    required,
)
from .questions import NO_ANSWER, FrameworkQuestion, question_from
from .replies import Reply, ScriptedReplies
from .result import AgentResult
from .tools import ASK_USER_MARK, AskUserOption, ask_user_arguments, declared_kind, missing_extra

__all__ = [
    "ASK_USER_MARK",
    "NO_ANSWER",
    "NO_INTERACTION",
    "SETTLE_TIMEOUT",
    "AgentResult",
    "AgentTurn",
    "AskUserOption",
    "CallCancelled",
    "FrameworkQuestion",
    "Reply",
    "ScriptedReplies",
    "Settled",
    "active_turn",
    "ask_user_arguments",
    "declared_kind",
    "failure",
    "missing_extra",
    "question_from",
    "required",
    "result_text",
]

_RENAMED = {"Session": "AgentTurn", "active_session": "active_turn"}
"""Old names: ``Session`` was one turn, while ``acp.session()`` spans turns."""


def __getattr__(name: str) -> Any:
    if name in _RENAMED:
        new = _RENAMED[name]
        warnings.warn(
            f"mead_notebook.adapters.base.{name} is now {new}", DeprecationWarning, stacklevel=2
        )
        return globals()[new]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
