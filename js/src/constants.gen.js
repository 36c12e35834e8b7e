// Written by scripts/gen_protocol.py from mead_notebook/notebook/protocol.py: do not edit.
// The protocol's version, limits and words, shared with the kernel.

/** @type {number} */
export const PROTOCOL_VERSION = 7;
/** @type {number} */
export const MAX_NOTE = 500;
/** @type {number} */
export const MAX_ID = 200;
/** @type {number} */
export const MAX_TEXT = 2000;
/** @type {number} */
export const MAX_OPTIONS = 50;
/** @type {number} */
export const MAX_ARGUMENTS = 100000;
/** @type {number} */
export const MAX_NAME = 100;
/** @type {number} */
export const MAX_DIFF_ROWS = 500;
/** @type {number} */
export const MAX_ROW_TEXT = 500;
/** @type {readonly (readonly number[])[]} */
export const INVISIBLE_FILLERS = Object.freeze([
  [
    847,
    847
  ],
  [
    4447,
    4448
  ],
  [
    6068,
    6069
  ],
  [
    6155,
    6157
  ],
  [
    6159,
    6159
  ],
  [
    12644,
    12644
  ],
  [
    65440,
    65440
  ],
  [
    917760,
    917999
  ]
]);
/** @type {string} */
export const NEWLINE_MARK = "⏎";
/** @type {readonly string[]} */
export const READ_KINDS = Object.freeze([
  "read",
  "search",
  "think"
]);
/** @type {readonly string[]} */
export const DESTRUCTIVE_KINDS = Object.freeze([
  "delete",
  "edit",
  "execute",
  "move"
]);
/** @type {Readonly<Record<string, string>>} */
export const OUTCOME_LABEL = Object.freeze({
  "denied": "Denied",
  "cancelled": "Cancelled",
  "expired": "Expired",
  "interrupted": "Interrupted",
  "timeout": "Timed out",
  "error": "Error",
  "unknown": "Unknown tool",
  "invalid_arguments": "Invalid arguments",
  "no_answer": "No answer"
});
/** @type {Readonly<Record<string, string>>} */
export const STATUS_LABEL = Object.freeze({
  "pending": "Pending",
  "in_progress": "In progress",
  "completed": "Completed",
  "failed": "Failed"
});
/** @type {Readonly<Record<string, string>>} */
export const BY_LABEL = Object.freeze({
  "person": "by you",
  "policy": "by policy",
  "rule": "by your “Allow always” rule",
  "timeout": "on timeout",
  "fallback": "by the fallback (nobody to answer)",
  "kernel": "by the kernel",
  "agent": "by the agent"
});
/** @type {string} */
export const BY_NAME = "by {name}";
/** @type {string} */
export const BY_OTHER_VIEW = "by another view";
/** @type {string} */
export const TOO_LATE = "Too late: {who} already {verdict} this; your answer was not used.";
/** @type {string} */
export const TOO_LATE_SETTLED = "Too late: this was settled first ({how}); your answer was not used.";
/** @type {Readonly<Record<string, string>>} */
export const VERDICT_DONE = Object.freeze({
  "allow": "allowed",
  "deny": "denied",
  "picked": "answered"
});
/** @type {Readonly<Record<string, string>>} */
export const DECISION_LABEL = Object.freeze({
  "allow": "Allowed",
  "deny": "Denied",
  "picked": "Answered",
  "expired": "Expired",
  "interrupted": "Interrupted",
  "no_answer": "No answer"
});
/** @type {readonly string[]} */
export const UNMADE = Object.freeze([
  "expired",
  "interrupted",
  "no_answer"
]);
/** @type {Readonly<Record<string, string>>} */
export const STOP_REASON = Object.freeze({
  "end_turn": "Finished",
  "max_rounds": "Stopped: maximum number of rounds reached",
  "interrupted": "Interrupted"
});
/** @type {Readonly<Record<string, string>>} */
export const TURN_STATUS = Object.freeze({
  "idle": "Idle",
  "running": "Running…",
  "done": "Done",
  "error": "Error",
  "interrupted": "Interrupted"
});
/** @type {Readonly<Record<string, string>>} */
export const CLASS_HINT = Object.freeze({
  "read": "reads only",
  "effect": "can change things"
});
/** @type {Readonly<Record<string, string>>} */
export const KIND_HINT = Object.freeze({
  "read": "reads only",
  "search": "searches only",
  "fetch": "reaches the network",
  "think": "thinks only",
  "edit": "changes files",
  "delete": "deletes",
  "move": "moves or renames",
  "execute": "runs a command",
  "other": "can change things"
});
/** @type {Readonly<Record<string, string>>} */
export const PLAN_GLYPH = Object.freeze({
  "pending": "○",
  "in_progress": "◐",
  "completed": "●"
});
/** @type {Readonly<Record<string, string>>} */
export const TYPED_LABEL = Object.freeze({
  "other": "Other (your own answer)",
  "answer": "Your answer"
});
/** @type {string} */
export const HISTORY_SUMMARY = "Earlier in this session";
/** @type {string} */
export const AGENT_DECIDED = "Allowed by the agent (its own rules; nobody here was asked)";
/** @type {string} */
export const NOT_EDITABLE = "This agent takes only Allow or Deny: no edited arguments, no reason sent back.";
/** @type {string} */
export const INVISIBLE_WARNING = "This call contains invisible or bidirectional characters, shown as ⟨U+…⟩: what you read may not be what runs.";
/** @type {string} */
export const INCOMPLETE_WARNING = "This card does not show all of what the call will do: what is left out is said below.";
/** @type {string} */
export const NOT_SHOWN = "{n} more {what} not shown";
/** @type {Readonly<Record<string, string>>} */
export const UNSHOWN_ONE = Object.freeze({
  "line": "changed line",
  "character": "character",
  "block": "block",
  "location": "location",
  "entry": "earlier entry"
});
/** @type {Readonly<Record<string, string>>} */
export const UNSHOWN_MANY = Object.freeze({
  "line": "changed lines",
  "character": "characters",
  "block": "blocks",
  "location": "locations",
  "entry": "earlier entries"
});
/** @type {string} */
export const NO_NEWLINE = "No newline at end of file";
/** @type {Readonly<Record<string, string>>} */
export const OUTPUT_LABEL = Object.freeze({
  "stdout": "Output",
  "stderr": "Standard error",
  "result": "Out",
  "error": "Traceback"
});
/** @type {string} */
export const RICH_NOT_SHOWN = "{what} not shown ({n} characters: over the card's limit, or not valid)";
/** @type {string} */
export const KERNEL_GONE = "Kernel gone";
/** @type {string} */
export const KERNEL_GONE_NOTE = "The kernel went away (restarted or shut down): this question can no longer be answered, and nothing it asked runs.";
/** @type {string} */
export const KERNEL_GONE_STATUS = "Stopped: the kernel went away";
/** @type {string} */
export const NOT_CONNECTED_NOTE = "This view is not connected to the kernel: it cannot send an answer. It can once the kernel shows the question here again.";
