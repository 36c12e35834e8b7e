// Small DOM helpers shared by the view modules. Everything that reaches the
// page from the model goes through `textContent` here; only `markdown.js`
// writes HTML, and only after sanitising it.

/**
 * Create an element.
 * @param {string} tag
 * @param {Record<string, string | boolean | number | null | undefined>} [attrs]
 *   attributes; `class` and `text` are shorthands, false/null/undefined are skipped
 * @param {(Node | string | null | undefined | false)[]} [children]
 * @returns {HTMLElement}
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

/** Set an element's text only when it differs (keeps selections and avoids layout work). */
export function setText(el, text) {
  const value = text ?? "";
  if (el.textContent !== value) el.textContent = value;
}

/** Set or remove an attribute only when it changes. */
export function setAttr(el, name, value) {
  if (value === null || value === undefined || value === false) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
    return;
  }
  const text = value === true ? "" : String(value);
  if (el.getAttribute(name) !== text) el.setAttribute(name, text);
}

/** Show or hide an element with the `hidden` attribute. */
export function setShown(el, shown) {
  if (el.hidden === shown) el.hidden = !shown;
}

/** Pretty JSON for display; never throws (cycles, BigInt) and always returns text. */
export function prettyJson(value) {
  if (value === undefined) return "";
  try {
    const text = JSON.stringify(value, null, 2);
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}

/** True when typing in this element would make a key press text, not a command. */
export function isTextField(el) {
  if (!(el instanceof Element)) return false;
  if (el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) return true;
  if (el instanceof HTMLInputElement) {
    const nonText = ["button", "checkbox", "radio", "submit", "reset", "range", "color", "file", "image"];
    return !nonText.includes(el.type);
  }
  return el.closest("[contenteditable]:not([contenteditable='false'])") !== null;
}

const frameFallback = (callback) => setTimeout(() => callback(Date.now()), 16);

/** requestAnimationFrame where the page has it, a 16 ms timer otherwise. */
export function requestFrame(callback) {
  if (typeof globalThis.requestAnimationFrame === "function") {
    return { kind: "raf", id: globalThis.requestAnimationFrame(callback) };
  }
  return { kind: "timer", id: frameFallback(callback) };
}

/** Cancel a frame returned by `requestFrame`. */
export function cancelFrame(handle) {
  if (!handle) return;
  if (handle.kind === "raf") globalThis.cancelAnimationFrame(handle.id);
  else clearTimeout(handle.id);
}
