// The `_esm` of every NotebookInteraction: it finds the kernel session's shared
// frontend widget (`mead_notebook/notebook/frontend.py`) through the `_frontend`
// reference, imports that widget's code once per page (by its digest) and hands
// anywidget's lifecycle to it. If the code cannot be had, the view says so.

import { withTimeout } from "./timeout.js";

/** @typedef {import("@anywidget/types").AnyModel<import("./model").FrontendCode>} FrontendModel */
/** @typedef {import("./model").Model} Model */
/** @typedef {import("./model").TurnModel} TurnModel */
/** @typedef {import("./model").TurnWidget} TurnWidget */
/** @typedef {(code: string) => Promise<unknown>} ImportCode */

const REFERENCE = "IPY_MODEL_";
/** How long to wait for the widget manager to know the shared model, in ms. */
export const MODEL_WAIT = 10_000;
const RETRY_EVERY = 50;
/** How long a view stays empty before it says that it is loading, in ms. */
const LOADING_NOTICE_AFTER = 500;
const CACHE = Symbol.for("mead_notebook.frontend");

/**
 * Import an ES module from its source text.
 * @type {ImportCode}
 */
async function importBlob(code) {
  const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
  try {
    return await import(/* @vite-ignore */ url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

/**
 * The page's imported frontends by digest, shared by every widget of the page.
 * @returns {Map<string, Promise<TurnWidget>>}
 */
function pageCache() {
  const scope = /** @type {{[CACHE]?: Map<string, Promise<TurnWidget>>}} */ (globalThis);
  scope[CACHE] ??= new Map();
  return scope[CACHE];
}

/**
 * Wait (bounded) for the widget manager to give the model with this id.
 * @param {TurnModel} model
 * @param {string} id
 * @param {number} wait milliseconds
 * @returns {Promise<FrontendModel>}
 */
async function sharedModel(model, id, wait) {
  const manager = model.widget_manager;
  if (typeof manager?.get_model !== "function") {
    throw new Error("this page's widget manager cannot look up other widgets");
  }
  const deadline = Date.now() + wait;
  let last = "it is not known";
  let asked = false;
  for (;;) {
    try {
      const found = await withTimeout(
        manager.get_model(id),
        Math.max(deadline - Date.now(), 0),
        "no answer from the widget manager",
      );
      if (found) return /** @type {FrontendModel} */ (/** @type {unknown} */ (found));
    } catch (error) {
      last = String(error);
    }
    if (Date.now() >= deadline) {
      throw new Error(`the shared frontend widget ${id} was not found in ${wait / 1000} s (${last})`);
    }
    if (!asked) {
      // A page that never saw it (a reopened VS Code editor): the kernel sends it again.
      asked = true;
      model.send({ type: "need_frontend" });
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY));
  }
}

/**
 * Import the shared model's code (once per page and digest) and add its stylesheet.
 * @param {FrontendModel} shared
 * @param {ImportCode} importCode
 * @returns {Promise<TurnWidget>}
 */
function importFrontend(shared, importCode) {
  const code = shared.get("code");
  const css = shared.get("css");
  const digest = shared.get("digest");
  if (typeof code !== "string" || code === "") {
    return Promise.reject(new Error("the shared frontend widget holds no code"));
  }
  const key = typeof digest === "string" && digest !== "" ? digest : code;
  if (typeof css === "string" && css !== "") addStyles(css, key);
  const cache = pageCache();
  let widget = cache.get(key);
  if (widget === undefined) {
    widget = importCode(code).then((module) => asTurnWidget(module, shared.get("version")));
    cache.set(key, widget);
    // A failed import is not kept: the next widget tries again.
    widget.catch(() => cache.delete(key));
  }
  return widget;
}

/**
 * The module's default export, checked to have anywidget's lifecycle.
 * @param {unknown} module
 * @param {unknown} expected the version the kernel says the code is
 * @returns {TurnWidget}
 */
function asTurnWidget(module, expected) {
  const exports = /** @type {{default?: Partial<TurnWidget>, version?: unknown}} */ (module ?? {});
  const widget = exports.default;
  if (typeof widget?.initialize !== "function" || typeof widget.render !== "function") {
    throw new Error("the shared frontend code has no initialize and render");
  }
  if (exports.version !== expected) {
    console.warn(`mead_notebook: frontend ${String(exports.version)}, Python package ${String(expected)}`);
  }
  return { initialize: widget.initialize, render: widget.render };
}

/**
 * Add the stylesheet to the page once per key.
 * @param {string} css
 * @param {string} key
 */
function addStyles(css, key) {
  const id = `mead-notebook-css-${key.slice(0, 16)}`;
  if (document.getElementById(id)) return;
  const style = document.createElement("style");
  style.id = id;
  style.textContent = css;
  document.head.append(style);
}

/**
 * Hold the kernel's custom messages until the frontend listens for them, then
 * replay them to its first `msg:custom` listener.
 * @param {TurnModel} model
 * @returns {{model: TurnModel, release: () => void}} the model to hand the
 *   frontend, and what stops holding (after the frontend's `initialize`)
 */
function holdMessages(model) {
  /** @type {unknown[][]} */
  let held = [];
  /** @param {unknown[]} args */
  const hold = (...args) => held.push(args);
  model.on("msg:custom", hold);
  const release = () => {
    model.off("msg:custom", hold);
    held = [];
  };
  /**
   * @param {string} name
   * @param {Parameters<TurnModel["on"]>[1]} callback
   */
  const on = (name, callback) => {
    model.on(name, callback);
    if (name !== "msg:custom" || held.length === 0) return;
    const replay = held;
    release();
    for (const args of replay) callback(...args);
  };
  return { model: { ...model, on }, release };
}

/**
 * Show why the view cannot be drawn, in the view and in the console.
 * @param {HTMLElement} el
 * @param {unknown} error
 */
function showFailure(el, error) {
  console.error("mead_notebook: the widget's frontend could not be loaded", error);
  const box = document.createElement("div");
  box.className = "mead-load-error";
  box.setAttribute("role", "alert");
  box.style.cssText = "color: var(--jp-error-color1, #d32f2f); white-space: pre-wrap;";
  box.textContent =
    `mead_notebook: this turn cannot be shown: ${error instanceof Error ? error.message : String(error)}. ` +
    "Run the cell again to show it.";
  el.replaceChildren(box);
}

/**
 * The loader, with the way it imports code (a Blob URL in the page) and the
 * longest wait for the shared model as parameters.
 * @param {{importCode?: ImportCode, wait?: number}} [options]
 * @returns {TurnWidget}
 */
export function createLoader({ importCode = importBlob, wait = MODEL_WAIT } = {}) {
  /** @type {Map<string, Promise<TurnWidget>>} loads by shared-model reference */
  const loads = new Map();

  /**
   * @param {TurnModel} model
   * @returns {Promise<TurnWidget>}
   */
  const load = (model) => {
    /** @type {unknown} */
    const ref = model.get("_frontend");
    const key = String(ref);
    let found = loads.get(key);
    if (found === undefined) {
      found =
        typeof ref === "string" && ref.startsWith(REFERENCE)
          ? sharedModel(model, ref.slice(REFERENCE.length), wait).then((shared) =>
              importFrontend(shared, importCode),
            )
          : Promise.reject(new Error(`the widget has no reference to its frontend (${JSON.stringify(ref)})`));
      loads.set(key, found);
    }
    return found;
  };

  return {
    async initialize(props) {
      const held = holdMessages(props.model);
      try {
        const widget = await load(props.model);
        return await widget.initialize({ ...props, model: held.model });
      } catch (error) {
        // `render` shows it: a view is where somebody can see it.
        console.error("mead_notebook: the widget's frontend could not be loaded", error);
        return undefined;
      } finally {
        held.release();
      }
    },

    async render(props) {
      const notice = setTimeout(() => {
        props.el.textContent = "Loading the turn…";
      }, LOADING_NOTICE_AFTER);
      /** @type {TurnWidget} */
      let widget;
      try {
        widget = await load(props.model);
      } catch (error) {
        showFailure(props.el, error);
        return undefined;
      } finally {
        clearTimeout(notice);
      }
      props.el.replaceChildren();
      return widget.render(props);
    },
  };
}

export default createLoader();
