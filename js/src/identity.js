// Who this page says its user is, and which page it is: an answer carries both,
// so every view can say who decided ("by you" only where the answer came from)
// and the kernel's audit can record the name. What is claimed here is not an
// authentication: it is what the page's server (or VS Code) says of its user.
//
// Where it comes from, first that answers:
// - JupyterLab and Notebook 7: the server's `/api/me` (the page's config names the
//   base URL and token), asked once per page and given up after `ASK_TIMEOUT`;
// - VS Code (no server page config): the kernel connection's `username`, which
//   VS Code sets to the OS user (JupyterLab leaves it empty).

import { MAX_NAME } from "./constants.gen.js";
import { isObject } from "./state.js";

/** @typedef {{username: string | null, display_name: string | null}} Identity */

/** Longest wait for the server's `/api/me`, in ms. */
export const ASK_TIMEOUT = 3000;

const PAGE_KEY = "__meadNotebookPage";

/**
 * A random id of this page, the same for every view and every copy of this module in it.
 * @returns {string}
 */
export function pageId() {
  const holder = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (globalThis));
  const known = holder[PAGE_KEY];
  if (typeof known === "string") return known;
  const made =
    typeof crypto !== "undefined" && typeof crypto.randomUUID === "function"
      ? crypto.randomUUID()
      : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  holder[PAGE_KEY] = made;
  return made;
}

/**
 * A name as the kernel accepts it: trimmed, 1 to MAX_NAME characters, no control or
 * format characters; else null.
 * @param {unknown} value
 * @returns {string | null}
 */
export function cleanName(value) {
  if (typeof value !== "string") return null;
  const name = value.trim();
  if (name === "" || name.length > MAX_NAME) return null;
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(name) || /\p{Cs}/u.test(name)) return null;
  return name;
}

/**
 * The identity in a `/api/me` reply, or null.
 * @param {unknown} reply
 * @returns {Identity | null}
 */
export function identityOf(reply) {
  const identity = isObject(reply) && isObject(reply.identity) ? reply.identity : null;
  if (identity === null) return null;
  const username = cleanName(identity.username);
  const display = cleanName(identity.display_name) ?? cleanName(identity.name);
  return username === null && display === null ? null : { username, display_name: display };
}

/**
 * The Jupyter server's page config (`#jupyter-config-data`), or null where there is none.
 * @param {Document} doc
 * @returns {Record<string, unknown> | null}
 */
export function pageConfig(doc) {
  const el = doc.getElementById("jupyter-config-data");
  if (!el || !el.textContent) return null;
  try {
    const config = JSON.parse(el.textContent);
    return isObject(config) ? config : null;
  } catch {
    return null;
  }
}

/**
 * Ask the page's server who its user is; null when it cannot say in time.
 * @param {Record<string, unknown>} config
 * @param {typeof fetch} fetcher
 * @returns {Promise<Identity | null>}
 */
export async function askServer(config, fetcher) {
  const base = typeof config.baseUrl === "string" ? config.baseUrl : "/";
  const token = typeof config.token === "string" ? config.token : "";
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ASK_TIMEOUT);
  try {
    const reply = await fetcher(`${base.endsWith("/") ? base : `${base}/`}api/me`, {
      credentials: "same-origin",
      headers: token ? { Authorization: `token ${token}` } : {},
      signal: abort.signal,
    });
    return reply.ok ? identityOf(await reply.json()) : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The user name of the kernel connection behind a widget model (VS Code's OS user), or null.
 * @param {unknown} model
 * @returns {Identity | null}
 */
export function kernelUser(model) {
  try {
    const manager = isObject(model) ? /** @type {Record<string, any>} */ (model).widget_manager : null;
    const username = cleanName(manager?.kernel?.username);
    return username === null ? null : { username, display_name: null };
  } catch {
    return null;
  }
}

/** @type {Promise<Identity | null> | null} */
let asked = null;

/**
 * Who the page's user is: found once per page, in the background; `current()` is
 * what is known now (null until then, or for good when nothing says).
 */
export class Whoami {
  /**
   * @param {unknown} model a widget model of this page
   * @param {{doc?: Document, fetcher?: typeof fetch}} [options]
   */
  constructor(model, options = {}) {
    /** @type {Identity | null} */
    this.known = null;
    const doc = options.doc ?? (typeof document !== "undefined" ? document : null);
    const fetcher = options.fetcher ?? (typeof fetch === "function" ? fetch.bind(globalThis) : null);
    const config = doc ? pageConfig(doc) : null;
    const fallback = kernelUser(model);
    /** @type {Promise<Identity | null>} */
    let found;
    if (config && fetcher) {
      if (options.fetcher || asked === null) {
        const ask = askServer(config, fetcher);
        if (!options.fetcher) asked = ask;
        found = ask;
      } else {
        found = asked;
      }
    } else {
      found = Promise.resolve(null);
    }
    this.ready = found.then((identity) => {
      this.known = identity ?? fallback;
      return this.known;
    });
    this.known = fallback;
  }

  /** @returns {Identity | null} */
  current() {
    return this.known;
  }
}

/** Forget the page's answer from `/api/me` (for tests). */
export function forgetAsked() {
  asked = null;
}

/** Questions this page answered, as `<widget>/<question id>`: kept for the page's life,
 * so a view drawn anew (the output updated when the turn ends) still knows. */
const answeredHere = new Set();

/**
 * The questions this page answered for one widget.
 * @param {string} widget a key of the widget unique in the page
 * @returns {{has(id: string): boolean, add(id: string): void}}
 */
export function answeredFor(widget) {
  return {
    has: (id) => answeredHere.has(`${widget}/${id}`),
    add: (id) => {
      answeredHere.add(`${widget}/${id}`);
    },
  };
}
