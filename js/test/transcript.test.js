import { afterEach, describe, expect, it, vi } from "vitest";
import { readState } from "../src/state.js";
import { codeBlock, inlineCode, layout, turnMarkdown } from "../src/transcript.js";
import { FakeModel, Host, buttonsNamed, card, cardEl, choice, nextFrame, permission } from "./fake-model.js";
import COPY_TURN from "../../tests/shared/copy-turn.json";
import { PAYLOADS, expectInert } from "./payloads.js";

let host;

function setup(state = {}) {
  const model = new FakeModel(state);
  host = new Host(model);
  return model;
}

afterEach(() => {
  host?.dispose();
  host = undefined;
  document.body.replaceChildren();
  delete document.documentElement.dataset.meadPwned;
});

const ALLOWED = { decision: "allow", option_id: null, option_ids: null, text: null, arguments: null, rule: null, by: "person", note: "" };

/** Stream `delta` as the kernel does: a text message at the current end. */
function stream(model, delta) {
  model.kernelSends({ type: "text", start: model.get("text").length, delta });
}

/** The transcript's children as short labels: `text:<its text>` or `card:<id>`. */
function flow(el) {
  return [...el.querySelector(".mead-transcript").children].map((child) =>
    child.classList.contains("mead-card")
      ? `card:${child.dataset.toolCallId}`
      : `text:${child.textContent.trim()}`,
  );
}

describe("layout", () => {
  const calls = (offsets) =>
    Object.fromEntries(Object.entries(offsets).map(([id, offset]) => [id, card({ tool_call_id: id, text_offset: offset })]));

  it("cuts the text at each card's offset", () => {
    const text = "Let me read. Two items. Done.";
    expect(layout(text, calls({ a: 13, b: 24 }), ["a", "b"])).toEqual([
      { kind: "text", start: 0, end: 13 },
      { kind: "cards", at: 13, ids: ["a"] },
      { kind: "text", start: 13, end: 24 },
      { kind: "cards", at: 24, ids: ["b"] },
      { kind: "text", start: 24, end: 29 },
    ]);
  });

  it("keeps cards at one offset in the order they appeared, and puts cards before any text first", () => {
    expect(layout("abc", calls({ x: 3, y: 0, z: 3 }), ["z", "y", "x"])).toEqual([
      { kind: "cards", at: 0, ids: ["y"] },
      { kind: "text", start: 0, end: 3 },
      { kind: "cards", at: 3, ids: ["z", "x"] },
    ]);
  });

  it("places a card past the text at its end, and a card without an offset at the end", () => {
    const all = { a: card({ tool_call_id: "a", text_offset: 99 }), b: card({ tool_call_id: "b" }) };
    expect(layout("hi", all, ["a", "b"])).toEqual([
      { kind: "text", start: 0, end: 2 },
      { kind: "cards", at: 2, ids: ["a", "b"] },
    ]);
  });
});

describe("text and cards in order", () => {
  it("interleaves live: each card where the model asked for it, each round its own paragraph", async () => {
    const model = setup({ status: "running" });
    const el = host.render();
    stream(model, "Let me read ");
    stream(model, "the notes.");
    model.kernelSends({ type: "call", card: card({ tool_call_id: "read", tool: "read_file", text_offset: 22 }) });
    await nextFrame();
    expect(flow(el)).toEqual(["text:Let me read the notes.", "card:read"]);
    stream(model, "Two items.");
    model.kernelSends({ type: "call", card: card({ tool_call_id: "write", text_offset: 32 }) });
    stream(model, "All done.");
    await nextFrame();
    expect(flow(el)).toEqual(["text:Let me read the notes.", "card:read", "text:Two items.", "card:write", "text:All done."]);
    const paragraphs = [...el.querySelectorAll(".mead-text p")].map((p) => p.textContent);
    expect(paragraphs).toEqual(["Let me read the notes.", "Two items.", "All done."]);
  });

  it("a view rendered later (a reload) shows the same order from the state alone", async () => {
    const text = "First **round**.Second round.";
    const model = setup({
      status: "done",
      text,
      calls: {
        b: card({ tool_call_id: "b", text_offset: 16, status: "completed" }),
        a: card({ tool_call_id: "a", text_offset: 16, status: "failed", outcome: "denied" }),
      },
      order: ["a", "b"],
    });
    const el = host.render();
    expect(flow(el)).toEqual(["text:First round.", "card:a", "card:b", "text:Second round."]);
    expect(el.querySelector(".mead-text strong").textContent).toBe("round");
  });

  it("a card that arrives before its text is placed once the text arrives", async () => {
    const model = setup({ status: "running" });
    const el = host.render();
    stream(model, "Half");
    model.kernelSends({ type: "call", card: card({ tool_call_id: "c", text_offset: 12 }) });
    await nextFrame();
    expect(flow(el)).toEqual(["text:Half", "card:c"]);
    stream(model, " a text.And more.");
    await nextFrame();
    expect(flow(el)).toEqual(["text:Half a text.", "card:c", "text:And more."]);
  });

  it("while streaming, only the last stretch of text changes in the page", async () => {
    const model = setup({ status: "running" });
    const el = host.render();
    stream(model, "# Plan\n\nRead the *notes*.\n\n");
    model.kernelSends({ type: "call", card: card({ tool_call_id: "a", text_offset: 27, status: "completed" }) });
    stream(model, "Then ");
    await nextFrame();
    const [first] = el.querySelectorAll(".mead-text");
    const heading = first.querySelector("h1");
    const changes = [];
    const observer = new MutationObserver((records) => changes.push(...records));
    observer.observe(first, { subtree: true, childList: true, characterData: true, attributes: true });
    for (const word of ["write ", "the ", "summary ", "now."]) {
      stream(model, word);
      await nextFrame();
    }
    observer.disconnect();
    expect(changes).toEqual([]);
    expect(first.querySelector("h1")).toBe(heading);
    expect(el.querySelectorAll(".mead-text")[1].textContent.trim()).toBe("Then write the summary now.");
  });

  it("keeps the card's element when the kernel syncs the whole state", async () => {
    const model = setup({ status: "running" });
    const el = host.render();
    stream(model, "Text.");
    model.kernelSends({ type: "call", card: card({ tool_call_id: "a", text_offset: 5, status: "in_progress" }) });
    await nextFrame();
    const before = cardEl(el, "a");
    model.kernelSyncs("calls", { a: card({ tool_call_id: "a", text_offset: 5, status: "completed" }) });
    model.kernelSyncs("text", "Text.After.");
    await nextFrame();
    expect(cardEl(el, "a")).toBe(before);
    expect(flow(el)).toEqual(["text:Text.", "card:a", "text:After."]);
  });

  it("renders 200 calls between 200 stretches of text in order", async () => {
    const calls = {};
    const order = [];
    let text = "";
    for (let i = 0; i < 200; i++) {
      text += `Round ${i}.`;
      const id = `call_${i}`;
      calls[id] = card({ tool_call_id: id, text_offset: text.length, status: "completed", result: `r${i}` });
      order.push(id);
    }
    const model = setup({ status: "done", text, calls, order });
    const el = host.render();
    const labels = flow(el);
    expect(labels).toHaveLength(400);
    expect(labels.slice(0, 4)).toEqual(["text:Round 0.", "card:call_0", "text:Round 1.", "card:call_1"]);
    expect(labels.at(-1)).toBe("card:call_199");
    expect(el.querySelectorAll(".mead-card[data-collapsed]")).toHaveLength(200);
    model.kernelSends({ type: "call", card: calls.call_7 });
    await nextFrame();
    expect(flow(el)).toEqual(labels);
  });
});

describe("collapsed cards", () => {
  async function shown(overrides) {
    const model = setup();
    const el = host.render();
    model.kernelSends({ type: "call", card: card(overrides) });
    await nextFrame();
    return { model, el, c: cardEl(el, overrides.tool_call_id ?? "call_1") };
  }

  const line = (c) => ({
    oneLine: c.querySelector(".mead-card-oneline").textContent,
    status: c.querySelector(".mead-status").textContent,
    decision: c.querySelector(".mead-card-decision").textContent,
  });

  it("a finished card shows one line: tool, arguments, outcome and decision", async () => {
    const { c } = await shown({
      status: "completed",
      arguments: { path: "a.txt", text: "two\nlines" },
      result: "wrote 9 bytes",
      question: permission({ answer: ALLOWED }),
    });
    expect(c.dataset.collapsed).toBe("true");
    expect(c.querySelector(".mead-card-body").hidden).toBe(true);
    expect(c.querySelector(".mead-card-title").textContent).toBe("write_file");
    expect(line(c)).toEqual({
      oneLine: '{"path":"a.txt","text":"two\\nlines"}',
      status: "Completed",
      decision: "(allowed by you)",
    });
    expect(c.querySelector(".mead-card-oneline").hidden).toBe(false);
    const toggle = c.querySelector(".mead-card-toggle");
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect(toggle.getAttribute("aria-controls")).toBe(c.querySelector(".mead-card-body").id);
  });

  it.each([
    [{ status: "failed", outcome: "denied", error: "no" }, "Denied"],
    [{ status: "failed", outcome: "timeout", error: "slow" }, "Timed out"],
    [{ status: "failed", outcome: "invalid_arguments", error: "bad" }, "Invalid arguments"],
    [{ status: "failed", outcome: "unknown", error: "no such tool" }, "Unknown tool"],
    [{ status: "failed", outcome: "error", error: "boom" }, "Error"],
  ])("a failed card %j collapses and names its outcome %s", async (overrides, label) => {
    const { c } = await shown(overrides);
    expect(c.dataset.collapsed).toBe("true");
    expect(line(c).status).toBe(label);
  });

  it("opens on a click on its line or its toggle, and closes again", async () => {
    const { c } = await shown({ status: "completed", result: "ok" });
    const body = c.querySelector(".mead-card-body");
    c.querySelector(".mead-card-title").click();
    expect(body.hidden).toBe(false);
    expect(c.dataset.collapsed).toBeUndefined();
    expect(c.querySelector(".mead-card-oneline").hidden).toBe(true);
    c.querySelector(".mead-card-toggle").click();
    expect(body.hidden).toBe(true);
    expect(c.querySelector(".mead-card-toggle").getAttribute("aria-expanded")).toBe("false");
  });

  it("a card opened by the person stays open across updates", async () => {
    const { model, el, c } = await shown({ status: "completed", result: "ok" });
    c.querySelector(".mead-card-toggle").click();
    model.kernelSends({ type: "call", card: card({ status: "completed", result: "ok", title: "renamed" }) });
    await nextFrame();
    expect(cardEl(el, "call_1").querySelector(".mead-card-body").hidden).toBe(false);
  });

  it.each([
    [{ status: "in_progress", cancellable: true }],
    [{ status: "pending" }],
    [{ status: "pending", question: permission() }],
  ])("a running or waiting card %j is open and has no toggle", async (overrides) => {
    const { c } = await shown(overrides);
    expect(c.dataset.collapsed).toBeUndefined();
    expect(c.querySelector(".mead-card-body").hidden).toBe(false);
    expect(c.querySelector(".mead-card-toggle").hidden).toBe(true);
    c.querySelector(".mead-card-title").click();
    expect(c.querySelector(".mead-card-body").hidden).toBe(false);
  });

  it("collapses once it finishes, and a question that opens again opens the card", async () => {
    const { model, el } = await shown({ status: "in_progress" });
    expect(cardEl(el, "call_1").dataset.collapsed).toBeUndefined();
    model.kernelSends({ type: "call", card: card({ status: "completed", result: "ok" }) });
    await nextFrame();
    expect(cardEl(el, "call_1").dataset.collapsed).toBe("true");
    model.kernelSends({ type: "call", card: card({ status: "failed", question: permission({ id: "q7" }) }) });
    await nextFrame();
    expect(cardEl(el, "call_1").dataset.collapsed).toBeUndefined();
    expect(buttonsNamed(el, "Allow")).toHaveLength(1);
  });
});

describe("questions from the model", () => {
  const ask = (question, overrides = {}) => ({
    tool_call_id: "ask",
    title: "ask_user",
    tool: "ask_user",
    server: "local",
    class: "read",
    arguments: { prompt: question.prompt, options: question.options },
    question,
    ...overrides,
  });

  it("an open choice reads as a question, not as a tool named ask_user on local", async () => {
    const model = setup();
    const el = host.render();
    model.kernelSends({ type: "call", card: card(ask(choice())) });
    await nextFrame();
    const c = cardEl(el, "ask");
    expect(c.dataset.kind).toBe("question");
    expect(c.dataset.tool).toBe("ask_user");
    expect(c.querySelector(".mead-card-title").textContent).toBe("Question");
    expect(c.querySelector(".mead-status").textContent).toBe("Waiting for you");
    expect(c.textContent).not.toContain("ask_user");
    expect(c.textContent).not.toContain("local");
    expect(c.querySelector("legend").textContent).toBe("Which colour?");
  });

  it("an answered choice shows the prompt, every option with the picked one marked, and who answered", async () => {
    const model = setup();
    const el = host.render();
    const answer = { ...ALLOWED, decision: "picked", option_id: "blue", option_ids: ["blue"] };
    model.kernelSends({
      type: "call",
      card: card(ask(choice({ answer }), { status: "completed", result: '{"option_id": "blue"}' })),
    });
    await nextFrame();
    const c = cardEl(el, "ask");
    expect(c.dataset.collapsed).toBe("true");
    expect(c.querySelector(".mead-card-oneline").textContent).toBe("Which colour?");
    expect(c.querySelector(".mead-status").textContent).toBe("Answered");
    expect(c.querySelector(".mead-card-decision").textContent).toBe("(chose “Blue” by you)");
    c.querySelector(".mead-card-toggle").click();
    const options = [...c.querySelectorAll(".mead-choice-options li")];
    expect(options.map((li) => li.textContent)).toEqual(["Red", "✓Blue (picked)"]);
    expect(c.querySelector(".mead-choice-options strong").textContent).toBe("Blue");
    expect(c.querySelector(".mead-decision").textContent).toBe("Chose “Blue” by you");
    expect(c.querySelector(".mead-result").hidden).toBe(true);
    expect(c.querySelector(".mead-details").hidden).toBe(true);
  });

  it("an unanswered choice says so", async () => {
    const model = setup();
    const el = host.render();
    const answer = { ...ALLOWED, decision: "no_answer", by: "fallback" };
    model.kernelSends({
      type: "call",
      card: card(ask(choice({ answer }), { status: "failed", outcome: "no_answer", error: "no answer" })),
    });
    await nextFrame();
    const c = cardEl(el, "ask");
    expect(c.querySelector(".mead-status").textContent).toBe("No answer");
    expect(c.querySelector(".mead-error").hidden).toBe(true);
  });
});

describe("Copy as Markdown", () => {
  const state = () => structuredClone(COPY_TURN.state);

  it("writes the prompt, text and calls in order, each call with arguments, decision and outcome", () => {
    const model = new FakeModel(state());
    expect(turnMarkdown(readState(model))).toBe(COPY_TURN.markdown);
  });

  it("names a denied call's outcome, who denied it and why", () => {
    const denied = card({
      status: "failed",
      outcome: "denied",
      error: "Permission denied",
      question: permission({ answer: { ...ALLOWED, decision: "deny", note: "not *that* file" } }),
    });
    const md = turnMarkdown(readState(new FakeModel({ calls: { call_1: denied }, order: ["call_1"] })));
    expect(md).toContain("**Tool call** `write_file` on `local`: Denied · Denied by you: not \\*that\\* file");
    expect(md).toContain("Error:\n\n```text\nPermission denied\n```");
  });

  it("fences code that holds backticks", () => {
    expect(inlineCode("a`b")).toBe("``a`b``");
    expect(inlineCode("`x")).toBe("`` `x ``");
    expect(codeBlock("```\ninside\n```", "text")).toBe("````text\n```\ninside\n```\n````");
  });

  it("the Copy button puts the Markdown on the clipboard and says so", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    vi.stubGlobal("navigator", { clipboard: { writeText } });
    try {
      const model = setup(state());
      const el = host.render();
      const copy = buttonsNamed(el, "Copy the turn as Markdown")[0];
      expect(copy.textContent).toBe("Copy");
      copy.click();
      await vi.waitFor(() => expect(el.querySelector(".mead-copy-status").textContent).toBe("Copied"));
      expect(writeText).toHaveBeenCalledWith(turnMarkdown(readState(model)));
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("says when the page refuses to copy", async () => {
    vi.stubGlobal("navigator", { clipboard: { writeText: () => Promise.reject(new Error("denied")) } });
    try {
      setup(state());
      const el = host.render();
      buttonsNamed(el, "Copy the turn as Markdown")[0].click();
      await vi.waitFor(() => expect(el.querySelector(".mead-copy-status").textContent).toMatch(/^Copy failed/));
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("keeps payloads in text, arguments and questions inert in the page", async () => {
    const model = setup();
    const el = host.render();
    stream(model, PAYLOADS.join("\n\n"));
    model.kernelSends({
      type: "call",
      card: card({
        text_offset: 10,
        status: "completed",
        arguments: { html: PAYLOADS[0] },
        result: PAYLOADS[1],
        question: choice({
          prompt: PAYLOADS[2],
          options: [{ id: "x", label: PAYLOADS[0] }],
          answer: { ...ALLOWED, decision: "picked", option_id: "x", option_ids: ["x"], note: PAYLOADS[3] },
        }),
      }),
    });
    await nextFrame();
    cardEl(el, "call_1").querySelector(".mead-card-toggle").click();
    expectInert(el);
  });
});
