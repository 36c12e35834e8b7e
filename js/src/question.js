// The question part of a card: an open permission (`permission.js`) or choice
// (`choice.js`), and once settled, how it was settled: the decision, who made it,
// the rule, the reason, what was picked or written, and the arguments approved.

import { sameValue } from "./arguments-editor.js";
import { buildChoice } from "./choice.js";
import { cssToken, questionSection, validOptions } from "./controls.js";
import { h, prettyJson } from "./dom.js";
import { describeAnswer, lateNotice } from "./labels.js";
import { buildPermission } from "./permission.js";
import { revealNodes, setRevealed } from "./reveal.js";
import { isObject } from "./state.js";

/** @typedef {import("./model").Card} Card */
/** @typedef {import("./model").Question} Question */
/** @typedef {import("./model").QuestionView} QuestionView */
/** @typedef {import("./model").ViewContext} ViewContext */

export { cssToken, describeAnswer, validOptions };

/**
 * Whether a card's question is waiting for an answer.
 * @param {unknown} question
 * @returns {question is Question}
 */
export function isOpen(question) {
  return isObject(question) && (question.answer === null || question.answer === undefined);
}

/**
 * The key under which a question's view stays valid; a new key means a rebuild.
 * Other changes to an open question (a refused answer) go to the view's `update`.
 * @param {unknown} question
 * @returns {string}
 */
export function questionKey(question) {
  if (!isObject(question)) return "";
  const state = isOpen(question) ? "open" : `answered:${JSON.stringify(question.answer)}`;
  return `${question.id}|${question.kind}|${question.deadline}|${state}`;
}

/**
 * Build the view of a card's question (the card must have one: see `questionKey`).
 * @param {ViewContext} ctx
 * @param {Card & {question: Question}} card
 * @returns {QuestionView}
 */
export function buildQuestion(ctx, card) {
  const question = card.question;
  if (!isOpen(question)) return buildAnswered(card, question, ctx.viewer);
  if (question.kind === "permission") return buildPermission(ctx, card, question);
  if (question.kind === "choice") return buildChoice(ctx, question);
  const el = questionSection("unknown", {}, [h("p", { text: "This question cannot be answered here." })]);
  return closedView(el);
}

/**
 * The arguments the call was approved with, when they differ from those asked for.
 * @param {Card} card
 * @returns {Record<string, unknown> | null}
 */
export function approvedArguments(card) {
  const answer = isObject(card.question) && isObject(card.question.answer) ? card.question.answer : null;
  const approved = isObject(answer?.arguments) ? answer?.arguments : card.approved_arguments;
  return isObject(approved) && !sameValue(approved, card.arguments ?? {}) ? approved : null;
}

/**
 * @param {Card} card
 * @param {Question} question
 * @param {import("./model").Viewer} viewer
 * @returns {QuestionView}
 */
function buildAnswered(card, question, viewer) {
  const answer = isObject(question.answer) ? question.answer : null;
  const decision = answer ? String(answer.decision ?? "") : "";
  const el = h("section", {
    class: `mead-question mead-answered mead-decision-${cssToken(decision)}`,
    "data-by": answer && typeof answer.by === "string" ? cssToken(answer.by) : null,
  });
  if (question.kind === "choice" && typeof question.prompt === "string") {
    el.append(h("p", { class: "mead-question-prompt" }, revealNodes(question.prompt)));
  }
  el.append(h("p", { class: "mead-decision" }, revealNodes(describeAnswer(question, viewer), true)));
  const late = lateNotice(question, viewer);
  if (late) el.append(h("p", { class: "mead-too-late", role: "alert" }, revealNodes(late, true)));
  const asked = h("pre", { class: "mead-asked-args", "aria-label": "Arguments asked for" });
  const approved = h("pre", { class: "mead-approved-args", "aria-label": "Arguments approved" });
  const edited = h("div", { class: "mead-edited" }, [
    h("p", { class: "mead-edited-label", text: "Asked for:" }),
    asked,
    h("p", { class: "mead-edited-label", text: "Approved:" }),
    approved,
  ]);
  /** @param {Card} next */
  const update = (next) => {
    const args = question.kind === "permission" ? approvedArguments(next) : null;
    if (args === null) {
      edited.remove();
      return;
    }
    setRevealed(asked, prettyJson(next.arguments ?? {}));
    setRevealed(approved, prettyJson(args));
    if (edited.parentNode !== el) el.append(edited);
  };
  update(card);
  return { ...closedView(el), update };
}

/**
 * @param {HTMLElement} el
 * @returns {QuestionView}
 */
function closedView(el) {
  return { el, open: false, focus: () => false, update() {}, lost() {}, dispose() {} };
}
