"""What every adapter must do, and the harness through which the suite drives one.

``test_conformance.py`` runs each test once per harness listed in its
``HARNESSES`` (the name of a module in this folder that defines ``Harness``).
Adding an adapter to the suite is writing that module.

A harness runs the framework's agent on a model that plays back scripted
replies (lists of text fragments and ``ToolCall`` items, one reply per model
request; :class:`mead_notebook.adapters.base.ScriptedReplies` does the playing
back) and keeps what the model was told. It offers these tools to the model,
each appending to ``harness.ran`` what it did:

=================  ====================================  ==================================
tool               arguments                             does
=================  ====================================  ==================================
``read_file``      ``path: str``                         ``read <path>``; returns
                                                         ``contents of <path>``; declared
                                                         read-only (kind ``read``)
``write_file``     ``path: str, text: str``              ``write <path>``; returns
                                                         ``wrote <len(text)> characters``
``delete_file``    ``path: str``                         ``delete <path>``; declared kind
                                                         ``delete``
``slow``           none                                  sleeps 60 s (cancellable), then
                                                         ``slow finished``
``ask_user``       ``prompt, options, multiple``         the adapter's ``ask_user`` tool
each of            ``prompt: str, options: [{id,         asks the person the framework's
``questions``      label}], multiple: bool = False``     own way (a LangGraph interrupt, a
                                                         deferred call, a review); the
                                                         model is told the answer
=================  ====================================  ==================================

:class:`Tools` holds the first four as plain functions (methods) for a harness
to wrap in its framework's tool type.

The ``Harness`` class (made anew for each test) has:

- ``name`` (the test id) and ``server`` (what cards name as the calls' server);
- ``questions``: the names of its tools that ask the framework's own way;
- ``ran``: what the tools did, in order;
- ``start(replies, interaction) -> Turn[AgentResult]``: the adapter's ``start``
  on an agent with the tools above and a model playing ``replies``;
- ``limited(replies, interaction, rounds) -> Turn[AgentResult]``: the same with
  the source's own round limit set to ``rounds`` model replies, whatever it calls
  it (``max_turns``, ``recursion_limit``, ``request_limit``; an ACP agent ends
  its turn ``max_turn_requests`` after that many replies);
- ``told() -> dict[str, Told]``: by tool call id, what the model was told of
  each call in the last request it received (``Told.error``: told as an error);
- ``capabilities``: what the framework can carry (:class:`Capabilities`); where it
  cannot, the suite asserts the behaviour that replaces it;
- ``content``: ``None`` when the framework cannot say what a call will do beyond
  its arguments; else a :class:`ContentCase`;
- ``unasked``: ``None`` when every call the framework runs is asked here; else an
  :class:`UnaskedCase`, a call the agent runs under its own rules.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mead_notebook import ToolCall
from mead_notebook.adapters.base import AgentResult
from mead_notebook.interaction import ContentBlock, Location
from mead_notebook.turn import Turn

__all__ = ["Capabilities", "ContentCase", "Harness", "Replies", "Told", "Tools", "UnaskedCase"]

Replies = Sequence[Sequence[str | ToolCall]]


@dataclass(frozen=True)
class Told:
    """What the model was told of one call."""

    text: str
    error: bool


@dataclass(frozen=True)
class Capabilities:
    """What a framework can carry; each False names the behaviour the suite asserts instead.

    - ``denial_message``: the model is told the person's reason (else: told only that
      the call was rejected, as an error);
    - ``edited_arguments``: an Allow with edited arguments runs them (else: it is
      refused, ``invalid_arguments``, and the tool never runs);
    - ``refuses_calls``: the adapter refuses a call with bad arguments or an unknown
      tool itself (else: the agent refuses it, the call ends ``error`` unasked);
    - ``cancel_stops_turn``: a card's Cancel stops the whole turn (``interrupted``),
      not only the call;
    - ``counts_rounds``: ``rounds`` counts the model's requests (else it stays 0);
    - ``no_answer_text``: an unanswered question is told as text (else: the agent
      is told the question was cancelled, as an error);
    - ``error_flag``: a failed call is told to the model flagged as an error (else:
      only in words, which the suite still checks);
    - ``own_words``: a question takes any answer in the person's own words (else: the
      words must name one of its options, as a form's field sends only what fits it).
    """

    denial_message: bool = True
    edited_arguments: bool = True
    refuses_calls: bool = True
    cancel_stops_turn: bool = False
    counts_rounds: bool = True
    no_answer_text: bool = True
    error_flag: bool = True
    own_words: bool = True


@dataclass(frozen=True)
class ContentCase:
    """A call whose source says what it will do: the replies that make it, and what the card gets.

    ``tool_call_id`` is the call's id; ``content`` and ``locations`` what its
    permission request must carry.
    """

    replies: Replies
    tool_call_id: str
    content: list[ContentBlock]
    locations: list[Location] = field(default_factory=list)


@dataclass(frozen=True)
class UnaskedCase:
    """A call the agent runs without asking anyone here: the replies that make it, and its id."""

    replies: Replies
    tool_call_id: str


class Tools:
    """The standard tools as plain methods; ``ran`` says what they did, in order."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def read_file(self, path: str) -> str:
        """Read a file."""
        self.ran.append(f"read {path}")
        return f"contents of {path}"

    def write_file(self, path: str, text: str) -> str:
        """Write a file."""
        self.ran.append(f"write {path}")
        return f"wrote {len(text)} characters"

    def delete_file(self, path: str) -> str:
        """Delete a file."""
        self.ran.append(f"delete {path}")
        return f"deleted {path}"

    async def slow(self) -> str:
        """Takes a minute."""
        await asyncio.sleep(60)
        self.ran.append("slow finished")
        return "finished"


class Harness(Protocol):
    """One adapter, as the conformance suite drives it (see the module docstring)."""

    name: str
    server: str
    questions: tuple[str, ...]
    capabilities: Capabilities
    content: ContentCase | None
    unasked: UnaskedCase | None

    @property
    def ran(self) -> list[str]: ...

    def start(self, replies: Replies, interaction: Any) -> Turn[AgentResult]: ...

    def limited(self, replies: Replies, interaction: Any, rounds: int) -> Turn[AgentResult]: ...

    def told(self) -> dict[str, Told]: ...
