// What a call will do, on its card before Allow: diffs, commands, text, locations;
// the kind badge; a permission that cannot be edited; a call the agent allowed;
// the plan and the thoughts; and every new block in Copy as Markdown and inert.

import { describe, expect, it } from "vitest";
import { AGENT_DECIDED, NOT_EDITABLE } from "../src/constants.gen.js";
import { FOLD_ROWS, diffRows } from "../src/content.js";
import { turnMarkdown } from "../src/transcript.js";
import { readState } from "../src/state.js";
import { FakeModel, buttonsNamed, byLabel, card, cardEl, key, nextFrame, permission, renderedViews } from "./fake-model.js";
import { PAYLOADS, expectInert } from "./payloads.js";

const views = renderedViews();
const setup = views.setup;

async function sendCard(model, overrides) {
  model.kernelSends({ type: "call", card: card({ approved_arguments: null, text_offset: 0, ...overrides }) });
  await nextFrame();
}

const EDIT = {
  tool: "write_file",
  kind: "edit",
  content: [{ type: "diff", path: "src/app.py", old_text: "a\nb\nc\n", new_text: "a\nB\nc\nd\n" }],
  locations: [{ path: "src/app.py", line: 2 }],
};
const SHELL = {
  tool: "shell",
  kind: "execute",
  content: [{ type: "terminal", command: "pytest -q tests/", cwd: "/repo" }],
};
const rows = (el) => [...el.querySelectorAll(".mead-diff tbody:not([hidden]) tr")];
const cells = (tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent);

describe("diffRows", () => {
  it("numbers old and new lines of each hunk, removed before added", () => {
    const got = diffRows(EDIT.content[0]).map((r) => [r.sign, r.old, r.new, r.text]);
    expect(got).toEqual([
      ["@", null, null, "@@ -1,3 +1,4 @@"],
      [" ", 1, 1, "a"],
      ["-", 2, null, "b"],
      ["+", null, 2, "B"],
      [" ", 3, 3, "c"],
      ["+", null, 4, "d"],
    ]);
  });

  it("shows a new file as all added lines", () => {
    const got = diffRows({ type: "diff", path: "n.txt", old_text: null, new_text: "x\ny\n" });
    expect(got.map((r) => [r.sign, r.old, r.new])).toEqual([["@", null, null], ["+", null, 1], ["+", null, 2]]);
    expect(got[0].text).toBe("@@ -0,0 +1,2 @@");
  });

  it("splits far-apart changes into hunks with three lines of context", () => {
    const old = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
    const next = old.map((l, i) => (i === 1 || i === 25 ? `${l}!` : l));
    const got = diffRows({ type: "diff", path: "f", old_text: old.join("\n"), new_text: next.join("\n") });
    expect(got.filter((r) => r.sign === "@").map((r) => r.text)).toEqual(["@@ -1,5 +1,5 @@", "@@ -23,7 +23,7 @@"]);
    expect(got.find((r) => r.sign === "-" && r.text === "line 26").old).toBe(26);
  });
});

describe("the permission card shows what the call will do, before Allow", () => {
  it("a diff with line numbers, added and removed lines marked, and its locations", async () => {
    const { el } = setup();
    await sendCard(model(), { ...EDIT, question: permission() });
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-content-head").textContent).toBe("Changes src/app.py +2 −1");
    const table = rows(c);
    expect(table.map(cells)).toEqual([
      ["", "", "", "@@ -1,3 +1,4 @@"],
      ["1", "1", " ", "a"],
      ["2", "", "-", "b"],
      ["", "2", "+", "B"],
      ["3", "3", " ", "c"],
      ["", "4", "+", "d"],
    ]);
    expect(table.map((tr) => tr.className)).toEqual([
      "mead-diff-hunk", "mead-diff-ctx", "mead-diff-del", "mead-diff-add", "mead-diff-ctx", "mead-diff-add",
    ]);
    expect(c.querySelector(".mead-locations").textContent).toBe("src/app.py:2");
    // The diff comes before the question and its Allow.
    const diff = c.querySelector(".mead-diff");
    const allow = buttonsNamed(c, "Allow")[0];
    expect(diff.compareDocumentPosition(allow) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(c.querySelector(".mead-card-header .mead-badge").textContent).toBe("edit");
  });

  it("a command as `$ command` with its working directory, and its output once it ran", async () => {
    const { model: m, el } = setup();
    await sendCard(m, { ...SHELL, question: permission() });
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-command").textContent).toBe("$ pytest -q tests/");
    expect(c.querySelector(".mead-cwd").textContent).toBe("in /repo");
    expect(c.querySelector(".mead-output")).toBeNull();
    expect(c.querySelector(".mead-card-header .mead-badge").textContent).toBe("execute");
    expect(c.querySelector(".mead-hint").textContent).toContain("Enter is off");
    key(c.querySelector(".mead-question"), "Enter");
    expect(m.sentOfType("answer")).toEqual([]);
    await sendCard(m, {
      ...SHELL,
      status: "completed",
      content: [{ ...SHELL.content[0], output: "3 passed", exit_code: 0 }],
    });
    expect(c.querySelector(".mead-output").textContent).toBe("3 passed");
    expect(c.textContent).toContain("Output (exit code 0)");
  });

  it("a long diff folds after a screenful, the rest one click away and kept open across updates", async () => {
    const { model: m, el } = setup();
    const old = Array.from({ length: 80 }, (_, i) => `old ${i}`).join("\n");
    const next = Array.from({ length: 80 }, (_, i) => `new ${i}`).join("\n");
    const content = [{ type: "diff", path: "big.txt", old_text: old, new_text: next }];
    await sendCard(m, { tool: "write_file", kind: "edit", content, question: permission() });
    const c = cardEl(el, "call_1");
    expect(rows(c)).toHaveLength(FOLD_ROWS);
    const more = buttonsNamed(c, `Show ${161 - FOLD_ROWS} more lines`)[0];
    expect(more.getAttribute("aria-expanded")).toBe("false");
    more.click();
    expect(rows(c)).toHaveLength(161);
    expect(more.getAttribute("aria-expanded")).toBe("true");
    expect(rows(c).at(-1).textContent).toContain("new 79");
    await sendCard(m, { tool: "write_file", kind: "edit", content, current_step: "still asking", question: permission() });
    expect(rows(c)).toHaveLength(161);
    more.click();
    expect(rows(c)).toHaveLength(FOLD_ROWS);
  });

  it("a call that cannot take edits offers no editor and no reason, and says why", async () => {
    const { model: m, el } = setup();
    await sendCard(m, { ...EDIT, question: permission({ editable: false, scopes: ["tool"] }) });
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-not-editable").textContent).toBe(NOT_EDITABLE);
    expect(byLabel(c, "Arguments (JSON)")).toBeNull();
    expect(byLabel(c, "Reason if denied (optional)")).toBeNull();
    buttonsNamed(c, "Deny")[0].click();
    expect(m.sentOfType("answer")).toEqual([{ type: "answer", question_id: "q1", decision: "deny", note: "" }]);
  });

  it("an editable call keeps its editor and reason", async () => {
    const { model: m, el } = setup();
    await sendCard(m, { ...EDIT, question: permission() });
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-not-editable")).toBeNull();
    expect(byLabel(c, "Reason if denied (optional)")).not.toBeNull();
  });

  it("a call the agent allowed says so, never as if a person allowed it", async () => {
    const { model: m, el } = setup();
    await sendCard(m, { ...SHELL, status: "completed", decided_by: "agent", result: "ok" });
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-card-decision").textContent).toBe(`(${AGENT_DECIDED.charAt(0).toLowerCase()}${AGENT_DECIDED.slice(1)})`);
    expect(c.textContent).not.toContain("by you");
    const markdown = turnMarkdown(readState(m));
    expect(markdown).toContain("Allowed by the agent");
    expect(markdown).not.toContain("by you");
  });
});

describe("plan and thoughts", () => {
  it("the plan is a live checklist above the turn, a glyph per status", async () => {
    const { model: m, el } = setup({ text: "The answer." });
    m.kernelSends({
      type: "plan",
      entries: [
        { content: "Read the test", status: "completed" },
        { content: "Fix the bug", status: "in_progress" },
        { content: "Run the tests", status: "pending" },
      ],
    });
    await nextFrame();
    const plan = el.querySelector(".mead-plan");
    expect([...plan.querySelectorAll("li")].map((li) => li.dataset.status)).toEqual(["completed", "in_progress", "pending"]);
    expect([...plan.querySelectorAll(".mead-plan-glyph")].map((g) => g.textContent)).toEqual(["●", "◐", "○"]);
    expect(plan.compareDocumentPosition(el.querySelector(".mead-transcript")) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    m.kernelSends({ type: "plan", entries: [{ content: "Read the test", status: "completed" }] });
    await nextFrame();
    expect(plan.querySelectorAll("li")).toHaveLength(1);
  });

  it("thoughts stream into a folded section, never into the answer", async () => {
    const { model: m, el } = setup({ text: "" });
    m.kernelSends({ type: "thought", start: 0, delta: "Maybe the *cache*." });
    m.kernelSends({ type: "text", start: 0, delta: "It is the cache." });
    await nextFrame();
    const thoughts = el.querySelector(".mead-thoughts");
    expect(thoughts.tagName).toBe("DETAILS");
    expect(thoughts.open).toBe(false);
    expect(thoughts.textContent).toContain("Maybe the cache.");
    expect(el.querySelector(".mead-transcript").textContent.trim()).toBe("It is the cache.");
    const markdown = turnMarkdown(readState(m));
    expect(markdown).toContain("**Thoughts**\n\n> Maybe the *cache*.");
    expect(markdown.indexOf("Thoughts")).toBeLessThan(markdown.indexOf("It is the cache."));
  });

  it("a state of a newer protocol says so; an older one renders without a note", async () => {
    const { el } = setup({ protocol_version: 99, text: "hi" });
    expect(el.querySelector(".mead-version-note").hidden).toBe(false);
    views.host.dispose();
    const second = setup({ text: "hi" });
    expect(second.el.querySelector(".mead-version-note").hidden).toBe(true);
    expect(second.el.querySelector(".mead-transcript").textContent.trim()).toBe("hi");
  });
});

describe("Copy as Markdown keeps content blocks and locations", () => {
  it("a diff as a unified diff, a command with its cwd, locations as paths", () => {
    const m = new FakeModel({
      calls: {
        call_1: card({ ...EDIT, status: "completed" }),
        call_2: card({ ...SHELL, tool_call_id: "call_2", status: "completed" }),
      },
      order: ["call_1", "call_2"],
    });
    const markdown = turnMarkdown(readState(m));
    expect(markdown).toContain(
      "Diff of `src/app.py`:\n\n```diff\n--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n```",
    );
    expect(markdown).toContain("Locations: `src/app.py:2`");
    expect(markdown).toContain("Command in `/repo`:\n\n```console\n$ pytest -q tests/\n```");
  });
});

describe("untrusted content stays inert", () => {
  it("in diffs, commands, outputs, text blocks, locations, plan and thoughts", async () => {
    const { model: m, el } = setup();
    const all = PAYLOADS.join("\n");
    await sendCard(m, {
      kind: PAYLOADS[0],
      content: [
        { type: "diff", path: PAYLOADS[1], old_text: all, new_text: `${all}\n${PAYLOADS[2]}` },
        { type: "terminal", command: PAYLOADS[3], cwd: PAYLOADS[4], output: all, exit_code: 1 },
        { type: "text", text: all },
        { type: PAYLOADS[5], text: all },
      ],
      locations: [{ path: PAYLOADS[6], line: 3 }],
      question: permission({ editable: false }),
    });
    m.kernelSends({ type: "plan", entries: PAYLOADS.map((p) => ({ content: p, status: "pending" })) });
    m.kernelSends({ type: "thought", start: 0, delta: all });
    await nextFrame();
    for (const more of el.querySelectorAll(".mead-diff-more")) more.click();
    el.querySelector(".mead-thoughts").open = true;
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-command").textContent).toBe(`$ ${PAYLOADS[3]}`);
    expect(c.querySelector(".mead-locations").textContent).toBe(`${PAYLOADS[6]}:3`);
    expect(el.querySelector(".mead-plan").textContent).toContain(PAYLOADS[1]);
    expectInert(el);
  });
});

function model() {
  return views.host.model;
}
