// Late input: the call changes while its question is open (a new `version`).
// The question shows the new arguments, says the call changed, and answers
// name the version they were made on; an edit in progress is kept, marked stale.

import { describe, expect, it } from "vitest";
import { buttonsNamed, byLabel, card, choice, key, nextFrame, renderedViews } from "./fake-model.js";
import { CHANGED_NOTE } from "../src/permission.js";

const views = renderedViews();
const setup = views.setup;

function permission(overrides = {}) {
  return {
    id: "q1",
    kind: "permission",
    prompt: null,
    options: null,
    multiple: false,
    scopes: ["tool", "server"],
    schema: null,
    editable: true,
    deadline: null,
    rejected: null,
    rejections: 0,
    version: 1,
    answer: null,
    ...overrides,
  };
}

const FIRST = { path: "a.txt" };
const LATER = { path: "/etc/passwd", content: "evil" };

async function sendCard(model, overrides) {
  model.kernelSends({ type: "call", card: card(overrides) });
  await nextFrame();
}

/** The call as first asked, then as the agent's late input makes it. */
async function changed(model, question = {}, call = {}) {
  await sendCard(model, { arguments: FIRST, ...call, question: permission(question) });
}

function type(input, text) {
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

const shownArgs = (el) => JSON.parse(el.querySelector(".mead-question-args").textContent);
const editorOf = (el) => byLabel(el, "Arguments (JSON)");
const note = (el) => el.querySelector(".mead-changed");

describe("a call that changes while its question is open", () => {
  it("shows the new arguments in the question and in the arguments box", async () => {
    const { model, el } = setup();
    await changed(model);
    expect(shownArgs(el)).toEqual(FIRST);
    expect(JSON.parse(editorOf(el).value)).toEqual(FIRST);
    expect(note(el).hidden).toBe(true);
    await changed(model, { version: 2 }, { arguments: LATER });
    expect(shownArgs(el)).toEqual(LATER);
    expect(JSON.parse(editorOf(el).value)).toEqual(LATER);
    expect(note(el).hidden).toBe(false);
    expect(note(el).textContent).toBe(CHANGED_NOTE);
    expect(editorOf(el).hasAttribute("data-stale")).toBe(false);
  });

  it("answers name the version they were made on", async () => {
    const { model, el } = setup();
    await changed(model);
    await changed(model, { version: 2 }, { arguments: LATER });
    buttonsNamed(el, "Allow")[0].click();
    expect(model.sentOfType("answer")).toEqual([
      { type: "answer", question_id: "q1", decision: "allow", note: "", version: 2 },
    ]);
  });

  it("keeps the person's edit, marked stale, and sends it as their edit", async () => {
    const { model, el } = setup();
    await changed(model);
    const input = editorOf(el);
    type(input, '{"path": "b.txt"}');
    await changed(model, { version: 2 }, { arguments: LATER });
    expect(input.value).toBe('{"path": "b.txt"}');
    expect(input.getAttribute("data-stale")).toBe("true");
    expect(el.querySelector(".mead-edit-stale").hidden).toBe(false);
    expect(shownArgs(el)).toEqual(LATER);
    buttonsNamed(el, "Allow")[0].click();
    expect(model.sentOfType("answer")).toEqual([
      { type: "answer", question_id: "q1", decision: "allow", note: "", version: 2, arguments: { path: "b.txt" } },
    ]);
  });

  it("keeps the text of a box the person is in, even unchanged", async () => {
    const { model, el } = setup();
    await changed(model);
    const input = editorOf(el);
    el.querySelector(".mead-edit").open = true;
    input.focus();
    const before = input.value;
    await changed(model, { version: 2 }, { arguments: LATER });
    expect(input.value).toBe(before);
    expect(input.getAttribute("data-stale")).toBe("true");
    // Writing the new arguments themselves clears the mark.
    type(input, JSON.stringify(LATER));
    expect(input.hasAttribute("data-stale")).toBe(false);
  });

  it("asks again after an answer sent on the older version", async () => {
    const { model, el } = setup();
    await changed(model);
    buttonsNamed(el, "Deny")[0].click();
    expect(buttonsNamed(el, "Allow")[0].disabled).toBe(true);
    await changed(
      model,
      { version: 2, rejected: "the call changed after this answer was made; check it again", rejections: 1 },
      { arguments: LATER },
    );
    expect(buttonsNamed(el, "Allow")[0].disabled).toBe(false);
    // The refusal says why it asks again; the changed note would say it twice.
    expect(el.querySelector(".mead-rejected").textContent).toBe(
      "Not accepted: the call changed after this answer was made; check it again",
    );
    expect(note(el).hidden).toBe(true);
    buttonsNamed(el, "Deny")[0].click();
    expect(model.sentOfType("answer").map((m) => m.version)).toEqual([1, 2]);
  });

  it("follows a change of kind: Enter stops allowing and every-read scope goes", async () => {
    const { model, el } = setup();
    const read = { tool: "read_file", class: "read", kind: "read" };
    await changed(model, { scopes: ["tool", "server", "class"] }, read);
    const values = () => [...byLabel(el, "Remember for").options].map((o) => o.value);
    expect(values()).toEqual(["tool", "server", "class"]);
    expect(buttonsNamed(el, "Allow")[0].getAttribute("aria-keyshortcuts")).toBe("Enter");
    await changed(model, { version: 2, scopes: ["tool", "server"] }, { ...read, class: "effect", kind: "edit" });
    expect(values()).toEqual(["tool", "server"]);
    expect(buttonsNamed(el, "Allow")[0].hasAttribute("aria-keyshortcuts")).toBe(false);
    expect(el.querySelector(".mead-badge").textContent).toBe("edit");
    key(el.querySelector(".mead-question"), "Enter");
    expect(model.sentOfType("answer")).toEqual([]);
  });

  it("a question without a version (older state) answers without one", async () => {
    const { model, el } = setup();
    await sendCard(model, { question: permission({ version: undefined }) });
    buttonsNamed(el, "Deny")[0].click();
    expect(model.sentOfType("answer")).toEqual([{ type: "answer", question_id: "q1", decision: "deny", note: "" }]);
  });

  it("a choice's answer names its version", async () => {
    const { model, el } = setup();
    await sendCard(model, { tool: "ask_user", class: "read", question: choice({ version: 3 }) });
    byLabel(el, "Red").click();
    buttonsNamed(el, "Submit")[0].click();
    expect(model.sentOfType("answer")).toEqual([{ type: "answer", question_id: "q2", option_ids: ["red"], version: 3 }]);
  });
});
