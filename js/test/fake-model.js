// A stand-in for the model anywidget hands to `initialize` and `render`: one
// shared state, Backbone-like change events (no event when the value is deeply
// equal), and a record of everything sent to the kernel. The page id every
// answer carries is kept apart, in `answerPages` (test/who.test.js checks it), so
// that the other tests compare what the person answered.

import { afterEach } from "vitest";
import widget from "../src/index.js";

const DEFAULTS = {
  prompt: "",
  status: "idle",
  stop_reason: "",
  error: "",
  text: "",
  calls: {},
  order: [],
};

export class FakeModel {
  constructor(state = {}, widgetManager = null) {
    this.state = structuredClone({ ...DEFAULTS, ...state });
    this.listeners = [];
    this.sent = [];
    this.answerPages = [];
    this.saves = 0;
    this.sets = [];
    this.widget_manager = widgetManager;
    /** a live model's comm (ipywidgets); a model from saved state has none */
    this.comm = {};
    this.comm_live = true;
    this.dropped = [];
  }

  get(name) {
    return this.state[name];
  }

  set(name, value) {
    this.sets.push(name);
    if (JSON.stringify(this.state[name]) === JSON.stringify(value)) return;
    this.state[name] = value;
    this.emit(`change:${name}`, value);
  }

  on(name, callback, context) {
    this.listeners.push({ name, callback, context });
  }

  off(name, callback, context) {
    this.listeners = this.listeners.filter(
      (l) =>
        !((name == null || l.name === name) && (callback == null || l.callback === callback) &&
          (context == null || l.context === context)),
    );
  }

  send(message) {
    const copy = structuredClone(message);
    if (this.comm === undefined) {
      // ipywidgets drops what a model without a comm sends, without a word.
      this.dropped.push(copy);
      return;
    }
    if (copy.type === "answer") {
      this.answerPages.push(copy.page);
      delete copy.page;
    }
    this.sent.push(copy);
  }

  save_changes() {
    this.saves += 1;
  }

  emit(name, ...args) {
    for (const l of [...this.listeners]) if (l.name === name) l.callback(...args);
  }

  /** Backbone's name for `emit`. */
  trigger(name, ...args) {
    this.emit(name, ...args);
  }

  /** A kernel custom message, as ipywidgets delivers it. */
  kernelSends(message) {
    this.emit("msg:custom", message, []);
  }

  /** The kernel syncs a trait (a state update from the kernel). */
  kernelSyncs(name, value) {
    this.set(name, value);
  }

  /** What anywidget passes to the widget: a fresh wrapper each time, bound to a context. */
  proxy(context) {
    return {
      get: (name) => this.get(name),
      set: (name, value) => this.set(name, value),
      save_changes: () => this.save_changes(),
      send: (message) => this.send(message),
      on: (name, callback) => this.on(name, callback, context),
      off: (name, callback) => this.off(name, callback, context),
      widget_manager: this.widget_manager,
    };
  }

  sentOfType(type) {
    return this.sent.filter((m) => m.type === type);
  }
}

/**
 * Run anywidget's lifecycle for one model: `initialize` once, `render` per view.
 * `ready` settles once `initialize` has; `render` returns the view's element at once.
 */
export class Host {
  constructor(model, def = widget) {
    this.model = model;
    this.def = def;
    this.views = [];
    const result = def.initialize({ model: model.proxy("initialize") });
    this.cleanupModel = result;
    this.ready = Promise.resolve(result).then((cleanup) => {
      this.cleanupModel = cleanup;
    });
  }

  render() {
    const el = document.createElement("div");
    document.body.append(el);
    const context = { view: this.views.length };
    const view = { el, context, cleanup: undefined };
    const cleanup = this.def.render({ model: this.model.proxy(context), el });
    view.cleanup = cleanup;
    view.rendered = Promise.resolve(cleanup).then((fn) => {
      view.cleanup = fn;
    });
    this.views.push(view);
    return el;
  }

  /** Wait until every view so far has rendered (anywidget awaits `render`). */
  async rendered() {
    await this.ready;
    await Promise.all(this.views.map((v) => v.rendered));
  }

  removeView(el) {
    const view = this.views.find((v) => v.el === el);
    this.model.off(null, null, view.context);
    if (typeof view.cleanup === "function") view.cleanup();
    el.remove();
    this.views = this.views.filter((v) => v !== view);
  }

  dispose() {
    for (const view of [...this.views]) this.removeView(view.el);
    this.model.off(null, null, "initialize");
    if (typeof this.cleanupModel === "function") this.cleanupModel();
  }
}

/** Wait for pending animation-frame renders. */
export function nextFrame() {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()));
}

export function card(overrides = {}) {
  return {
    tool_call_id: "call_1",
    title: "write_file",
    tool: "write_file",
    server: "local",
    class: "effect",
    arguments: { path: "a.txt" },
    status: "pending",
    outcome: null,
    current_step: null,
    progress: null,
    cancellable: false,
    result: null,
    error: null,
    question: null,
    ...overrides,
  };
}

export function permission(overrides = {}) {
  return { id: "q1", kind: "permission", prompt: null, options: null, deadline: null, answer: null, ...overrides };
}

export function choice(overrides = {}) {
  return {
    id: "q2",
    kind: "choice",
    prompt: "Which colour?",
    options: [
      { id: "red", label: "Red" },
      { id: "blue", label: "Blue" },
    ],
    deadline: null,
    answer: null,
    ...overrides,
  };
}

/** Buttons by exact accessible name (their text, or aria-label when set). */
export function buttonsNamed(root, name) {
  return [...root.querySelectorAll("button")].filter(
    (b) => (b.getAttribute("aria-label") ?? b.textContent.trim()) === name,
  );
}

/** The control a <label> with this exact text labels. */
export function byLabel(root, text) {
  const label = [...root.querySelectorAll("label")].find((l) => l.textContent.trim() === text);
  if (!label) return null;
  return label.control ?? null;
}

export function cardEl(root, id) {
  return root.querySelector(`[data-tool-call-id="${id}"]`);
}

export function key(target, keyName, init = {}) {
  const event = new KeyboardEvent("keydown", { key: keyName, bubbles: true, cancelable: true, ...init });
  target.dispatchEvent(event);
  return event;
}

/**
 * Views of the widget, each test's in a fresh {@link Host}. Call it at a test file's top
 * level: `setup(state)` renders a view of a model holding `state` and returns
 * `{ model, el }`, `host` is the current host, and after each test the host is disposed
 * and the page emptied.
 */
export function renderedViews() {
  const views = {
    /** @type {Host | undefined} */
    host: undefined,
    setup(state = {}) {
      const model = new FakeModel(state);
      views.host = new Host(model);
      return { model, el: views.host.render() };
    },
  };
  afterEach(() => {
    views.host?.dispose();
    views.host = undefined;
    document.body.replaceChildren();
    delete document.documentElement.dataset.meadPwned;
  });
  return views;
}
