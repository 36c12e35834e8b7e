// One tool call's card. A card keeps its elements across updates and changes
// only what differs, so an open <details> or a picked option survives.

import { h, prettyJson, setAttr, setShown, setText } from "./dom.js";
import { OUTCOME_LABEL, lookup } from "./labels.js";
import { buildQuestion, cssToken, isOpen, questionKey } from "./question.js";
import { isObject, stringOr } from "./state.js";

/** @typedef {import("./model").Card} Card */
/** @typedef {import("./model").QuestionView} QuestionView */
/** @typedef {import("./model").ViewContext} ViewContext */

/** @type {Record<string, string>} */
const STATUS_LABEL = {
  pending: "Pending",
  in_progress: "In progress",
  completed: "Completed",
  failed: "Failed",
};

/**
 * The status shown on a card; a final outcome (denied, cancelled...) wins over "Failed".
 * @param {Card} card
 * @returns {string}
 */
export function statusLabel(card) {
  const outcome = lookup(OUTCOME_LABEL, card.outcome);
  if (outcome) return outcome;
  if (card.status === "pending" && isOpen(card.question)) return "Waiting for you";
  return STATUS_LABEL[card.status] ?? "Unknown";
}

/**
 * The state used for styling: the outcome when there is one, else the status.
 * @param {Card} card
 * @returns {string}
 */
export function stateToken(card) {
  if (lookup(OUTCOME_LABEL, card.outcome)) return String(card.outcome);
  return STATUS_LABEL[card.status] ? card.status : "unknown";
}

export class CardView {
  /**
   * @param {ViewContext} ctx
   * @param {string} id the card's tool_call_id
   */
  constructor(ctx, id) {
    this.ctx = ctx;
    this.id = id;
    /** @type {Card | null} */
    this.card = null;
    this.questionKey = "";
    /** @type {QuestionView | null} */
    this.question = null;
    /** @type {{id: string, question: QuestionView} | null} a question that just opened, to focus */
    this.pendingFocus = null;
    this.cancelSent = false;

    const titleId = ctx.uid();
    this.title = h("span", { class: "mead-card-title", id: titleId });
    this.where = h("span", { class: "mead-card-where" });
    this.badge = h("span", { class: "mead-badge" });
    this.status = h("span", { class: "mead-status" });
    this.step = h("p", { class: "mead-step" });
    this.progress = h("progress", { class: "mead-progress", max: "1" });
    this.percent = h("span", { class: "mead-percent" });
    this.progressRow = h("div", { class: "mead-progress-row" }, [this.progress, this.percent]);
    this.cancel = h("button", { type: "button", class: "mead-button mead-cancel", text: "Cancel" });
    this.argsPre = h("pre", { class: "mead-args" });
    this.details = h("details", { class: "mead-details" }, [h("summary", { text: "Arguments" }), this.argsPre]);
    this.result = h("p", { class: "mead-result" });
    this.error = h("p", { class: "mead-error" });
    this.questionSlot = h("div", { class: "mead-question-slot" });

    this.el = h("article", { class: "mead-card", "data-tool-call-id": id, "aria-labelledby": titleId }, [
      h("header", { class: "mead-card-header" }, [this.title, this.where, this.badge, this.status]),
      this.questionSlot,
      this.step,
      this.progressRow,
      this.cancel,
      this.details,
      this.result,
      this.error,
    ]);

    this.cancel.addEventListener("click", () => {
      if (this.cancelSent) return;
      this.cancelSent = true;
      this.cancel.disabled = true;
      setText(this.step, "Cancelling…");
      ctx.send({ type: "cancel", tool_call_id: this.id });
    });
  }

  /**
   * Bring the card up to date; does nothing when given the same card object again.
   * @param {Card} card
   */
  update(card) {
    if (card === this.card || !isObject(card)) return;
    this.card = card;
    const label = statusLabel(card);
    const state = stateToken(card);
    const toolClass = card.class === "read" ? "read" : "effect";
    const tool = stringOr(card.tool, "");
    const server = stringOr(card.server, "");
    const title = typeof card.title === "string" && card.title ? card.title : tool || this.id;

    setAttr(this.el, "data-status", typeof card.status === "string" ? card.status : "unknown");
    setAttr(this.el, "data-outcome", typeof card.outcome === "string" ? card.outcome : null);
    setAttr(this.el, "class", `mead-card mead-state-${cssToken(state)}`);
    setText(this.title, title);
    setText(this.where, server ? `${tool} · ${server}` : tool);
    setText(this.badge, toolClass);
    setAttr(this.badge, "class", `mead-badge mead-class-${toolClass}`);
    setAttr(this.badge, "title", toolClass === "read" ? "Reads only" : "Can change things");
    setText(this.status, label);

    const inProgress = card.status === "in_progress";
    const step = typeof card.current_step === "string" ? card.current_step : "";
    if (!(this.cancelSent && inProgress)) setText(this.step, step);
    setShown(this.step, this.step.textContent !== "");

    const fraction = typeof card.progress === "number" && Number.isFinite(card.progress)
      ? Math.min(1, Math.max(0, card.progress))
      : null;
    setShown(this.progressRow, inProgress || (fraction !== null && card.status === "pending"));
    setAttr(this.progress, "aria-label", `Progress of ${title}`);
    if (fraction === null) {
      if (this.progress.hasAttribute("value")) this.progress.removeAttribute("value");
      setText(this.percent, "");
    } else {
      setAttr(this.progress, "value", String(fraction));
      setText(this.percent, `${Math.round(fraction * 100)}%`);
    }

    setShown(this.cancel, card.cancellable === true && inProgress);
    this.cancel.disabled = this.cancelSent;

    setText(this.argsPre, prettyJson(card.arguments ?? {}));

    const result = typeof card.result === "string" ? card.result : card.result == null ? "" : prettyJson(card.result);
    setText(this.result, result ? `Result: ${result}` : "");
    setShown(this.result, result !== "");
    const error = typeof card.error === "string" ? card.error : card.error == null ? "" : prettyJson(card.error);
    setText(this.error, error ? `Error: ${error}` : "");
    setShown(this.error, error !== "");

    this.updateQuestion(card);
  }

  /** @param {Card} card */
  updateQuestion(card) {
    const key = questionKey(card.question);
    if (key === this.questionKey) {
      this.question?.update(card);
      return;
    }
    this.questionKey = key;
    this.question?.dispose();
    this.question = null;
    this.pendingFocus = null;
    const question = card.question;
    if (key === "" || question === null) {
      this.questionSlot.replaceChildren();
      setShown(this.questionSlot, false);
      return;
    }
    this.question = buildQuestion(this.ctx, { ...card, question });
    this.questionSlot.replaceChildren(this.question.el);
    setShown(this.questionSlot, true);
    if (this.question.open) this.pendingFocus = { id: String(question.id), question: this.question };
  }

  dispose() {
    this.question?.dispose();
    this.question = null;
  }
}
