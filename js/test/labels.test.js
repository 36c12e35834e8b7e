import { describe, expect, it } from "vitest";
import {
  BY_LABEL,
  DECISION_LABEL,
  OUTCOME_LABEL,
  besideLabel,
  describeAnswer,
  lookup,
  ruleLabel,
  scopeLabel,
} from "../src/labels.js";
import source from "../src/protocol.gen.d.ts?raw";

/** The string literals of a union type in protocol.gen.d.ts, e.g. every Outcome. */
function union(name) {
  const match = source.match(new RegExp(`export type ${name}\\s*=([^;]+);`));
  if (!match) throw new Error(`no type ${name} in protocol.gen.d.ts`);
  return [...match[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
}

function answer(overrides = {}) {
  return {
    decision: "allow",
    option_id: null,
    option_ids: null,
    text: null,
    arguments: null,
    rule: null,
    by: "person",
    note: "",
    ...overrides,
  };
}

const question = (a, extra = {}) => ({ id: "q1", kind: "permission", answer: a, ...extra });

describe("every value has a label", () => {
  it.each([
    ["Outcome", OUTCOME_LABEL],
    ["Verdict", DECISION_LABEL],
    ["DecidedBy", BY_LABEL],
  ])("%s", (name, table) => {
    const values = union(name);
    expect(values.length).toBeGreaterThan(2);
    expect(Object.keys(table).sort()).toEqual([...values].sort());
    for (const value of values) expect(lookup(table, value)).not.toBe("");
  });

  it("lookup ignores inherited names and non-strings", () => {
    expect(lookup(OUTCOME_LABEL, "constructor")).toBe("");
    expect(lookup(OUTCOME_LABEL, "toString")).toBe("");
    expect(lookup(OUTCOME_LABEL, null)).toBe("");
  });
});

describe("scopes and rules", () => {
  const card = { tool: "delete_file", server: "files" };

  it.each([
    ["tool", "the tool delete_file"],
    ["server", "every tool on files"],
    ["class", "every read tool"],
  ])("scope %s is %s", (scope, text) => {
    expect(scopeLabel(scope, card)).toBe(text);
  });

  it.each([
    ["tool delete_file", "the tool delete_file"],
    ["server my server", "every tool on my server"],
    ["class read", "every read tool"],
    ["odd", "odd"],
  ])("rule %s is %s", (rule, text) => {
    expect(ruleLabel(rule)).toBe(text);
  });
});

describe("describeAnswer", () => {
  it.each([
    [answer(), "Allowed by you"],
    [answer({ by: "policy" }), "Allowed by policy"],
    [answer({ by: "fallback" }), "Allowed by the fallback (nobody to answer)"],
    [answer({ decision: "deny", note: "not that file" }), "Denied by you: not that file"],
    [answer({ decision: "deny", by: "kernel", note: "the kernel cannot wait" }), "Denied by the kernel: the kernel cannot wait"],
    [answer({ decision: "expired", by: "timeout", note: "no answer in time" }), "Expired: no answer in time"],
    [answer({ decision: "interrupted", by: "kernel" }), "Interrupted"],
    [answer({ decision: "no_answer", by: "fallback", note: "nobody to answer" }), "No answer: nobody to answer"],
    [answer({ rule: "tool delete_file" }), "Allowed by you, and always from now on for the tool delete_file"],
    [answer({ by: "rule", rule: "server files" }), "Allowed by your “Allow always” rule for every tool on files"],
    [answer({ by: "rule", rule: "class read" }), "Allowed by your “Allow always” rule for every read tool"],
    [answer({ decision: "something new" }), "Settled"],
  ])("%j is %s", (a, text) => {
    expect(describeAnswer(question(a))).toBe(text);
  });

  const options = [
    { id: "a", label: "Keep" },
    { id: "b", label: "Archive" },
    { id: "c", label: "Drop" },
  ];

  it.each([
    [answer({ decision: "picked", option_id: "b", option_ids: ["b"] }), "Chose “Archive” by you"],
    [answer({ decision: "picked", option_id: "a", option_ids: ["a", "c"] }), "Chose “Keep”, “Drop” by you"],
    [answer({ decision: "picked", option_id: "zz", option_ids: ["zz"] }), "Chose “zz” by you"],
    [answer({ decision: "picked", text: "move it to cold storage" }), "Answered “move it to cold storage” by you"],
    // the older form: one option_id only
    [{ decision: "allow", option_id: "c", by: "person", note: "" }, "Chose “Drop” by you"],
  ])("choice %j is %s", (a, text) => {
    expect(describeAnswer(question(a, { kind: "choice", options }))).toBe(text);
  });
});

describe("besideLabel", () => {
  it.each([
    ["No answer", "No answer: nobody to answer", "nobody to answer"],
    ["Expired", "Expired", ""],
    ["Completed", "Allowed by you", "Allowed by you"],
    ["Denied", null, ""],
    ["No answer", "No answers here", "No answers here"],
  ])("beside %j, %j adds %j", (label, decision, shown) => {
    expect(besideLabel(label, decision)).toBe(shown);
  });
});
