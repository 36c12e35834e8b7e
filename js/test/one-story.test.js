// The card tells one story once: each fact in one place, and a view whose kernel
// went away says so, stops counting down and takes no answer.

import { afterEach, describe, expect, it, vi } from "vitest";
import { KERNEL_GONE, KERNEL_GONE_NOTE, KERNEL_GONE_STATUS } from "../src/constants.gen.js";
import { tellOnce } from "../src/once.js";
import { buttonsNamed, byLabel, card, cardEl, choice, nextFrame, permission, renderedViews } from "./fake-model.js";

const views = renderedViews();
const setup = views.setup;

afterEach(() => {
  vi.useRealTimers();
});

async function sendCard(model, overrides) {
  model.kernelSends({ type: "call", card: card({ approved_arguments: null, text_offset: 0, ...overrides }) });
  await nextFrame();
}

const shown = (el) => !el.hidden && el.textContent !== "";
const CAT = { type: "terminal", command: "cat greet.py", cwd: null, output: 'print("hello")\n', exit_code: null, cut: 0 };
const DIFF = {
  type: "diff",
  path: "greet.py",
  new_file: false,
  rows: [
    { sign: "-", old: 1, new: null, text: 'print("helo")', cut: 0 },
    { sign: "+", old: null, new: 1, text: 'print("hello")', cut: 0 },
  ],
  added: 1,
  removed: 1,
  hidden: 0,
  cut: 0,
};
const text = (value, cut = 0) => ({ type: "text", text: value, cut });

describe("each fact once", () => {
  it("keeps a text block only when it says what neither a terminal's output nor the result says", () => {
    expect(tellOnce([CAT, text('print("hello")')], 'print("hello")\n')).toEqual({ content: [CAT], showResult: false });
    expect(tellOnce([DIFF, text("wrote greet.py")], "wrote greet.py")).toEqual({ content: [DIFF], showResult: true });
    expect(tellOnce([text("a"), text(" a "), text("b")], null)).toEqual({ content: [text("a"), text("b")], showResult: false });
    // A block cut short says what it leaves out: it stays.
    expect(tellOnce([text("wrote greet.py", 40)], "wrote greet.py").content).toEqual([text("wrote greet.py", 40)]);
  });

  it("shows an agent's command output once, under its command", async () => {
    const { model, el } = setup();
    await sendCard(model, {
      title: "cat greet.py",
      tool: "Bash",
      server: "scripted",
      kind: "execute",
      status: "completed",
      result: 'print("hello")\n',
      content: [CAT, text('print("hello")\n')],
    });
    const c = cardEl(el, "call_1");
    expect(c.querySelectorAll(".mead-output")).toHaveLength(1);
    expect(c.querySelector(".mead-content-text")).toBe(null);
    expect(shown(c.querySelector(".mead-result"))).toBe(false);
  });

  it("says what an edit did once, as its result", async () => {
    const { model, el } = setup();
    await sendCard(model, {
      title: "Edit greet.py",
      tool: "Edit",
      server: "scripted",
      kind: "edit",
      status: "completed",
      result: "wrote greet.py",
      content: [DIFF, text("wrote greet.py")],
      locations: [{ path: "greet.py", line: 1 }],
    });
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-content").textContent).not.toContain("wrote greet.py");
    expect(c.querySelector(".mead-result").textContent).toBe("Result: wrote greet.py");
    expect(shown(c.querySelector(".mead-result"))).toBe(true);
    // The files a call touches are labelled as such.
    expect(c.querySelector(".mead-locations-row").textContent).toBe("Files:greet.py:1");
  });

  it("names the tool once in the header: by a title that is or starts with it, else beside the title", async () => {
    const { model, el } = setup();
    const where = () => cardEl(el, "call_1").querySelector(".mead-card-where").textContent;
    await sendCard(model, { title: "write_file", tool: "write_file", server: "local" });
    expect(where()).toBe("local");
    await sendCard(model, { title: "Write hello.txt", tool: "Write", server: "claude" });
    expect(where()).toBe("claude");
    // A title that only looks like the tool, or says something else, never hides it.
    await sendCard(model, { title: "Writehello.txt", tool: "Write", server: "claude" });
    expect(where()).toBe("Write · claude");
    await sendCard(model, { title: "Read config", tool: "Bash", server: "claude" });
    expect(where()).toBe("Bash · claude");
  });

  it("shows the arguments in the open question, and in the card's fold once answered", async () => {
    const { model, el } = setup();
    await sendCard(model, { question: permission() });
    const c = cardEl(el, "call_1");
    expect(c.querySelectorAll(".mead-question-args")).toHaveLength(1);
    expect(c.querySelector(".mead-details").hidden).toBe(true);
    await sendCard(model, {
      status: "completed",
      result: "ok",
      question: permission({ answer: { decision: "allow", by: "person", note: "" } }),
    });
    expect(c.querySelector(".mead-question-args")).toBe(null);
    expect(c.querySelector(".mead-details").hidden).toBe(false);
  });

  it("says an expired question's outcome in its decision, not again as an error", async () => {
    const { model, el } = setup();
    await sendCard(model, {
      status: "failed",
      outcome: "expired",
      current_step: "denied (expired)",
      error: "Permission to run write_file was denied (expired). The tool did not run.",
      question: permission({ answer: { decision: "expired", by: "timeout", note: "no answer in time" } }),
    });
    const c = cardEl(el, "call_1");
    expect(shown(c.querySelector(".mead-error"))).toBe(false);
    expect(shown(c.querySelector(".mead-step"))).toBe(false);
    // A call that failed running still says its error: no decision says it.
    await sendCard(model, {
      status: "failed",
      outcome: "error",
      error: "write_file failed: disk full",
      question: permission({ answer: { decision: "allow", by: "person", note: "" } }),
    });
    expect(c.querySelector(".mead-error").textContent).toBe("Error: write_file failed: disk full");
    expect(shown(c.querySelector(".mead-error"))).toBe(true);
  });

  it("picks an option from a click anywhere on its row", async () => {
    const { model, el } = setup();
    await sendCard(model, { tool: "ask_user", class: "read", question: choice() });
    const blue = byLabel(el, "Blue");
    blue.closest(".mead-option").click();
    expect(blue.checked).toBe(true);
    const red = byLabel(el, "Red");
    red.closest(".mead-option").querySelector(".mead-key").click();
    expect(red.checked).toBe(true);
    buttonsNamed(el, "Submit")[0].click();
    expect(model.sentOfType("answer")).toEqual([{ type: "answer", question_id: "q2", option_ids: ["red"] }]);
  });

  it("refuses an edit with the reason alone when its preview changes the card", async () => {
    const { model, el } = setup();
    await sendCard(model, { question: permission({ version: 1 }) });
    buttonsNamed(el, "Allow")[0].click();
    const why = "the card now shows what your edited arguments will do: check the new diff";
    await sendCard(model, { question: permission({ version: 2, rejected: why, rejections: 1 }) });
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-rejected").textContent).toBe(`Not accepted: ${why}`);
    expect(c.querySelector(".mead-changed").hidden).toBe(true);
    expect(buttonsNamed(el, "Allow")[0].disabled).toBe(false);
    buttonsNamed(el, "Allow")[0].click();
    expect(model.sentOfType("answer").map((m) => m.version)).toEqual([1, 2]);
  });
});

describe("a view whose kernel went away", () => {
  async function waiting(question = permission({ deadline: Date.now() + 60_000 })) {
    const { model, el } = setup({ status: "running" });
    await sendCard(model, { question });
    return { model, el, c: cardEl(el, "call_1") };
  }

  it("says so when the widget manager drops the comm, and stops counting down", async () => {
    const { model, el, c } = await waiting();
    const countdown = () => c.querySelector(".mead-countdown");
    expect(countdown().textContent).toMatch(/^Denies in (60|59) s$/);
    model.emit("comm_live_update");
    expect(c.querySelector(".mead-status").textContent).toBe(KERNEL_GONE);
    expect(c.querySelector(".mead-kernel-gone").textContent).toBe(KERNEL_GONE_NOTE);
    expect(el.querySelector(".mead-turn-status").textContent).toBe(KERNEL_GONE_STATUS);
    expect(countdown()).toBe(null);
    expect(buttonsNamed(el, "Allow")[0].disabled).toBe(true);
    buttonsNamed(el, "Allow")[0].click();
    expect(model.sentOfType("answer")).toEqual([]);
  });

  it("says so when an answer cannot be sent, instead of sending for ever", async () => {
    const { model, el, c } = await waiting(choice({ deadline: Date.now() + 60_000 }));
    model.send = () => {
      throw new Error("Cannot send");
    };
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    byLabel(el, "Red").click();
    buttonsNamed(el, "Submit")[0].click();
    expect(warn).toHaveBeenCalled();
    expect(c.querySelector(".mead-sent").textContent).toBe("");
    expect(c.querySelector(".mead-kernel-gone").textContent).toBe(KERNEL_GONE_NOTE);
    expect(c.querySelector(".mead-status").textContent).toBe(KERNEL_GONE);
    expect(c.querySelector(".mead-countdown")).toBe(null);
    warn.mockRestore();
  });

  it("leaves a finished turn as it ended", async () => {
    const { model, el } = setup({ status: "done" });
    await sendCard(model, { status: "completed", result: "ok" });
    model.emit("comm_live_update");
    expect(cardEl(el, "call_1").querySelector(".mead-status").textContent).toBe("Completed");
    expect(el.querySelector(".mead-turn-status").textContent).not.toBe(KERNEL_GONE_STATUS);
  });
});
