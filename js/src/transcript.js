// The turn as a transcript: text and cards in the order they happened, and the
// same transcript as Markdown (the Copy button). Pure functions of the synced
// state; `mead_notebook/notebook/transcript.py` lays out and writes the static
// transcript of a saved notebook the same way.

import { agentText, ranByAgent, ranByAgentText } from "./agent.js";
import { AGENT_DECIDED, OUTPUT_LABEL, STATUS_LABEL } from "./constants.gen.js";
import { diffOf, locationText } from "./content.js";
import { OUTCOME_LABEL, besideLabel, cardLeftOut, leftOut, lookup, warnings } from "./labels.js";
import { describeAnswer, isOpen, validOptions } from "./question.js";
import { revealText } from "./reveal.js";
import { runLeftOut } from "./run.js";
import { isObject } from "./state.js";

/** @typedef {import("./model").Card} Card */
/** @typedef {import("./model").Question} Question */
/** @typedef {import("./state.js").TurnState} TurnState */

/**
 * A stretch of the text (UTF-16 offsets `start` to `end`), or the cards placed at offset `at`.
 * @typedef {{kind: "text", start: number, end: number} | {kind: "cards", at: number, ids: string[]}} Item
 */


/**
 * Where a card belongs in a text of `length` UTF-16 code units: its `text_offset`,
 * or the end of the text when the card has none (state saved before cards had one).
 * @param {Card} card
 * @param {number} length
 * @returns {number}
 */
export function placeOf(card, length) {
  const offset = card.text_offset;
  if (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0) return length;
  return Math.min(offset, length);
}

/**
 * Text and cards in the order they happened: the text is cut at each card's
 * offset, cards at one offset keep the order they appeared in, and a stretch of
 * text never holds a card. Only the last item grows while the turn streams.
 * @param {string} text
 * @param {Record<string, Card>} calls
 * @param {string[]} ids every card's id, in the order the cards appeared
 * @returns {Item[]}
 */
export function layout(text, calls, ids) {
  const placed = ids.map((id, index) => ({ id, index, at: placeOf(calls[id], text.length) }));
  placed.sort((a, b) => a.at - b.at || a.index - b.index);
  /** @type {Item[]} */
  const items = [];
  let position = 0;
  for (const { id, at } of placed) {
    if (at > position) {
      items.push({ kind: "text", start: position, end: at });
      position = at;
    }
    const last = items[items.length - 1];
    if (last?.kind === "cards" && last.at === at) last.ids.push(id);
    else items.push({ kind: "cards", at, ids: [id] });
  }
  if (text.length > position) items.push({ kind: "text", start: position, end: text.length });
  return items;
}

/**
 * Whether the card is a question from the person's side (`ask_user`), not a tool call.
 * @param {Card} card
 * @returns {boolean}
 */
export function isChoice(card) {
  return isObject(card.question) && card.question.kind === "choice";
}

/**
 * Whether the card is over: completed or failed, with no question waiting.
 * @param {Card} card
 * @returns {boolean}
 */
export function isFinished(card) {
  return (card.status === "completed" || card.status === "failed") && !isOpen(card.question);
}

/**
 * The status shown on a card; a final outcome (denied, timed out...) wins over "Failed",
 * and a choice that was answered says so.
 * @param {Card} card
 * @returns {string}
 */
export function statusLabel(card) {
  const outcome = lookup(OUTCOME_LABEL, card.outcome);
  if (outcome) return outcome;
  if (card.status === "pending" && isOpen(card.question)) return "Waiting for you";
  if (card.status === "completed" && isChoice(card)) return "Answered";
  return lookup(STATUS_LABEL, card.status) || "Unknown";
}

/**
 * How the card's question was settled ("Allowed by you"), or "" when it has none or is open.
 * @param {Card} card
 * @param {import("./model").Viewer | null} [viewer] the page that shows it
 * @returns {string}
 */
export function decisionText(card, viewer = null) {
  if (card.decided_by === "agent") return AGENT_DECIDED;
  const question = card.question;
  if (!isObject(question) || isOpen(question)) return "";
  return describeAnswer(/** @type {Question} */ (question), viewer);
}

/**
 * Arguments as one line of JSON (for a collapsed card); never throws.
 * @param {unknown} value
 * @returns {string}
 */
export function oneLineJson(value) {
  try {
    const text = JSON.stringify(value ?? {});
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}

/**
 * Text as inline Markdown code, with a fence of backticks the text cannot close.
 * @param {string} text
 * @returns {string}
 */
export function inlineCode(text) {
  const flat = text.replace(/\s+/g, " ");
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = flat.startsWith("`") || flat.endsWith("`") || flat === "" ? " " : "";
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/**
 * A fenced Markdown code block that the text cannot close.
 * @param {string} text
 * @param {string} info the language tag
 * @returns {string}
 */
export function codeBlock(text, info = "") {
  const longest = Math.max(0, ...(text.match(/`{3,}/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${text}\n${fence}`;
}

/**
 * Text on one line, with the characters that could start inline Markdown escaped
 * (for text that follows a label, never at the start of a line).
 * @param {string} text
 * @returns {string}
 */
export function escapeMarkdown(text) {
  return text.replace(/\s+/g, " ").replace(/[\\`*_[\]<>|~&!]/g, "\\$&");
}

/**
 * The card as Markdown: one heading line (tool, server, outcome, decision), its
 * warnings, its arguments, and its result or error; a question shows its prompt
 * and options. Invisible characters show as `⟨U+XXXX⟩`, line breaks in names as ⏎,
 * as in `notebook/transcript.py`.
 * @param {Card} card
 * @param {import("./model").Viewer | null} [viewer] the page that copies it
 * @returns {string}
 */
export function cardMarkdown(card, viewer = null) {
  const label = statusLabel(card);
  const decision = decisionText(card, viewer);
  const more = besideLabel(label, decision);
  const state = revealText(more ? `${label} · ${more}` : label, true);
  const warned = warnings(card).map((w) => `**Warning:** ${escapeMarkdown(w)}`);
  /** @type {string[]} */
  const parts = [];
  if (isChoice(card)) {
    const question = /** @type {Question} */ (card.question);
    const asked = typeof question.prompt === "string" && question.prompt ? question.prompt : "Choose an option";
    parts.push(`**Question:** ${escapeMarkdown(revealText(asked, true))} (${escapeMarkdown(state)})`, ...warned);
    const picked = pickedIds(question);
    const options = validOptions(question).map(
      (option) => `- [${picked.has(option.id) ? "x" : " "}] ${escapeMarkdown(revealText(option.label, true))}`,
    );
    if (options.length > 0) parts.push(options.join("\n"));
    return parts.join("\n\n");
  }
  const tool = revealText(typeof card.tool === "string" && card.tool ? card.tool : String(card.tool_call_id), true);
  const server = typeof card.server === "string" && card.server ? ` on ${inlineCode(revealText(card.server, true))}` : "";
  parts.push(`**Tool call** ${inlineCode(tool)}${server}: ${escapeMarkdown(state)}`, ...warned);
  parts.push(codeBlock(revealText(oneLineJson(card.arguments)), "json"));
  parts.push(...contentMarkdown(card));
  if (isObject(card.approved_arguments)) {
    parts.push(`Ran with edited arguments:\n\n${codeBlock(revealText(oneLineJson(card.approved_arguments)), "json")}`);
  }
  for (const [name, value] of /** @type {const} */ ([["Result", card.result], ["Error", card.error]])) {
    if (typeof value === "string" && value !== "") parts.push(`${name}:\n\n${codeBlock(revealText(value), "text")}`);
  }
  return parts.join("\n\n");
}

/**
 * A diff block as a unified diff (`---`/`+++` headers, hunks), as `git diff` writes
 * one, from the rows the card shows; a line cut short ends in "…".
 * @param {Record<string, unknown>} block
 * @returns {string}
 */
export function diffText(block) {
  const diff = diffOf(block);
  const path = revealText(diff.path, true);
  const lines = [`--- ${diff.new_file ? "/dev/null" : `a/${path}`}`, `+++ b/${path}`];
  for (const row of diff.rows) {
    const text = row.sign === "@" ? row.text : row.sign === "\\" ? `\\ ${row.text}` : row.sign + revealText(row.text);
    lines.push(row.cut > 0 ? `${text}…` : text);
  }
  return lines.join("\n");
}

/**
 * A sentence saying what is left out, escaped as Markdown, or nothing.
 * @param {string[]} said
 * @returns {string[]}
 */
function notShownMarkdown(said) {
  return said.length > 0 ? [escapeMarkdown(`${said.join("; ")}.`)] : [];
}

/**
 * A card's content blocks and locations as Markdown paragraphs, and what they leave out.
 * @param {Card} card
 * @returns {string[]}
 */
export function contentMarkdown(card) {
  /** @type {string[]} */
  const parts = [];
  for (const block of Array.isArray(card.content) ? card.content : []) {
    if (!isObject(block)) continue;
    if (block.type === "text" && typeof block.text === "string") {
      parts.push(codeBlock(revealText(block.text), "text"), ...notShownMarkdown(leftOut(block)));
    } else if (block.type === "diff" && typeof block.path === "string" && (Array.isArray(block.rows) || typeof block.new_text === "string")) {
      const diff = diffOf(block);
      const shown = diff.rows.length > 0 ? codeBlock(diffText(block), "diff") : "No change.";
      parts.push(`Diff of ${inlineCode(revealText(block.path, true))}:\n\n${shown}`, ...notShownMarkdown(leftOut(diff)));
    } else if (block.type === "terminal" && typeof block.command === "string") {
      const where = typeof block.cwd === "string" && block.cwd ? ` in ${inlineCode(revealText(block.cwd, true))}` : "";
      parts.push(`Command${where}:\n\n${codeBlock(`$ ${revealText(block.command)}`, "console")}`);
      const code = typeof block.exit_code === "number" ? block.exit_code : null;
      const output = typeof block.output === "string" ? block.output : "";
      if (output || code !== null) {
        const ended = code !== null ? ` (exit code ${code})` : "";
        parts.push(`Output${ended}:\n\n${codeBlock(revealText(output), "text")}`);
      }
      parts.push(...notShownMarkdown(leftOut(block)));
    } else {
      const ran = runMarkdown(block);
      if (ran) parts.push(ran, ...notShownMarkdown(runLeftOut(block)));
    }
  }
  const places = (Array.isArray(card.locations) ? card.locations : []).map(locationText).filter((p) => p);
  if (places.length > 0) parts.push(`Locations: ${places.map((p) => inlineCode(revealText(p, true))).join(", ")}`);
  parts.push(...notShownMarkdown(cardLeftOut(card)));
  return parts;
}

/**
 * A block of code, or of what running it produced, as Markdown (a fenced block in
 * its language, an output under its label, an image in words), or "" for any other block.
 * @param {Record<string, unknown>} block
 * @returns {string}
 */
export function runMarkdown(block) {
  if (block.type === "code" && typeof block.code === "string") {
    const language = typeof block.language === "string" && /^[a-z][a-z0-9+#._-]{0,31}$/.test(block.language) ? block.language : "text";
    return codeBlock(revealText(block.code), language);
  }
  if (block.type === "output" && typeof block.text === "string") {
    const label = lookup(OUTPUT_LABEL, block.name) || String(block.name);
    return `${label}:\n\n${codeBlock(revealText(block.text), "text")}`;
  }
  if (block.type === "html" && (typeof block.html === "string" || typeof block.text === "string")) {
    const text = typeof block.text === "string" ? block.text : "";
    return text ? `Shown as HTML:\n\n${codeBlock(revealText(text), "text")}` : "Shown as HTML.";
  }
  if (block.type === "image" && typeof block.mime_type === "string") {
    const alt = typeof block.alt === "string" && block.alt ? `: ${revealText(block.alt, true)}` : "";
    return escapeMarkdown(`Image (${block.mime_type})${alt}.`);
  }
  return "";
}

/**
 * The plan as a Markdown checklist: done entries ticked, the running one marked.
 * @param {import("./model").PlanEntry[]} plan
 * @returns {string}
 */
export function planMarkdown(plan) {
  const lines = ["**Plan**", ""];
  for (const entry of plan) {
    const doing = entry.status === "in_progress" ? " (in progress)" : "";
    lines.push(`- [${entry.status === "completed" ? "x" : " "}] ${escapeMarkdown(entry.content)}${doing}`);
  }
  return lines.join("\n");
}

/**
 * The agent's thoughts as a quote under a label, apart from the answer.
 * @param {string} thoughts
 * @returns {string}
 */
export function thoughtsMarkdown(thoughts) {
  const quoted = thoughts.trim().split("\n").map((line) => (line ? `> ${line}` : ">")).join("\n");
  return `**Thoughts**\n\n${quoted}`;
}

/**
 * The ids of the options a settled choice picked.
 * @param {Question} question
 * @returns {Set<string>}
 */
export function pickedIds(question) {
  const answer = isObject(question.answer) ? question.answer : null;
  if (answer === null) return new Set();
  if (Array.isArray(answer.option_ids)) return new Set(answer.option_ids.filter((id) => typeof id === "string"));
  return typeof answer.option_id === "string" ? new Set([answer.option_id]) : new Set();
}

/**
 * The whole turn as Markdown: the prompt, then text and calls in order, then how it ended.
 * @param {TurnState} state
 * @param {import("./model").Viewer | null} [viewer] the page that copies it
 * @returns {string}
 */
export function turnMarkdown(state, viewer = null) {
  /** @type {string[]} */
  const parts = [];
  if (state.prompt) parts.push(state.prompt.split("\n").map((line) => `> ${line}`).join("\n"));
  const agent = state.agent ? agentText(state.agent) : "";
  if (agent) parts.push(`**Agent:** ${escapeMarkdown(agent)}`);
  if (Array.isArray(state.plan) && state.plan.length > 0) parts.push(planMarkdown(state.plan));
  if (typeof state.thoughts === "string" && state.thoughts.trim()) parts.push(thoughtsMarkdown(state.thoughts));
  for (const item of layout(state.text, state.calls, state.ids)) {
    if (item.kind === "text") {
      const text = state.text.slice(item.start, item.end).trim();
      if (text) parts.push(text);
    } else {
      for (const id of item.ids) parts.push(cardMarkdown(state.calls[id], viewer));
    }
  }
  const unasked = ranByAgentText(ranByAgent(state.calls));
  if (unasked) parts.push(`*${escapeMarkdown(unasked)}.*`);
  if (state.error) parts.push(`**Error:** ${escapeMarkdown(state.error)}`);
  return `${parts.join("\n\n")}\n`;
}
