// Countdowns to a question's deadline, e.g. "Denies in 12 s". One timer per
// view ticks every second while that view shows at least one countdown.

import { h, setText } from "./dom.js";

/**
 * Whole seconds left until `deadline` (epoch ms), never negative.
 * @param {number} deadline
 * @param {number} [now]
 */
export function secondsLeft(deadline, now = Date.now()) {
  return Math.max(0, Math.ceil((deadline - now) / 1000));
}

/**
 * The countdown's text, e.g. "Denies in 12 s".
 * @param {string} verb
 * @param {number} deadline
 * @param {number} [now]
 */
export function countdownText(verb, deadline, now = Date.now()) {
  return `${verb} in ${secondsLeft(deadline, now)} s`;
}

/** Keeps the countdown elements of one view current. */
export class Ticker {
  constructor() {
    /** @type {Map<HTMLElement, {verb: string, deadline: number}>} */
    this.items = new Map();
    /** @type {ReturnType<typeof setInterval> | null} */
    this.timer = null;
  }

  /**
   * A new countdown element; it stops ticking when passed to `remove` or on `dispose`.
   * @param {string} verb
   * @param {number} deadline epoch milliseconds
   * @returns {HTMLElement}
   */
  create(verb, deadline) {
    const el = h("span", { class: "mead-countdown", role: "timer" });
    this.items.set(el, { verb, deadline });
    setText(el, countdownText(verb, deadline));
    this.ensureRunning();
    return el;
  }

  /** @param {HTMLElement} el */
  remove(el) {
    this.items.delete(el);
    if (this.items.size === 0) this.stop();
  }

  /** @param {number} [now] */
  tick(now = Date.now()) {
    for (const [el, { verb, deadline }] of this.items) {
      setText(el, countdownText(verb, deadline, now));
    }
  }

  ensureRunning() {
    if (this.timer === null) this.timer = setInterval(() => this.tick(), 1000);
  }

  stop() {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  dispose() {
    this.items.clear();
    this.stop();
  }
}
