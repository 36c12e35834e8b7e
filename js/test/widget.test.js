import { afterEach, describe, expect, it, vi } from "vitest";
import {
  FakeModel,
  Host,
  buttonsNamed,
  byLabel,
  card,
  cardEl,
  choice,
  key,
  nextFrame,
  permission,
} from "./fake-model.js";
import { PAYLOADS, expectInert, pwned } from "./payloads.js";

let host;

function setup(state = {}) {
  const model = new FakeModel(state);
  host = new Host(model);
  return model;
}

afterEach(() => {
  host?.dispose();
  host = undefined;
  vi.useRealTimers();
  document.body.replaceChildren();
  delete document.documentElement.dataset.meadPwned;
});

/** Send a card as the kernel does and wait for the views to render it. */
async function sendCard(model, overrides) {
  model.kernelSends({ type: "call", card: card(overrides) });
  await nextFrame();
}

function statusText(el, id) {
  return cardEl(el, id).querySelector(".mead-status").textContent;
}

describe("views", () => {
  it("tells the kernel each view was rendered", () => {
    const model = setup();
    host.render();
    host.render();
    expect(model.sentOfType("rendered")).toEqual([{ type: "rendered" }, { type: "rendered" }]);
  });

  it("answers each ping from every view, and says goodbye when a view goes", () => {
    const model = setup();
    host.render();
    host.render();
    model.kernelSends({ type: "ping", seq: 7 });
    expect(model.sentOfType("pong")).toEqual([{ type: "pong", seq: 7 }, { type: "pong", seq: 7 }]);
    model.kernelSends({ type: "ping", seq: "8" });
    expect(model.sentOfType("pong")).toHaveLength(2);
    host.dispose();
    host = undefined;
    expect(model.sentOfType("gone")).toEqual([{ type: "gone" }, { type: "gone" }]);
    model.kernelSends({ type: "ping", seq: 9 });
    expect(model.sentOfType("pong")).toHaveLength(2);
  });

  it("renders streamed text as Markdown as it arrives", async () => {
    const model = setup({ status: "running" });
    const el = host.render();
    model.kernelSends({ type: "text", start: 0, delta: "Some **bo" });
    await nextFrame();
    expect(el.querySelector(".mead-text").textContent).toContain("Some **bo");
    model.kernelSends({ type: "text", start: 9, delta: "ld** text" });
    await nextFrame();
    expect(el.querySelector(".mead-text strong")?.textContent).toBe("bold");
  });

  it("renders the changes of one frame together on the next frame", async () => {
    const model = setup();
    const el = host.render();
    for (const ch of "hello") model.kernelSends({ type: "text", start: model.get("text").length, delta: ch });
    expect(el.querySelector(".mead-transcript").textContent).toBe("");
    await nextFrame();
    expect(el.querySelector(".mead-text").textContent.trim()).toBe("hello");
  });

  it("keeps model text, arguments, results and titles inert", async () => {
    const model = setup();
    const el = host.render();
    const evil = PAYLOADS.join("\n\n");
    model.kernelSends({ type: "text", start: 0, delta: evil });
    model.kernelSends({
      type: "call",
      card: card({
        title: PAYLOADS[0],
        tool: PAYLOADS[1],
        server: PAYLOADS[4],
        arguments: { html: PAYLOADS[0], list: PAYLOADS },
        status: "failed",
        result: PAYLOADS[2],
        error: PAYLOADS[3],
        current_step: PAYLOADS[8],
        question: permission(),
      }),
    });
    model.kernelSyncs("error", PAYLOADS[0]);
    model.kernelSyncs("prompt", PAYLOADS[1]);
    await nextFrame();
    expectInert(el);
    expect(pwned()).toBeUndefined();
    const args = cardEl(el, "call_1").querySelector(".mead-args");
    expect(JSON.parse(args.textContent)).toEqual({ html: PAYLOADS[0], list: PAYLOADS });
    expect(cardEl(el, "call_1").querySelector(".mead-card-title").textContent).toBe(PAYLOADS[0]);
    expect(cardEl(el, "call_1").querySelector(".mead-error").textContent).toBe(`Error: ${PAYLOADS[3]}`);
  });
});

describe("cards", () => {
  it("shows title, tool, server, class badge and arguments", async () => {
    const model = setup();
    const el = host.render();
    await sendCard(model, { title: "Write a.txt", class: "effect", arguments: { path: "a.txt", n: 2 } });
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-card-title").textContent).toBe("Write a.txt");
    expect(c.querySelector(".mead-card-where").textContent).toBe("write_file · local");
    expect(c.querySelector(".mead-badge").textContent).toBe("effect");
    expect(c.querySelector("details summary").textContent).toBe("Arguments");
    expect(c.querySelector("details pre").textContent).toBe('{\n  "path": "a.txt",\n  "n": 2\n}');
    await sendCard(model, { tool_call_id: "call_2", class: "read" });
    expect(cardEl(el, "call_2").querySelector(".mead-badge").textContent).toBe("read");
  });

  it.each([
    [{ status: "pending" }, "Pending", "pending"],
    [{ status: "pending", question: permission() }, "Waiting for you", "pending"],
    [{ status: "in_progress" }, "In progress", "in_progress"],
    [{ status: "completed", result: "42" }, "Completed", "completed"],
    [{ status: "failed", error: "boom" }, "Failed", "failed"],
    [{ status: "failed", outcome: "denied" }, "Denied", "denied"],
    [{ status: "failed", outcome: "cancelled" }, "Cancelled", "cancelled"],
    [{ status: "failed", outcome: "expired" }, "Expired", "expired"],
    [{ status: "failed", outcome: "interrupted" }, "Interrupted", "interrupted"],
  ])("shows %j as %s", async (overrides, label, state) => {
    const model = setup();
    const el = host.render();
    await sendCard(model, overrides);
    expect(statusText(el, "call_1")).toBe(label);
    expect(cardEl(el, "call_1").classList.contains(`mead-state-${state}`)).toBe(true);
  });

  it("shows a short result or error", async () => {
    const model = setup();
    const el = host.render();
    await sendCard(model, { status: "completed", result: "wrote 3 bytes" });
    expect(cardEl(el, "call_1").querySelector(".mead-result").textContent).toBe("Result: wrote 3 bytes");
    expect(cardEl(el, "call_1").querySelector(".mead-error").hidden).toBe(true);
    await sendCard(model, { status: "failed", error: "disk full" });
    expect(cardEl(el, "call_1").querySelector(".mead-error").textContent).toBe("Error: disk full");
    expect(cardEl(el, "call_1").querySelector(".mead-result").hidden).toBe(true);
  });

  it("shows a determinate progress bar for a number and an indeterminate one otherwise", async () => {
    const model = setup();
    const el = host.render();
    await sendCard(model, { status: "in_progress", progress: null, current_step: "starting" });
    const bar = cardEl(el, "call_1").querySelector("progress");
    expect(bar.closest(".mead-progress-row").hidden).toBe(false);
    expect(bar.hasAttribute("value")).toBe(false);
    expect(cardEl(el, "call_1").querySelector(".mead-step").textContent).toBe("starting");
    await sendCard(model, { status: "in_progress", progress: 0.42, current_step: "copying" });
    expect(bar.getAttribute("value")).toBe("0.42");
    expect(bar.value).toBeCloseTo(0.42);
    expect(cardEl(el, "call_1").querySelector(".mead-percent").textContent).toBe("42%");
    expect(cardEl(el, "call_1").querySelector(".mead-step").textContent).toBe("copying");
    await sendCard(model, { status: "in_progress", progress: 7 });
    expect(bar.getAttribute("value")).toBe("1");
    await sendCard(model, { status: "completed", progress: null });
    expect(bar.closest(".mead-progress-row").hidden).toBe(true);
  });

  it("offers Cancel only while cancellable and in progress, and sends it once", async () => {
    const model = setup();
    const el = host.render();
    await sendCard(model, { status: "pending", cancellable: true });
    expect(buttonsNamed(el, "Cancel")[0].hidden).toBe(true);
    await sendCard(model, { status: "in_progress", cancellable: false });
    expect(buttonsNamed(el, "Cancel")[0].hidden).toBe(true);
    await sendCard(model, { status: "in_progress", cancellable: true });
    const cancel = buttonsNamed(el, "Cancel")[0];
    expect(cancel.hidden).toBe(false);
    cancel.click();
    cancel.click();
    expect(model.sentOfType("cancel")).toEqual([{ type: "cancel", tool_call_id: "call_1" }]);
    expect(cancel.disabled).toBe(true);
    await sendCard(model, { status: "in_progress", cancellable: true, progress: 0.5 });
    expect(cancel.disabled).toBe(true);
    await sendCard(model, { status: "failed", outcome: "cancelled" });
    expect(cancel.hidden).toBe(true);
    expect(statusText(el, "call_1")).toBe("Cancelled");
  });

  it("keeps cards in order and updates one card without rebuilding the others", async () => {
    const model = setup();
    const el = host.render();
    await sendCard(model, { tool_call_id: "a" });
    await sendCard(model, { tool_call_id: "b" });
    await sendCard(model, { tool_call_id: "c" });
    const ids = () => [...el.querySelectorAll(".mead-card")].map((c) => c.dataset.toolCallId);
    expect(ids()).toEqual(["a", "b", "c"]);
    const [a, b, c] = ["a", "b", "c"].map((id) => cardEl(el, id));
    const aTitle = a.querySelector(".mead-card-title").firstChild;
    await sendCard(model, { tool_call_id: "b", status: "completed" });
    expect(cardEl(el, "a")).toBe(a);
    expect(cardEl(el, "b")).toBe(b);
    expect(cardEl(el, "c")).toBe(c);
    expect(a.querySelector(".mead-card-title").firstChild).toBe(aTitle);
    model.kernelSyncs("order", ["c", "a", "b"]);
    await nextFrame();
    expect(ids()).toEqual(["c", "a", "b"]);
    expect(cardEl(el, "a")).toBe(a);
  });

  it("keeps an open <details> and a picked option across updates", async () => {
    const model = setup();
    const el = host.render();
    await sendCard(model, { tool_call_id: "a", status: "in_progress" });
    await sendCard(model, { tool_call_id: "q", tool: "ask_user", class: "read", question: choice() });
    const details = cardEl(el, "a").querySelector("details");
    details.open = true;
    byLabel(el, "Blue").click();
    await sendCard(model, { tool_call_id: "a", status: "in_progress", progress: 0.5 });
    await sendCard(model, { tool_call_id: "q", tool: "ask_user", class: "read", question: choice(), current_step: "waiting" });
    expect(cardEl(el, "a").querySelector("details")).toBe(details);
    expect(details.open).toBe(true);
    expect(byLabel(el, "Blue").checked).toBe(true);
    expect(buttonsNamed(el, "Submit")[0].disabled).toBe(false);
  });
});

describe("permission questions", () => {
  const READING = { class: "read", kind: "search" };

  async function openQuestion(model, question = permission(), card = {}) {
    await sendCard(model, { status: "pending", arguments: { path: "a.txt" }, question, ...card });
  }

  /** A rendered view with a permission question open in it (a call that Enter may allow, with `card` READING). */
  async function shownQuestion(card = {}) {
    const model = setup();
    const el = host.render();
    await openQuestion(model, permission(), card);
    return { model, el };
  }

  it("shows tool, server, class and arguments with Allow and Deny, each once", async () => {
    const { el } = await shownQuestion();
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-card-title").textContent).toBe("write_file");
    expect(c.querySelector(".mead-card-where").textContent).toBe("local");
    expect(c.querySelector(".mead-card-header .mead-badge").textContent).toBe("effect");
    const q = el.querySelector(".mead-question");
    expect(q.querySelector(".mead-question-prompt").textContent).toBe("Allow this call? It can change things.");
    expect(q.textContent).not.toContain("write_file");
    expect(q.querySelector(".mead-badge")).toBe(null);
    expect(JSON.parse(q.querySelector(".mead-question-args").textContent)).toEqual({ path: "a.txt" });
    // The card's own Arguments fold waits until the question is answered.
    expect(c.querySelector(".mead-details").hidden).toBe(true);
    expect(buttonsNamed(q, "Allow")).toHaveLength(1);
    expect(buttonsNamed(q, "Deny")).toHaveLength(1);
  });

  it("Allow sends an allow answer once", async () => {
    const { model, el } = await shownQuestion();
    buttonsNamed(el, "Allow")[0].click();
    buttonsNamed(el, "Allow")[0].click();
    buttonsNamed(el, "Deny")[0].click();
    expect(model.sentOfType("answer")).toEqual([{ type: "answer", question_id: "q1", decision: "allow", note: "" }]);
  });

  it("Deny sends a deny answer with the optional reason", async () => {
    const { model, el } = await shownQuestion();
    byLabel(el, "Reason if denied (optional)").value = "  not that file ";
    buttonsNamed(el, "Deny")[0].click();
    expect(model.sentOfType("answer")).toEqual([
      { type: "answer", question_id: "q1", decision: "deny", note: "not that file" },
    ]);
  });

  it("moves focus to Allow when the question opens, and only once", async () => {
    const model = setup();
    const el = host.render();
    const outside = document.createElement("button");
    document.body.append(outside);
    await openQuestion(model, permission(), READING);
    expect(document.activeElement).toBe(buttonsNamed(el, "Allow")[0]);
    outside.focus();
    await sendCard(model, { status: "pending", current_step: "still waiting", question: permission() });
    expect(document.activeElement).toBe(outside);
    // Even when the question's view is rebuilt (a new deadline), focus stays put.
    await sendCard(model, { status: "pending", question: permission({ deadline: Date.now() + 60_000 }) });
    expect(el.querySelector(".mead-countdown")).not.toBeNull();
    expect(document.activeElement).toBe(outside);
  });

  it("does not take focus from another open question", async () => {
    const { model, el } = await shownQuestion(READING);
    const first = buttonsNamed(el, "Allow")[0];
    expect(document.activeElement).toBe(first);
    await sendCard(model, { tool_call_id: "call_2", question: permission({ id: "q9" }) });
    expect(document.activeElement).toBe(first);
  });

  it("Enter allows and Escape denies when focus is within the question", async () => {
    const { model, el } = await shownQuestion(READING);
    key(el.querySelector(".mead-question-args"), "Enter");
    expect(model.sentOfType("answer")).toEqual([{ type: "answer", question_id: "q1", decision: "allow", note: "" }]);

    const { model: model2, el: el2 } = await shownQuestion(READING);
    key(buttonsNamed(el2, "Allow")[0], "Escape");
    expect(model2.sentOfType("answer")).toEqual([{ type: "answer", question_id: "q1", decision: "deny", note: "" }]);
  });

  it("keyboard shortcuts do not fire inside a text field", async () => {
    const { model, el } = await shownQuestion(READING);
    const reason = byLabel(el, "Reason if denied (optional)");
    reason.focus();
    expect(key(reason, "Enter").defaultPrevented).toBe(false);
    expect(key(reason, "Escape").defaultPrevented).toBe(false);
    expect(model.sentOfType("answer")).toEqual([]);
  });

  it("Enter on the focused Deny button is left to the button", async () => {
    const { model, el } = await shownQuestion();
    const deny = buttonsNamed(el, "Deny")[0];
    deny.focus();
    expect(key(deny, "Enter").defaultPrevented).toBe(false);
    expect(model.sentOfType("answer")).toEqual([]);
  });

  it("asks JupyterLab to leave keys pressed in a question alone", async () => {
    const { model, el } = await shownQuestion();
    await sendCard(model, { tool_call_id: "c", question: choice() });
    const questions = el.querySelectorAll(".mead-question");
    expect(questions).toHaveLength(2);
    for (const q of questions) expect(q.getAttribute("data-lm-suppress-shortcuts")).toBe("true");
  });

  it("keys outside the question do nothing", async () => {
    const { model, el } = await shownQuestion();
    key(el.querySelector(".mead-turn-header"), "Enter");
    key(document.body, "Escape");
    expect(model.sentOfType("answer")).toEqual([]);
  });

  it("shows a countdown that updates every second", async () => {
    vi.useFakeTimers({ now: new Date("2026-01-01T00:00:00Z") });
    const model = setup();
    const el = host.render();
    const deadline = Date.now() + 12_000;
    model.kernelSends({ type: "call", card: card({ question: permission({ deadline }) }) });
    vi.advanceTimersByTime(20);
    const countdown = el.querySelector(".mead-countdown");
    expect(countdown.textContent).toBe("Denies in 12 s");
    vi.advanceTimersByTime(1000);
    expect(countdown.textContent).toBe("Denies in 11 s");
    vi.advanceTimersByTime(5000);
    expect(countdown.textContent).toBe("Denies in 6 s");
    vi.advanceTimersByTime(60_000);
    expect(countdown.textContent).toBe("Denies in 0 s");
  });

  it("stops the countdown once answered", async () => {
    vi.useFakeTimers({ now: new Date("2026-01-01T00:00:00Z") });
    const model = setup();
    const el = host.render();
    const deadline = Date.now() + 12_000;
    model.kernelSends({ type: "call", card: card({ question: permission({ deadline }) }) });
    vi.advanceTimersByTime(20);
    expect(vi.getTimerCount()).toBe(1);
    model.kernelSends({
      type: "call",
      card: card({
        status: "failed",
        outcome: "expired",
        question: permission({ deadline, answer: { decision: "expired", option_id: null, by: "timeout", note: "" } }),
      }),
    });
    vi.advanceTimersByTime(20);
    expect(el.querySelector(".mead-countdown")).toBeNull();
    expect(vi.getTimerCount()).toBe(0);
  });

  it.each([
    [{ decision: "allow", option_id: null, by: "person", note: "" }, "Allowed by you"],
    [{ decision: "allow", option_id: null, by: "policy", note: "" }, "Allowed by policy"],
    [{ decision: "deny", option_id: null, by: "policy", note: "" }, "Denied by policy"],
    [{ decision: "deny", option_id: null, by: "person", note: "wrong file" }, "Denied by you: wrong file"],
    [{ decision: "expired", option_id: null, by: "timeout", note: "" }, "Expired"],
    [{ decision: "interrupted", option_id: null, by: "kernel", note: "" }, "Interrupted"],
  ])("an answered question shows %j as %s and no controls, in every view", async (answer, text) => {
    const model = setup();
    const first = host.render();
    await sendCard(model, { question: permission({ deadline: Date.now() + 5000 }) });
    expect(first.querySelectorAll("button:not([hidden])").length).toBeGreaterThan(0);
    await sendCard(model, { status: "failed", question: permission({ deadline: Date.now() + 5000, answer }) });
    const later = host.render();
    for (const el of [first, later]) {
      const q = el.querySelector(".mead-question");
      expect(q.querySelector(".mead-decision").textContent).toBe(text);
      expect(q.querySelectorAll("button, input")).toHaveLength(0);
      expect(q.querySelector(".mead-countdown")).toBeNull();
      expect(buttonsNamed(el, "Allow")).toHaveLength(0);
    }
  });
});

describe("choice questions", () => {
  const askCard = (question = choice()) => ({ tool: "ask_user", title: "ask_user", class: "read", question });

  it("labels one radio per option and enables Submit once one is picked", async () => {
    const model = setup();
    const el = host.render();
    await sendCard(model, askCard());
    expect(el.querySelector("legend").textContent).toBe("Which colour?");
    const red = byLabel(el, "Red");
    const blue = byLabel(el, "Blue");
    expect(red.type).toBe("radio");
    expect(blue.type).toBe("radio");
    expect(document.activeElement).toBe(red);
    const submit = buttonsNamed(el, "Submit")[0];
    expect(submit.disabled).toBe(true);
    submit.click();
    expect(model.sentOfType("answer")).toEqual([]);
    blue.click();
    expect(submit.disabled).toBe(false);
    submit.click();
    submit.click();
    expect(model.sentOfType("answer")).toEqual([{ type: "answer", question_id: "q2", option_ids: ["blue"] }]);
  });

  it("shows an expiry countdown", async () => {
    vi.useFakeTimers({ now: new Date("2026-01-01T00:00:00Z") });
    const model = setup();
    const el = host.render();
    model.kernelSends({ type: "call", card: card(askCard(choice({ deadline: Date.now() + 30_000 }))) });
    vi.advanceTimersByTime(20);
    expect(el.querySelector(".mead-countdown").textContent).toBe("Expires in 30 s");
    vi.advanceTimersByTime(3000);
    expect(el.querySelector(".mead-countdown").textContent).toBe("Expires in 27 s");
  });

  it("two views of one model use separate radio groups", async () => {
    const model = setup();
    const a = host.render();
    const b = host.render();
    await sendCard(model, askCard());
    byLabel(a, "Red").click();
    byLabel(b, "Blue").click();
    expect(byLabel(a, "Red").checked).toBe(true);
  });

  it("an answered choice shows the pick and no controls", async () => {
    const model = setup();
    const el = host.render();
    await sendCard(model, askCard(choice({ answer: { decision: "allow", option_id: "red", by: "person", note: "" } })));
    expect(el.querySelector(".mead-decision").textContent).toBe("Chose “Red” by you");
    expect(el.querySelectorAll(".mead-question input, .mead-question button")).toHaveLength(0);
  });

  it("renders option labels as text", async () => {
    const model = setup();
    const el = host.render();
    await sendCard(model, askCard(choice({ prompt: PAYLOADS[0], options: [{ id: "x", label: PAYLOADS[0] }] })));
    expect(byLabel(el, PAYLOADS[0])?.type).toBe("radio");
    expectInert(el);
  });
});

describe("shared state across views", () => {
  it("updates every view of one model", async () => {
    const model = setup();
    const a = host.render();
    const b = host.render();
    model.kernelSends({ type: "text", start: 0, delta: "hello" });
    await sendCard(model, { status: "in_progress" });
    for (const el of [a, b]) {
      expect(el.querySelector(".mead-text").textContent.trim()).toBe("hello");
      expect(statusText(el, "call_1")).toBe("In progress");
    }
  });

  it("a view rendered later shows the existing state at once", async () => {
    const model = setup({ prompt: "Tidy the folder", status: "running" });
    host.render();
    model.kernelSends({ type: "text", start: 0, delta: "# Plan\n\nstep one" });
    model.kernelSends({ type: "call", card: card({ status: "completed", result: "ok" }) });
    const later = host.render();
    expect(later.querySelector(".mead-prompt").textContent).toBe("Tidy the folder");
    expect(later.querySelector(".mead-text h1")?.textContent).toBe("Plan");
    expect(statusText(later, "call_1")).toBe("Completed");
  });

  it("an answer sent from one view is shown by all once the kernel settles it", async () => {
    const model = setup();
    const a = host.render();
    const b = host.render();
    await sendCard(model, { question: permission() });
    buttonsNamed(a, "Allow")[0].click();
    expect(buttonsNamed(a, "Allow")[0].disabled).toBe(true);
    expect(buttonsNamed(b, "Allow")[0].disabled).toBe(false);
    await sendCard(model, {
      status: "in_progress",
      question: permission({ answer: { decision: "allow", option_id: null, by: "person", note: "" } }),
    });
    for (const el of [a, b]) {
      expect(el.querySelector(".mead-decision").textContent).toBe("Allowed by you");
      expect(buttonsNamed(el, "Allow")).toHaveLength(0);
    }
  });

  it("a kernel full sync replaces the merged state", async () => {
    const model = setup();
    const el = host.render();
    model.kernelSends({ type: "text", start: 0, delta: "partial" });
    model.kernelSends({ type: "text", start: 50, delta: "lost" });
    model.kernelSyncs("text", "the whole text");
    await nextFrame();
    expect(el.querySelector(".mead-text").textContent.trim()).toBe("the whole text");
  });

  it("a removed view stops listening and sending", async () => {
    const model = setup();
    const a = host.render();
    await sendCard(model, { question: permission() });
    const allow = buttonsNamed(a, "Allow")[0];
    host.removeView(a);
    const listeners = model.listeners.filter((l) => l.name.startsWith("change:"));
    expect(listeners).toHaveLength(0);
    allow.click();
    expect(model.sentOfType("answer")).toEqual([]);
  });
});

describe("turn header and footer", () => {
  it.each([
    ["running", "", "", "Running…", ""],
    ["done", "end_turn", "", "Done", "Finished"],
    ["done", "max_rounds", "", "Done", "Stopped: maximum number of rounds reached"],
    ["interrupted", "interrupted", "", "Interrupted", "Interrupted"],
    ["error", "", "openai: rate limited", "Error", ""],
  ])("status %s, stop reason %s, error %s", async (status, stopReason, error, statusLabel, stopLabel) => {
    const model = setup({ prompt: "p" });
    const el = host.render();
    model.kernelSyncs("status", status);
    model.kernelSyncs("stop_reason", stopReason);
    model.kernelSyncs("error", error);
    await nextFrame();
    expect(el.querySelector(".mead-turn-status").textContent).toBe(statusLabel);
    const stop = el.querySelector(".mead-stop-reason");
    expect(stop.hidden).toBe(stopLabel === "");
    expect(stop.textContent).toBe(stopLabel);
    const err = el.querySelector(".mead-turn-failure");
    expect(err.hidden).toBe(error === "");
    expect(err.textContent).toBe(error);
    expect(el.querySelector(".mead-turn").classList.contains(`mead-turn-${status}`)).toBe(true);
  });
});

describe("accessible names", () => {
  it("every control has a name", async () => {
    const model = setup();
    const el = host.render();
    await sendCard(model, { question: permission(), status: "pending" });
    await sendCard(model, { tool_call_id: "b", status: "in_progress", cancellable: true });
    await sendCard(model, { tool_call_id: "c", tool: "ask_user", question: choice({ id: "q3" }) });
    for (const control of el.querySelectorAll("button, input, progress")) {
      const name =
        control.getAttribute("aria-label") ??
        (control.labels && control.labels.length > 0 ? control.labels[0].textContent : null) ??
        control.textContent;
      expect(name?.trim(), control.outerHTML).toBeTruthy();
    }
  });
});
