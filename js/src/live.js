// Which model of its widget a view talks through. ipywidgets drops, without a word,
// whatever a model without a comm sends. A page can draw a view from such a model (the
// notebook's saved widget state, in a reloaded page or a reopened tab), and the kernel
// can replace a widget's model: it announces the widget again (docs/widget-protocol.md)
// with a new `comm_open` under the same model id, and the widget manager then holds a
// new model under that id while the views drawn already stay on the old one. So a view
// asks the manager for the model of its widget's id (the `_widget_id` trait) when it is
// drawn and whenever a model of that id is initialized on the page (`modelInitialized`),
// and moves to it when that is another model, with a comm.

import { withTimeout } from "./timeout.js";

/** @typedef {import("./model").TurnModel} TurnModel */

/**
 * What a view's model is to the page's widget manager:
 * - `live`: the manager's model for the id, with a comm;
 * - `offline`: the manager's model for the id (or the only one known) has no comm;
 * - `moved`: the manager holds another model for the id, with a comm: `model` is it,
 *   and `release` drops every listener added through it;
 * - `unknown`: it cannot be told (no id, no manager, no answer in time).
 * @typedef {{kind: "live" | "offline" | "unknown"} | {kind: "moved", model: TurnModel, release: () => void}} Link
 */

/**
 * A widget model of the page as ipywidgets builds it (a Backbone model), as far as
 * this module reads it.
 * @typedef {object} PageModel
 * @property {(name: string) => unknown} get
 * @property {(name: string, value: unknown) => void} set
 * @property {() => void} save_changes
 * @property {(content: unknown, callbacks?: unknown, buffers?: unknown) => void} send
 * @property {(name: string, callback: Function, context?: unknown) => void} on
 * @property {(name: string | null, callback: Function | null, context?: unknown) => void} off
 * @property {(name: string, ...args: unknown[]) => void} trigger
 * @property {unknown} [comm]
 * @property {boolean} [comm_live]
 * @property {unknown} [widget_manager]
 */

/** Longest wait for the widget manager's answer, in ms. */
export const LOOKUP_WAIT = 5000;

/** The event by which a view tells whether a model of the page is its own. */
const PROBE = "mead:is-mine";

/** @type {Map<string, Set<() => void>>} what to call when a model of a widget id is initialized */
const watchers = new Map();

/**
 * Call `check` whenever a model of the widget `id` is initialized on this page.
 * @param {string} id
 * @param {() => void} check
 * @returns {() => void} what stops it
 */
export function watchModels(id, check) {
  let found = watchers.get(id);
  if (!found) watchers.set(id, (found = new Set()));
  const set = found;
  set.add(check);
  return () => {
    set.delete(check);
    if (set.size === 0 && watchers.get(id) === set) watchers.delete(id);
  };
}

/**
 * A model of the widget `id` was initialized on this page (a new one from the kernel,
 * or one from saved state): the views of that widget look again.
 * @param {unknown} id
 */
export function modelInitialized(id) {
  if (typeof id !== "string" || id === "") return;
  for (const check of [...(watchers.get(id) ?? [])]) check();
}

/**
 * Where the view on `model` stands (see `Link`).
 * @param {TurnModel} model the model the view talks through
 * @param {string} id the widget's model id
 * @param {number} [wait] longest wait for the widget manager, in ms
 * @returns {Promise<Link>}
 */
export async function findLive(model, id, wait = LOOKUP_WAIT) {
  const manager = /** @type {{get_model?: (id: string) => Promise<unknown>} | null | undefined} */ (model.widget_manager);
  if (id === "" || typeof manager?.get_model !== "function") return { kind: "unknown" };
  /** @type {unknown} */
  let found;
  try {
    found = await withTimeout(manager.get_model(id), wait, "no answer from the widget manager");
  } catch {
    return { kind: "unknown" };
  }
  if (!isPageModel(found)) return { kind: "unknown" };
  const connected = found.comm != null && found.comm_live !== false;
  if (isModelOf(model, found)) return { kind: connected ? "live" : "offline" };
  return connected ? { kind: "moved", ...proxyOf(found) } : { kind: "offline" };
}

/**
 * @param {unknown} value
 * @returns {value is PageModel}
 */
function isPageModel(value) {
  const model = /** @type {Partial<PageModel> | null} */ (value);
  return (
    typeof model?.get === "function" &&
    typeof model.send === "function" &&
    typeof model.on === "function" &&
    typeof model.off === "function" &&
    typeof model.trigger === "function"
  );
}

/**
 * Whether `found` is the model behind `model` (what anywidget hands a view wraps it):
 * an event triggered on `found` reaches the listeners added through `model` only then.
 * @param {TurnModel} model
 * @param {PageModel} found
 * @returns {boolean}
 */
function isModelOf(model, found) {
  const token = {};
  let heard = false;
  /** @param {unknown} sent */
  const listener = (sent) => {
    if (sent === token) heard = true;
  };
  model.on(PROBE, listener);
  try {
    found.trigger(PROBE, token);
  } finally {
    model.off(PROBE, listener);
  }
  return heard;
}

/**
 * A view's handle on a model of the page, as anywidget makes one: every listener added
 * through it goes with `release`.
 * @param {PageModel} found
 * @returns {{model: TurnModel, release: () => void}}
 */
function proxyOf(found) {
  const context = {};
  const proxy = {
    /** @param {string} name */
    get: (name) => found.get(name),
    /**
     * @param {string} name
     * @param {unknown} value
     */
    set: (name, value) => found.set(name, value),
    save_changes: () => found.save_changes(),
    /**
     * @param {unknown} content
     * @param {unknown} [callbacks]
     * @param {unknown} [buffers]
     */
    send: (content, callbacks, buffers) => found.send(content, callbacks, buffers),
    /**
     * @param {string} name
     * @param {Function} callback
     */
    on: (name, callback) => found.on(name, callback, context),
    /**
     * @param {string} name
     * @param {Function} callback
     */
    off: (name, callback) => found.off(name, callback, context),
    widget_manager: found.widget_manager,
  };
  return {
    model: /** @type {TurnModel} */ (/** @type {unknown} */ (proxy)),
    release: () => found.off(null, null, context),
  };
}
