// Invisible and bidirectional characters, shown as visible escapes: a bidi
// control can make a line read in another order than it runs (Trojan Source), a
// zero-width character can make two names look the same. Every format character
// (Cf), line and paragraph separator, control character other than tab, line
// feed and the CR of a CRLF, and the fillers the kernel lists (INVISIBLE_FILLERS)
// shows as a marked `⟨U+XXXX⟩`; in a field of one line, a line break shows as ⏎.
// The kernel flags a card that has any (`card.invisible`); this is the page's own
// line of defence, for everything it displays. Text is always set as text.

import { INVISIBLE_FILLERS, NEWLINE_MARK } from "./constants.gen.js";

const fillers = INVISIBLE_FILLERS.map(([first, last]) => `\\u{${first.toString(16)}}-\\u{${last.toString(16)}}`).join("");
const INVISIBLE = `[\\p{Cf}\\p{Zl}\\p{Zp}${fillers}\\0-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f-\\x9f]|\\r(?!\\n)`;
const MANY_LINES = new RegExp(INVISIBLE, "gu");
const ONE_LINE = new RegExp(`${INVISIBLE}|\\r\\n|\\n`, "gu");
const ANY = new RegExp(INVISIBLE, "u");

/**
 * Whether `text` has an invisible or bidirectional character.
 * @param {string} text
 * @returns {boolean}
 */
export function hasInvisible(text) {
  return ANY.test(text);
}

/**
 * The visible escape of one character: `⟨U+2067⟩`.
 * @param {string} char
 * @returns {string}
 */
export function escapeOf(char) {
  const code = /** @type {number} */ (char.codePointAt(0));
  return `⟨U+${code.toString(16).toUpperCase().padStart(4, "0")}⟩`;
}

/**
 * @param {string} found
 * @returns {string}
 */
function shown(found) {
  return found === "\n" || found === "\r\n" ? NEWLINE_MARK : escapeOf(found);
}

/**
 * `text` with each invisible character as `⟨U+XXXX⟩` (and, for one line, line breaks as ⏎).
 * @param {string} text
 * @param {boolean} [oneLine]
 * @returns {string}
 */
export function revealText(text, oneLine = false) {
  return text.replace(oneLine ? ONE_LINE : MANY_LINES, shown);
}

/**
 * `text` as nodes: plain text, and a marked `<span class="mead-invisible">` per escape.
 * @param {string} text
 * @param {boolean} [oneLine]
 * @returns {(string | HTMLElement)[]}
 */
export function revealNodes(text, oneLine = false) {
  const pattern = oneLine ? ONE_LINE : MANY_LINES;
  /** @type {(string | HTMLElement)[]} */
  const nodes = [];
  let position = 0;
  for (const match of text.matchAll(pattern)) {
    const at = /** @type {number} */ (match.index);
    if (at > position) nodes.push(text.slice(position, at));
    const mark = document.createElement("span");
    mark.className = "mead-invisible";
    mark.textContent = shown(match[0]);
    mark.title = match[0] === "\n" || match[0] === "\r\n" ? "line break" : "invisible or bidirectional character";
    nodes.push(mark);
    position = at + match[0].length;
  }
  if (position < text.length || nodes.length === 0) nodes.push(text.slice(position));
  return nodes;
}

/**
 * JSON text with each invisible character written as a JSON escape (`\u2067`):
 * the same value, for a field the person edits (JSON text holds such a character
 * only inside a string, where the escape means it).
 * @param {string} json
 * @returns {string}
 */
export function escapeInJson(json) {
  return json.replace(MANY_LINES, (found) =>
    Array.from({ length: found.length }, (_, i) => `\\u${found.charCodeAt(i).toString(16).padStart(4, "0")}`).join(""),
  );
}

/** @type {WeakMap<Element, string>} what `setRevealed` last put in each element */
const last = new WeakMap();

/**
 * Set an element's content to `text`, its invisible characters marked; does
 * nothing when it already shows that text.
 * @param {Element} el
 * @param {string | null | undefined} text
 * @param {boolean} [oneLine]
 */
export function setRevealed(el, text, oneLine = false) {
  const key = `${oneLine ? 1 : 0}${text ?? ""}`;
  if (last.get(el) === key && el.textContent === revealText(text ?? "", oneLine)) return;
  last.set(el, key);
  el.replaceChildren(...revealNodes(text ?? "", oneLine));
}
