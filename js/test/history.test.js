// The earlier conversation a turn continues: shown above the turn, read-only, folded.

import { describe, expect, it } from "vitest";
import { historySummary, readHistory } from "../src/history.js";
import { buttonsNamed, card, nextFrame, renderedViews } from "./fake-model.js";
import { PAYLOADS, expectInert, pwned } from "./payloads.js";

const views = renderedViews();
const setup = views.setup;

const RAN = card({
  tool_call_id: "h1",
  title: "pytest -q",
  tool: "execute",
  kind: "execute",
  status: "completed",
  result: "3 passed",
  content: [{ type: "terminal", command: "pytest -q", cwd: null, output: "3 passed", exit_code: 0, cut: 0 }],
});
const HISTORY = [
  { type: "prompt", text: "Run the tests", cut: 0 },
  { type: "text", text: "Running **pytest** now.", cut: 0 },
  { type: "call", card: RAN },
  { type: "text", text: "All green.", cut: 12 },
];

describe("the history of a resumed session", () => {
  it("shows the earlier prompts, replies and calls above the turn, folded", async () => {
    const { el } = setup({ prompt: "And now?", status: "running", history: HISTORY, history_hidden: 0 });
    await nextFrame();
    const fold = el.querySelector("details.mead-history");
    expect(fold.hidden).toBe(false);
    expect(fold.open).toBe(false);
    expect(fold.compareDocumentPosition(el.querySelector(".mead-prompt")) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(fold.querySelector("summary").textContent).toBe("Earlier in this session: 1 prompt, 2 replies, 1 call");
    expect(fold.querySelector(".mead-history-prompt").textContent).toContain("Run the tests");
    expect(fold.querySelector(".mead-history-reply strong").textContent).toBe("pytest");
    expect(fold.querySelectorAll(".mead-history-reply")[1].textContent).toContain("12 more characters not shown");
    const ran = fold.querySelector(".mead-history-call .mead-card");
    expect(ran.textContent).toContain("pytest -q");
    expect(ran.textContent).toContain("Completed");
    // The turn's own transcript holds none of it.
    expect(el.querySelector(".mead-transcript").textContent).not.toContain("Run the tests");
  });

  it("never asks or cancels anything, whatever a card in it says", async () => {
    const open = card({
      tool_call_id: "h2",
      status: "in_progress",
      cancellable: true,
      question: { id: "q9", kind: "permission", prompt: null, options: null, deadline: null, answer: null },
    });
    const { model, el } = setup({ history: [{ type: "call", card: open }] });
    await nextFrame();
    const fold = el.querySelector(".mead-history");
    fold.open = true;
    expect(buttonsNamed(fold, "Cancel").filter((b) => !b.hidden)).toHaveLength(0);
    expect(buttonsNamed(fold, "Allow")).toHaveLength(0);
    expect(fold.querySelector(".mead-question")).toBeNull();
    expect(fold.textContent).toContain("Interrupted");
    for (const button of fold.querySelectorAll("button")) button.click();
    expect(model.sent.filter((m) => m.type !== "rendered")).toEqual([]);
  });

  it("says how many earlier entries it does not show", async () => {
    const { el } = setup({ history: HISTORY.slice(0, 1), history_hidden: 1200 });
    await nextFrame();
    const fold = el.querySelector(".mead-history");
    expect(fold.querySelector("summary").textContent).toBe(
      "Earlier in this session: 1 prompt, 1,200 more earlier entries not shown",
    );
    expect(fold.querySelector(".mead-not-shown").textContent).toBe("1,200 more earlier entries not shown");
  });

  it("is not there for a turn that continues nothing, and goes when a new turn starts", async () => {
    const { model, el } = setup({ history: HISTORY });
    await nextFrame();
    expect(el.querySelector(".mead-history").hidden).toBe(false);
    model.kernelSyncs("history", []);
    await nextFrame();
    expect(el.querySelector(".mead-history").hidden).toBe(true);
    expect(el.querySelector(".mead-history-call")).toBeNull();
  });

  it("keeps what the agent wrote inert", async () => {
    const history = PAYLOADS.flatMap((p) => [
      { type: "prompt", text: p, cut: 0 },
      { type: "text", text: p, cut: 0 },
      {
        type: "call",
        card: card({
          tool_call_id: `x${p.length}`,
          status: "failed",
          outcome: "error",
          error: p,
          content: [{ type: "text", text: p, cut: 0 }],
        }),
      },
    ]);
    const { el } = setup({ history });
    await nextFrame();
    const fold = el.querySelector(".mead-history");
    fold.open = true;
    expect(fold.querySelector(".mead-history-prompt").textContent).toContain(PAYLOADS[0]);
    expectInert(fold);
    expect(pwned()).toBeUndefined();
  });

  it("reads only well-formed entries", () => {
    expect(readHistory(null)).toEqual([]);
    const read = readHistory([
      { type: "prompt", text: "hi", cut: -3 },
      { type: "text", text: 5 },
      { type: "call", card: { title: "no id" } },
      { type: "call", card: card({ tool_call_id: "c", status: "pending", cancellable: true }) },
      "odd",
    ]);
    expect(read.map((i) => i.type)).toEqual(["prompt", "call"]);
    expect(read[0].cut).toBe(0);
    expect([read[1].card.status, read[1].card.outcome, read[1].card.cancellable]).toEqual(["failed", "interrupted", false]);
    expect(historySummary([], 0)).toBe("Earlier in this session");
  });
});
