// The agent that runs a turn, in words: the header's line (its name, mode, sandbox,
// the settings it loaded, its model) and the count of the calls it ran under its own
// rules, derived from the cards. `mead_notebook/notebook/agent_info.py` says the same
// in the static transcript.

import { isObject } from "./state.js";

/** @typedef {import("./model").AgentInfo} AgentInfo */
/** @typedef {import("./model").Card} Card */

/** The fields a view shows, in order. */
const FIELDS = /** @type {const} */ (["agent", "mode", "sandbox", "settings", "model"]);

/** Longest value of one field kept (characters). */
const MAX_CHARS = 200;

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
  /** @type {Record<string, string>} */
  const found = {};
  if (!isObject(value)) return found;
  for (const key of FIELDS) {
    const field = value[key];
    if (typeof field === "string" && field !== "") found[key] = field.slice(0, MAX_CHARS);
  }
  return found;
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
