"""The contract: what a turn tells and asks the interaction around each tool call.

An interaction is any object with the five callbacks of :class:`Interaction`.
Whoever runs a turn (``Router``, or an adapter for another agent framework)
calls them in a fixed order, in the thread that runs the turn, one at a time:

1. ``tool_updated`` with status ``pending`` (it names the tool, its server,
   class and arguments);
2. ``request_permission``;
3. on :class:`Allow`: ``register_call``, ``tool_updated`` (``in_progress``,
   cancellable), the tool itself (its progress as more ``in_progress``
   updates), then ``tool_updated`` with ``completed`` or ``failed``;
4. on :class:`Deny`: a final ``tool_updated`` with ``failed`` and outcome
   ``denied`` (or ``expired``/``interrupted``); the tool never runs.

A call to an unknown tool, or with arguments that break the tool's schema, is
reported ``pending`` then ``failed`` without asking anyone. The built-in
``ask_user`` tool is reported like any other call, but instead of
``request_permission`` its question goes to ``ask_choice``. ``text_delta``
carries each streamed fragment of the model's answer.

Every final update carries ``outcome`` (``None`` for a completed call) and the
short ``result`` or ``error``: a view needs nothing else to draw the call.

A call may say more of what it will do: its ``kind`` (ACP's vocabulary, from
which ``class`` is derived), ``content`` (text, a diff, a terminal command,
code; once it ran, what it printed and showed) and ``locations`` (files and
lines). A call the agent ran under its own rules, without asking anyone here,
says so with ``decided_by: "agent"``.

:class:`PlanAndThoughts` is an optional protocol for an agent's plan and its
streamed reasoning; interactions that lack it simply never hear of them.
:class:`AgentDetails` is another: who runs the turn and under which rules
(:class:`AgentInfo`: the agent's asking mode, its sandbox, which settings it loaded).
:class:`SessionHistory` is a third: the earlier conversation of a session a turn
continues (:data:`HistoryEntry`), a record in which nothing is asked or run.

:class:`TurnHooks` is the second, optional protocol: the start and end of a
turn, interrupts, and the moments a waiting thread can serve a frontend.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, runtime_checkable

if TYPE_CHECKING:
    from .calls import Call
    from .turn import TurnResult

__all__ = [
    "READ_KINDS",
    "AgentDetails",
    "AgentInfo",
    "Allow",
    "Answered",
    "Choice",
    "CodeBlock",
    "ContentBlock",
    "DecidedBy",
    "DefaultTurnHooks",
    "Deny",
    "DiffBlock",
    "HistoryCall",
    "HistoryEntry",
    "HistoryMessage",
    "HtmlBlock",
    "ImageBlock",
    "ImageType",
    "Interaction",
    "Location",
    "Option",
    "Outcome",
    "OutputBlock",
    "OutputName",
    "Picked",
    "PlanAndThoughts",
    "PlanEntry",
    "Policy",
    "Previewed",
    "Previewer",
    "Request",
    "SessionHistory",
    "Status",
    "TerminalBlock",
    "TextBlock",
    "ToolClass",
    "ToolKind",
    "TurnHooks",
    "TypedAnswer",
    "Unanswered",
    "Update",
    "UsageInfo",
    "Withdrawal",
    "class_of",
    "outcome_of",
    "valid",
]

ToolClass = Literal["read", "effect"]
"""``read``: the tool only reads; ``effect``: it may change something."""
ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
"""What a call does, in the Agent Client Protocol's words. ``read``, ``search``
and ``think`` only read; ``edit``, ``delete``, ``move`` and ``execute`` may change
or destroy something; ``fetch`` reaches the network, where what it sends (a URL,
a body) can carry anything read before, so it is an ``effect``; ``other`` is
anything else."""
READ_KINDS: frozenset[str] = frozenset({"read", "search", "think"})
"""The kinds whose ``class`` is ``read``."""
DESTRUCTIVE_KINDS: frozenset[str] = frozenset({"edit", "delete", "move", "execute"})
"""The kinds a single key press never allows: they may overwrite, delete or run anything."""
DecidedBy = Literal["person", "policy", "rule", "timeout", "fallback", "kernel", "agent"]
"""Who settled a call: the person in a view, the interaction's ``policy``, a rule
the person made ("Allow always"), the timeout, the ``fallback`` (nobody there),
the kernel (the turn ended or was interrupted), or the ``agent`` (its own rules
let the call run without asking anyone here)."""
Status = Literal["pending", "in_progress", "completed", "failed"]
Outcome = Literal[
    "denied",
    "cancelled",
    "expired",
    "interrupted",
    "timeout",
    "error",
    "unknown",
    "invalid_arguments",
    "no_answer",
]
"""Why a call ended ``failed``:

- ``denied``: refused (by the person, a policy or the fallback);
- ``cancelled``: cancelled while running (the card's Cancel, ``call.cancel()``);
- ``expired``: its question got no answer in time;
- ``interrupted``: the turn was interrupted or cancelled meanwhile;
- ``timeout``: the tool ran longer than the router's ``tool_timeout``;
- ``error``: the tool raised or reported an error;
- ``unknown``: the model named a tool that does not exist;
- ``invalid_arguments``: the arguments break the tool's schema;
- ``no_answer``: an ``ask_user`` question nobody answered.
"""
FINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed"})


def class_of(kind: str | None) -> ToolClass:
    """The ``class`` of a call of ``kind``: ``read`` for the reading kinds, else ``effect``."""
    return "read" if kind in READ_KINDS else "effect"


def kind_of_class(tool_class: str | None) -> ToolKind:
    """The ``kind`` of a call known only by its class: ``read``, or ``other``."""
    return "read" if tool_class == "read" else "other"


class TextBlock(TypedDict):
    """Text that says what a call will do or did."""

    type: Literal["text"]
    text: str


class DiffBlock(TypedDict):
    """A change to one file: ``old_text`` is None for a new file."""

    type: Literal["diff"]
    path: str
    old_text: str | None
    new_text: str


class _TerminalFields(TypedDict):
    type: Literal["terminal"]
    command: str


class TerminalBlock(_TerminalFields, total=False):
    """A shell command: ``cwd`` where it runs; ``output`` and ``exit_code`` once it ran."""

    cwd: str | None
    output: str | None
    exit_code: int | None


class CodeBlock(TypedDict):
    """Code a call will run or put in the notebook, in ``language`` (``python``)."""

    type: Literal["code"]
    language: str
    code: str


OutputName = Literal["stdout", "stderr", "result", "error"]
"""Which output of running code a text is: what it printed to ``stdout`` or
``stderr``, the ``result`` (the value of its last expression, as text), or the
``error`` it raised (its traceback)."""


class OutputBlock(TypedDict):
    """Text that running code produced, as a cell shows it (``name`` says which)."""

    type: Literal["output"]
    name: OutputName
    text: str


class HtmlBlock(TypedDict):
    """A rich output as HTML (a DataFrame's table), and ``text`` for where HTML is not shown.

    The HTML is untrusted: every view sanitises it before showing it.
    """

    type: Literal["html"]
    html: str
    text: str


ImageType = Literal["image/png", "image/jpeg", "image/gif"]
"""The image types a block may carry."""


class ImageBlock(TypedDict):
    """An image a call produced (a figure): base64 ``data`` of type ``mime_type``, and
    ``alt``, what it shows in words (the output's text)."""

    type: Literal["image"]
    mime_type: ImageType
    data: str
    alt: str


ContentBlock = (
    TextBlock | DiffBlock | TerminalBlock | CodeBlock | OutputBlock | HtmlBlock | ImageBlock
)
"""One block of what a call will do or did, tagged by ``type``."""


class Location(TypedDict):
    """A file a call touches; ``line`` is 1-based, or None for the whole file."""

    path: str
    line: int | None


class _PlanFields(TypedDict):
    content: str
    status: Literal["pending", "in_progress", "completed"]


class PlanEntry(_PlanFields, total=False):
    """One step of an agent's plan; ``priority`` is ``high``, ``medium`` or ``low``."""

    priority: Literal["high", "medium", "low"]


_RequestFields = TypedDict(
    "_RequestFields",
    {
        "tool_call_id": str,
        "tool": str,
        "server": str,
        "class": ToolClass,
        "arguments": dict[str, Any],
    },
)


class Previewed(Protocol):
    """What a call would do, as a preview says it (``mead_notebook.tools.preview.Preview``)."""

    @property
    def content(self) -> list[ContentBlock]: ...

    @property
    def locations(self) -> list[Location]: ...


Previewer = Callable[[dict[str, Any]], Previewed]
"""What a call would do with the arguments given (a person's edit), bounded and never raising."""


class _RequestDetails(TypedDict, total=False):
    parameters: dict[str, Any]
    preview: Previewer
    kind: ToolKind
    title: str
    content: list[ContentBlock]
    locations: list[Location]
    editable: bool
    tool_named: bool
    server_is_agent: bool


class Request(_RequestFields, _RequestDetails):
    """A permission request for one tool call.

    ``parameters``, when present, is the tool's JSON schema: what edited
    arguments must fit (see :class:`Allow`). ``kind``, ``title``, ``content``
    and ``locations`` say what the call will do, when its source tells.
    ``preview``, when present, says it for other arguments: an interaction that
    takes edited arguments shows what they will do before it allows them (the
    source shows it again once allowed, so the call's record agrees).
    ``editable`` is False when the source cannot take edited arguments or a
    denial message (an ACP agent): a view should not offer them.
    ``tool_named`` is False when the source names the call only by its kind
    (``tool`` is then ``execute``, ``edit``...: a rule for "this tool" would
    cover every such call). ``server_is_agent`` is True when ``server`` is a
    coding agent and the call one of its own tools: the server stands for
    everything the agent does.
    """


class _UpdateFields(TypedDict):
    tool_call_id: str
    title: str
    status: Status
    current_step: str | None
    progress: float | None
    cancellable: bool


_UpdateDetails = TypedDict(
    "_UpdateDetails",
    {
        "tool": str,
        "server": str,
        "class": ToolClass,
        "arguments": dict[str, Any],
        "outcome": Outcome | None,
        "result": str | None,
        "error": str | None,
        "approved_arguments": dict[str, Any] | None,
        "kind": ToolKind,
        "content": list[ContentBlock],
        "locations": list[Location],
        "decided_by": DecidedBy,
    },
    total=False,
)


class Update(_UpdateFields, _UpdateDetails):
    """The state of one tool call, sent whenever it changes.

    Always present: ``tool_call_id``, ``title``, ``status``, ``current_step``,
    ``progress`` (a fraction in [0, 1] or None) and ``cancellable``. The first
    (``pending``) update also names ``tool``, ``server``, ``class`` and
    ``arguments``; the first ``in_progress`` one carries ``approved_arguments``
    when the tool runs with arguments other than the model's; the final one
    (``completed``/``failed``) carries ``outcome``, ``result`` and ``error``
    (short strings, or None).

    ``kind``, ``content`` and ``locations`` come with any update that learns
    them (the first, or a later ``pending`` one when a source sends its input
    late; a final one may carry a terminal's output). ``decided_by`` is
    ``agent`` on the first ``in_progress`` update of a call nobody here was
    asked about.
    """


class Option(TypedDict):
    """One answer of a multiple-choice question."""

    id: str
    label: str


class _ChoiceFields(TypedDict):
    tool_call_id: str
    prompt: str
    options: list[Option]


TypedAnswer = Literal["other", "answer"]
"""What a choice's answer in the person's own words is: ``other``, an answer beside
its options (the person's "Other"); ``answer``, the answer itself (a question asked
in words, such as a name or a number, whose options only stand aside: a default,
Leave empty, Decline)."""


class Choice(_ChoiceFields, total=False):
    """A multiple-choice question from the ``ask_user`` tool.

    ``multiple``: the person may pick several options. Any question also takes
    a free-text answer (:class:`Answered`); ``typed`` says what that answer is
    (:data:`TypedAnswer`; ``other`` when absent).
    """

    multiple: bool
    typed: TypedAnswer


@dataclass(frozen=True)
class Allow:
    """Permission granted: the tool runs.

    ``arguments``, when not None, replaces the model's arguments (the person
    edited them); they are checked against the tool's schema again before it
    runs, and a call whose approved arguments do not fit fails
    ``invalid_arguments`` without running.
    """

    arguments: dict[str, Any] | None = None


@dataclass(frozen=True)
class Deny:
    """Permission refused; ``message`` is an optional note passed on to the model.

    ``reason`` is ``rejected`` (someone said no), ``expired`` (nobody answered in
    time) or ``interrupted`` (the turn was interrupted while asking).
    """

    reason: Literal["rejected", "expired", "interrupted"] = "rejected"
    message: str = ""


@dataclass(frozen=True)
class Picked:
    """The option the person picked; ``also``, more options of a ``multiple`` choice."""

    option_id: str
    also: tuple[str, ...] = ()

    @property
    def option_ids(self) -> tuple[str, ...]:
        """Every option picked, in order."""
        return (self.option_id, *self.also)


@dataclass(frozen=True)
class Answered:
    """A free-text answer to a question (the person's "Other")."""

    text: str


@dataclass(frozen=True)
class Unanswered:
    """A question that got no answer."""

    reason: Literal["expired", "no_answer", "interrupted"] = "no_answer"


_DENIED: dict[str, Outcome] = {
    "rejected": "denied",
    "expired": "expired",
    "interrupted": "interrupted",
}
_UNANSWERED: dict[str, Outcome] = {
    "expired": "expired",
    "interrupted": "interrupted",
    "no_answer": "no_answer",
}


def outcome_of(settled: Deny | Unanswered) -> Outcome:
    """How a call ends when its question was settled this way (a refusal or no answer)."""
    if isinstance(settled, Deny):
        return _DENIED.get(settled.reason, "denied")
    return _UNANSWERED.get(settled.reason, "no_answer")


CALLBACKS: tuple[str, ...] = (
    "tool_updated",
    "request_permission",
    "register_call",
    "ask_choice",
    "text_delta",
)


@runtime_checkable
class Interaction(Protocol):
    """What a turn asks around each tool call; ``context`` is the turn's own value."""

    def tool_updated(self, context: Any, update: Update) -> None:
        """A call appeared or changed: ``pending``, ``in_progress``, then its final status."""

    def request_permission(self, context: Any, request: Request) -> Allow | Deny:
        """Whether the call may run; anything but ``Allow``/``Deny``, or raising, denies."""

    def register_call(self, context: Any, tool_call_id: str, call: Call) -> None:
        """An allowed call is about to run: ``call.cancel()`` stops it."""

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Answered | Unanswered:
        """The model's multiple-choice question (``ask_user``), in place of a permission."""

    def text_delta(self, context: Any, text: str) -> None:
        """One streamed fragment of the answer."""


@runtime_checkable
class TurnHooks(Protocol):
    """The life of a turn around the callbacks; an interaction may implement all five.

    - ``turn_started(context, prompt)``: before anything else, in the turn's
      thread. It may raise to refuse the turn (the error propagates and nothing
      runs), for instance ``UnsupportedKernelError``.
    - ``turn_ended(context, result, error)``: exactly once after a successful
      ``turn_started``, in the turn's thread, whatever ended the turn; ``result``
      holds everything the turn produced, ``error`` what ended it early (a
      ``KeyboardInterrupt`` included). It must not raise; errors are logged.
    - ``interrupt(context)``: from any thread, when the turn is cancelled or the
      kernel interrupted: close open questions at once. It must not block.
    - ``idle(context)``: while a thread that runs or awaits the turn only
      waits (a tool runs, ``Turn.result`` polls): serve the frontend, never block.
    - ``serve(context, done)``: a coroutine an async cell runs while it awaits
      the turn; it keeps the frontend served and returns once ``done()`` is true.
    """

    def turn_started(self, context: Any, prompt: str) -> None: ...

    def turn_ended(self, context: Any, result: TurnResult, error: BaseException | None) -> None: ...

    def interrupt(self, context: Any) -> None: ...

    def idle(self, context: Any) -> None: ...

    def serve(self, context: Any, done: Callable[[], bool]) -> Coroutine[Any, Any, None]: ...


@runtime_checkable
class PlanAndThoughts(Protocol):
    """An agent's plan and its streamed reasoning; an interaction may implement both.

    - ``plan_updated(context, entries)``: the whole plan, each time it changes.
    - ``thought_delta(context, text)``: one fragment of the agent's reasoning,
      which is never part of the answer (``TurnResult.text``).

    Called in the same order and thread discipline as the callbacks.
    """

    def plan_updated(self, context: Any, entries: list[PlanEntry]) -> None: ...

    def thought_delta(self, context: Any, text: str) -> None: ...


class UsageInfo(TypedDict):
    """The agent's context usage: tokens ``used`` of the context's ``size``, and the
    session's ``cost`` so far in ``currency`` (ISO 4217); None where it did not say."""

    used: int | None
    size: int | None
    cost: float | None
    currency: str | None


class AgentInfo(TypedDict, total=False):
    """Who runs a turn and under which rules, as far as its source knows.

    - ``agent``: the agent's name (``claude``, ``codex``, ``gemini``, a command's name);
    - ``mode``: the agent's asking mode in effect: its session mode (``default``),
      or for an agent without session modes the policy it was started with
      (Codex: its approval policy, ``untrusted``);
    - ``sandbox``: where its commands run (Codex: ``workspace-write``, or
      ``danger-full-access``, no sandbox at all);
    - ``settings``: which of its own settings it loaded: ``user`` (the person's
      own, not the project's) or ``project`` (the project's too: a repository's
      settings may allow commands or add hooks);
    - ``model``: the model it says it uses;
    - ``usage``: its context usage and cost as it last reported them.

    A call the agent runs under its own rules says ``decided_by: "agent"``; a
    view counts those from the cards rather than from here.
    """

    agent: str
    mode: str | None
    sandbox: str | None
    settings: str | None
    model: str | None
    usage: UsageInfo | None


@runtime_checkable
class AgentDetails(Protocol):
    """Who runs the turn; an interaction may implement it to show it.

    - ``agent_described(context, details)``: at the start of the turn, once the
      agent is known, and again whenever what it says changes (a new mode).
      ``details`` is the whole :class:`AgentInfo` each time.

    Called in the same order and thread discipline as the callbacks.
    """

    def agent_described(self, context: Any, details: AgentInfo) -> None: ...


@runtime_checkable
class Withdrawal(Protocol):
    """One question closed alone; an interaction that blocks on questions should implement it.

    - ``withdraw(context, tool_call_id)``: from any thread, when the source stopped
      waiting for that one call (a framework's own timeout or cancel around it):
      close its open question, if any, as interrupted, and leave every other
      question open. It must not block.

    An interaction without it gets :meth:`TurnHooks.interrupt` instead, which
    closes every open question of the turn.
    """

    def withdraw(self, context: Any, tool_call_id: str) -> None: ...


class HistoryMessage(TypedDict):
    """A message of an earlier turn: the person's ``prompt``, or the agent's ``text``
    (Markdown)."""

    type: Literal["prompt", "text"]
    text: str


class HistoryCall(TypedDict):
    """A tool call of an earlier turn, as its last update said it: ``completed`` or
    ``failed`` (a call the earlier turn left open: ``failed``, outcome ``interrupted``)."""

    type: Literal["call"]
    update: Update


HistoryEntry = HistoryMessage | HistoryCall
"""One entry of an earlier conversation, tagged by ``type``."""


@runtime_checkable
class SessionHistory(Protocol):
    """The earlier conversation of a session a turn continues; an interaction may implement it.

    - ``history_replayed(context, entries)``: once, at the start of a turn that
      continues an earlier session whose agent replayed it (an ACP agent's
      ``session/load``), before anything of the turn itself: the whole
      conversation, oldest first. It is a record: nothing in it is asked,
      allowed or run, and every call in it has ended.

    Called in the same order and thread discipline as the callbacks. An
    interaction without it shows no history; ``TurnResult.history`` keeps it.
    """

    def history_replayed(self, context: Any, entries: list[HistoryEntry]) -> None: ...


class DefaultTurnHooks:
    """:class:`TurnHooks` that do nothing: subclass it and override the hooks you need."""

    def turn_started(self, context: Any, prompt: str) -> None:
        return None

    def turn_ended(self, context: Any, result: TurnResult, error: BaseException | None) -> None:
        return None

    def interrupt(self, context: Any) -> None:
        return None

    def idle(self, context: Any) -> None:
        return None

    async def serve(self, context: Any, done: Callable[[], bool]) -> None:
        return None


@runtime_checkable
class Policy(Protocol):
    """A rule that decides some permission requests without asking anyone.

    ``decide`` returns ``Allow()``, ``Deny(...)``, or ``None`` when it has no rule
    for the request (ask the person; standing alone, a policy denies then).
    """

    def decide(self, request: Request) -> Allow | Deny | None: ...


def implements(obj: object) -> bool:
    """Whether ``obj`` has every callback of :class:`Interaction`, each callable (a class
    does not: its callbacks need an instance)."""
    return not isinstance(obj, type) and all(
        callable(getattr(obj, name, None)) for name in CALLBACKS
    )


def valid(value: object) -> bool:
    """Whether ``value`` is an ``(interaction, context)`` pair whose interaction has every callback.

    The shape a turn's ``interaction`` option takes; a bare interaction is not a
    pair (a turn accepts it too, with ``None`` for the context).
    """
    return isinstance(value, tuple) and len(value) == 2 and implements(value[0])


def resolve(value: object) -> tuple[Interaction, Any] | None:
    """Normalise a turn's ``interaction`` option to a pair, or ``None`` for no interaction.

    Raises :class:`TypeError` for anything that is neither a pair nor a bare interaction
    (a class, such as ``NotebookInteraction`` without its parentheses, included).
    """
    if value is None:
        return None
    given = value[0] if isinstance(value, tuple) and len(value) == 2 else value
    if isinstance(given, type):
        raise TypeError(
            f"interaction is the class {given.__name__}, not an interaction: "
            f"pass an instance: `{given.__name__}()`"
        )
    if isinstance(value, tuple) and len(value) == 2 and implements(value[0]):
        interaction: Interaction = value[0]
        return interaction, value[1]
    if implements(value):
        bare: Interaction = value  # type: ignore[assignment]
        return bare, None
    missing = [name for name in CALLBACKS if not callable(getattr(value, name, None))]
    raise TypeError(
        "interaction must be an Interaction or an (interaction, context) pair; "
        f"{type(value).__name__} lacks {', '.join(missing)}"
    )
