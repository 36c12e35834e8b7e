"""The words every view uses: outcomes, statuses, who decided, verdicts, kinds, plan glyphs.

Each table has one entry per value of its type in the contract (a test checks it).

The one source of these words: ``scripts/gen_protocol.py`` writes them into
``js/src/protocol.gen.js`` for the live view, and the static transcript and
Copy as Markdown read them from here, so all three say the same thing.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "AGENT_DECIDED",
    "BY",
    "BY_NAME",
    "BY_OTHER_VIEW",
    "CLASS_HINT",
    "DECISION",
    "HISTORY_SUMMARY",
    "INCOMPLETE_WARNING",
    "INVISIBLE_WARNING",
    "KIND_HINT",
    "NOT_EDITABLE",
    "NOT_SHOWN",
    "NO_NEWLINE",
    "OUTCOME_LABEL",
    "OUTPUT_LABEL",
    "PLAN_GLYPH",
    "RICH_NOT_SHOWN",
    "STATUS_LABEL",
    "STOP_REASON",
    "TOO_LATE",
    "TOO_LATE_SETTLED",
    "TURN_STATUS",
    "TYPED_LABEL",
    "UNMADE",
    "UNSHOWN_MANY",
    "UNSHOWN_ONE",
    "VERDICT_DONE",
    "beside",
    "not_shown",
]

OUTCOME_LABEL: Final[dict[str, str]] = {
    "denied": "Denied",
    "cancelled": "Cancelled",
    "expired": "Expired",
    "interrupted": "Interrupted",
    "timeout": "Timed out",
    "error": "Error",
    "unknown": "Unknown tool",
    "invalid_arguments": "Invalid arguments",
    "no_answer": "No answer",
}
"""Why a failed call failed, as its card's status says it."""
STATUS_LABEL: Final[dict[str, str]] = {
    "pending": "Pending",
    "in_progress": "In progress",
    "completed": "Completed",
    "failed": "Failed",
}
BY: Final[dict[str, str]] = {
    "person": "by you",
    "policy": "by policy",
    "rule": "by your “Allow always” rule",
    "timeout": "on timeout",
    "fallback": "by the fallback (nobody to answer)",
    "kernel": "by the kernel",
    "agent": "by the agent",
}
"""Who settled a question, as the end of a sentence. ``person`` reads "by you" only in
the page that answered (or another page of the same user); elsewhere
:data:`BY_NAME` or :data:`BY_OTHER_VIEW`."""
BY_NAME: Final = "by {name}"
"""A person's answer seen from another page, which claimed the user ``name``."""
BY_OTHER_VIEW: Final = "by another view"
"""A person's answer seen from another page, which claimed no user name."""
TOO_LATE: Final = "Too late: {who} already {verdict} this; your answer was not used."
"""What a view whose answer arrived after the question was settled says (``who``: a
name or "another view") when a person answered first."""
TOO_LATE_SETTLED: Final = "Too late: this was settled first ({how}); your answer was not used."
"""The same when nobody answered first (a rule, the timeout, the kernel): ``how`` says how."""
VERDICT_DONE: Final[dict[str, str]] = {"allow": "allowed", "deny": "denied", "picked": "answered"}
"""A person's verdict as ``TOO_LATE`` says it."""
DECISION: Final[dict[str, str]] = {
    "allow": "Allowed",
    "deny": "Denied",
    "picked": "Answered",
    "expired": "Expired",
    "interrupted": "Interrupted",
    "no_answer": "No answer",
}
UNMADE: Final[tuple[str, ...]] = ("expired", "interrupted", "no_answer")
"""Verdicts that happened to a question rather than being made: no "by" is added."""
AGENT_DECIDED: Final = "Allowed by the agent (its own rules; nobody here was asked)"
"""What a call with ``decided_by: "agent"`` says of its decision."""
NOT_EDITABLE: Final = (
    "This agent takes only Allow or Deny: no edited arguments, no reason sent back."
)
"""The line a permission that is not ``editable`` shows instead of the editor and reason."""
STOP_REASON: Final[dict[str, str]] = {
    "end_turn": "Finished",
    "max_rounds": "Stopped: maximum number of rounds reached",
    "interrupted": "Interrupted",
}
TURN_STATUS: Final[dict[str, str]] = {
    "idle": "Idle",
    "running": "Running…",
    "done": "Done",
    "error": "Error",
    "interrupted": "Interrupted",
}
CLASS_HINT: Final[dict[str, str]] = {"read": "reads only", "effect": "can change things"}
KIND_HINT: Final[dict[str, str]] = {
    "read": "reads only",
    "search": "searches only",
    "fetch": "reaches the network",
    "think": "thinks only",
    "edit": "changes files",
    "delete": "deletes",
    "move": "moves or renames",
    "execute": "runs a command",
    "other": "can change things",
}
"""What a call of each kind may do, as the badge's hint says it."""
PLAN_GLYPH: Final[dict[str, str]] = {"pending": "○", "in_progress": "◐", "completed": "●"}
"""The glyph of each plan entry's status."""
TYPED_LABEL: Final[dict[str, str]] = {"other": "Other (your own answer)", "answer": "Your answer"}
"""The label of a choice's box for an answer in words, by what that answer is
(:data:`~mead_notebook.interaction.TypedAnswer`): beside the options, or the answer."""
HISTORY_SUMMARY: Final = "Earlier in this session"
"""The heading of the earlier conversation a turn continues (it counts what it holds)."""
INVISIBLE_WARNING: Final = (
    "This call contains invisible or bidirectional characters, shown as ⟨U+…⟩: "
    "what you read may not be what runs."
)
"""What a card with ``invisible`` characters says above what the call will do."""
INCOMPLETE_WARNING: Final = (
    "This card does not show all of what the call will do: what is left out is said below."
)
"""What an ``incomplete`` card says above what the call will do."""
NOT_SHOWN: Final = "{n} more {what} not shown"
"""How a view says what it leaves out: ``n`` (with thousands separated by commas) and
what, from :data:`UNSHOWN_ONE` or :data:`UNSHOWN_MANY`."""
UNSHOWN_ONE: Final[dict[str, str]] = {
    "line": "changed line",
    "character": "character",
    "block": "block",
    "location": "location",
    "entry": "earlier entry",
}
UNSHOWN_MANY: Final[dict[str, str]] = {
    "line": "changed lines",
    "character": "characters",
    "block": "blocks",
    "location": "locations",
    "entry": "earlier entries",
}
OUTPUT_LABEL: Final[dict[str, str]] = {
    "stdout": "Output",
    "stderr": "Standard error",
    "result": "Out",
    "error": "Traceback",
}
"""What each output of running code is called where it shows: what it printed, its
last expression's value, the error it raised."""
RICH_NOT_SHOWN: Final = "{what} not shown ({n} characters: over the card's limit, or not valid)"
"""What a rich output the kernel did not keep says instead (``what``: ``HTML``, or the
image's type); ``n`` as in :data:`NOT_SHOWN`."""
NO_NEWLINE: Final = "No newline at end of file"
KERNEL_GONE: Final = "Kernel gone"
"""A card's status once the kernel its view talks to went away before the call ended."""
KERNEL_GONE_NOTE: Final = (
    "The kernel went away (restarted or shut down): this question can no longer be "
    "answered, and nothing it asked runs."
)
"""What an open question says once its kernel went away."""
KERNEL_GONE_STATUS: Final = "Stopped: the kernel went away"
"""A running turn's status once its kernel went away."""
NOT_CONNECTED_NOTE: Final = (
    "This view is not connected to the kernel: it cannot send an answer. It can once "
    "the kernel shows the question here again."
)
"""What an open question says in a view drawn from a widget model without a comm (the
notebook's saved widget state) until the page has the widget's live model."""
"""A diff row after a last line that has no line ending, as unified diffs say it."""


def not_shown(n: int, what: str) -> str:
    """What is left out, said ("312 more changed lines not shown"); ``what``: a unit's key."""
    noun = (UNSHOWN_ONE if n == 1 else UNSHOWN_MANY)[what]
    return NOT_SHOWN.format(n=f"{n:,}", what=noun)


def beside(label: str, decision: str | None) -> str | None:
    """What a card's decision adds to its status label, or None: a decision that only
    repeats the label says nothing more, and one that starts with it ("No answer: nobody
    to answer" beside "No answer") adds only what follows."""
    if not decision or decision == label:
        return None
    return decision.removeprefix(f"{label}: ") or None
