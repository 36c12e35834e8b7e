// One view of a turn: header, streamed text, the cards in order, footer.
// Everything shown is read from the model; changes are rendered at most once
// per animation frame.

import { CardView } from "./card.js";
import { Ticker } from "./countdown.js";
import { cancelFrame, h, requestFrame, setAttr, setShown, setText } from "./dom.js";
import { MarkdownView } from "./markdown.js";
import { cssToken } from "./question.js";
import { readState } from "./state.js";

/** @typedef {import("./model").TurnModel} TurnModel */
/** @typedef {import("./model").ViewContext} ViewContext */
/** @typedef {import("./state.js").TurnState} TurnState */

const TRAITS = ["prompt", "status", "stop_reason", "error", "text", "calls", "order"];

/** @type {Record<string, string>} */
const TURN_STATUS = {
  idle: "Idle",
  running: "Running…",
  done: "Done",
  error: "Error",
  interrupted: "Interrupted",
};

/** @type {Record<string, string>} */
const STOP_REASON = {
  end_turn: "Finished",
  max_rounds: "Stopped: maximum number of rounds reached",
  interrupted: "Interrupted",
};

let nextViewId = 0;

export class TurnView {
  /**
   * @param {TurnModel} model the anywidget model of one NotebookInteraction
   * @param {HTMLElement} el the element anywidget gives this view
   */
  constructor(model, el) {
    this.model = model;
    this.host = el;
    /** @type {import("./dom.js").FrameHandle | null} */
    this.frame = null;
    this.disposed = false;
    /** @type {Map<string, CardView>} */
    this.cards = new Map();
    /** @type {Set<string>} ids of the questions that have had focus once */
    this.focused = new Set();
    this.ticker = new Ticker();
    const viewId = nextViewId++;
    let counter = 0;
    /** @type {ViewContext} */
    this.ctx = {
      send: (message) => {
        if (!this.disposed) this.model.send(message);
      },
      ticker: this.ticker,
      uid: () => `mead-${viewId}-${counter++}`,
      keyboard: () => this.model.get("keyboard") !== false,
    };

    this.prompt = h("p", { class: "mead-prompt" });
    this.status = h("span", { class: "mead-turn-status", role: "status" });
    this.markdownEl = h("div", { class: "mead-text" });
    this.markdown = new MarkdownView(this.markdownEl);
    this.cardList = h("div", { class: "mead-cards" });
    this.stopReason = h("p", { class: "mead-stop-reason" });
    this.error = h("p", { class: "mead-turn-failure", role: "alert" });
    /** @type {string | null} */
    this.lastText = null;

    this.root = h("div", { class: "mead-turn" }, [
      h("header", { class: "mead-turn-header" }, [this.prompt, this.status]),
      this.markdownEl,
      this.cardList,
      h("footer", { class: "mead-turn-footer" }, [this.stopReason, this.error]),
    ]);
    el.append(this.root);

    this.onChange = () => this.schedule();
    for (const name of TRAITS) model.on(`change:${name}`, this.onChange);
    this.render();
    model.send({ type: "rendered" });
  }

  /** Ask for a render on the next frame (several changes in one frame render once). */
  schedule() {
    if (this.frame !== null || this.disposed) return;
    this.frame = requestFrame(() => {
      this.frame = null;
      if (!this.disposed) this.render();
    });
  }

  /** Render the model's current state now. */
  render() {
    const state = readState(this.model);
    setShown(this.prompt, state.prompt !== "");
    setText(this.prompt, state.prompt);
    setText(this.status, TURN_STATUS[state.status] ?? state.status);
    setAttr(this.root, "class", `mead-turn mead-turn-${cssToken(state.status)}`);
    setAttr(this.root, "aria-busy", state.status === "running" ? "true" : null);

    if (state.text !== this.lastText) {
      this.markdown.update(state.text);
      this.lastText = state.text;
    }
    setShown(this.markdownEl, state.text !== "");

    this.renderCards(state);

    const stop = state.stopReason ? (STOP_REASON[state.stopReason] ?? `Stopped: ${state.stopReason}`) : "";
    setText(this.stopReason, stop);
    setShown(this.stopReason, stop !== "");
    setText(this.error, state.error);
    setShown(this.error, state.error !== "");
  }

  /** @param {TurnState} state */
  renderCards(state) {
    const wanted = new Set(state.ids);
    for (const [id, view] of this.cards) {
      if (!wanted.has(id)) {
        view.dispose();
        view.el.remove();
        this.cards.delete(id);
      }
    }
    /** @type {HTMLElement | null} */
    let previous = null;
    for (const id of state.ids) {
      let view = this.cards.get(id);
      if (!view) {
        view = new CardView(this.ctx, id);
        this.cards.set(id, view);
      }
      view.update(state.calls[id]);
      /** @type {ChildNode | null} */
      const expected = previous ? previous.nextSibling : this.cardList.firstChild;
      if (expected !== view.el) this.cardList.insertBefore(view.el, expected);
      previous = view.el;
    }
    setShown(this.cardList, state.ids.length > 0);
    for (const view of this.cards.values()) this.focusQuestion(view);
  }

  /**
   * Move focus to a question that just opened, once per question, unless another open question has it.
   * @param {CardView} view
   */
  focusQuestion(view) {
    if (view.pendingFocus === null) return;
    const { id, question } = view.pendingFocus;
    if (this.focused.has(id)) {
      view.pendingFocus = null;
      return;
    }
    if (!question.el.isConnected) return;
    view.pendingFocus = null;
    this.focused.add(id);
    const active = document.activeElement;
    const busy = active instanceof Element ? active.closest(".mead-question") : null;
    if (busy && busy !== question.el && !busy.classList.contains("mead-answered")) return;
    question.focus();
  }

  dispose() {
    this.disposed = true;
    cancelFrame(this.frame);
    this.frame = null;
    for (const name of TRAITS) this.model.off(`change:${name}`, this.onChange);
    for (const view of this.cards.values()) view.dispose();
    this.cards.clear();
    this.ticker.dispose();
    this.root.remove();
  }
}
