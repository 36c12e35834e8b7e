// Keyboard answers to a focused question: Enter allows (or submits a choice),
// Escape denies, 1-9 pick a choice's options. Keys typed into a field are text,
// never answers; and Enter never allows a call whose kind may change or destroy
// something (the kernel's DESTRUCTIVE_KINDS), nor one whose card hides part of
// what it will do or shows invisible or bidirectional characters.

import { DESTRUCTIVE_KINDS, READ_KINDS } from "./constants.gen.js";
import { isTextField } from "./dom.js";

/** @typedef {import("./model").Card} Card */

const DESTRUCTIVE = new Set(DESTRUCTIVE_KINDS);
const READING = new Set(READ_KINDS);

/**
 * Whether Enter may allow this card's call. Never for a card the kernel marks
 * `incomplete` (it does not show all the call will do) or `invisible` (it shows
 * invisible or bidirectional characters), nor for a call of a destructive kind
 * (edit, delete, move, execute); always for one of a reading kind (read,
 * search, think; a fetch reaches the network, so it is not one). A call whose kind says nothing more (`other`, or none)
 * falls back to its class: a `read` call, yes; an `effect` call, or one whose
 * class is not given, may change anything, so no.
 * @param {Partial<Card>} card
 * @returns {boolean}
 */
export function enterAllows(card) {
  if (card.incomplete === true || card.invisible === true) return false;
  const kind = typeof card.kind === "string" ? card.kind : "";
  if (DESTRUCTIVE.has(kind) || kind === "fetch") return false;
  if (READING.has(kind)) return true;
  return card.class === "read";
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
 * The listener does nothing while `enabled()` is false (the `keyboard` trait), and
 * nothing for a key whose target is not within `el`.
 * @param {HTMLElement} el
 * @param {() => boolean} enabled
 * @param {(key: Shortcut) => boolean} act
 */
export function listenForShortcuts(el, enabled, act) {
  el.addEventListener("keydown", (event) => {
    // Only keys pressed on the focused question itself: never one sent to it from elsewhere.
    if (!enabled() || !(event.target instanceof Node) || !el.contains(event.target)) return;
    const key = shortcut(event);
    if (key === null || !act(key)) return;
    event.preventDefault();
    event.stopPropagation();
  });
}
