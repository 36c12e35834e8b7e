// The person's side of deciding, in a rendered view: Allow always, deny with a
// reason, edited arguments, Other and several options, labels, keys.

import { describe, expect, it } from "vitest";
import { buttonsNamed, byLabel, card, cardEl, key, nextFrame, renderedViews } from "./fake-model.js";
import { PAYLOADS, expectInert, pwned } from "./payloads.js";

const views = renderedViews();
const setup = views.setup;

function permission(overrides = {}) {
  return {
    id: "q1",
    kind: "permission",
    prompt: null,
    options: null,
    multiple: false,
    scopes: [
      { scope: "tool", label: "every call of delete_file on files" },
      { scope: "server", label: "every tool on files" },
    ],
    schema: null,
    deadline: null,
    rejected: null,
    rejections: 0,
    answer: null,
    ...overrides,
  };
}

function choice(overrides = {}) {
  return {
    ...permission({ id: "q2", kind: "choice", scopes: [] }),
    prompt: "Which colour?",
    options: [
      { id: "red", label: "Red" },
      { id: "blue", label: "Blue" },
      { id: "green", label: "Green" },
    ],
    ...overrides,
  };
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

const RESIZE = { tool: "resize", title: "resize", server: "images", class: "effect", arguments: { path: "a.png", width: 4000 } };
const DELETE = { tool: "delete_file", title: "delete_file", server: "files", class: "effect", arguments: { path: "old.txt" } };
const READ = { tool: "read_file", title: "read_file", server: "files", class: "read", arguments: { path: "a.txt" } };
const ASK = { tool: "ask_user", title: "ask_user", server: "local", class: "read", arguments: {} };

async function sendCard(model, overrides) {
  model.kernelSends({ type: "call", card: card({ approved_arguments: null, text_offset: 0, ...overrides }) });
  await nextFrame();
}

const answers = (model) => model.sentOfType("answer");
const question = (el) => el.querySelector(".mead-question");
const editor = (el) => byLabel(el, "Arguments (JSON)");

function type(input, text) {
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

describe("Allow always", () => {
  it("offers the scopes the kernel offers, in its words, and sends the one picked", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...DELETE, question: permission() });
    const scope = byLabel(el, "Remember for");
    expect(scope.tagName).toBe("SELECT");
    expect([...scope.options].map((o) => [o.value, o.textContent])).toEqual([
      ["tool", "every call of delete_file on files"],
      ["server", "every tool on files"],
    ]);
    expect(scope.value).toBe("tool");
    scope.value = "server";
    buttonsNamed(el, "Allow always")[0].click();
    buttonsNamed(el, "Allow always")[0].click();
    expect(answers(model)).toEqual([
      { type: "answer", question_id: "q1", decision: "allow", note: "", remember: "server" },
    ]);
  });

  it("Deny always sends a deny with the scope picked", async () => {
    const { model, el } = setup();
    const scopes = [
      { scope: "command", label: "the command `git push` in /repo (execute on codex)" },
      { scope: "prefix", label: "commands starting `git push`, nothing chained (execute on codex)" },
    ];
    await sendCard(model, { ...DELETE, question: permission({ scopes }) });
    byLabel(el, "Remember for").value = "prefix";
    buttonsNamed(el, "Deny always")[0].click();
    expect(answers(model)).toEqual([
      { type: "answer", question_id: "q1", decision: "deny", note: "", remember: "prefix" },
    ]);
  });

  it("never offers a scope the kernel did not offer", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...DELETE, question: permission({ id: "q9", scopes: [{ scope: "tool", label: "" }, { scope: "everything" }, 7] }) });
    expect(byLabel(el, "Remember for")).toBeNull();
    await sendCard(model, { ...DELETE, question: permission({ id: "q10", scopes: [] }) });
    expect(byLabel(el, "Remember for")).toBeNull();
    expect(buttonsNamed(el, "Allow always")).toHaveLength(0);
    expect(buttonsNamed(el, "Deny always")).toHaveLength(0);
  });

  it("a question saved before scopes had labels offers every read tool only on a read call", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...READ, question: permission({ scopes: ["tool", "server", "class"] }) });
    const values = () => [...byLabel(el, "Remember for").options].map((o) => o.value);
    expect(values()).toEqual(["tool", "server", "class"]);
    expect(byLabel(el, "Remember for").options[2].textContent).toBe("every read tool");
    await sendCard(model, { ...DELETE, question: permission({ id: "q9", scopes: ["tool", "class", "everything"] }) });
    expect(values()).toEqual(["tool"]);
  });

  it("no control allows everything", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...READ, question: permission({ scopes: ["tool", "server", "class"] }) });
    const text = el.textContent.toLowerCase();
    expect(text).not.toMatch(/allow (all|everything)|every tool(?! on)/);
  });

  it("says which Deny always rule answered a card", async () => {
    const { model, el } = setup();
    const rule = "commands starting `git push`, nothing chained (execute on codex)";
    await sendCard(model, {
      ...DELETE,
      tool_call_id: "c3",
      status: "failed",
      question: permission({ id: "q3", answer: answer({ decision: "deny", by: "rule", rule }) }),
    });
    const decision = cardEl(el, "c3").querySelector(".mead-decision").textContent;
    expect(decision).toBe(`Denied by your “Deny always” rule for ${rule}`);
  });

  it("says which rule answered a card, and which card made the rule", async () => {
    const { model, el } = setup();
    await sendCard(model, {
      ...DELETE,
      tool_call_id: "c1",
      status: "completed",
      question: permission({ answer: answer({ rule: "tool delete_file" }) }),
    });
    await sendCard(model, {
      ...DELETE,
      tool_call_id: "c2",
      status: "completed",
      question: permission({ id: "q2", answer: answer({ by: "rule", rule: "tool delete_file" }) }),
    });
    const decision = (id) => cardEl(el, id).querySelector(".mead-decision").textContent;
    expect(decision("c1")).toBe("Allowed by you, and always from now on for the tool delete_file");
    expect(decision("c2")).toBe("Allowed by your “Allow always” rule for the tool delete_file");
    expect(cardEl(el, "c2").querySelector(".mead-question").dataset.by).toBe("rule");
    expect(cardEl(el, "c2").querySelectorAll(".mead-question button")).toHaveLength(0);
  });
});

describe("deny with a reason", () => {
  it("sends the reason, and the answered card says it once, in the decision", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...DELETE, question: permission() });
    type(byLabel(el, "Reason if denied (optional)"), "  keep the archive ");
    buttonsNamed(el, "Deny")[0].click();
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q1", decision: "deny", note: "keep the archive" }]);
    await sendCard(model, {
      ...DELETE,
      status: "failed",
      outcome: "denied",
      error: "Permission to run delete_file was denied (rejected): keep the archive. The tool did not run.",
      question: permission({ answer: answer({ decision: "deny", note: "keep the archive" }) }),
    });
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-decision").textContent).toBe("Denied by you: keep the archive");
    // The error the model was told and the step say the same: not shown again.
    expect(c.querySelector(".mead-error").hidden).toBe(true);
    expect(c.querySelector(".mead-step").hidden).toBe(true);
    expect(c.querySelector(".mead-status").textContent).toBe("Denied");
  });

  it("does not send the reason with an allow", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...DELETE, question: permission() });
    type(byLabel(el, "Reason if denied (optional)"), "typed, then changed my mind");
    buttonsNamed(el, "Allow")[0].click();
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q1", decision: "allow", note: "" }]);
  });
});

describe("edited arguments", () => {
  it("starts from the arguments asked for and sends an edit with the allow", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...RESIZE, question: permission() });
    const input = editor(el);
    expect(input.tagName).toBe("TEXTAREA");
    expect(JSON.parse(input.value)).toEqual({ path: "a.png", width: 4000 });
    expect(el.querySelector(".mead-edit summary").textContent).toBe("Edit arguments");
    type(input, '{"path": "a.png", "width": 800}');
    expect(el.querySelector(".mead-edit summary").textContent).toBe("Edit arguments (edited)");
    buttonsNamed(el, "Allow")[0].click();
    expect(answers(model)).toEqual([
      { type: "answer", question_id: "q1", decision: "allow", note: "", arguments: { path: "a.png", width: 800 } },
    ]);
  });

  it("an unchanged text sends no arguments; an edit goes with Allow always too", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...RESIZE, question: permission() });
    type(editor(el), '{ "width": 4000, "path": "a.png" }');
    buttonsNamed(el, "Allow")[0].click();
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q1", decision: "allow", note: "" }]);

    const second = setup();
    await sendCard(second.model, { ...RESIZE, question: permission() });
    type(editor(second.el), '{"path": "b.png", "width": 10}');
    buttonsNamed(second.el, "Allow always")[0].click();
    expect(answers(second.model)).toEqual([
      { type: "answer", question_id: "q1", decision: "allow", note: "", arguments: { path: "b.png", width: 10 }, remember: "tool" },
    ]);
  });

  it.each([
    ['{"path": "a.png", "width": }', "not valid JSON"],
    ["[800]", "must be a JSON object"],
  ])("refuses %j in the widget with the reason, and sends nothing", async (text, reason) => {
    const { model, el } = setup();
    await sendCard(model, { ...RESIZE, question: permission() });
    const input = editor(el);
    type(input, text);
    buttonsNamed(el, "Allow")[0].click();
    const error = el.querySelector(".mead-edit-error");
    expect(error.hidden).toBe(false);
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toContain(reason);
    expect(answers(model)).toEqual([]);
    expect(el.querySelector(".mead-edit").open).toBe(true);
    expect(document.activeElement).toBe(input);
    expect(buttonsNamed(el, "Allow")[0].disabled).toBe(false);
    // Deny ignores the editor; fixing the text clears the error.
    type(input, '{"path": "a.png", "width": 5}');
    expect(error.hidden).toBe(true);
    buttonsNamed(el, "Deny")[0].click();
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q1", decision: "deny", note: "" }]);
  });

  it("shows the kernel's refusal, keeps the question open and the edit, and lets the person try again", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...RESIZE, question: permission() });
    const input = editor(el);
    type(input, '{"path": "a.png"}');
    buttonsNamed(el, "Allow")[0].click();
    expect(buttonsNamed(el, "Allow")[0].disabled).toBe(true);
    const refusal = "the edited arguments do not fit the tool: 'width' is a required property";
    await sendCard(model, { ...RESIZE, question: permission({ rejected: refusal, rejections: 1 }) });
    const shown = el.querySelector(".mead-rejected");
    expect(shown.hidden).toBe(false);
    expect(shown.getAttribute("role")).toBe("alert");
    expect(shown.textContent).toBe(`Not accepted: ${refusal}`);
    expect(editor(el)).toBe(input);
    expect(input.value).toBe('{"path": "a.png"}');
    expect(buttonsNamed(el, "Allow")[0].disabled).toBe(false);
    expect(document.activeElement).toBe(input);
    // The same refusal again still re-opens the controls: its count changed.
    type(input, '{"path": "b.png"}');
    buttonsNamed(el, "Allow")[0].click();
    expect(buttonsNamed(el, "Allow")[0].disabled).toBe(true);
    await sendCard(model, { ...RESIZE, question: permission({ rejected: refusal, rejections: 2 }) });
    expect(buttonsNamed(el, "Allow")[0].disabled).toBe(false);
    type(input, '{"path": "b.png", "width": 10}');
    buttonsNamed(el, "Allow")[0].click();
    expect(answers(model).map((m) => m.arguments)).toEqual([{ path: "a.png" }, { path: "b.png" }, { path: "b.png", width: 10 }]);
  });

  it("a view that did not send the refused answer shows the reason too", async () => {
    const { model } = setup();
    const other = views.host.render();
    await sendCard(model, { ...RESIZE, question: permission({ rejected: "width: 'wide' is not of type 'integer'", rejections: 1 }) });
    expect(other.querySelector(".mead-rejected").textContent).toBe("Not accepted: width: 'wide' is not of type 'integer'");
    expect(buttonsNamed(other, "Allow")[0].disabled).toBe(false);
  });

  it("the answered card shows what was asked and what was approved", async () => {
    const { model, el } = setup();
    await sendCard(model, {
      ...RESIZE,
      status: "completed",
      approved_arguments: { path: "a.png", width: 800 },
      question: permission({ answer: answer({ arguments: { path: "a.png", width: 800 } }) }),
    });
    const q = question(el);
    expect(JSON.parse(q.querySelector(".mead-asked-args").textContent)).toEqual({ path: "a.png", width: 4000 });
    expect(JSON.parse(q.querySelector(".mead-approved-args").textContent)).toEqual({ path: "a.png", width: 800 });
    expect(q.textContent).toContain("Asked for:");
    expect(q.textContent).toContain("Approved:");
  });

  it("shows approved arguments that arrive with a later update, and nothing when they are as asked", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...RESIZE, status: "in_progress", question: permission({ answer: answer({ by: "policy" }) }) });
    expect(question(el).querySelector(".mead-edited")).toBeNull();
    expect(question(el).textContent).not.toContain("Approved");
    await sendCard(model, {
      ...RESIZE,
      status: "in_progress",
      approved_arguments: { path: "a.png", width: 1 },
      question: permission({ answer: answer({ by: "policy" }) }),
    });
    expect(question(el).querySelector(".mead-edited")).not.toBeNull();
    expect(JSON.parse(question(el).querySelector(".mead-approved-args").textContent)).toEqual({ path: "a.png", width: 1 });
  });
});

describe("choices", () => {
  const ask = (q) => ({ ...ASK, question: q });

  it("a single choice has radios and sends option_ids with one id", async () => {
    const { model, el } = setup();
    await sendCard(model, ask(choice()));
    expect(byLabel(el, "Red").type).toBe("radio");
    byLabel(el, "Green").click();
    buttonsNamed(el, "Submit")[0].click();
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q2", option_ids: ["green"] }]);
  });

  it("a multiple choice has checkboxes and sends every option ticked, in order", async () => {
    const { model, el } = setup();
    await sendCard(model, ask(choice({ multiple: true })));
    const submit = buttonsNamed(el, "Submit")[0];
    expect(byLabel(el, "Red").type).toBe("checkbox");
    byLabel(el, "Green").click();
    byLabel(el, "Red").click();
    expect(submit.disabled).toBe(false);
    byLabel(el, "Red").click();
    byLabel(el, "Red").click();
    submit.click();
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q2", option_ids: ["red", "green"] }]);
    expect(byLabel(el, "Red").matches(":disabled")).toBe(true);
  });

  it.each([false, true])("an Other answer is sent as text instead of the options (multiple: %s)", async (multiple) => {
    const { model, el } = setup();
    await sendCard(model, ask(choice({ multiple })));
    byLabel(el, "Red").click();
    const other = byLabel(el, "Other (your own answer)");
    type(other, "  a bit of both ");
    expect(el.querySelector(".mead-options").disabled).toBe(true);
    expect(el.querySelector(".mead-other .mead-hint").hidden).toBe(false);
    expect(el.querySelector(".mead-other .mead-hint").textContent).toContain("instead of the options");
    buttonsNamed(el, "Submit")[0].click();
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q2", text: "a bit of both" }]);
  });

  it("a question asked in words labels its box as the answer and focuses it; Other otherwise", async () => {
    const { model, el } = setup();
    const inWords = choice({
      id: "q3",
      prompt: "Your name?",
      typed: "answer",
      options: [{ id: "mead-decline", label: "Decline (send nothing back)" }],
    });
    await sendCard(model, { ...ASK, tool_call_id: "c3", question: inWords });
    const box = byLabel(el, "Your answer");
    expect(el.textContent).not.toContain("Other (your own answer)");
    expect(document.activeElement).toBe(box);
    type(box, "Ada");
    buttonsNamed(el, "Submit")[0].click();
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q3", text: "Ada" }]);
    await sendCard(model, { ...ASK, tool_call_id: "c4", question: choice({ id: "q4", typed: "other" }) });
    const beside = cardEl(el, "c4");
    expect(byLabel(beside, "Other (your own answer)")).toBeTruthy();
    expect(beside.textContent).not.toContain("Your answer");
  });

  it("blank Other text is no answer; clearing it gives the options back", async () => {
    const { model, el } = setup();
    await sendCard(model, ask(choice()));
    const other = byLabel(el, "Other (your own answer)");
    const submit = buttonsNamed(el, "Submit")[0];
    type(other, "   ");
    expect(submit.disabled).toBe(true);
    type(other, "x");
    expect(submit.disabled).toBe(false);
    type(other, "");
    expect(el.querySelector(".mead-options").disabled).toBe(false);
    expect(submit.disabled).toBe(true);
    submit.click();
    expect(answers(model)).toEqual([]);
  });

  it.each([
    [answer({ decision: "picked", option_id: "blue", option_ids: ["blue"] }), "Chose “Blue” by you"],
    [answer({ decision: "picked", option_id: "red", option_ids: ["red", "green"] }), "Chose “Red”, “Green” by you"],
    [answer({ decision: "picked", text: "purple" }), "Answered “purple” by you"],
    [answer({ decision: "no_answer", by: "fallback", note: "nobody to answer" }), "No answer: nobody to answer"],
  ])("the answered card shows %j as %s", async (a, text) => {
    const { model, el } = setup();
    await sendCard(model, ask(choice({ answer: a })));
    expect(el.querySelector(".mead-decision").textContent).toBe(text);
    expect(el.querySelector(".mead-question-prompt").textContent).toBe("Which colour?");
    expect(el.querySelectorAll(".mead-question input, .mead-question button")).toHaveLength(0);
  });
});

describe("outcomes", () => {
  it.each([
    ["denied", "Denied"],
    ["cancelled", "Cancelled"],
    ["expired", "Expired"],
    ["interrupted", "Interrupted"],
    ["timeout", "Timed out"],
    ["error", "Error"],
    ["unknown", "Unknown tool"],
    ["invalid_arguments", "Invalid arguments"],
    ["no_answer", "No answer"],
  ])("a call that failed with %s says %s", async (outcome, label) => {
    const { model, el } = setup();
    await sendCard(model, { status: "failed", outcome });
    const c = cardEl(el, "call_1");
    expect(c.querySelector(".mead-status").textContent).toBe(label);
    expect(c.classList.contains(`mead-state-${outcome}`)).toBe(true);
  });
});

describe("keys", () => {
  it("Enter does nothing on a destructive call, and says so; Esc still denies", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...DELETE, question: permission() });
    const q = question(el);
    expect(document.activeElement).toBe(q);
    expect(key(q, "Enter").defaultPrevented).toBe(false);
    expect(key(q.querySelector(".mead-question-args"), "Enter").defaultPrevented).toBe(false);
    expect(answers(model)).toEqual([]);
    expect(q.querySelector(".mead-hint").textContent).toContain("Enter is off");
    expect(buttonsNamed(el, "Allow")[0].hasAttribute("aria-keyshortcuts")).toBe(false);
    key(q, "Escape");
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q1", decision: "deny", note: "" }]);
  });

  it.each([
    [{ ...RESIZE, kind: "edit" }],
    [{ ...RESIZE, tool: "shell", kind: "execute", arguments: { command: "ls" } }],
    [{ ...RESIZE, kind: "other" }],
    [{ ...RESIZE, class: "read", kind: "delete" }],
  ])("Enter does nothing on a call whose kind (or class) may change things: %j", async (call) => {
    const { model, el } = setup();
    await sendCard(model, { ...call, question: permission() });
    key(question(el), "Enter");
    expect(answers(model)).toEqual([]);
  });

  it("Enter allows a read call, focused on Allow when it opens", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...READ, tool: "delete_cache_report", question: permission() });
    expect(document.activeElement).toBe(buttonsNamed(el, "Allow")[0]);
    key(question(el), "Enter");
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q1", decision: "allow", note: "" }]);
  });

  it.each([
    ["Arguments (JSON)", "editor"],
    ["Reason if denied (optional)", "reason"],
    ["Remember for", "scope"],
  ])("keys typed in the %s field do nothing", async (label) => {
    const { model, el } = setup();
    await sendCard(model, { ...RESIZE, question: permission() });
    el.querySelector(".mead-edit").open = true;
    const field = byLabel(el, label);
    field.focus();
    for (const k of ["Enter", "Escape", "1"]) expect(key(field, k).defaultPrevented).toBe(false);
    expect(answers(model)).toEqual([]);
  });

  it("number keys pick a single choice's options and Enter submits", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...ASK, question: choice() });
    const q = question(el);
    expect(key(q, "3").defaultPrevented).toBe(true);
    expect(byLabel(el, "Green").checked).toBe(true);
    key(q, "2");
    expect(byLabel(el, "Blue").checked).toBe(true);
    expect(byLabel(el, "Green").checked).toBe(false);
    expect(key(q, "9").defaultPrevented).toBe(false);
    expect(key(q, "Escape").defaultPrevented).toBe(false);
    key(q, "Enter");
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q2", option_ids: ["blue"] }]);
  });

  it("number keys tick and untick a multiple choice's options", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...ASK, question: choice({ multiple: true }) });
    const q = question(el);
    key(q, "1");
    key(q, "3");
    key(q, "1");
    key(q, "2");
    key(q, "Enter");
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q2", option_ids: ["blue", "green"] }]);
  });

  it("keys typed in the Other field are text, not answers", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...ASK, question: choice() });
    const other = byLabel(el, "Other (your own answer)");
    other.focus();
    for (const k of ["1", "Enter"]) expect(key(other, k).defaultPrevented).toBe(false);
    expect(byLabel(el, "Red").checked).toBe(false);
    expect(answers(model)).toEqual([]);
  });

  it("Enter with nothing picked does not submit", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...ASK, question: choice() });
    expect(key(question(el), "Enter").defaultPrevented).toBe(false);
    expect(answers(model)).toEqual([]);
  });

  it("the keyboard trait switched off turns every key answer off", async () => {
    const { model, el } = setup({ keyboard: false });
    await sendCard(model, { ...READ, question: permission() });
    await sendCard(model, { ...ASK, tool_call_id: "c2", question: choice() });
    const [perm, pick] = el.querySelectorAll(".mead-question");
    // No button has focus, so a stray Enter cannot press one either.
    expect(document.activeElement).toBe(perm);
    for (const k of ["Enter", "Escape", "1"]) {
      expect(key(perm, k).defaultPrevented).toBe(false);
      expect(key(pick, k).defaultPrevented).toBe(false);
    }
    expect(answers(model)).toEqual([]);
    expect(byLabel(el, "Red").checked).toBe(false);
    expect(perm.querySelector(".mead-hint").textContent).toBe("");
    expect(el.querySelectorAll("[aria-keyshortcuts]")).toHaveLength(0);
    expect(el.querySelectorAll(".mead-key")).toHaveLength(0);
    // The buttons still work.
    buttonsNamed(el, "Allow")[0].click();
    expect(answers(model)).toEqual([{ type: "answer", question_id: "q1", decision: "allow", note: "" }]);
  });

  it("a keyboard trait switched off later takes effect at once", async () => {
    const { model, el } = setup();
    await sendCard(model, { ...READ, question: permission() });
    model.kernelSyncs("keyboard", false);
    key(question(el), "Escape");
    expect(answers(model)).toEqual([]);
  });
});

describe("untrusted text stays inert", () => {
  it("in tool and server names, scope labels, notes, rejected reasons and the editor", async () => {
    const { model, el } = setup();
    await sendCard(model, {
      tool: PAYLOADS[0],
      server: PAYLOADS[1],
      title: PAYLOADS[2],
      class: "read",
      arguments: { html: PAYLOADS[3], all: PAYLOADS },
      question: permission({ scopes: ["tool", "server", "class"], rejected: PAYLOADS[4], rejections: 1 }),
    });
    const options = [...byLabel(el, "Remember for").options].map((o) => o.textContent);
    expect(options).toEqual([`the tool ${PAYLOADS[0]}`, `every tool on ${PAYLOADS[1]}`, "every read tool"]);
    expect(el.querySelector(".mead-rejected").textContent).toBe(`Not accepted: ${PAYLOADS[4]}`);
    const input = editor(el);
    type(input, JSON.stringify({ html: PAYLOADS[0], script: PAYLOADS[1] }));
    buttonsNamed(el, "Allow")[0].click();
    expect(answers(model)[0].arguments).toEqual({ html: PAYLOADS[0], script: PAYLOADS[1] });
    type(input, PAYLOADS[5]);
    expectInert(el);

    await sendCard(model, {
      tool: PAYLOADS[0],
      server: PAYLOADS[1],
      class: "read",
      arguments: { html: PAYLOADS[3] },
      approved_arguments: { html: PAYLOADS[8] },
      question: permission({
        answer: answer({ decision: "deny", note: PAYLOADS[6], rule: PAYLOADS[7], arguments: { html: PAYLOADS[8] } }),
      }),
    });
    expect(el.querySelector(".mead-decision").textContent).toContain(PAYLOADS[6]);
    expect(JSON.parse(el.querySelector(".mead-approved-args").textContent)).toEqual({ html: PAYLOADS[8] });
    expectInert(el);
    expect(pwned()).toBeUndefined();
  });

  it("in option labels, prompts and Other answers", async () => {
    const { model, el } = setup();
    const options = PAYLOADS.slice(0, 9).map((label, i) => ({ id: `o${i}`, label }));
    await sendCard(model, { ...ASK, question: choice({ prompt: PAYLOADS[9], options, multiple: true }) });
    expect(el.querySelector("legend").textContent).toBe(PAYLOADS[9]);
    expect(byLabel(el, PAYLOADS[2]).type).toBe("checkbox");
    expectInert(el);
    const answered = answer({ decision: "picked", text: PAYLOADS[10] });
    await sendCard(model, { ...ASK, question: choice({ prompt: PAYLOADS[9], options, answer: answered }) });
    expect(el.querySelector(".mead-decision").textContent).toBe(`Answered “${PAYLOADS[10]}” by you`);
    await sendCard(model, {
      ...ASK,
      question: choice({ prompt: PAYLOADS[9], options, answer: answer({ decision: "picked", option_ids: ["o0", "o1"] }) }),
    });
    expect(el.querySelector(".mead-decision").textContent).toBe(`Chose “${PAYLOADS[0]}”, “${PAYLOADS[1]}” by you`);
    expectInert(el);
    expect(pwned()).toBeUndefined();
  });
});
