// What a call will do, as its card shows it before Allow: a diff as a unified
// diff with line numbers (computed by jsdiff), a command as `$ command` with its
// working directory, text, and the files it touches. A long diff folds after a
// screenful, the rest one click away. Everything goes into the DOM as text.

import { structuredPatch } from "diff";
import { h } from "./dom.js";
import { isObject } from "./state.js";

/** @typedef {import("./model").ContentBlock} ContentBlock */
/** @typedef {import("./model").DiffBlock} DiffBlock */
/** @typedef {import("./model").Location} Location */
/** @typedef {import("./model").TerminalBlock} TerminalBlock */
/** @typedef {{sign: " " | "-" | "+" | "@", old: number | null, new: number | null, text: string}} DiffRow */

/** Rows of a diff shown before the rest folds: about a screenful. */
export const FOLD_ROWS = 30;
/** Lines of unchanged context around each change. */
const CONTEXT = 3;

/**
 * A diff block as unified-diff rows, each with its old and new line number.
 * @param {DiffBlock} block
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
    });
    let oldLine = hunk.oldStart;
    let newLine = hunk.newStart;
    for (const line of hunk.lines) {
      const sign = line.charAt(0);
      const text = line.slice(1);
      if (sign === "\\") continue; // "\ No newline at end of file"
      if (sign === "-") rows.push({ sign: "-", old: oldLine++, new: null, text });
      else if (sign === "+") rows.push({ sign: "+", old: null, new: newLine++, text });
      else rows.push({ sign: " ", old: oldLine++, new: newLine++, text });
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

/** @param {DiffRow} row */
function rowEl(row) {
  const css = row.sign === "+" ? "add" : row.sign === "-" ? "del" : row.sign === "@" ? "hunk" : "ctx";
  return h("tr", { class: `mead-diff-${css}` }, [
    h("td", { class: "mead-diff-num", text: row.old === null ? "" : String(row.old) }),
    h("td", { class: "mead-diff-num", text: row.new === null ? "" : String(row.new) }),
    h("td", { class: "mead-diff-sign", "aria-hidden": "true", text: row.sign === "@" ? "" : row.sign }),
    h("td", { class: "mead-diff-text", text: row.text }),
  ]);
}

/**
 * @param {DiffBlock} block
 * @returns {HTMLElement}
 */
function diffEl(block) {
  const path = typeof block.path === "string" ? block.path : "?";
  const rows = diffRows(block);
  const created = block.old_text === null || block.old_text === undefined;
  const added = rows.filter((r) => r.sign === "+").length;
  const removed = rows.filter((r) => r.sign === "-").length;
  const head = h("p", { class: "mead-content-head" }, [
    created ? "New file " : "Changes ",
    h("code", { class: "mead-path", text: path }),
    h("span", { class: "mead-diff-stat", text: ` +${added} −${removed}` }),
  ]);
  if (rows.length === 0) return h("div", { class: "mead-content-diff" }, [head, h("p", { text: "No change." })]);
  const shown = h("tbody", {}, rows.slice(0, FOLD_ROWS).map(rowEl));
  const table = h("table", { class: "mead-diff", "aria-label": `Diff of ${path}` }, [shown]);
  /** @type {HTMLElement[]} */
  const parts = [head, table];
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
  return h("div", { class: "mead-content-diff" }, parts);
}

/**
 * @param {TerminalBlock} block
 * @returns {HTMLElement}
 */
function terminalEl(block) {
  const cwd = typeof block.cwd === "string" && block.cwd ? block.cwd : "";
  /** @type {HTMLElement[]} */
  const parts = [
    h("pre", { class: "mead-command" }, [h("span", { class: "mead-prompt-sign", text: "$ " }), String(block.command)]),
  ];
  if (cwd) parts.push(h("p", { class: "mead-cwd" }, ["in ", h("code", { class: "mead-path", text: cwd })]));
  const output = typeof block.output === "string" ? block.output : "";
  const code = typeof block.exit_code === "number" ? block.exit_code : null;
  if (output || code !== null) {
    parts.push(h("p", { class: "mead-content-head", text: code === null ? "Output" : `Output (exit code ${code})` }));
    parts.push(h("pre", { class: "mead-output", text: output }));
  }
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
    return h("pre", { class: "mead-content-text", text: block.text });
  }
  if (block.type === "diff" && typeof block.new_text === "string") return diffEl(/** @type {DiffBlock} */ (/** @type {unknown} */ (block)));
  if (block.type === "terminal" && typeof block.command === "string") {
    return terminalEl(/** @type {TerminalBlock} */ (/** @type {unknown} */ (block)));
  }
  return null;
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
 * The content blocks and locations of a card, or null when it has none.
 * @param {unknown} content
 * @param {unknown} locations
 * @returns {HTMLElement | null}
 */
export function contentEl(content, locations) {
  const blocks = (Array.isArray(content) ? content : []).map(blockEl).filter((el) => el !== null);
  const places = (Array.isArray(locations) ? locations : []).map(locationText).filter((t) => t !== "");
  if (blocks.length === 0 && places.length === 0) return null;
  const parts = [...blocks];
  if (places.length > 0) {
    parts.push(
      h("ul", { class: "mead-locations", "aria-label": "Locations" }, places.map((p) => h("li", {}, [h("code", { class: "mead-path", text: p })]))),
    );
  }
  return h("div", { class: "mead-content" }, parts);
}
