// One tool call's card. A card keeps its elements across updates and changes
// only what differs, so an open <details> or a picked option survives.
// A finished card collapses to one line (tool, arguments, outcome) and opens on
// click; a running card, or one waiting for an answer, is always open. A card
// whose question is a choice (`ask_user`) reads as a question, not as a tool.
// What the agent wrote shows with its invisible characters marked (reveal.js),
// and the kernel's warnings (invisible characters, parts not shown) come first.
// Each fact shows once (once.js): the header names the call, its server and kind;
// an open question shows the arguments (the card's own "Arguments" fold waits
// until it is answered); a settled question says the decision and why, so the
// call's step and the error the model was told are not said again; and a view
// whose kernel went away says so and takes no more answers (`kernelGone`), as does a
// view that is not connected to the kernel (`notConnected`).

import { CLASS_HINT, KERNEL_GONE, KERNEL_GONE_NOTE, KIND_HINT, NOT_CONNECTED_NOTE } from "./constants.gen.js";
import { contentEl } from "./content.js";
import { h, prettyJson, setAttr, setShown, setText } from "./dom.js";
import { OUTCOME_LABEL, badgeKind, besideLabel, lookup, warnings } from "./labels.js";
import { tellOnce } from "./once.js";
import { buildQuestion, cssToken, isOpen, questionKey, validOptions } from "./question.js";
import { revealNodes, revealText, setRevealed } from "./reveal.js";
import { isObject, stringOr } from "./state.js";
import { decisionText, isChoice, isFinished, oneLineJson, pickedIds, statusLabel } from "./transcript.js";

/** @typedef {import("./model").Card} Card */
/** @typedef {import("./model").Question} Question */
/** @typedef {import("./model").QuestionView} QuestionView */
/** @typedef {import("./model").ViewContext} ViewContext */

export { statusLabel };

const STATUSES = new Set(["pending", "in_progress", "completed", "failed"]);
/** Outcomes a settled question's decision already says (with the reason given). */
const DECIDED = new Set(["denied", "expired", "interrupted"]);
/** Longest one-line arguments kept in a collapsed card's line, in characters. */
const ONE_LINE_MAX = 300;

/**
 * The state used for styling: the outcome when there is one, else the status.
 * @param {Card} card
 * @returns {string}
 */
export function stateToken(card) {
  if (lookup(OUTCOME_LABEL, card.outcome)) return String(card.outcome);
  return STATUSES.has(card.status) ? card.status : "unknown";
}

/**
 * A sentence as it reads inside parentheses: "(allowed by you)".
 * @param {string} text
 * @returns {string}
 */
function aside(text) {
  return text ? `(${text.charAt(0).toLowerCase()}${text.slice(1)})` : "";
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
    /** whether the kernel this view talks to went away */
    this.gone = false;
    /** whether this view's model cannot reach the kernel (it has no comm) */
    this.offline = false;
    /** @type {boolean | null} the person's choice to open or close a finished card; null: not made */
    this.expanded = null;
    this.collapsible = false;
    this.optionsKey = "";
    this.contentKey = "";
    this.warningsKey = "";

    const titleId = ctx.uid();
    const bodyId = ctx.uid();
    this.toggle = h("button", {
      type: "button",
      class: "mead-card-toggle",
      "aria-controls": bodyId,
      "aria-expanded": "true",
    });
    this.title = h("span", { class: "mead-card-title", id: titleId });
    this.where = h("span", { class: "mead-card-where" });
    this.badge = h("span", { class: "mead-badge" });
    this.oneLine = h("span", { class: "mead-card-oneline" });
    this.status = h("span", { class: "mead-status" });
    this.decision = h("span", { class: "mead-card-decision" });
    this.header = h("header", { class: "mead-card-header" }, [
      this.toggle, this.title, this.where, this.badge, this.oneLine, this.status, this.decision,
    ]);
    this.step = h("p", { class: "mead-step" });
    this.progress = h("progress", { class: "mead-progress", max: "1" });
    this.percent = h("span", { class: "mead-percent" });
    this.progressRow = h("div", { class: "mead-progress-row" }, [this.progress, this.percent]);
    this.cancel = h("button", { type: "button", class: "mead-button mead-cancel", text: "Cancel" });
    this.argsPre = h("pre", { class: "mead-args" });
    this.details = h("details", { class: "mead-details" }, [h("summary", { text: "Arguments" }), this.argsPre]);
    this.result = h("p", { class: "mead-result" });
    this.error = h("p", { class: "mead-error" });
    this.warnings = h("div", { class: "mead-warnings", hidden: true });
    this.contentSlot = h("div", { class: "mead-content-slot", hidden: true });
    this.questionSlot = h("div", { class: "mead-question-slot" });
    this.options = h("ul", { class: "mead-choice-options", "aria-label": "Options" });
    this.body = h("div", { class: "mead-card-body", id: bodyId }, [
      this.warnings,
      this.contentSlot,
      this.questionSlot,
      this.options,
      this.step,
      this.progressRow,
      this.cancel,
      this.details,
      this.result,
      this.error,
    ]);

    this.el = h("article", { class: "mead-card", "data-tool-call-id": id, "aria-labelledby": titleId }, [
      this.header,
      this.body,
    ]);

    this.cancel.addEventListener("click", () => {
      if (this.cancelSent) return;
      this.cancelSent = true;
      this.cancel.disabled = true;
      setText(this.step, "Cancelling…");
      ctx.send({ type: "cancel", tool_call_id: this.id });
    });
    this.toggle.addEventListener("click", (event) => {
      event.stopPropagation();
      this.flip();
    });
    // The whole line opens a collapsed card, unless the click ends a text selection.
    this.header.addEventListener("click", () => {
      const selection = typeof window.getSelection === "function" ? window.getSelection() : null;
      if (selection && !selection.isCollapsed && this.header.contains(selection.anchorNode)) return;
      this.flip();
    });
  }

  /** Open a collapsed finished card, or close an open one; running cards stay open. */
  flip() {
    if (!this.collapsible) return;
    this.expanded = this.isCollapsed();
    this.layoutCollapse();
  }

  /** @returns {boolean} whether the card shows its one line only */
  isCollapsed() {
    return this.collapsible && this.expanded !== true;
  }

  layoutCollapse() {
    const collapsed = this.isCollapsed();
    setShown(this.toggle, this.collapsible);
    setAttr(this.toggle, "aria-expanded", collapsed ? "false" : "true");
    setAttr(this.el, "data-collapsed", collapsed ? "true" : null);
    setShown(this.body, !collapsed);
    setShown(this.oneLine, collapsed && this.oneLine.textContent !== "");
    setShown(this.decision, collapsed && this.decision.textContent !== "");
  }

  /** The page now knows its user: say again who decided (an open question is kept as it is). */
  viewerChanged() {
    const card = this.card;
    if (card === null || card === undefined) return;
    this.card = null;
    if (!this.question?.open) this.questionKey = "\u0000";
    this.update(card);
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
    const choice = isChoice(card);
    const toolClass = card.class === "read" ? "read" : "effect";
    const tool = stringOr(card.tool, "");
    const server = stringOr(card.server, "");
    const question = /** @type {Question | null} */ (isObject(card.question) ? card.question : null);
    const prompt = question && typeof question.prompt === "string" ? question.prompt : "";
    const title = choice
      ? "Question"
      : typeof card.title === "string" && card.title ? card.title : tool || this.id;

    setAttr(this.el, "data-status", typeof card.status === "string" ? card.status : "unknown");
    setAttr(this.el, "data-outcome", typeof card.outcome === "string" ? card.outcome : null);
    setAttr(this.el, "data-kind", choice ? "question" : "call");
    setAttr(this.el, "data-tool", tool || null);
    setAttr(this.el, "class", `mead-card mead-state-${cssToken(state)}${choice ? " mead-card-question" : ""}`);
    setRevealed(this.title, title, true);
    // A question names no tool, server or arguments: they are the question itself.
    // The tool is named once: by the title when the title is or starts with it
    // ("Edit greet.py" by Edit), else beside a title that says something else.
    const named = title === tool || (tool !== "" && title.startsWith(`${tool} `));
    const where = [named ? "" : tool, server].filter((part) => part !== "").join(" · ");
    setRevealed(this.where, choice ? "" : where, true);
    setShown(this.where, !choice && where !== "");
    const kind = badgeKind(card);
    setText(this.badge, choice ? "" : kind || toolClass);
    setAttr(this.badge, "class", `mead-badge mead-class-${toolClass}${kind ? ` mead-kind-${cssToken(kind)}` : ""}`);
    const hint = lookup(KIND_HINT, kind) || lookup(CLASS_HINT, toolClass);
    setAttr(this.badge, "title", hint ? hint.charAt(0).toUpperCase() + hint.slice(1) : null);
    setShown(this.badge, !choice);
    const lost = this.gone && !isFinished(card);
    setText(this.status, lost ? KERNEL_GONE : label);
    setAttr(this.toggle, "aria-label", `Details of ${choice ? "the question" : revealText(title, true)}`);

    const oneLine = choice ? prompt : oneLineJson(card.arguments);
    setRevealed(this.oneLine, oneLine.length > ONE_LINE_MAX ? `${oneLine.slice(0, ONE_LINE_MAX - 1)}…` : oneLine, true);
    const decision = decisionText(card, this.ctx.viewer);
    const more = besideLabel(label, decision);
    setRevealed(this.decision, more ? aside(more) : "", true);

    const inProgress = card.status === "in_progress";
    const step = typeof card.current_step === "string" ? card.current_step : "";
    if (!(this.cancelSent && inProgress)) setRevealed(this.step, step, true);
    // A finished call's step only repeats its outcome (and a denial's reason).
    setShown(this.step, this.step.textContent !== "" && !isFinished(card));

    const fraction = typeof card.progress === "number" && Number.isFinite(card.progress)
      ? Math.min(1, Math.max(0, card.progress))
      : null;
    setShown(this.progressRow, inProgress || (fraction !== null && card.status === "pending"));
    setAttr(this.progress, "aria-label", `Progress of ${revealText(title, true)}`);
    if (fraction === null) {
      if (this.progress.hasAttribute("value")) this.progress.removeAttribute("value");
      setText(this.percent, "");
    } else {
      setAttr(this.progress, "value", String(fraction));
      setText(this.percent, `${Math.round(fraction * 100)}%`);
    }

    setShown(this.cancel, card.cancellable === true && inProgress && !this.gone);
    this.cancel.disabled = this.cancelSent || this.gone || this.offline;

    setRevealed(this.argsPre, choice ? "" : prettyJson(card.arguments ?? {}));
    // An open question shows the arguments itself (and the editor for them).
    setShown(this.details, !choice && !isOpen(card.question));

    const result = typeof card.result === "string" ? card.result : card.result == null ? "" : prettyJson(card.result);
    const content = Array.isArray(card.content) ? card.content : [];
    const once = tellOnce(content, result);
    setRevealed(this.result, result && !choice ? `Result: ${result}` : "");
    setShown(this.result, result !== "" && !choice && once.showResult);
    const error = typeof card.error === "string" ? card.error : card.error == null ? "" : prettyJson(card.error);
    setRevealed(this.error, error ? `Error: ${error}` : "");
    const decided = isObject(question) && isObject(question.answer) && DECIDED.has(String(card.outcome));
    setShown(this.error, error !== "" && !(choice && card.outcome === "no_answer") && !decided);

    this.updateWarnings(card);
    this.updateContent(card, once.content);
    this.updateQuestion(card);
    this.updateOptions(choice && question !== null && decision !== "" ? question : null);

    const collapsible = isFinished(card);
    if (!collapsible) this.expanded = null;
    this.collapsible = collapsible;
    this.layoutCollapse();
  }

  /**
   * The kernel's warnings: invisible or bidirectional characters, a card that does not
   * show all the call will do.
   * @param {Card} card
   */
  updateWarnings(card) {
    const said = warnings(card);
    const key = said.join("\n");
    if (key === this.warningsKey) return;
    this.warningsKey = key;
    this.warnings.replaceChildren(...said.map((text) => h("p", { class: "mead-warning", role: "note", text })));
    setShown(this.warnings, said.length > 0);
  }

  /**
   * What the call will do (diffs, commands, text, locations) and what of it is not
   * shown; rebuilt only when it changed, so an unfolded diff stays unfolded.
   * @param {Card} card
   * @param {unknown[]} content the card's blocks that say something not said elsewhere
   */
  updateContent(card, content) {
    const locations = Array.isArray(card.locations) ? card.locations : [];
    const hidden = { blocks: card.blocks_hidden, locations: card.locations_hidden };
    const some = content.length || locations.length || hidden.blocks || hidden.locations;
    const key = some ? JSON.stringify([content, locations, hidden]) : "";
    if (key === this.contentKey) return;
    this.contentKey = key;
    const el = key ? contentEl(content, locations, hidden) : null;
    this.contentSlot.replaceChildren(...(el ? [el] : []));
    setShown(this.contentSlot, el !== null);
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
    if (this.gone) this.question.lost(KERNEL_GONE_NOTE);
    else if (this.offline) this.question.lost(NOT_CONNECTED_NOTE);
    else if (this.question.open) this.pendingFocus = { id: String(question.id), question: this.question };
  }

  /**
   * The options of a settled choice, the picked ones marked; none for an open one.
   * @param {Question | null} question
   */
  updateOptions(question) {
    const options = question ? validOptions(question) : [];
    const picked = question ? pickedIds(question) : new Set();
    const key = JSON.stringify(options.map((o) => [o.id, o.label, picked.has(o.id)]));
    if (this.optionsKey !== key) {
      this.optionsKey = key;
      this.options.replaceChildren(
        ...options.map((option) =>
          h("li", { class: picked.has(option.id) ? "mead-picked" : "" }, [
            h("span", { class: "mead-mark", "aria-hidden": "true", text: picked.has(option.id) ? "✓" : "" }),
            picked.has(option.id) ? h("strong", {}, revealNodes(option.label, true)) : h("span", {}, revealNodes(option.label, true)),
            picked.has(option.id) ? h("span", { class: "mead-visually-hidden", text: " (picked)" }) : null,
          ]),
        ),
      );
    }
    setShown(this.options, options.length > 0);
  }

  /** The kernel went away: an open question takes no answer and stops counting down. */
  kernelGone() {
    if (this.gone) return;
    this.gone = true;
    this.question?.lost(KERNEL_GONE_NOTE);
    const card = this.card;
    this.card = null;
    if (card) this.update(card);
  }

  /** This view cannot reach the kernel: an open question says so and takes no answer. */
  notConnected() {
    if (this.gone) return;
    this.offline = true;
    this.cancel.disabled = true;
    this.question?.lost(NOT_CONNECTED_NOTE);
  }

  dispose() {
    this.question?.dispose();
    this.question = null;
  }
}
