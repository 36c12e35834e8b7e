import { afterEach, describe, expect, it } from "vitest";
import { handleMessage, mergeCard, mergeText, readState } from "../src/state.js";
import { FakeModel, Host, card } from "./fake-model.js";

describe("text deltas", () => {
  it("appends at the current end", () => {
    const model = new FakeModel({ text: "Hello" });
    expect(mergeText(model, { type: "text", start: 5, delta: ", world" })).toBe(true);
    expect(model.get("text")).toBe("Hello, world");
  });

  it("replaces from an earlier start offset", () => {
    const model = new FakeModel({ text: "Hello, wrld and more" });
    mergeText(model, { type: "text", start: 7, delta: "world" });
    expect(model.get("text")).toBe("Hello, world");
  });

  it("ignores a message that would leave a gap", () => {
    const model = new FakeModel({ text: "abc" });
    expect(mergeText(model, { type: "text", start: 4, delta: "x" })).toBe(false);
    expect(model.get("text")).toBe("abc");
  });

  it("counts offsets in UTF-16 code units, as the kernel sends them", () => {
    // One emoji is two code units: offset 2 is right after it (a code-point count would call it a gap).
    const model = new FakeModel({ text: "🙂" });
    expect(mergeText(model, { type: "text", start: 2, delta: "!" })).toBe(true);
    expect(model.get("text")).toBe("🙂!");
    // ... and offset 2 of "🙂a" is before the "a" (a code-point count would put it after).
    const other = new FakeModel({ text: "🙂a" });
    expect(mergeText(other, { type: "text", start: 2, delta: "b" })).toBe(true);
    expect(other.get("text")).toBe("🙂b");
    expect(mergeText(other, { type: "text", start: 4, delta: "c" })).toBe(false);
  });

  it("merges thoughts apart from the text, with the same offsets", () => {
    const model = new FakeModel({ text: "answer", thoughts: "" });
    expect(handleMessage(model, { type: "thought", start: 0, delta: "Let me " })).toBe(true);
    expect(handleMessage(model, { type: "thought", start: 7, delta: "think." })).toBe(true);
    expect(handleMessage(model, { type: "thought", start: 99, delta: "gap" })).toBe(false);
    expect(model.get("thoughts")).toBe("Let me think.");
    expect(model.get("text")).toBe("answer");
  });

  it("replaces the plan with each plan message, keeping only well-formed entries", () => {
    const model = new FakeModel({ plan: [] });
    const entries = [
      { content: "Read the test", status: "completed" },
      { content: "Fix it", status: "in_progress", priority: "high" },
      { content: 5, status: "pending" },
      { content: "Odd", status: "later" },
      "nonsense",
    ];
    expect(handleMessage(model, { type: "plan", entries })).toBe(true);
    expect(model.get("plan")).toEqual(entries.slice(0, 2));
    expect(handleMessage(model, { type: "plan", entries: "x" })).toBe(false);
    expect(readState(model).plan).toEqual(entries.slice(0, 2));
  });

  it("reads a state saved before versions as version 1", () => {
    expect(readState(new FakeModel({})).protocolVersion).toBe(1);
    expect(readState(new FakeModel({ protocol_version: 2 })).protocolVersion).toBe(2);
    expect(readState(new FakeModel({})).thoughts).toBe("");
    expect(readState(new FakeModel({})).plan).toEqual([]);
  });

  it.each([
    { start: -1, delta: "x" },
    { start: 1.5, delta: "x" },
    { start: "0", delta: "x" },
    { start: 0, delta: 5 },
    { delta: "x" },
  ])("ignores malformed text message %j", (message) => {
    const model = new FakeModel({ text: "abc" });
    expect(mergeText(model, { type: "text", ...message })).toBe(false);
    expect(model.get("text")).toBe("abc");
  });

  it("sets locally and never saves", () => {
    const model = new FakeModel();
    handleMessage(model, { type: "text", start: 0, delta: "hi" });
    expect(model.get("text")).toBe("hi");
    expect(model.saves).toBe(0);
    expect(model.sent).toEqual([]);
  });
});

describe("call messages", () => {
  it("adds a new card and appends its id to order", () => {
    const model = new FakeModel();
    mergeCard(model, { type: "call", card: card({ tool_call_id: "a" }) });
    mergeCard(model, { type: "call", card: card({ tool_call_id: "b" }) });
    expect(model.get("order")).toEqual(["a", "b"]);
    expect(Object.keys(model.get("calls")).sort()).toEqual(["a", "b"]);
  });

  it("replaces an existing card without touching order", () => {
    const model = new FakeModel();
    const before = model.get("calls");
    mergeCard(model, { type: "call", card: card({ tool_call_id: "a" }) });
    mergeCard(model, { type: "call", card: card({ tool_call_id: "a", status: "completed", result: "ok" }) });
    expect(model.get("order")).toEqual(["a"]);
    expect(model.get("calls").a.status).toBe("completed");
    expect(model.get("calls").a.result).toBe("ok");
    // A new object each time, so change detection sees it.
    expect(model.get("calls")).not.toBe(before);
    expect(model.saves).toBe(0);
  });

  it.each([null, "x", {}, { tool_call_id: 3 }, { tool_call_id: "" }])("ignores malformed card %j", (bad) => {
    const model = new FakeModel();
    expect(mergeCard(model, { type: "call", card: bad })).toBe(false);
    expect(model.get("calls")).toEqual({});
    expect(model.get("order")).toEqual([]);
  });

  it("ignores unknown message types", () => {
    const model = new FakeModel({ text: "a" });
    expect(handleMessage(model, { type: "nope", start: 0, delta: "b" })).toBe(false);
    expect(handleMessage(model, "text")).toBe(false);
    expect(model.get("text")).toBe("a");
  });
});

describe("readState", () => {
  it("lists cards in order, then cards missing from order, skipping unknown ids", () => {
    const model = new FakeModel({
      calls: { a: card({ tool_call_id: "a" }), b: card({ tool_call_id: "b" }), c: card({ tool_call_id: "c" }) },
      order: ["b", "zzz", "a", "b"],
    });
    expect(readState(model).ids).toEqual(["b", "a", "c"]);
  });

  it("falls back to safe defaults for bad trait values", () => {
    const model = new FakeModel({ text: null, calls: [], order: "x", status: 3 });
    const state = readState(model);
    expect(state).toMatchObject({ text: "", ids: [], status: "idle" });
  });
});

describe("merging once per model", () => {
  let host;
  afterEach(() => host?.dispose());

  it("merges a custom message once even with two views", () => {
    const model = new FakeModel();
    host = new Host(model);
    host.render();
    host.render();
    model.kernelSends({ type: "text", start: 0, delta: "ab" });
    model.kernelSends({ type: "text", start: 2, delta: "cd" });
    expect(model.get("text")).toBe("abcd");
    expect(model.sets.filter((name) => name === "text")).toHaveLength(2);
    model.kernelSends({ type: "call", card: card() });
    expect(model.sets.filter((name) => name === "calls")).toHaveLength(1);
    expect(model.get("order")).toEqual(["call_1"]);
  });

  it("merges messages that arrive before any view exists", () => {
    const model = new FakeModel();
    host = new Host(model);
    model.kernelSends({ type: "text", start: 0, delta: "early" });
    expect(model.get("text")).toBe("early");
  });

  it("stops merging after the model's cleanup", () => {
    const model = new FakeModel();
    host = new Host(model);
    host.cleanupModel();
    model.kernelSends({ type: "text", start: 0, delta: "late" });
    expect(model.get("text")).toBe("");
  });
});
