"""What the widget and its frontend share: the cards, questions and custom messages.

Mirrored by ``js/src/model.d.ts`` (a test keeps the two in step) and described
in ``docs/widget-protocol.md``. Every message from the frontend goes through
:func:`parse`, which returns a typed message or the reason it was refused;
text from the frontend is made safe to send back (no lone surrogates).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from typing import Any, Final, Literal, TypedDict, get_args

from ..interaction import (
    DecidedBy,
    ImageType,
    Location,
    Outcome,
    OutputName,
    PlanEntry,
    Status,
    ToolClass,
    ToolKind,
    TypedAnswer,
)

__all__ = [
    "ANSWER",
    "CANCEL",
    "PROTOCOL_VERSION",
    "RENDERED",
    "AnswerMessage",
    "CallMessage",
    "CancelMessage",
    "Card",
    "CardBlock",
    "CardCode",
    "CardDiff",
    "CardHtml",
    "CardImage",
    "CardOutput",
    "CardTerminal",
    "CardText",
    "ChoiceOption",
    "DiffRow",
    "DiffSign",
    "FrontendMessage",
    "GoneMessage",
    "HistoryCard",
    "HistoryItem",
    "HistoryText",
    "NeedFrontendMessage",
    "PingMessage",
    "PlanMessage",
    "PongMessage",
    "Question",
    "RenderedMessage",
    "Scope",
    "ScopeOffer",
    "Settlement",
    "TextMessage",
    "ThoughtMessage",
    "Verdict",
    "claimed_name",
    "clean_text",
    "clean_value",
    "parse",
]

PROTOCOL_VERSION: Final = 7
"""The version of this protocol, synced as the ``protocol_version`` trait.

1: state saved before the protocol had a version (no trait; views read it with
their shims for missing fields). 2: cards carry ``kind``, ``content``,
``locations`` and ``decided_by``; a permission says whether it is ``editable``;
the turn has a ``plan`` and ``thoughts``. 3: a person's answer says who gave it
(``username``, ``display_name`` and ``page`` of the view that answered, as that
view claimed them). 4: a question carries the ``version`` of the call it shows,
and a view's answer the version it was made on. 5: a diff block carries the rows
the kernel computed from the whole texts (no ``old_text`` and ``new_text``), every
block says how much of it is ``cut``, and a card says whether it is
``incomplete`` and whether it shows ``invisible`` characters. 6: blocks of code
(``code``) and of what running it produced (``output``, ``html``, ``image``). 7: a
turn that continues an earlier session carries its ``history`` (and
``history_hidden``), and a question says what an answer in words is (``typed``). A
view renders any version up to its own; state of a newer version renders what the
view knows, with a note that the page's frontend is older than the kernel's.
"""

RENDERED: Final = "rendered"
ANSWER: Final = "answer"
CANCEL: Final = "cancel"
PONG: Final = "pong"
GONE: Final = "gone"
NEED_FRONTEND: Final = "need_frontend"
MAX_SEQ: Final = 2**53 - 1
"""Largest ping number and question version (JavaScript's largest exact integer)."""

Verdict = Literal["allow", "deny", "picked", "expired", "interrupted", "no_answer"]
"""How a question was settled; who settled it is a :data:`~mead_notebook.interaction.DecidedBy`."""
Scope = Literal["tool", "server", "class", "command", "prefix", "folder"]
"""What an "Allow always" or "Deny always" covers (:mod:`.rules`): this tool, this
server, every ``read`` call, this exact command, a command prefix, or edits in a folder."""


class ScopeOffer(TypedDict):
    """One scope a permission offers to remember, and what it would cover, in words."""

    scope: Scope
    label: str


TurnStatus = Literal["idle", "running", "done", "error", "interrupted"]


class Settlement(TypedDict):
    """How a question was settled.

    ``option_ids`` lists every option picked (one unless the choice is
    ``multiple``; ``option_id`` is the first); ``text`` is an "Other" answer;
    ``arguments`` the arguments the person approved when they differ from the
    request's; ``rule`` describes the "Allow always" rule that answered (``by``
    ``rule``) or that this answer made. ``username``, ``display_name`` and
    ``page`` say which view's person answered (``by`` ``person``), as that view
    claimed them (not an authentication); None when it said nothing.
    """

    decision: Verdict
    option_id: str | None
    option_ids: list[str] | None
    text: str | None
    arguments: dict[str, Any] | None
    rule: str | None
    by: DecidedBy
    note: str
    username: str | None
    display_name: str | None
    page: str | None


class ChoiceOption(TypedDict):
    """One option of a choice, as a view shows it."""

    id: str
    label: str


class Question(TypedDict):
    """The question on a card; ``deadline`` in epoch milliseconds, or None.

    A permission offers ``scopes`` for "Allow always" and "Deny always" (each
    with its label; :mod:`.rules` says which a call offers) and ``schema``, the
    tool's JSON schema, for editing the arguments. A choice may be ``multiple``
    (pick several) and always takes a text in the person's own words, which
    ``typed`` says is ``other`` (an answer beside the options) or ``answer``
    (the answer itself: the options only stand aside); a permission says
    ``other``. ``rejected`` says why the
    last answer from a view was refused (invalid edited arguments), until a
    valid one settles the question;
    ``rejections`` counts those refusals, so a view sees each one, even a second
    refusal for the same reason. A permission that is not ``editable`` (its
    source cannot take edited arguments or a denial message, like an ACP agent)
    offers neither; a choice is always ``editable``. ``version`` is the version
    of the call the question shows: 1 when it opens, one more each time the
    call's shown arguments, content, kind, locations or title change while it
    is open; an answer made on an older version is refused.
    """

    id: str
    kind: Literal["permission", "choice"]
    prompt: str | None
    options: list[ChoiceOption] | None
    multiple: bool
    typed: TypedAnswer
    scopes: list[ScopeOffer]
    schema: dict[str, Any] | None
    editable: bool
    deadline: int | None
    rejected: str | None
    rejections: int
    version: int
    answer: Settlement | None


DiffSign = Literal[" ", "-", "+", "@", "\\"]
"""A diff row's kind: context, removed, added, a hunk header, or "No newline at end of file"."""


class DiffRow(TypedDict):
    """One row of a unified diff, as the kernel computed it from the whole texts.

    ``old`` and ``new`` are 1-based line numbers (None where a side has no line);
    ``text`` is the line without its ending, at most :data:`MAX_ROW_TEXT`
    characters, and ``cut`` how many more characters the line has.
    """

    sign: DiffSign
    old: int | None
    new: int | None
    text: str
    cut: int


class CardText(TypedDict):
    """Text that says what a call will do; ``cut``: characters not shown."""

    type: Literal["text"]
    text: str
    cut: int


class CardDiff(TypedDict):
    """A change to one file, as a card shows it.

    ``rows`` are the unified diff's first rows (at most :data:`MAX_DIFF_ROWS`);
    ``added`` and ``removed`` count the whole diff's lines, ``hidden`` the changed
    lines that are not among the rows, and ``cut`` the characters of the path
    and the rows not shown. ``new_file``: the file does not exist yet.
    """

    type: Literal["diff"]
    path: str
    new_file: bool
    rows: list[DiffRow]
    added: int
    removed: int
    hidden: int
    cut: int


class CardTerminal(TypedDict):
    """A shell command, where it runs, and once it ran its output and exit code.

    ``cut``: characters of the command, the directory and the output not shown.
    """

    type: Literal["terminal"]
    command: str
    cwd: str | None
    output: str | None
    exit_code: int | None
    cut: int


class CardCode(TypedDict):
    """Code a call will run or put in the notebook, in ``language`` (a short lowercase
    name, ``text`` when the source gave none that looks like one); ``cut``: characters
    of the code not shown."""

    type: Literal["code"]
    language: str
    code: str
    cut: int


class CardOutput(TypedDict):
    """Text that running code produced: what it printed (``stdout``, ``stderr``), its
    ``result`` or the ``error`` it raised; ``cut``: characters not shown."""

    type: Literal["output"]
    name: OutputName
    text: str
    cut: int


class CardHtml(TypedDict):
    """A rich output (a DataFrame's table): ``html`` as the kernel sanitised it (nh3,
    the static transcript's rules; every view sanitises it again before showing it),
    None when it is larger than :data:`MAX_HTML` or past the card's share of rich
    output (:data:`MAX_RICH`); ``text``, the output as text; ``cut``: characters of
    either not shown."""

    type: Literal["html"]
    html: str | None
    text: str
    cut: int


class CardImage(TypedDict):
    """An image (a figure): base64 ``data`` of ``mime_type``, empty when it was not a
    valid image of that type, larger than :data:`MAX_IMAGE` or past :data:`MAX_RICH`
    (``cut`` then counts its characters); ``alt`` says what it shows in words."""

    type: Literal["image"]
    mime_type: ImageType
    data: str
    alt: str
    cut: int


CardBlock = CardText | CardDiff | CardTerminal | CardCode | CardOutput | CardHtml | CardImage
"""One block of what a call will do or did, as a card shows it, tagged by ``type``."""


Card = TypedDict(
    "Card",
    {
        "tool_call_id": str,
        "title": str,
        "tool": str,
        "server": str,
        "class": ToolClass | None,
        "arguments": dict[str, Any],
        "status": Status,
        "outcome": Outcome | None,
        "current_step": str | None,
        "progress": float | None,
        "cancellable": bool,
        "result": str | None,
        "error": str | None,
        "question": Question | None,
        "approved_arguments": dict[str, Any] | None,
        "text_offset": int,
        "kind": ToolKind | None,
        "content": list[CardBlock],
        "locations": list[Location],
        "decided_by": DecidedBy | None,
        "blocks_hidden": int,
        "locations_hidden": int,
        "incomplete": bool,
        "invisible": bool,
    },
)
"""One tool call as a view draws it (``class`` is a keyword, hence this form).

``approved_arguments`` are what the tool ran with when the person edited them
(None: as asked). ``text_offset`` is where the call belongs in the turn's text
(UTF-16 code units of ``text`` streamed before the model asked for it), so every
view interleaves text and cards in the order they happened. ``kind`` is what
the call does (None: known only by its ``class``), ``content`` what it will do
or did (text, a diff, a terminal command), ``locations`` the files it touches;
``decided_by`` is ``agent`` for a call the agent ran under its own rules
without asking anyone here (else None: its question, if any, says who decided).

``blocks_hidden`` and ``locations_hidden`` count the blocks and locations past
:data:`MAX_BLOCKS` that are not shown. ``incomplete`` is true when the card does
not show all of what the call will do: a block was cut, a diff has changed lines
not among its rows, or blocks or locations are not shown. ``invisible`` is true
when text the card shows before a decision (title, tool, server, arguments,
content, locations, current step, the question's prompt and options) has an
invisible or bidirectional character (:mod:`.reveal`). Keys never allow a call
whose card is either.
"""


class HistoryText(TypedDict):
    """A message of an earlier turn: the person's ``prompt`` or the agent's ``text``
    (Markdown); ``cut``: characters not shown."""

    type: Literal["prompt", "text"]
    text: str
    cut: int


class HistoryCard(TypedDict):
    """A tool call of an earlier turn: a card that has ended and asks nothing."""

    type: Literal["call"]
    card: Card


HistoryItem = HistoryText | HistoryCard
"""One entry of the earlier conversation a turn continues, as a view shows it."""


class TextMessage(TypedDict):
    """Kernel to frontend: the text from UTF-16 offset ``start`` on is ``delta``."""

    type: Literal["text"]
    start: int
    delta: str


class ThoughtMessage(TypedDict):
    """Kernel to frontend: the thoughts from UTF-16 offset ``start`` on are ``delta``."""

    type: Literal["thought"]
    start: int
    delta: str


class PlanMessage(TypedDict):
    """Kernel to frontend: the whole plan, each time it changes."""

    type: Literal["plan"]
    entries: list[PlanEntry]


class CallMessage(TypedDict):
    """Kernel to frontend: one whole card."""

    type: Literal["call"]
    card: Card


class PingMessage(TypedDict):
    """Kernel to frontend, while a question waits: every view answers with a pong."""

    type: Literal["ping"]
    seq: int


class RenderedMessage(TypedDict):
    """Frontend to kernel: a view has rendered (someone can answer)."""

    type: Literal["rendered"]


class AnswerMessage(TypedDict):
    """Frontend to kernel: the answer to a question.

    A permission carries ``decision`` (allow or deny), on allow optionally the
    edited ``arguments``; with either, ``remember``: the scope of an "Allow always"
    or "Deny always" among those the question offers. A
    choice carries ``option_ids`` (or the older single ``option_id``) or an
    "Other" ``text``, and no decision. ``note`` is the person's reason.
    ``username`` and ``display_name`` are who the page says its user is (the
    Jupyter server's identity, or the kernel connection's user name), ``page`` a
    random id of the answering page; a malformed one is read as None.
    ``version`` is the version of the question the answer was made on (None:
    the message names none, read as the first).
    """

    type: Literal["answer"]
    question_id: str
    decision: Literal["allow", "deny"] | None
    option_id: str | None
    option_ids: list[str] | None
    text: str | None
    arguments: dict[str, Any] | None
    remember: Scope | None
    note: str
    username: str | None
    display_name: str | None
    page: str | None
    version: int | None


class CancelMessage(TypedDict):
    """Frontend to kernel: cancel a running call."""

    type: Literal["cancel"]
    tool_call_id: str


class PongMessage(TypedDict):
    """Frontend to kernel: a view answers the ping numbered ``seq``."""

    type: Literal["pong"]
    seq: int


class GoneMessage(TypedDict):
    """Frontend to kernel: a view was disposed."""

    type: Literal["gone"]


class NeedFrontendMessage(TypedDict):
    """Frontend to kernel: this page does not know the shared frontend widget."""

    type: Literal["need_frontend"]


FrontendMessage = (
    RenderedMessage
    | AnswerMessage
    | CancelMessage
    | PongMessage
    | GoneMessage
    | NeedFrontendMessage
)
KernelMessage = TextMessage | ThoughtMessage | PlanMessage | CallMessage | PingMessage

MAX_NOTE = 500
"""Longest note kept from a frontend answer, in characters."""
MAX_ID = 200
"""Longest question, option or call id accepted from the frontend."""
MAX_TEXT = 2000
"""Longest "Other" answer kept, in characters."""
MAX_OPTIONS = 50
"""Most options one answer may pick."""
MAX_ARGUMENTS = 100_000
"""Largest edited arguments accepted, in characters of JSON."""
MAX_NAME = 100
"""Longest user name or display name accepted from a frontend; a longer one is unknown."""
_PAGE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_BLOCK_TEXT = 200_000
"""Longest text kept in one field of a content block (a text, a command, an output)."""
MAX_PATH = 4096
"""Longest path kept (a diff's, a location's, a working directory)."""
MAX_DIFF_ROWS = 500
"""Most rows of one diff synced to views; the changed lines past them are counted."""
MAX_ROW_TEXT = 500
"""Longest line of a diff row, in characters; the rest is counted."""
MAX_BLOCKS = 50
"""Most content blocks, and most locations, kept on one card."""
MAX_PLAN = 100
"""Most plan entries kept."""
MAX_HTML = 200_000
"""Longest sanitised HTML kept in one block, in characters; a longer one shows as text."""
MAX_IMAGE = 2_000_000
"""Largest image kept in one block, in characters of base64 (about 1.5 MB)."""
MAX_RICH = 4_000_000
"""Most characters of HTML and image data one card keeps; the blocks past it show as text."""
MAX_HISTORY = 200
"""Most entries of an earlier conversation synced to views (the latest); the rest are counted."""
MAX_HISTORY_TEXT = 20_000
"""Longest message of an earlier conversation synced to views, in characters."""


def clean_text(text: str, limit: int | None = None) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (JSON cannot send them), shortened."""
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def clean_value(value: Any) -> Any:
    """``value`` with :func:`clean_text` applied to every string inside it."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_value(v) for v in value]
    return value


def parse(content: object) -> FrontendMessage | str:
    """The typed message in ``content``, or a string saying why it was refused."""
    if not isinstance(content, Mapping):
        return "not an object"
    kind = content.get("type")
    if kind == RENDERED:
        return RenderedMessage(type="rendered")
    if kind == CANCEL:
        tool_call_id = content.get("tool_call_id")
        if not isinstance(tool_call_id, str) or not _is_id(tool_call_id):
            return "a cancel needs a tool_call_id"
        return CancelMessage(type="cancel", tool_call_id=tool_call_id)
    if kind == ANSWER:
        return _parse_answer(content)
    if kind == PONG:
        seq = content.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int) or not 0 < seq <= MAX_SEQ:
            return "a pong needs the seq of its ping"
        return PongMessage(type="pong", seq=seq)
    if kind == GONE:
        return GoneMessage(type="gone")
    if kind == NEED_FRONTEND:
        return NeedFrontendMessage(type="need_frontend")
    return f"unknown type {kind!r}"


def _parse_answer(content: Mapping[str, Any]) -> AnswerMessage | str:
    question_id = content.get("question_id")
    if not isinstance(question_id, str) or not _is_id(question_id):
        return "an answer needs a question_id"
    note = content.get("note", "")
    if note is None:
        note = ""
    if not isinstance(note, str):
        return "the note must be a string"
    decision = content.get("decision")
    if decision is not None and decision not in ("allow", "deny"):
        return f"unknown decision {decision!r}"
    picked = _option_ids(content)
    if isinstance(picked, str):
        return picked
    text = content.get("text")
    if text is not None and (not isinstance(text, str) or not text.strip()):
        return "an Other answer must be non-empty text"
    arguments = content.get("arguments")
    if arguments is not None and (decision != "allow" or not _fits(arguments)):
        return "edited arguments must be a JSON object of modest size, with an allow"
    remember = content.get("remember")
    if remember is not None and (decision is None or remember not in get_args(Scope)):
        return f"remember must be one of {', '.join(get_args(Scope))}, with a decision"
    version = content.get("version")
    if version is not None and (
        isinstance(version, bool) or not isinstance(version, int) or not 0 < version <= MAX_SEQ
    ):
        return f"the version must be a positive integer, not {version!r}"
    answers = sum(x is not None for x in (decision, picked, text))
    if answers != 1:
        return "an answer carries one of: a decision, options, or an Other text"
    return AnswerMessage(
        type="answer",
        question_id=question_id,
        decision=decision,
        option_id=picked[0] if picked else None,
        option_ids=picked,
        text=None if text is None else clean_text(text, MAX_TEXT),
        arguments=None if arguments is None else clean_value(arguments),
        remember=remember,
        note=clean_text(note, MAX_NOTE),
        username=claimed_name(content.get("username")),
        display_name=claimed_name(content.get("display_name")),
        page=_page(content.get("page")),
        version=version,
    )


def _page(value: object) -> str | None:
    """A page id (letters, digits, ``-`` and ``_``, 64 at most), or None."""
    return value if isinstance(value, str) and _PAGE.fullmatch(value) else None


def claimed_name(value: object) -> str | None:
    """A user name a frontend claims, trimmed; None when missing, empty, too long or odd.

    Odd: control or format characters (which could disguise the name in a log or
    a view), or lone surrogates.
    """
    if not isinstance(value, str):
        return None
    name = value.strip()
    if not name or len(name) > MAX_NAME or clean_text(name) != name:
        return None
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        return None
    return name


def _option_ids(content: Mapping[str, Any]) -> list[str] | str | None:
    """The options an answer picks, None for none, or why they are malformed."""
    option_id, option_ids = content.get("option_id"), content.get("option_ids")
    if option_id is not None and option_ids is not None:
        return "an answer carries option_id or option_ids, not both"
    if option_id is not None:
        option_ids = [option_id]
    if option_ids is None:
        return None
    if (
        not isinstance(option_ids, list)
        or not 0 < len(option_ids) <= MAX_OPTIONS
        or not all(isinstance(o, str) and _is_id(o) for o in option_ids)
        or len(set(option_ids)) != len(option_ids)
    ):
        return "options must be a short list of distinct short ids"
    return list(option_ids)


def _fits(arguments: object) -> bool:
    """Whether edited arguments are a JSON object no larger than :data:`MAX_ARGUMENTS`."""
    if not isinstance(arguments, dict):
        return False
    try:
        return len(json.dumps(arguments)) <= MAX_ARGUMENTS
    except (TypeError, ValueError, RecursionError):
        return False


def _is_id(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_ID and clean_text(value) == value
