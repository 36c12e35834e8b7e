// One view of a turn: the earlier conversation it continues, if any (history.js),
// header (prompt, status, Copy, the agent and its rules), the transcript (text and cards in the order they happened), footer (how it ended, how
// many calls the agent ran under its own rules). Everything shown is read from the
// model; changes are rendered at most once per animation frame. Each stretch of
// text between cards is its own Markdown view, so while the turn streams only
// the last one re-renders. When the kernel goes away (restarted or shut down: the
// widget manager drops the model's comm, or a message cannot be sent), the view
// says so, its questions take no answer and its countdowns stop. A view drawn from a
// model without a comm (saved state) says that it is not connected and takes no
// answer, and moves to the live model of its widget once the page has one (live.js).

import { agentText, ranByAgent, ranByAgentText } from "./agent.js";
import { CardView } from "./card.js";
import { KERNEL_GONE_STATUS, PLAN_GLYPH, PROTOCOL_VERSION, STOP_REASON, TURN_STATUS } from "./constants.gen.js";
import { Ticker } from "./countdown.js";
import { capture, join, leave, restore } from "./drafts.js";
import { HistoryView, count, readHistory } from "./history.js";
import { findLive, watchModels } from "./live.js";
import { cancelFrame, h, isTextField, requestFrame, setAttr, setShown, setText } from "./dom.js";
import { Whoami, answeredFor, pageId } from "./identity.js";
import { MarkdownView } from "./markdown.js";
import { lookup } from "./labels.js";
import { cssToken } from "./question.js";
import { readState } from "./state.js";
import { layout, turnMarkdown } from "./transcript.js";

/** @typedef {import("./model").TurnModel} TurnModel */
/** @typedef {import("./model").ViewContext} ViewContext */
/** @typedef {import("./state.js").TurnState} TurnState */
/** @typedef {{el: HTMLElement, markdown: MarkdownView, text: string | null}} Segment */

/** How long the Copy button says what happened, in ms. */
const COPY_NOTICE = 2000;

const TRAITS = [
  "prompt", "status", "stop_reason", "error", "text", "thoughts", "plan", "calls", "order", "agent", "history",
  "history_hidden",
];

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
    const whoami = new Whoami(model);
    const page = pageId();
    /** @type {import("./model").Viewer} */
    const viewer = { page, username: () => whoami.current()?.username ?? null, answered: answeredFor(widgetKey(model)) };
    /** whether the kernel went away (see `kernelGone`) */
    this.gone = false;
    /** @type {ViewContext} */
    this.ctx = {
      send: (message) => !this.disposed && this.sendOrNotice(message),
      answer: (message) => {
        if (this.disposed) return false;
        viewer.answered.add(message.question_id);
        const identity = whoami.current();
        /** @type {import("./model").AnswerMessage} */
        const stamped = { ...message, page };
        if (identity?.username) stamped.username = identity.username;
        if (identity?.display_name) stamped.display_name = identity.display_name;
        return this.sendOrNotice(stamped);
      },
      viewer,
      ticker: this.ticker,
      uid: () => `mead-${viewId}-${counter++}`,
      keyboard: () => this.model.get("keyboard") !== false,
    };

    /** @type {Map<number, Segment>} the text's stretches by start offset */
    this.segments = new Map();
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.copyTimer = null;

    this.prompt = h("p", { class: "mead-prompt" });
    this.status = h("span", { class: "mead-turn-status", role: "status" });
    this.copy = h("button", {
      type: "button",
      class: "mead-button mead-copy",
      title: "Copy the turn as Markdown",
      "aria-label": "Copy the turn as Markdown",
      text: "Copy",
    });
    this.copyStatus = h("span", { class: "mead-copy-status", role: "status" });
    this.agent = h("p", { class: "mead-agent", "aria-label": "Agent", hidden: true });
    this.version = h("p", { class: "mead-version-note", role: "note", hidden: true });
    this.plan = h("ol", { class: "mead-plan", "aria-label": "Plan", hidden: true });
    this.planKey = "";
    this.thoughtsText = h("div", { class: "mead-thoughts-text" });
    this.thoughtsMarkdown = new MarkdownView(this.thoughtsText);
    /** @type {string | null} */
    this.thoughtsShown = null;
    this.thoughts = h("details", { class: "mead-thoughts", hidden: true }, [
      h("summary", { text: "Thoughts" }),
      this.thoughtsText,
    ]);
    this.flow = h("div", { class: "mead-transcript" });
    this.stopReason = h("p", { class: "mead-stop-reason" });
    this.agentRan = h("p", { class: "mead-agent-ran", hidden: true });
    this.error = h("p", { class: "mead-turn-failure", role: "alert" });
    this.history = new HistoryView(this.ctx);

    this.root = h("div", { class: "mead-turn" }, [
      this.history.el,
      h("header", { class: "mead-turn-header" }, [this.prompt, this.status, this.copy, this.copyStatus, this.agent]),
      this.version,
      this.plan,
      this.thoughts,
      this.flow,
      h("footer", { class: "mead-turn-footer" }, [this.agentRan, this.stopReason, this.error]),
    ]);
    el.append(this.root);
    this.copy.addEventListener("click", () => this.copyMarkdown());

    this.onChange = () => this.schedule();
    /** whether the view's model cannot reach the kernel (see `checkLink`) */
    this.offline = false;
    /** @type {(() => void) | null} drops the listeners on a model this view moved to */
    this.releaseModel = null;
    this.linkChecks = 0;
    for (const name of TRAITS) model.on(`change:${name}`, this.onChange);
    this.render();
    // What was typed in a view of this widget that was redrawn comes back here (drafts.js),
    // unless the person has typed here already.
    this.typed = false;
    /** @type {import("./drafts.js").Draft | null} */
    this.draft = null;
    /** @param {Event} event */
    const typing = (event) => {
      if (event.isTrusted) this.typed = true;
    };
    this.root.addEventListener("input", typing);
    this.root.addEventListener("change", typing);
    this.key = widgetKey(model);
    const joined = join(this.key, (draft) => this.adopt(draft));
    this.leaveDrafts = joined.leave;
    if (joined.left) this.adopt(joined.left);
    // Who decided reads differently once the page knows its user ("by you").
    void whoami.ready.then(() => {
      if (this.disposed) return;
      for (const card of this.cards.values()) card.viewerChanged();
    });
    // Each view answers the kernel's pings while a question waits, so that the
    // kernel knows whether anybody can still see it (docs/widget-protocol.md).
    /** @param {unknown} message */
    this.onCustom = (message) => {
      const ping = /** @type {{type?: unknown, seq?: unknown}} */ (message ?? {});
      if (ping.type === "ping" && typeof ping.seq === "number") {
        this.ctx.send({ type: "pong", seq: ping.seq });
      }
    };
    model.on("msg:custom", this.onCustom);
    // ipywidgets' manager drops every model's comm when its kernel restarts or dies.
    this.onCommLive = () => this.kernelGone();
    model.on("comm_live_update", this.onCommLive);
    /** @type {unknown} */
    const widgetId = model.get("_widget_id");
    this.widgetId = typeof widgetId === "string" ? widgetId : "";
    this.unwatch = this.widgetId ? watchModels(this.widgetId, () => void this.checkLink()) : () => {};
    void this.checkLink();
    this.sendOrNotice({ type: "rendered" });
  }

  /**
   * Ask the page's widget manager which model of this widget is live: move to it when
   * it is another one, say that the view is not connected when there is none.
   */
  async checkLink() {
    if (this.disposed || !this.widgetId) return;
    const check = ++this.linkChecks;
    const link = await findLive(this.model, this.widgetId);
    // Only the latest look counts; a look started before the view went changes nothing.
    if (check !== this.linkChecks || this.disposed) return;
    if (link.kind === "moved") this.moveTo(link.model, link.release);
    else if (link.kind === "offline") this.notConnected();
  }

  /** The view's model has no comm: its questions say so and take no answer. */
  notConnected() {
    if (this.disposed) return;
    this.offline = true;
    for (const view of this.cards.values()) view.notConnected();
  }

  /**
   * Talk through `model` (the live model of this widget) from now on: listeners move
   * to it and the view is drawn from its state; the kernel hears that a view is there.
   * A view that was connected keeps its elements (a question that is still the same one
   * stays as it is, a click under way lands); cards that said they could not reach the
   * kernel are drawn anew, keeping what the person was typing in a question that is
   * still the same one.
   * @param {TurnModel} model
   * @param {() => void} release drops every listener added through `model`
   */
  moveTo(model, release) {
    const redraw = this.offline || this.gone;
    const draft = redraw ? capture(this.root, this.openQuestions()) : null;
    this.listen(false);
    this.releaseModel?.();
    this.model = model;
    this.releaseModel = release;
    this.listen(true);
    this.gone = false;
    this.offline = false;
    if (redraw) {
      for (const view of this.cards.values()) {
        view.dispose();
        view.el.remove();
      }
      this.cards.clear();
    }
    this.render();
    if (draft !== null) {
      const focused = restore(this.root, this.openQuestions(), draft);
      if (focused !== null) this.focused.add(focused);
    }
    this.sendOrNotice({ type: "rendered" });
  }

  /**
   * Add (or remove) this view's listeners on its model.
   * @param {boolean} on
   */
  listen(on) {
    const model = this.model;
    const add = on ? model.on.bind(model) : model.off.bind(model);
    for (const name of TRAITS) add(`change:${name}`, this.onChange);
    add("msg:custom", /** @type {(...args: unknown[]) => void} */ (this.onCustom));
    add("comm_live_update", this.onCommLive);
  }

  /**
   * Send a message to the kernel; a message that cannot be sent (the comm or the
   * kernel connection is gone) makes the view say the kernel went away.
   * @param {import("./model").FrontendMessage} message
   * @returns {boolean} whether it was sent
   */
  sendOrNotice(message) {
    if (this.gone) return false;
    if (this.offline) {
      // ipywidgets would drop it without a word: an answer's question says why instead.
      this.notConnected();
      return false;
    }
    try {
      this.model.send(message);
      return true;
    } catch (error) {
      console.warn("mead_notebook: the kernel cannot be reached", error);
      this.kernelGone();
      return false;
    }
  }

  /** The kernel went away: say so, stop every countdown, and take no more answers. */
  kernelGone() {
    if (this.gone || this.disposed) return;
    this.gone = true;
    this.ticker.dispose();
    for (const view of this.cards.values()) view.kernelGone();
    this.render();
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
    this.history.update(readHistory(this.model.get("history")), count(this.model.get("history_hidden")));
    setShown(this.prompt, state.prompt !== "");
    setText(this.prompt, state.prompt);
    const lost = this.gone && state.status === "running";
    setText(this.status, lost ? KERNEL_GONE_STATUS : lookup(TURN_STATUS, state.status) || state.status);
    setAttr(this.root, "class", `mead-turn mead-turn-${lost ? "gone" : cssToken(state.status)}`);
    setAttr(this.root, "aria-busy", state.status === "running" && !lost ? "true" : null);
    const agent = state.agent ? agentText(state.agent) : "";
    setText(this.agent, agent ? `Agent: ${agent}` : "");
    setShown(this.agent, agent !== "");

    const newer = state.protocolVersion > PROTOCOL_VERSION;
    setText(
      this.version,
      newer ? `This turn was saved by a newer mead_notebook (protocol ${state.protocolVersion}); parts of it may not show.` : "",
    );
    setShown(this.version, newer);
    this.renderPlan(state);
    if (this.thoughtsShown !== state.thoughts) {
      this.thoughtsShown = state.thoughts;
      this.thoughtsMarkdown.update(state.thoughts);
    }
    setShown(this.thoughts, state.thoughts.trim() !== "");
    this.renderFlow(state);

    const stop = state.stopReason ? lookup(STOP_REASON, state.stopReason) || `Stopped: ${state.stopReason}` : "";
    setText(this.stopReason, stop);
    setShown(this.stopReason, stop !== "");
    const unasked = ranByAgentText(ranByAgent(state.calls));
    setText(this.agentRan, unasked ? `${unasked}.` : "");
    setShown(this.agentRan, unasked !== "");
    setText(this.error, state.error);
    setShown(this.error, state.error !== "");
  }

  /**
   * The plan as a checklist: a glyph per entry's status, rebuilt only when it changed.
   * @param {TurnState} state
   */
  renderPlan(state) {
    const key = JSON.stringify(state.plan);
    if (key === this.planKey) return;
    this.planKey = key;
    this.plan.replaceChildren(
      ...state.plan.map((entry) =>
        h("li", { class: `mead-plan-entry mead-plan-${cssToken(entry.status)}`, "data-status": entry.status }, [
          h("span", { class: "mead-plan-glyph", "aria-hidden": "true", text: lookup(PLAN_GLYPH, entry.status) || "?" }),
          h("span", { class: "mead-plan-content", text: entry.content }),
          h("span", { class: "mead-visually-hidden", text: ` (${entry.status.replace("_", " ")})` }),
        ]),
      ),
    );
    setShown(this.plan, state.plan.length > 0);
  }

  /**
   * Lay out the text's stretches and the cards in order, reusing every element
   * already built; a stretch re-renders only when its own text changed.
   * @param {TurnState} state
   */
  renderFlow(state) {
    const items = layout(state.text, state.calls, state.ids);
    /** @type {HTMLElement[]} */
    const wanted = [];
    const starts = new Set();
    const ids = new Set();
    for (const item of items) {
      if (item.kind === "text") {
        starts.add(item.start);
        wanted.push(this.segment(item.start, state.text.slice(item.start, item.end)));
        continue;
      }
      for (const id of item.ids) {
        ids.add(id);
        let view = this.cards.get(id);
        if (!view) {
          view = new CardView(this.ctx, id);
          if (this.gone) view.kernelGone();
          else if (this.offline) view.notConnected();
          this.cards.set(id, view);
        }
        view.update(state.calls[id]);
        wanted.push(view.el);
      }
    }
    for (const [id, view] of this.cards) {
      if (!ids.has(id)) {
        view.dispose();
        view.el.remove();
        this.cards.delete(id);
      }
    }
    for (const [start, segment] of this.segments) {
      if (!starts.has(start)) {
        segment.el.remove();
        this.segments.delete(start);
      }
    }
    /** @type {ChildNode | null} */
    let expected = this.flow.firstChild;
    for (const el of wanted) {
      if (expected !== el) this.flow.insertBefore(el, expected);
      expected = el.nextSibling;
    }
    setShown(this.flow, wanted.length > 0);
    for (const view of this.cards.values()) this.focusQuestion(view);
  }

  /**
   * The view of the stretch of text that starts at `start`, brought up to `text`.
   * @param {number} start
   * @param {string} text
   * @returns {HTMLElement}
   */
  segment(start, text) {
    let segment = this.segments.get(start);
    if (!segment) {
      const el = h("div", { class: "mead-text", "data-offset": String(start) });
      segment = { el, markdown: new MarkdownView(el), text: null };
      this.segments.set(start, segment);
    }
    if (segment.text !== text) {
      segment.markdown.update(text);
      segment.text = text;
    }
    return segment.el;
  }

  /** Copy the turn as Markdown (text and calls in order) and say whether it worked. */
  async copyMarkdown() {
    const markdown = turnMarkdown(readState(this.model), this.ctx.viewer);
    let copied = false;
    try {
      await navigator.clipboard.writeText(markdown);
      copied = true;
    } catch {
      copied = copyWithSelection(markdown);
    }
    if (this.disposed) return;
    setText(this.copyStatus, copied ? "Copied" : "Copy failed: select the text instead");
    if (this.copyTimer !== null) clearTimeout(this.copyTimer);
    this.copyTimer = setTimeout(() => {
      this.copyTimer = null;
      setText(this.copyStatus, "");
    }, COPY_NOTICE);
  }

  /**
   * Move focus to a question that just opened, once per question, unless the
   * person is elsewhere (see `mayTakeFocus`) or another open question has it.
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
    if (!mayTakeFocus(this.root)) return;
    const active = document.activeElement;
    const busy = active instanceof Element ? active.closest(".mead-question") : null;
    if (busy && busy !== question.el && !busy.classList.contains("mead-answered")) return;
    question.focus();
  }

  /**
   * The open questions' ids, by card id.
   * @returns {Map<string, string>}
   */
  openQuestions() {
    const state = readState(this.model);
    /** @type {Map<string, string>} */
    const open = new Map();
    for (const id of state.ids) {
      const question = state.calls[id]?.question;
      if (question && question.answer == null && typeof question.id === "string") open.set(id, question.id);
    }
    return open;
  }

  /**
   * Take what a redrawn view of this widget left: typed text, ticked options, the focus.
   * @param {import("./drafts.js").Draft} draft
   */
  adopt(draft) {
    if (this.disposed || this.typed) return;
    const focused = restore(this.root, this.openQuestions(), draft);
    if (focused !== null) this.focused.add(focused); // it is not taken again when it shows
  }

  dispose() {
    if (!this.disposed) {
      this.leaveDrafts();
      this.draft = capture(this.root, this.openQuestions());
      try {
        this.model.send({ type: "gone" });
      } catch {
        // The model is closing too: nobody to tell.
      }
    }
    this.disposed = true;
    this.unwatch();
    this.listen(false);
    this.releaseModel?.();
    this.releaseModel = null;
    cancelFrame(this.frame);
    this.frame = null;
    for (const view of this.cards.values()) view.dispose();
    this.cards.clear();
    this.history.dispose();
    this.segments.clear();
    if (this.copyTimer !== null) clearTimeout(this.copyTimer);
    this.ticker.dispose();
    this.root.remove();
    leave(this.key, this.draft ?? null); // once gone: a view drawn already may take the focus
    this.draft = null;
  }
}

/** Editors that are not text fields to the DOM but take the person's typing. */
const EDITORS = ".cm-editor, .CodeMirror, .monaco-editor, [role='textbox']";

/**
 * Whether a question that opens in `root` may move focus to itself: only when
 * focus is nowhere (the page's body) or inside `root` outside any field or
 * editor. Focus in a text field, another cell's editor or any other element of
 * the page stays where it is, so keys typed there never reach a question; so
 * does focus outside a framed page (a VS Code webview whose editor has it).
 * @param {Element} root
 * @param {Document} [doc]
 * @param {boolean} [framed] whether the page is inside another (a webview, an iframe)
 * @returns {boolean}
 */
export function mayTakeFocus(root, doc = document, framed = isFramed()) {
  if (framed && typeof doc.hasFocus === "function" && !doc.hasFocus()) return false;
  const active = doc.activeElement;
  if (active === null || active === doc.body || active === doc.documentElement) return true;
  if (!root.contains(active)) return false;
  return !isTextField(active) && active.closest(EDITORS) === null;
}

/** @returns {boolean} whether this page is shown inside another */
function isFramed() {
  try {
    return window.top !== window;
  } catch {
    return true;
  }
}

/**
 * A key of the widget unique in the page: the kernel session's shared frontend model
 * and the widget's `mead-key-<n>` class (a fresh key when neither is there).
 * @param {TurnModel} model
 * @returns {string}
 */
function widgetKey(model) {
  const frontend = model.get("_frontend");
  /** @type {unknown} */
  const classes = /** @type {{get(name: string): unknown}} */ (/** @type {unknown} */ (model)).get("_dom_classes");
  const key = Array.isArray(classes) ? classes.find((c) => typeof c === "string" && c.startsWith("mead-key-")) : null;
  return typeof frontend === "string" && typeof key === "string" ? `${frontend}/${key}` : `view-${nextViewId}`;
}

/**
 * Copy text where the Clipboard API is refused (an insecure page, no permission).
 * @param {string} text
 * @returns {boolean} whether the page says it copied
 */
function copyWithSelection(text) {
  const area = h("textarea", { class: "mead-copy-buffer", readonly: true, "aria-hidden": "true" });
  area.value = text;
  document.body.append(area);
  try {
    area.select();
    return document.execCommand("copy");
  } catch {
    return false;
  } finally {
    area.remove();
  }
}
