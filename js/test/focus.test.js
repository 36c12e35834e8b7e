// Focus and keys: a question that opens never takes focus from where the person
// types (a text field, another cell's editor), and keys act only on a card the
// person focused.

import { describe, expect, it } from "vitest";
import { buttonsNamed, byLabel, card, choice, key, nextFrame, permission, renderedViews } from "./fake-model.js";
import { mayTakeFocus } from "../src/view.js";

const views = renderedViews();
const setup = views.setup;

const READ = { tool: "read_file", class: "read", kind: "read" };

async function sendCard(model, overrides) {
  model.kernelSends({ type: "call", card: card(overrides) });
  await nextFrame();
}

/**
 * Type keys as a browser does: each goes to whatever has focus, and Enter on a
 * focused button presses it.
 */
function typeKeys(keys) {
  for (const k of keys) {
    const target = document.activeElement ?? document.body;
    const event = key(target, k);
    if (k === "Enter" && !event.defaultPrevented && target instanceof HTMLButtonElement) target.click();
  }
}

/** A code cell's editor elsewhere in the page, as CodeMirror 6 draws it. */
function cellEditor() {
  const editor = document.createElement("div");
  editor.className = "cm-editor";
  const content = document.createElement("div");
  content.className = "cm-content";
  content.setAttribute("contenteditable", "true");
  content.tabIndex = 0;
  editor.append(content);
  document.body.prepend(editor);
  return content;
}

describe("a question that opens", () => {
  it("leaves focus in a text field outside the widget", async () => {
    const { model } = setup();
    const outside = document.createElement("textarea");
    document.body.prepend(outside);
    outside.focus();
    await sendCard(model, { ...READ, question: permission() });
    expect(document.activeElement).toBe(outside);
    await sendCard(model, { tool_call_id: "c2", tool: "ask_user", class: "read", question: choice() });
    expect(document.activeElement).toBe(outside);
  });

  it("leaves focus in another cell's editor, so typing there answers nothing", async () => {
    const { model, el } = setup();
    const editor = cellEditor();
    editor.focus();
    await sendCard(model, { tool_call_id: "c2", tool: "ask_user", class: "read", question: choice() });
    await sendCard(model, { ...READ, question: permission() });
    typeKeys(["x", " ", "=", " ", "2", "Enter"]);
    expect(document.activeElement).toBe(editor);
    expect(model.sentOfType("answer")).toEqual([]);
    expect(byLabel(el, "Blue").checked).toBe(false);
  });

  it("leaves focus on a control elsewhere in the page", async () => {
    const { model } = setup();
    const outside = document.createElement("button");
    document.body.prepend(outside);
    outside.focus();
    await sendCard(model, { ...READ, question: permission() });
    expect(document.activeElement).toBe(outside);
    typeKeys(["Enter"]);
    expect(model.sentOfType("answer")).toEqual([]);
  });

  it("leaves focus in a field of the same widget", async () => {
    const { model, el } = setup();
    await sendCard(model, { tool_call_id: "c2", tool: "ask_user", class: "read", question: choice() });
    const other = byLabel(el, "Other (your own answer)");
    other.focus();
    // The first question is answered elsewhere; a new one opens meanwhile.
    await sendCard(model, { ...READ, question: permission() });
    expect(document.activeElement).toBe(other);
  });

  it("takes focus when nothing else has it, and Enter on the focused card still allows", async () => {
    const { model, el } = setup();
    expect(document.activeElement).toBe(document.body);
    await sendCard(model, { ...READ, question: permission() });
    expect(document.activeElement).toBe(buttonsNamed(el, "Allow")[0]);
    key(el.querySelector(".mead-question"), "Enter");
    expect(model.sentOfType("answer")).toEqual([{ type: "answer", question_id: "q1", decision: "allow", note: "" }]);
  });

  it("Enter on a card the person focused answers it, once they moved there", async () => {
    const { model, el } = setup();
    const outside = document.createElement("textarea");
    document.body.prepend(outside);
    outside.focus();
    await sendCard(model, { ...READ, question: permission() });
    const q = el.querySelector(".mead-question");
    q.focus();
    typeKeys(["Enter"]);
    expect(model.sentOfType("answer")).toEqual([{ type: "answer", question_id: "q1", decision: "allow", note: "" }]);
  });
});

describe("mayTakeFocus", () => {
  it("only from nowhere, or from a non-field inside the widget, and not in an unfocused frame", () => {
    const root = document.createElement("div");
    const inside = document.createElement("button");
    const field = document.createElement("input");
    root.append(inside, field);
    document.body.append(root);
    expect(mayTakeFocus(root)).toBe(true);
    inside.focus();
    expect(mayTakeFocus(root)).toBe(true);
    field.focus();
    expect(mayTakeFocus(root)).toBe(false);
    const editor = cellEditor();
    editor.focus();
    expect(mayTakeFocus(root)).toBe(false);
    editor.blur();
    // A webview whose host editor has focus: the page's body is active, but the page is not focused.
    const unfocused = { activeElement: document.body, body: document.body, documentElement: document.documentElement, hasFocus: () => false };
    expect(mayTakeFocus(root, /** @type {Document} */ (/** @type {unknown} */ (unfocused)), true)).toBe(false);
    expect(mayTakeFocus(root, /** @type {Document} */ (/** @type {unknown} */ (unfocused)), false)).toBe(true);
  });
});
