// What the question views share: the section that holds a question, its
// countdown, focus, and values safe to use in class names.

import { h } from "./dom.js";
import { isObject } from "./state.js";

/** @typedef {import("./model").ChoiceOption} Option */
/** @typedef {import("./model").Question} Question */
/** @typedef {import("./model").ViewContext} ViewContext */

// JupyterLab and Notebook 7 (Lumino) skip their keyboard shortcuts for keys
// pressed inside an element with this attribute, so Enter, Escape and digits
// reach the question instead of switching the notebook's mode or cell type.
export const SUPPRESS_HOST_SHORTCUTS = "data-lm-suppress-shortcuts";

/**
 * The element of an open question: focusable itself (so keys reach it without
 * focusing a control), and its keys left alone by the notebook.
 * @param {string} kind
 * @param {Record<string, string>} attrs
 * @param {(Node | null)[]} children
 */
export function questionSection(kind, attrs, children) {
  return h(
    "section",
    { class: `mead-question mead-question-${kind}`, tabindex: "-1", [SUPPRESS_HOST_SHORTCUTS]: "true", ...attrs },
    children,
  );
}

/**
 * A countdown to the question's deadline, or null when it has none.
 * @param {ViewContext} ctx
 * @param {Question} question
 * @param {string} verb e.g. "Denies"
 * @returns {HTMLElement | null}
 */
export function countdownFor(ctx, question, verb) {
  const deadline = question.deadline;
  return typeof deadline === "number" && Number.isFinite(deadline) ? ctx.ticker.create(verb, deadline) : null;
}

/**
 * The options of a choice question that are well formed.
 * @param {Question} question
 * @returns {Option[]}
 */
export function validOptions(question) {
  if (!Array.isArray(question.options)) return [];
  return question.options.filter(
    (option) => isObject(option) && typeof option.id === "string" && typeof option.label === "string",
  );
}

/**
 * Move focus to an element in the page.
 * @param {HTMLElement} el
 * @returns {boolean} whether it could take focus
 */
export function focusElement(el) {
  if (!el.isConnected) return false;
  el.focus({ preventScroll: false });
  return true;
}

/**
 * Enable or disable several controls at once.
 * @param {Iterable<HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement | HTMLFieldSetElement>} controls
 * @param {boolean} disabled
 */
export function setDisabled(controls, disabled) {
  for (const control of controls) control.disabled = disabled;
}

/**
 * A value safe to use inside a class name.
 * @param {unknown} value
 * @returns {string}
 */
export function cssToken(value) {
  return String(value ?? "").toLowerCase().replace(/[^a-z0-9_-]/g, "") || "none";
}
