// Keyboard answers to a focused question: Enter allows (or submits a choice),
// Escape denies, 1-9 pick a choice's options. Keys typed into a field are text,
// never answers; and Enter never allows a call that may delete or overwrite.

import { isTextField } from "./dom.js";
import { isObject } from "./state.js";

/** @typedef {import("./model").Card} Card */

/**
 * Stems of the words that make a call look like it deletes or overwrites:
 * delete, remove, rm, rmdir, del, unlink, drop, truncate, overwrite, clobber,
 * destroy, destruct(ive), kill, wipe, erase, purge, reset, force, shred.
 * A word of the tool's name, title, argument names or string values matches a
 * stem it starts with ("deleted", "overwriting", "--force"); stems shorter than
 * four letters must match a whole word ("rm", not "rmb").
 */
export const DESTRUCTIVE_STEMS = Object.freeze([
  "delet",
  "remov",
  "rm",
  "rmdir",
  "del",
  "unlink",
  "drop",
  "truncat",
  "overwrit",
  "clobber",
  "destroy",
  "destruct",
  "kill",
  "wipe",
  "wiping",
  "eras",
  "purg",
  "reset",
  "forc",
  "shred",
]);

/** Arguments bigger than this are not read word by word: the call counts as destructive. */
const MAX_STRINGS = 2000;
const MAX_DEPTH = 12;

/**
 * The lower-case words of a name or text: "deleteFile", "delete_file" and
 * "rm -rf /" give ["delete", "file"], ["delete", "file"] and ["rm", "rf"].
 * @param {string} text
 * @returns {string[]}
 */
export function words(text) {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

/**
 * Whether a word is one of `DESTRUCTIVE_STEMS`' words.
 * @param {string} word lower case
 */
function destructiveWord(word) {
  return DESTRUCTIVE_STEMS.some((stem) => (stem.length < 4 ? word === stem : word.startsWith(stem)));
}

/**
 * Whether some text holds a destructive word.
 * @param {string} text
 */
export function soundsDestructive(text) {
  return words(text).some(destructiveWord);
}

/**
 * Whether the arguments name or say something destructive: a key (unless its
 * value is false, null, 0 or "", like `{"overwrite": false}`) or a string value.
 * Arguments too big or deep to read count as destructive.
 * @param {unknown} args
 * @returns {boolean}
 */
export function argumentsSoundDestructive(args) {
  let budget = MAX_STRINGS;
  /**
   * @param {unknown} value
   * @param {number} depth
   * @returns {boolean}
   */
  const visit = (value, depth) => {
    if (depth > MAX_DEPTH || --budget < 0) return true;
    if (typeof value === "string") return soundsDestructive(value);
    if (Array.isArray(value)) return value.some((item) => visit(item, depth + 1));
    if (isObject(value)) {
      return Object.entries(value).some(([key, item]) => {
        if (--budget < 0) return true;
        const off = item === false || item === null || item === 0 || item === "";
        return (!off && soundsDestructive(key)) || visit(item, depth + 1);
      });
    }
    return false;
  };
  return visit(args, 0);
}

/**
 * Whether Enter may allow this card's call: always for a `read` call; for any
 * other (an `effect`, or a class not given) only when neither its tool name,
 * title nor arguments suggest deleting or overwriting.
 * @param {Partial<Card>} card
 * @returns {boolean}
 */
export function enterAllows(card) {
  if (card.class === "read") return true;
  const names = [card.tool, card.title].filter((t) => typeof t === "string");
  if (names.some((name) => soundsDestructive(/** @type {string} */ (name)))) return false;
  return !argumentsSoundDestructive(card.arguments ?? {});
}

/** @typedef {"enter" | "escape" | number} Shortcut  a number is an option, from 1 */

/**
 * The answer key pressed in a question, or null when the key is not one or
 * belongs to what has focus: text typed in a field (input, textarea, select,
 * the arguments editor, the reason, the Other answer), Enter on a button, a
 * link or a <summary> (they act themselves), a key with a modifier, or IME input.
 * @param {KeyboardEvent} event
 * @returns {Shortcut | null}
 */
export function shortcut(event) {
  if (event.defaultPrevented || event.isComposing || isTextField(event.target)) return null;
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return null;
  if (event.key === "Escape") return "escape";
  if (event.key === "Enter") {
    const target = event.target;
    const acts = target instanceof Element && target.closest("button, a[href], summary") !== null;
    return acts ? null : "enter";
  }
  if (/^[1-9]$/.test(event.key)) return Number(event.key);
  return null;
}

/**
 * Listen for answer keys on a question's element; `act` returns whether it used the key.
 * The listener does nothing while `enabled()` is false (the `keyboard` trait).
 * @param {HTMLElement} el
 * @param {() => boolean} enabled
 * @param {(key: Shortcut) => boolean} act
 */
export function listenForShortcuts(el, enabled, act) {
  el.addEventListener("keydown", (event) => {
    if (!enabled()) return;
    const key = shortcut(event);
    if (key === null || !act(key)) return;
    event.preventDefault();
    event.stopPropagation();
  });
}
