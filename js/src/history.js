// The earlier conversation a turn continues (a resumed session's history), read-only,
// above the turn: the person's prompts as plain text, the agent's messages as
// Markdown, each earlier call as a finished card. A record only: a card here asks
// nothing and cannot be cancelled, whatever the state says, and sends the kernel
// nothing (its cards get a context whose `send` and `answer` do nothing). Folded by default, so
// the turn that runs now is what shows first; the summary says what the fold holds.
// Rebuilt only when the history changes (it arrives once, at the turn's start).

import { CardView } from "./card.js";
import { HISTORY_SUMMARY } from "./constants.gen.js";
import { h, setShown, setText } from "./dom.js";
import { notShown } from "./labels.js";
import { MarkdownView } from "./markdown.js";
import { revealNodes } from "./reveal.js";
import { isCard, isObject } from "./state.js";

/** @typedef {import("./model").Card} Card */
/** @typedef {import("./model").HistoryItem} HistoryItem */
/** @typedef {import("./model").ViewContext} ViewContext */

const ENDED = new Set(["completed", "failed"]);

/**
 * The well-formed entries of a history: a prompt or a text with a string `text`, or a
 * call with a card; each card made a record (ended, asking nothing, not cancellable).
 * @param {unknown} value
 * @returns {HistoryItem[]}
 */
export function readHistory(value) {
  if (!Array.isArray(value)) return [];
  /** @type {HistoryItem[]} */
  const items = [];
  for (const entry of value) {
    if (!isObject(entry)) continue;
    if ((entry.type === "prompt" || entry.type === "text") && typeof entry.text === "string") {
      items.push({ type: entry.type, text: entry.text, cut: count(entry.cut) });
    } else if (entry.type === "call" && isCard(entry.card)) {
      items.push({ type: "call", card: record(entry.card) });
    }
  }
  return items;
}

/**
 * A non-negative whole number, else 0.
 * @param {unknown} value
 * @returns {number}
 */
export function count(value) {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : 0;
}

/**
 * `card` as a record of what happened: a card still open reads interrupted.
 * @param {Card} card
 * @returns {Card}
 */
function record(card) {
  const ended = ENDED.has(card.status);
  return {
    ...card,
    status: ended ? card.status : "failed",
    outcome: ended ? card.outcome : "interrupted",
    cancellable: false,
    question: null,
  };
}

/**
 * What the fold holds, in words: "Earlier in this session: 2 prompts, 3 calls".
 * @param {HistoryItem[]} items
 * @param {number} hidden
 * @returns {string}
 */
export function historySummary(items, hidden) {
  const prompts = items.filter((i) => i.type === "prompt").length;
  const replies = items.filter((i) => i.type === "text").length;
  const calls = items.filter((i) => i.type === "call").length;
  const parts = [
    counted(prompts, "prompt", "prompts"),
    counted(replies, "reply", "replies"),
    counted(calls, "call", "calls"),
    hidden > 0 ? notShown(hidden, "entry") : "",
  ].filter((p) => p !== "");
  return parts.length > 0 ? `${HISTORY_SUMMARY}: ${parts.join(", ")}` : HISTORY_SUMMARY;
}

/**
 * @param {number} n
 * @param {string} one
 * @param {string} many
 */
function counted(n, one, many) {
  return n === 0 ? "" : `${n} ${n === 1 ? one : many}`;
}

export class HistoryView {
  /** @param {ViewContext} ctx */
  constructor(ctx) {
    /** @type {ViewContext} */
    this.ctx = { ...ctx, send: () => false, answer: () => false };
    this.key = "";
    /** @type {CardView[]} */
    this.cards = [];
    this.summary = h("summary", { class: "mead-history-summary" });
    this.entries = h("ol", { class: "mead-history-entries" });
    this.el = h("details", { class: "mead-history", "aria-label": HISTORY_SUMMARY, hidden: true }, [
      this.summary,
      this.entries,
    ]);
  }

  /**
   * Show `items` (and say how many earlier ones are not shown), unless nothing changed.
   * @param {HistoryItem[]} items
   * @param {number} hidden
   */
  update(items, hidden) {
    const key = JSON.stringify([items, hidden]);
    if (key === this.key) return;
    this.key = key;
    this.clear();
    setText(this.summary, historySummary(items, hidden));
    const rows = items.map((item) => this.entry(item));
    if (hidden > 0) rows.unshift(h("li", { class: "mead-not-shown", text: notShown(hidden, "entry") }));
    this.entries.replaceChildren(...rows);
    setShown(this.el, rows.length > 0);
  }

  /**
   * @param {HistoryItem} item
   * @returns {HTMLElement}
   */
  entry(item) {
    if (item.type === "call") {
      const view = new CardView(this.ctx, item.card.tool_call_id);
      view.update(item.card);
      this.cards.push(view);
      return h("li", { class: "mead-history-call" }, [view.el]);
    }
    const cut = item.cut > 0 ? h("p", { class: "mead-not-shown", text: notShown(item.cut, "character") }) : null;
    if (item.type === "prompt") {
      return h("li", { class: "mead-history-prompt" }, [
        h("span", { class: "mead-visually-hidden", text: "You: " }),
        h("p", { class: "mead-history-words" }, revealNodes(item.text)),
        cut,
      ]);
    }
    const text = h("div", { class: "mead-text mead-history-text" });
    new MarkdownView(text).update(item.text);
    return h("li", { class: "mead-history-reply" }, [text, cut]);
  }

  clear() {
    for (const view of this.cards) view.dispose();
    this.cards = [];
  }

  dispose() {
    this.clear();
    this.el.remove();
  }
}
