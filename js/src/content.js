// What a call will do, as its card shows it before Allow: a diff as a unified
// diff with line numbers, a command as `$ command` with its working directory,
// text, and the files it touches. The kernel computes a diff from the whole texts
// and sends its first rows with the totals; this view renders those rows and says
// what they leave out ("312 more changed lines not shown"). Code and what running
// it produced are drawn by run.js. Only state saved
// before the kernel sent rows (protocol 4 and older: `old_text` and `new_text`)
// is diffed here, with jsdiff. A long diff folds after a screenful, the rest one
// click away. Everything goes into the DOM as text, invisible characters marked.

import { structuredPatch } from "diff";
import { h } from "./dom.js";
import { cardLeftOut, leftOut, notShown } from "./labels.js";
import { revealNodes } from "./reveal.js";
import { runBlockEl } from "./run.js";
import { isObject } from "./state.js";

/** @typedef {import("./model").CardBlock} CardBlock */
/** @typedef {import("./model").CardDiff} CardDiff */
/** @typedef {import("./model").CardTerminal} CardTerminal */
/** @typedef {import("./model").DiffRow} DiffRow */
/** @typedef {import("./model").Location} Location */
/** @typedef {{type: "diff", path: string, old_text?: string | null, new_text: string}} SavedDiff a diff of protocol 4 and older */

/** Rows of a diff shown before the rest folds: about a screenful. */
export const FOLD_ROWS = 30;
/** Lines of unchanged context around each change (state of protocol 4 and older). */
const CONTEXT = 3;
/** The longest side of a diff that state of protocol 4 and older kept, in characters. */
const SAVED_SIDE_MAX = 200_000;
/** What a diff of such state says when one of its sides may have been cut there. */
export const SAVED_CUT_NOTE = "Saved by an older version, which kept at most 200,000 characters of each side: this diff may not show everything.";

/**
 * A diff block as the card shows it: the kernel's rows and totals, or for state
 * saved before the kernel sent them, rows computed here from the saved texts.
 * @param {Record<string, unknown>} block
 * @returns {CardDiff & {saved: boolean}}
 */
export function diffOf(block) {
  const path = typeof block.path === "string" ? block.path : "?";
  if (Array.isArray(block.rows)) {
    const rows = block.rows.filter(isRow);
    return {
      type: "diff",
      path,
      new_file: block.new_file === true,
      rows,
      added: count(block.added),
      removed: count(block.removed),
      hidden: count(block.hidden),
      cut: count(block.cut),
      saved: false,
    };
  }
  const saved = /** @type {SavedDiff} */ (/** @type {unknown} */ (block));
  const rows = diffRows(saved);
  const sides = [saved.old_text, saved.new_text];
  return {
    type: "diff",
    path,
    new_file: saved.old_text === null || saved.old_text === undefined,
    rows,
    added: rows.filter((r) => r.sign === "+").length,
    removed: rows.filter((r) => r.sign === "-").length,
    hidden: 0,
    cut: 0,
    saved: sides.some((t) => typeof t === "string" && t.length >= SAVED_SIDE_MAX),
  };
}

/**
 * @param {unknown} value
 * @returns {number}
 */
function count(value) {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

/**
 * @param {unknown} row
 * @returns {row is DiffRow}
 */
function isRow(row) {
  return isObject(row) && typeof row.sign === "string" && " -+@\\".includes(row.sign) && row.sign.length === 1 && typeof row.text === "string";
}

/**
 * A diff of state saved before the kernel sent rows, as unified-diff rows
 * (computed with jsdiff from its `old_text` and `new_text`).
 * @param {SavedDiff} block
 * @returns {DiffRow[]}
 */
export function diffRows(block) {
  const old = typeof block.old_text === "string" ? block.old_text : "";
  const next = typeof block.new_text === "string" ? block.new_text : "";
  const patch = structuredPatch("a", "b", old, next, "", "", { context: CONTEXT });
  /** @type {DiffRow[]} */
  const rows = [];
  for (const hunk of patch.hunks) {
    rows.push({
      sign: "@",
      old: null,
      new: null,
      text: `@@ -${rangeStart(hunk.oldStart, hunk.oldLines)},${hunk.oldLines} +${rangeStart(hunk.newStart, hunk.newLines)},${hunk.newLines} @@`,
      cut: 0,
    });
    let oldLine = hunk.oldStart;
    let newLine = hunk.newStart;
    for (const line of hunk.lines) {
      const sign = line.charAt(0);
      const text = line.slice(1);
      if (sign === "\\") continue; // "\ No newline at end of file"
      if (sign === "-") rows.push({ sign: "-", old: oldLine++, new: null, text, cut: 0 });
      else if (sign === "+") rows.push({ sign: "+", old: null, new: newLine++, text, cut: 0 });
      else rows.push({ sign: " ", old: oldLine++, new: newLine++, text, cut: 0 });
    }
  }
  return rows;
}

/**
 * A hunk's start as unified diffs write it: the line before, for an empty range.
 * @param {number} start
 * @param {number} lines
 */
function rangeStart(start, lines) {
  return lines === 0 ? Math.max(0, start - 1) : start;
}

/** @type {Record<string, string>} */
const ROW_CLASS = { "+": "add", "-": "del", "@": "hunk", "\\": "note", " ": "ctx" };

/** @param {DiffRow} row */
function rowEl(row) {
  const marked = row.sign === "+" || row.sign === "-" || row.sign === " ";
  const cut = count(row.cut);
  return h("tr", { class: `mead-diff-${ROW_CLASS[row.sign] ?? "ctx"}` }, [
    h("td", { class: "mead-diff-num", text: typeof row.old === "number" ? String(row.old) : "" }),
    h("td", { class: "mead-diff-num", text: typeof row.new === "number" ? String(row.new) : "" }),
    h("td", { class: "mead-diff-sign", "aria-hidden": "true", text: marked ? row.sign : "" }),
    h("td", { class: "mead-diff-text" }, [
      ...(marked ? revealNodes(row.text) : [row.text]),
      cut ? h("span", { class: "mead-diff-cut", text: ` … ${notShown(cut, "character")}` }) : null,
    ]),
  ]);
}

/**
 * What a block leaves out, as a paragraph, or null when it shows everything.
 * @param {string[]} said
 * @returns {HTMLElement | null}
 */
function notShownEl(said) {
  return said.length > 0 ? h("p", { class: "mead-not-shown", text: `${said.join("; ")}.` }) : null;
}

/**
 * @param {Record<string, unknown>} block
 * @returns {HTMLElement}
 */
function diffEl(block) {
  const diff = diffOf(block);
  const { rows, path } = diff;
  const head = h("p", { class: "mead-content-head" }, [
    diff.new_file ? "New file " : "Changes ",
    h("code", { class: "mead-path" }, revealNodes(path, true)),
    h("span", { class: "mead-diff-stat", text: ` +${diff.added} −${diff.removed}` }),
  ]);
  /** @type {(HTMLElement | null)[]} */
  const parts = [head];
  if (diff.saved) parts.push(h("p", { class: "mead-not-shown", text: SAVED_CUT_NOTE }));
  if (rows.length === 0) {
    parts.push(h("p", { text: "No change." }), notShownEl(leftOut(diff)));
    return h("div", { class: "mead-content-diff" }, parts);
  }
  const shown = h("tbody", {}, rows.slice(0, FOLD_ROWS).map(rowEl));
  const table = h("table", { class: "mead-diff", "aria-label": `Diff of ${path}` }, [shown]);
  parts.push(table);
  if (rows.length > FOLD_ROWS) {
    const rest = h("tbody", { class: "mead-diff-rest", hidden: true }, rows.slice(FOLD_ROWS).map(rowEl));
    table.append(rest);
    const more = h("button", {
      type: "button",
      class: "mead-button mead-diff-more",
      "aria-expanded": "false",
      text: `Show ${rows.length - FOLD_ROWS} more lines`,
    });
    more.addEventListener("click", () => {
      const open = rest.hidden;
      rest.hidden = !open;
      more.setAttribute("aria-expanded", open ? "true" : "false");
      more.textContent = open ? "Show less" : `Show ${rows.length - FOLD_ROWS} more lines`;
    });
    parts.push(more);
  }
  parts.push(notShownEl(leftOut(diff)));
  return h("div", { class: "mead-content-diff" }, parts);
}

/**
 * @param {Record<string, unknown>} block
 * @returns {HTMLElement}
 */
function terminalEl(block) {
  const command = String(block.command);
  const cwd = typeof block.cwd === "string" && block.cwd ? block.cwd : "";
  /** @type {(HTMLElement | null)[]} */
  const parts = [
    h("pre", { class: "mead-command" }, [h("span", { class: "mead-prompt-sign", text: "$ " }), ...revealNodes(command)]),
  ];
  if (cwd) parts.push(h("p", { class: "mead-cwd" }, ["in ", h("code", { class: "mead-path" }, revealNodes(cwd, true))]));
  const output = typeof block.output === "string" ? block.output : "";
  const code = typeof block.exit_code === "number" ? block.exit_code : null;
  if (output || code !== null) {
    parts.push(h("p", { class: "mead-content-head", text: code === null ? "Output" : `Output (exit code ${code})` }));
    parts.push(h("pre", { class: "mead-output" }, revealNodes(output)));
  }
  parts.push(notShownEl(leftOut({ type: "terminal", cut: count(block.cut) })));
  return h("div", { class: "mead-content-terminal" }, parts);
}

/**
 * One content block as an element, or null for a block of a type this view does not know.
 * @param {unknown} block
 * @returns {HTMLElement | null}
 */
export function blockEl(block) {
  if (!isObject(block)) return null;
  if (block.type === "text" && typeof block.text === "string") {
    const said = notShownEl(leftOut({ type: "text", cut: count(block.cut) }));
    const text = h("pre", { class: "mead-content-text" }, revealNodes(block.text));
    return said ? h("div", { class: "mead-content-textblock" }, [text, said]) : text;
  }
  if (block.type === "diff" && (Array.isArray(block.rows) || typeof block.new_text === "string")) return diffEl(block);
  if (block.type === "terminal" && typeof block.command === "string") return terminalEl(block);
  return runBlockEl(block);
}

/**
 * A location as `path:line`, or the path alone.
 * @param {unknown} location
 * @returns {string}
 */
export function locationText(location) {
  if (!isObject(location) || typeof location.path !== "string") return "";
  return typeof location.line === "number" ? `${location.path}:${location.line}` : location.path;
}

/**
 * The content blocks and locations of a card, and what it leaves out of them,
 * or null when it has none.
 * @param {unknown} content
 * @param {unknown} locations
 * @param {{blocks?: unknown, locations?: unknown}} [hidden] the card's `blocks_hidden` and `locations_hidden`
 * @returns {HTMLElement | null}
 */
export function contentEl(content, locations, hidden = {}) {
  const blocks = (Array.isArray(content) ? content : []).map(blockEl).filter((el) => el !== null);
  const places = (Array.isArray(locations) ? locations : []).map(locationText).filter((t) => t !== "");
  const said = notShownEl(cardLeftOut({ blocks_hidden: count(hidden.blocks), locations_hidden: count(hidden.locations) }));
  if (blocks.length === 0 && places.length === 0 && said === null) return null;
  /** @type {(HTMLElement | null)[]} */
  const parts = [...blocks];
  if (places.length > 0) {
    const list = h(
      "ul",
      { class: "mead-locations", "aria-label": "Files" },
      places.map((p) => h("li", {}, [h("code", { class: "mead-path" }, revealNodes(p, true))])),
    );
    parts.push(h("div", { class: "mead-locations-row" }, [h("span", { class: "mead-locations-label", "aria-hidden": "true", text: "Files:" }), list]));
  }
  parts.push(said);
  return h("div", { class: "mead-content" }, parts);
}
