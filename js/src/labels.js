// The words a view uses for outcomes, decisions, who decided, "Allow always"
// scopes and rules, the sentence that sums up a settled question, and what a
// card warns of and leaves out. The tables
// themselves come from the kernel's `notebook/labels.py` (constants.gen.js).

import {
  BY_LABEL,
  BY_NAME,
  BY_OTHER_VIEW,
  DECISION_LABEL,
  INCOMPLETE_WARNING,
  INVISIBLE_WARNING,
  KIND_HINT,
  NOT_SHOWN,
  OUTCOME_LABEL,
  TOO_LATE,
  TOO_LATE_SETTLED,
  UNMADE,
  UNSHOWN_MANY,
  UNSHOWN_ONE,
  VERDICT_DONE,
} from "./constants.gen.js";
import { cleanName } from "./identity.js";
import { isObject } from "./state.js";

export { BY_LABEL, DECISION_LABEL, OUTCOME_LABEL };

/** @typedef {import("./model").Settlement} Settlement */
/** @typedef {import("./model").Card} Card */
/** @typedef {import("./model").Outcome} Outcome */
/** @typedef {import("./model").Question} Question */
/** @typedef {import("./model").Scope} Scope */
/** @typedef {import("./model").Viewer} Viewer */

/** Verdicts that happened to a question rather than being made: no "by" is added. */
const UNMADE_SET = new Set(UNMADE);

/**
 * What an "Allow always" of `scope` covers, named after this card's tool and server.
 * @param {Scope} scope
 * @param {Pick<Card, "tool" | "server">} card
 * @returns {string}
 */
export function scopeLabel(scope, card) {
  const tool = typeof card.tool === "string" && card.tool ? card.tool : "?";
  const server = typeof card.server === "string" && card.server ? card.server : "?";
  if (scope === "tool") return `the tool ${tool}`;
  if (scope === "server") return `every tool on ${server}`;
  if (scope === "class") return "every read tool";
  return String(scope);
}

/**
 * A rule in words. The kernel names a rule by what it covers ("every call of
 * delete_file on local"); state saved before (protocol 4 and older) named it by
 * scope and value ("tool delete_file", "server files", "class read").
 * @param {string} rule
 * @returns {string}
 */
export function ruleLabel(rule) {
  const space = rule.indexOf(" ");
  const scope = space > 0 ? rule.slice(0, space) : "";
  const value = space > 0 ? rule.slice(space + 1) : "";
  if (scope === "tool") return `the tool ${value}`;
  if (scope === "server") return `every tool on ${value}`;
  if (scope === "class") return value === "read" ? "every read tool" : `every ${value} tool`;
  return rule;
}

/**
 * The label of a choice's option, or its id when it is not among the options.
 * @param {Question} question
 * @param {string} id
 */
function optionLabel(question, id) {
  const options = Array.isArray(question.options) ? question.options : [];
  const option = options.find((o) => isObject(o) && o.id === id && typeof o.label === "string");
  return option ? option.label : id;
}

/**
 * Whether a person's answer came from the viewer: its page, or another page of the same user.
 * @param {Partial<Settlement>} answer
 * @param {Viewer} viewer
 * @returns {boolean}
 */
export function fromViewer(answer, viewer) {
  if (typeof answer.page === "string" && answer.page === viewer.page) return true;
  const mine = viewer.username();
  return mine !== null && cleanName(answer.username) === mine;
}

/**
 * The name a person's answer claims (display name first), or "".
 * @param {Partial<Settlement>} answer
 * @returns {string}
 */
export function claimedName(answer) {
  return cleanName(answer.display_name) ?? cleanName(answer.username) ?? "";
}

/**
 * Who gave a person's answer, seen from `viewer`: "by you" where it came from,
 * "by <name>" or "by another view" elsewhere. State from before answers said who
 * (protocol 2 and older) reads "by you", as it did then.
 * @param {Partial<Settlement>} answer
 * @param {Viewer | null} viewer
 * @returns {string}
 */
export function byPerson(answer, viewer) {
  if (!("page" in answer) && !("username" in answer)) return BY_LABEL.person;
  if (viewer && fromViewer(answer, viewer)) return BY_LABEL.person;
  const name = claimedName(answer);
  return name ? BY_NAME.replace("{name}", name) : BY_OTHER_VIEW;
}

/**
 * What a view whose own answer lost says: "Too late: Bob already allowed this; ...",
 * or "" when the viewer did not answer this question or its answer is the one that counted.
 * @param {Question} question
 * @param {Viewer | null} viewer
 * @returns {string}
 */
export function lateNotice(question, viewer) {
  if (!viewer || typeof question.id !== "string" || !viewer.answered.has(question.id)) return "";
  /** @type {Partial<Settlement>} */
  const answer = isObject(question.answer) ? question.answer : {};
  if (answer.by === "person") {
    if (fromViewer(answer, viewer)) return "";
    const verdict = lookup(VERDICT_DONE, answer.decision) || "answered";
    return TOO_LATE.replace("{who}", claimedName(answer) || "another view").replace("{verdict}", verdict);
  }
  const how = describeAnswer(question, viewer);
  return TOO_LATE_SETTLED.replace("{how}", how.charAt(0).toLowerCase() + how.slice(1));
}

/**
 * A short sentence for a settled question, e.g. "Allowed by you" or
 * "Denied by Bob: wrong file"; it names the rule that answered or was made.
 * `viewer` is the page that shows it (null: no page's point of view).
 * @param {Question} question
 * @param {Viewer | null} [viewer]
 * @returns {string}
 */
export function describeAnswer(question, viewer = null) {
  /** @type {Partial<Settlement>} */
  const answer = isObject(question.answer) ? question.answer : {};
  const decision = typeof answer.decision === "string" ? answer.decision : "";
  const byKey = typeof answer.by === "string" ? answer.by : "";
  const byLabel = byKey === "person" ? byPerson(answer, viewer) : lookup(BY_LABEL, byKey);
  const by = byLabel ? ` ${byLabel}` : "";
  const rule = typeof answer.rule === "string" && answer.rule ? ruleLabel(answer.rule) : "";
  const picked = Array.isArray(answer.option_ids)
    ? answer.option_ids.filter((id) => typeof id === "string")
    : typeof answer.option_id === "string" && answer.option_id
      ? [answer.option_id]
      : [];
  let text;
  if (typeof answer.text === "string" && answer.text !== "") {
    text = `Answered “${answer.text}”${by}`;
  } else if (picked.length > 0) {
    text = `Chose ${picked.map((id) => `“${optionLabel(question, id)}”`).join(", ")}${by}`;
  } else if (decision === "allow" && byKey === "rule") {
    text = rule ? `Allowed${by} for ${rule}` : `Allowed${by}`;
  } else if (decision === "allow" && rule) {
    text = `Allowed${by}, and always from now on for ${rule}`;
  } else if (decision === "deny" && byKey === "rule") {
    text = rule ? `Denied by your “Deny always” rule for ${rule}` : "Denied by your “Deny always” rule";
  } else if (decision === "deny" && rule) {
    text = `Denied${by}, and always from now on for ${rule}`;
  } else if (lookup(DECISION_LABEL, decision)) {
    const label = lookup(DECISION_LABEL, decision);
    text = UNMADE_SET.has(decision) ? label : `${label}${by}`;
  } else {
    text = "Settled";
  }
  const note = typeof answer.note === "string" ? answer.note.trim() : "";
  return note ? `${text}: ${note}` : text;
}

/**
 * The table's own entry for `key` (never an inherited one like "constructor"), or "".
 * @param {Record<string, string>} table
 * @param {unknown} key
 * @returns {string}
 */
export function lookup(table, key) {
  return typeof key === "string" && Object.prototype.hasOwnProperty.call(table, key) ? table[key] : "";
}

/**
 * The kind the badge names: the card's kind when it says more than its class
 * (`other`, or none, falls back to the class), else "".
 * @param {Partial<Card>} card
 * @returns {string}
 */
export function badgeKind(card) {
  const kind = typeof card.kind === "string" ? card.kind : "";
  return lookup(KIND_HINT, kind) && kind !== "other" ? kind : "";
}

/**
 * What is left out, said: "312 more changed lines not shown".
 * @param {number} n
 * @param {"line" | "character" | "block" | "location" | "entry"} what
 * @returns {string}
 */
export function notShown(n, what) {
  const noun = lookup(n === 1 ? UNSHOWN_ONE : UNSHOWN_MANY, what);
  return NOT_SHOWN.replace("{n}", n.toLocaleString("en-US")).replace("{what}", noun);
}

/**
 * What a content block does not show, as sentences: the changed lines of a diff
 * not among its rows, and the characters cut.
 * @param {{type?: unknown, hidden?: unknown, cut?: unknown}} block
 * @returns {string[]}
 */
export function leftOut(block) {
  /** @type {string[]} */
  const said = [];
  if (block.type === "diff" && positive(block.hidden)) said.push(notShown(Number(block.hidden), "line"));
  if (positive(block.cut)) said.push(notShown(Number(block.cut), "character"));
  return said;
}

/**
 * The blocks and locations a card does not show, as sentences.
 * @param {{blocks_hidden?: unknown, locations_hidden?: unknown}} card
 * @returns {string[]}
 */
export function cardLeftOut(card) {
  /** @type {string[]} */
  const said = [];
  if (positive(card.blocks_hidden)) said.push(notShown(Number(card.blocks_hidden), "block"));
  if (positive(card.locations_hidden)) said.push(notShown(Number(card.locations_hidden), "location"));
  return said;
}

/**
 * What a card says before anything else, from the kernel's flags: invisible or
 * bidirectional characters, and a card that does not show all the call will do.
 * @param {Partial<Card>} card
 * @returns {string[]}
 */
export function warnings(card) {
  /** @type {string[]} */
  const said = [];
  if (card.invisible === true) said.push(INVISIBLE_WARNING);
  if (card.incomplete === true) said.push(INCOMPLETE_WARNING);
  return said;
}

/**
 * @param {unknown} value
 * @returns {boolean}
 */
function positive(value) {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

/**
 * What a card's decision adds to its status label, or "": a decision that only repeats
 * the label says nothing more, and one that starts with it ("No answer: nobody to
 * answer" beside "No answer") adds only what follows.
 * @param {string} label
 * @param {string | null | undefined} decision
 * @returns {string}
 */
export function besideLabel(label, decision) {
  if (!decision || decision === label) return "";
  return decision.startsWith(`${label}: `) ? decision.slice(label.length + 2) : decision;
}
