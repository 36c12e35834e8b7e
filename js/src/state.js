// Merges the kernel's custom messages into the model's local state.
// The traits are described in `model.d.ts` (mirroring `mead_notebook/widget.py`).
// Merged values go through `model.set` only, never `save_changes`: the kernel
// owns the traits and syncs them in full at the end of a turn.
// Everything read from the model is checked: it comes from the kernel as JSON.

import { readAgent } from "./agent.js";

/** @typedef {import("./model").Card} Card */
/** @typedef {import("./model").PlanEntry} PlanEntry */
/** @typedef {import("./model").TurnModel} TurnModel */
/** @typedef {import("./model").AgentInfo} AgentInfo */

/**
 * The turn as a view shows it, with safe defaults for missing or bad values.
 * @typedef {object} TurnState
 * @property {string} prompt
 * @property {string} status
 * @property {string} stopReason
 * @property {string} error
 * @property {string} text
 * @property {string} thoughts the agent's reasoning, apart from the text
 * @property {PlanEntry[]} plan the agent's plan, its entries checked
 * @property {number} protocolVersion the version of the state (1: saved before versions)
 * @property {Record<string, Card>} calls cards by `tool_call_id`, each an object
 * @property {string[]} ids the ids of `calls`, in the order to show them
 * @property {AgentInfo} [agent] who runs the turn, its well-formed fields only
 */

/**
 * Apply a `{"type": "text", "start", "delta"}` message.
 * The text becomes `text.slice(0, start) + delta`; a message that would leave a
 * gap (start beyond the current length) or is malformed is ignored.
 * @param {TurnModel} model
 * @param {Record<string, unknown>} message
 * @returns {boolean} whether the message was applied
 */
export function mergeText(model, message) {
  return mergeStream(model, "text", message);
}

/**
 * Apply a `{"type": "thought", "start", "delta"}` message to `thoughts`, as `mergeText` does text.
 * @param {TurnModel} model
 * @param {Record<string, unknown>} message
 * @returns {boolean} whether the message was applied
 */
export function mergeThought(model, message) {
  return mergeStream(model, "thoughts", message);
}

/**
 * @param {TurnModel} model
 * @param {"text" | "thoughts"} name
 * @param {Record<string, unknown>} message
 */
function mergeStream(model, name, message) {
  const { start, delta } = message;
  if (typeof start !== "number" || !Number.isInteger(start) || start < 0 || typeof delta !== "string") {
    return false;
  }
  const text = stringOr(model.get(name), "");
  if (start > text.length) return false;
  const next = text.slice(0, start) + delta;
  if (next !== text) model.set(name, next);
  return true;
}

/**
 * Apply a `{"type": "plan", "entries"}` message: the whole plan replaces the last.
 * @param {TurnModel} model
 * @param {Record<string, unknown>} message
 * @returns {boolean} whether the message was applied
 */
export function mergePlan(model, message) {
  if (!Array.isArray(message.entries)) return false;
  model.set("plan", readPlan(message.entries));
  return true;
}

/**
 * The well-formed entries of a plan: objects with string `content` and a known `status`.
 * @param {unknown} value
 * @returns {PlanEntry[]}
 */
export function readPlan(value) {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (e) => isObject(e) && typeof e.content === "string" && ["pending", "in_progress", "completed"].includes(String(e.status)),
  );
}

/**
 * Apply a `{"type": "call", "card"}` message: replace the card and append its
 * id to `order` when new. A card without a string `tool_call_id` is ignored.
 * @param {TurnModel} model
 * @param {Record<string, unknown>} message
 * @returns {boolean} whether the message was applied
 */
export function mergeCard(model, message) {
  const card = message.card;
  if (!isCard(card)) return false;
  const id = card.tool_call_id;
  model.set("calls", { ...readCalls(model), [id]: card });
  const order = readOrder(model);
  if (!order.includes(id)) model.set("order", [...order, id]);
  return true;
}

/**
 * Dispatch one custom message from the kernel.
 * @param {TurnModel} model
 * @param {unknown} message
 * @returns {boolean} whether it changed (or could have changed) the state
 */
export function handleMessage(model, message) {
  if (!isObject(message)) return false;
  if (message.type === "text") return mergeText(model, message);
  if (message.type === "call") return mergeCard(model, message);
  if (message.type === "thought") return mergeThought(model, message);
  if (message.type === "plan") return mergePlan(model, message);
  return false;
}

/**
 * Listen for the kernel's custom messages on a model. Call once per model
 * (from anywidget's `initialize`), not once per view.
 * @param {TurnModel} model
 * @returns {() => void} removes the listener
 */
export function attachMerger(model) {
  /** @param {unknown} message */
  const onMessage = (message) => {
    handleMessage(model, message);
  };
  model.on("msg:custom", onMessage);
  return () => model.off("msg:custom", onMessage);
}

/**
 * The turn's state read from the model, with safe defaults for missing or bad values.
 * @param {TurnModel} model
 * @returns {TurnState}
 */
export function readState(model) {
  const calls = readCalls(model);
  const ids = readOrder(model).filter((id) => isObject(calls[id]));
  const seen = new Set(ids);
  for (const id of Object.keys(calls)) {
    if (!seen.has(id) && isObject(calls[id])) ids.push(id);
  }
  return {
    prompt: stringOr(model.get("prompt"), ""),
    status: stringOr(model.get("status"), "idle"),
    stopReason: stringOr(model.get("stop_reason"), ""),
    error: stringOr(model.get("error"), ""),
    text: stringOr(model.get("text"), ""),
    thoughts: stringOr(model.get("thoughts"), ""),
    plan: readPlan(model.get("plan")),
    protocolVersion: readVersion(model.get("protocol_version")),
    calls,
    ids: [...new Set(ids)],
    agent: readAgent(model.get("agent")),
  };
}

/**
 * The protocol version of a state: 1 for state saved before versions.
 * @param {unknown} value
 * @returns {number}
 */
function readVersion(value) {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : 1;
}

/**
 * @param {TurnModel} model
 * @returns {Record<string, Card>}
 */
function readCalls(model) {
  /** @type {unknown} */
  const calls = model.get("calls");
  return isObject(calls) ? /** @type {Record<string, Card>} */ (calls) : {};
}

/**
 * The strings of `order`.
 * @param {TurnModel} model
 * @returns {string[]}
 */
function readOrder(model) {
  /** @type {unknown} */
  const order = model.get("order");
  return Array.isArray(order) ? order.filter((id) => typeof id === "string") : [];
}

/**
 * A card as the kernel sends it: an object with a non-empty string `tool_call_id`.
 * Its other fields are checked where they are shown.
 * @param {unknown} value
 * @returns {value is Card}
 */
export function isCard(value) {
  return isObject(value) && typeof value.tool_call_id === "string" && value.tool_call_id !== "";
}

/**
 * A plain object (not null, not an array).
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
export function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The value when it is a string (empty included), else the fallback.
 * @param {unknown} value
 * @param {string} fallback
 * @returns {string}
 */
export function stringOr(value, fallback) {
  return typeof value === "string" ? value : fallback;
}

/**
 * The value when it is a non-empty string, else the fallback.
 * @param {unknown} value
 * @param {string} fallback
 * @returns {string}
 */
export function nonEmptyOr(value, fallback) {
  return typeof value === "string" && value !== "" ? value : fallback;
}
