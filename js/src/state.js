// Merges the kernel's custom messages into the model's local state.
// The traits are described in `model.d.ts` (mirroring `mead_notebook/widget.py`).
// Merged values go through `model.set` only, never `save_changes`: the kernel
// owns the traits and syncs them in full at the end of a turn.

/** @typedef {import("./model").Card} Card */

/**
 * Apply a `{"type": "text", "start", "delta"}` message.
 * The text becomes `text.slice(0, start) + delta`; a message that would leave a
 * gap (start beyond the current length) or is malformed is ignored.
 * @returns {boolean} whether the message was applied
 */
export function mergeText(model, message) {
  const { start, delta } = message;
  if (!Number.isInteger(start) || start < 0 || typeof delta !== "string") return false;
  const text = stringOr(model.get("text"), "");
  if (start > text.length) return false;
  const next = text.slice(0, start) + delta;
  if (next !== text) model.set("text", next);
  return true;
}

/**
 * Apply a `{"type": "call", "card"}` message: replace the card and append its
 * id to `order` when new. A card without a string `tool_call_id` is ignored.
 * @returns {boolean} whether the message was applied
 */
export function mergeCard(model, message) {
  const card = message.card;
  if (!isObject(card) || typeof card.tool_call_id !== "string" || card.tool_call_id === "") {
    return false;
  }
  const id = card.tool_call_id;
  const calls = isObject(model.get("calls")) ? model.get("calls") : {};
  model.set("calls", { ...calls, [id]: card });
  const order = Array.isArray(model.get("order")) ? model.get("order") : [];
  if (!order.includes(id)) model.set("order", [...order, id]);
  return true;
}

/**
 * Dispatch one custom message from the kernel.
 * @returns {boolean} whether it changed (or could have changed) the state
 */
export function handleMessage(model, message) {
  if (!isObject(message)) return false;
  if (message.type === "text") return mergeText(model, message);
  if (message.type === "call") return mergeCard(model, message);
  return false;
}

/**
 * Listen for the kernel's custom messages on a model. Call once per model
 * (from anywidget's `initialize`), not once per view.
 * @returns {() => void} removes the listener
 */
export function attachMerger(model) {
  const onMessage = (message) => {
    handleMessage(model, message);
  };
  model.on("msg:custom", onMessage);
  return () => model.off("msg:custom", onMessage);
}

/** The turn's state read from the model, with safe defaults for missing or bad values. */
export function readState(model) {
  const calls = isObject(model.get("calls")) ? model.get("calls") : {};
  const order = Array.isArray(model.get("order")) ? model.get("order") : [];
  const ids = order.filter((id) => typeof id === "string" && isObject(calls[id]));
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
    calls,
    ids: [...new Set(ids)],
  };
}

export function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringOr(value, fallback) {
  return typeof value === "string" ? value : fallback;
}
