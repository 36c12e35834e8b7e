// The agent that runs a turn, in words: the header's line (its name, mode, sandbox,
// the settings it loaded, its model) and the count of the calls it ran under its own
// rules, derived from the cards. `mead_notebook/notebook/agent_info.py` says the same
// in the static transcript.

import { isObject } from "./state.js";

/** @typedef {import("./model").AgentInfo} AgentInfo */
/** @typedef {import("./protocol.gen").UsageInfo} UsageInfo */
/** @typedef {import("./model").Card} Card */

/** The fields a view shows, in order. */
const FIELDS = /** @type {const} */ (["agent", "mode", "sandbox", "settings", "model"]);

/** Longest value of one field kept (characters). */
const MAX_CHARS = 200;

/** Largest token count or cost kept (exact up to here). */
const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/** Longest currency code kept (characters). */
const MAX_CURRENCY = 8;

/** @type {Record<string, string>} */
const SETTINGS_TEXT = {
  user: "its user settings only",
  project: "its user and project settings",
};

/**
 * The well-formed fields of an agent's description: non-empty strings, cut to MAX_CHARS.
 * @param {unknown} value
 * @returns {AgentInfo}
 */
export function readAgent(value) {
  /** @type {Record<string, any>} */
  const found = {};
  if (!isObject(value)) return found;
  for (const key of FIELDS) {
    const field = value[key];
    if (typeof field === "string" && field !== "") found[key] = field.slice(0, MAX_CHARS);
  }
  const usage = readUsage(value.usage);
  if (usage) found.usage = usage;
  return found;
}

/**
 * @param {unknown} value
 * @returns {number | null}
 */
function count(value) {
  return Number.isInteger(value) && /** @type {number} */ (value) >= 0 && /** @type {number} */ (value) <= MAX_COUNT
    ? /** @type {number} */ (value)
    : null;
}

/**
 * The well-formed figures of a usage (others null), or null when it gives none.
 * @param {unknown} value
 * @returns {UsageInfo | null}
 */
export function readUsage(value) {
  if (!isObject(value)) return null;
  const cost = value.cost;
  const amount =
    typeof cost === "number" && Number.isFinite(cost) && cost >= 0 && cost <= MAX_COUNT ? cost : null;
  const currency = value.currency;
  const code = typeof currency === "string" && currency !== "" ? currency.slice(0, MAX_CURRENCY) : null;
  const usage = {
    used: count(value.used),
    size: count(value.size),
    cost: amount,
    currency: amount === null ? null : code,
  };
  return Object.values(usage).some((v) => v !== null) ? usage : null;
}

/**
 * `950`, `12.3k`, `200k`, `1.5M` (tenths rounded half up, in integers).
 * @param {number} n
 * @returns {string}
 */
function tokens(n) {
  if (n < 1000) return String(n);
  const [unit, scale] = n < 999950 ? ["k", 1000] : ["M", 1000000];
  const tenths = Math.floor((n * 10 + scale / 2) / scale);
  const whole = Math.floor(tenths / 10);
  const tenth = tenths % 10;
  return tenth === 0 ? `${whole}${unit}` : `${whole}.${tenth}${unit}`;
}

/**
 * The header's words for a usage: `12.3k / 200k tokens · $0.04` ("" when unknown).
 * A figure the agent did not give is `?`, never 0.
 * @param {unknown} value
 * @returns {string}
 */
export function usageText(value) {
  const usage = readUsage(value);
  if (!usage) return "";
  const parts = [];
  if (usage.size !== null) {
    parts.push(`${usage.used === null ? "?" : tokens(usage.used)} / ${tokens(usage.size)} tokens`);
  } else if (usage.used !== null) {
    parts.push(`${tokens(usage.used)} tokens`);
  }
  if (usage.cost !== null) {
    const cents = Math.floor(usage.cost * 100 + 0.5);
    const amount = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
    if (usage.currency === "USD") parts.push(`$${amount}`);
    else parts.push(usage.currency ? `${amount} ${usage.currency}` : `cost ${amount}`);
  }
  return parts.join(" · ");
}

/**
 * The header's line: `claude · mode default · sandbox workspace-write · its user settings only`
 * ("" when nothing is known).
 * @param {AgentInfo} agent
 * @returns {string}
 */
export function agentText(agent) {
  if (Object.keys(agent).length === 0) return "";
  const parts = [agent.agent || "the agent"];
  if (agent.mode) parts.push(`mode ${agent.mode}`);
  if (agent.sandbox === "danger-full-access") parts.push("no sandbox (danger-full-access)");
  else if (agent.sandbox) parts.push(`sandbox ${agent.sandbox}`);
  if (agent.settings) parts.push(SETTINGS_TEXT[agent.settings] ?? `settings ${agent.settings}`);
  if (agent.model) parts.push(`model ${agent.model}`);
  const used = usageText(agent.usage);
  if (used) parts.push(used);
  return parts.join(" · ");
}

/**
 * How many cards ran under the agent's own rules (`decided_by: "agent"`).
 * @param {Record<string, Card>} calls
 * @returns {number}
 */
export function ranByAgent(calls) {
  return Object.values(calls).filter((card) => isObject(card) && card.decided_by === "agent").length;
}

/**
 * The summary's words for `count` calls the agent ran without asking ("" for none).
 * @param {number} count
 * @returns {string}
 */
export function ranByAgentText(count) {
  if (count <= 0) return "";
  const calls = count === 1 ? "1 call" : `${count} calls`;
  return `${calls} ran under the agent's own rules, without asking anyone here`;
}
