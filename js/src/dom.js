// Small DOM helpers shared by the view modules. Everything that reaches the
// page from the model goes through `textContent` here; only `markdown.js`
// writes HTML, and only after sanitising it.

/**
 * Create an element.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | boolean | number | null | undefined>} [attrs]
 *   attributes; `class` and `text` are shorthands, false/null/undefined are skipped
 * @param {(Node | string | null | undefined | false)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, children = []) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (name === "text") el.textContent = String(value);
    else if (name === "class") el.className = String(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return el;
}

/**
 * Set an element's text only when it differs (keeps selections and avoids layout work).
 * @param {Node} el
 * @param {string | null | undefined} text
 */
export function setText(el, text) {
  const value = text ?? "";
  if (el.textContent !== value) el.textContent = value;
}

/**
 * Set or remove an attribute only when it changes; true sets it empty, false/null/undefined remove it.
 * @param {Element} el
 * @param {string} name
 * @param {string | boolean | null | undefined} value
 */
export function setAttr(el, name, value) {
  if (value === null || value === undefined || value === false) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
    return;
  }
  const text = value === true ? "" : String(value);
  if (el.getAttribute(name) !== text) el.setAttribute(name, text);
}

/**
 * Show or hide an element with the `hidden` attribute.
 * @param {HTMLElement} el
 * @param {boolean} shown
 */
export function setShown(el, shown) {
  if (el.hidden === shown) el.hidden = !shown;
}

/**
 * Pretty JSON for display; never throws (cycles, BigInt) and always returns text.
 * @param {unknown} value
 * @returns {string}
 */
export function prettyJson(value) {
  if (value === undefined) return "";
  try {
    const text = JSON.stringify(value, null, 2);
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}

/**
 * True when typing in this element would make a key press text, not a command.
 * @param {EventTarget | null} el
 * @returns {boolean}
 */
export function isTextField(el) {
  if (!(el instanceof Element)) return false;
  if (el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) return true;
  if (el instanceof HTMLInputElement) {
    const nonText = ["button", "checkbox", "radio", "submit", "reset", "range", "color", "file", "image"];
    return !nonText.includes(el.type);
  }
  return el.closest("[contenteditable]:not([contenteditable='false'])") !== null;
}

/** @typedef {{kind: "raf", id: number} | {kind: "timer", id: ReturnType<typeof setTimeout>}} FrameHandle */

/**
 * requestAnimationFrame where the page has it, a 16 ms timer otherwise.
 * @param {(time: number) => void} callback
 * @returns {FrameHandle}
 */
export function requestFrame(callback) {
  if (typeof globalThis.requestAnimationFrame === "function") {
    return { kind: "raf", id: globalThis.requestAnimationFrame(callback) };
  }
  return { kind: "timer", id: setTimeout(() => callback(Date.now()), 16) };
}

/**
 * Cancel a frame returned by `requestFrame`.
 * @param {FrameHandle | null} handle
 */
export function cancelFrame(handle) {
  if (!handle) return;
  if (handle.kind === "raf") globalThis.cancelAnimationFrame(handle.id);
  else clearTimeout(handle.id);
}
