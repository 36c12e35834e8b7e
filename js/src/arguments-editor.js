// Editing a call's JSON arguments before allowing it: a textarea that starts
// with the arguments asked for. Text that is not a JSON object is refused here,
// with the reason, before anything is sent; the tool's schema is checked by the
// kernel, which refuses arguments that break it. When the call's arguments
// change while the question is open, the editor follows them, unless the
// person is editing: then their text stays, marked stale. An invisible or
// bidirectional character shows as its JSON escape (`\u2067`), never as itself.

import { h, prettyJson, setShown, setText } from "./dom.js";
import { escapeInJson } from "./reveal.js";
import { isObject } from "./state.js";

/** @typedef {import("./model").ViewContext} ViewContext */
/** @typedef {{kind: "unchanged"} | {kind: "edited", value: Record<string, unknown>} | {kind: "invalid", reason: string}} Edit */

/** Largest edited arguments sent, in characters of JSON (the kernel's limit too). */
export const MAX_ARGUMENTS = 100_000;

/**
 * What the editor's text means, against the arguments asked for.
 * @param {string} text
 * @param {unknown} original
 * @returns {Edit}
 */
export function readEdit(text, original) {
  if (text.length > MAX_ARGUMENTS) {
    return { kind: "invalid", reason: `The arguments are too long (over ${MAX_ARGUMENTS} characters).` };
  }
  /** @type {unknown} */
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { kind: "invalid", reason: `The arguments are not valid JSON: ${detail}` };
  }
  if (!isObject(value)) {
    return { kind: "invalid", reason: 'The arguments must be a JSON object, like {"path": "a.txt"}.' };
  }
  return sameValue(value, original) ? { kind: "unchanged" } : { kind: "edited", value };
}

/**
 * Deep equality of JSON values (key order does not matter), as the kernel compares them.
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
export function sameValue(a, b) {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameValue(a[k], b[k]));
}

export class ArgumentsEditor {
  /**
   * @param {ViewContext} ctx
   * @param {unknown} original the arguments asked for
   */
  constructor(ctx, original) {
    this.original = original ?? {};
    this.initial = escapeInJson(prettyJson(this.original));
    const id = ctx.uid();
    this.summary = h("summary", { text: "Edit arguments" });
    this.input = h("textarea", {
      id,
      class: "mead-edit-input",
      rows: String(Math.min(12, Math.max(3, this.initial.split("\n").length))),
      spellcheck: "false",
      autocomplete: "off",
    });
    this.input.value = this.initial;
    this.error = h("p", { class: "mead-edit-error", role: "alert", hidden: true });
    this.stale = h("p", { class: "mead-edit-stale", role: "status", hidden: true });
    this.el = h("details", { class: "mead-edit" }, [
      this.summary,
      h("label", { for: id, text: "Arguments (JSON)" }),
      this.input,
      this.stale,
      this.error,
    ]);
    this.input.addEventListener("input", () => {
      this.showError("");
      if (this.input.hasAttribute("data-stale") && this.read().kind === "unchanged") this.markStale(false);
      this.showSummary();
    });
  }

  /**
   * The call's arguments changed: the text follows them, unless the person is
   * editing it (it has focus, or differs from what was asked for); then their
   * text is kept and marked stale.
   * @param {unknown} next the arguments the call now has
   * @returns {boolean} whether the text follows the new arguments
   */
  follow(next) {
    const value = next ?? {};
    if (sameValue(value, this.original)) return true;
    const focused = this.input.isConnected && this.input.ownerDocument.activeElement === this.input;
    const editing = focused || this.input.value !== this.initial;
    this.original = value;
    this.initial = escapeInJson(prettyJson(value));
    if (!editing) this.input.value = this.initial;
    this.markStale(editing && this.input.value !== this.initial);
    this.showSummary();
    return !editing;
  }

  /** @param {boolean} stale whether the text was written for arguments the call no longer has */
  markStale(stale) {
    setText(
      this.stale,
      stale ? "The call's arguments changed while you edited them: your text is kept. Check it against the new arguments." : "",
    );
    setShown(this.stale, stale);
    if (stale) this.input.setAttribute("data-stale", "true");
    else this.input.removeAttribute("data-stale");
  }

  /** Say on the summary whether the text differs from the arguments asked for. */
  showSummary() {
    setText(this.summary, this.input.value === this.initial ? "Edit arguments" : "Edit arguments (edited)");
  }

  /** @returns {Edit} */
  read() {
    return readEdit(this.input.value, this.original);
  }

  /** @param {string} reason empty to hide */
  showError(reason) {
    setText(this.error, reason);
    setShown(this.error, reason !== "");
  }

  /** Open the editor and put the cursor in it. */
  focus() {
    this.el.open = true;
    if (this.input.isConnected) this.input.focus();
  }
}
