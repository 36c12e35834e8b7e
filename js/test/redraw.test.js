// A view drawn again (the kernel announced its widget again: a new view, the old one
// disposed, in either order) keeps what the person was typing and where the focus was.

import { afterEach, describe, expect, it } from "vitest";
import { FakeModel, Host, buttonsNamed, byLabel, card, nextFrame } from "./fake-model.js";

let host;

const WIDGET = { _frontend: "IPY_MODEL_frontend", _dom_classes: ["mead-key-7"] };
const DELETE = { tool: "delete_file", title: "delete_file", server: "files", class: "effect", arguments: { path: "old.txt" } };

afterEach(() => {
  host?.dispose();
  host = undefined;
  document.body.replaceChildren();
});

function question(overrides = {}) {
  return {
    id: "q1",
    kind: "permission",
    prompt: null,
    options: null,
    multiple: false,
    scopes: [],
    schema: null,
    deadline: null,
    rejected: null,
    rejections: 0,
    answer: null,
    ...overrides,
  };
}

const COLOURS = {
  kind: "choice",
  prompt: "Which colour?",
  multiple: true,
  options: [
    { id: "red", label: "Red" },
    { id: "blue", label: "Blue" },
  ],
};

async function asking(q = question(), state = WIDGET) {
  const model = new FakeModel(state);
  host = new Host(model);
  const el = host.render();
  model.kernelSends({ type: "call", card: card({ ...DELETE, approved_arguments: null, text_offset: 0, question: q }) });
  await nextFrame();
  return { model, el };
}

function type(input, text) {
  input.focus();
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

/** Draw the widget again: a new view first and then the old one goes, or the other way. */
async function redraw(old, order) {
  let el;
  if (order === "new-first") {
    el = host.render();
    host.removeView(old);
  } else {
    host.removeView(old);
    el = host.render();
  }
  await nextFrame();
  return el;
}

describe.each(["new-first", "old-first"])("a view drawn again (%s)", (order) => {
  it("keeps a deny reason being typed, its focus and its caret", async () => {
    const { el } = await asking();
    const reason = byLabel(el, "Reason if denied (optional)");
    type(reason, "keep the archive");
    reason.setSelectionRange(5, 8);
    const again = await redraw(el, order);
    const back = byLabel(again, "Reason if denied (optional)");
    expect(back.value).toBe("keep the archive");
    expect(document.activeElement).toBe(back);
    expect([back.selectionStart, back.selectionEnd]).toEqual([5, 8]);
  });

  it("keeps edited arguments, their editor open, and sends them on Allow", async () => {
    const { model, el } = await asking();
    el.querySelector(".mead-edit").open = true;
    type(byLabel(el, "Arguments (JSON)"), '{"path": "new.txt"}');
    const again = await redraw(el, order);
    expect(again.querySelector(".mead-edit").open).toBe(true);
    expect(byLabel(again, "Arguments (JSON)").value).toBe('{"path": "new.txt"}');
    expect(again.querySelector(".mead-edit summary").textContent).toBe("Edit arguments (edited)");
    buttonsNamed(again, "Allow")[0].click();
    expect(model.sentOfType("answer").at(-1)).toMatchObject({ decision: "allow", arguments: { path: "new.txt" } });
  });

  it("keeps the options ticked and an Other answer", async () => {
    const { model, el } = await asking(question({ id: "q2", ...COLOURS }));
    const blue = byLabel(el, "Blue");
    blue.checked = true;
    blue.dispatchEvent(new Event("change", { bubbles: true }));
    const again = await redraw(el, order);
    expect(byLabel(again, "Blue").checked).toBe(true);
    expect(byLabel(again, "Red").checked).toBe(false);
    type(byLabel(again, "Other (your own answer)"), "green");
    const third = await redraw(again, order);
    expect(byLabel(third, "Other (your own answer)").value).toBe("green");
    expect(document.activeElement).toBe(byLabel(third, "Other (your own answer)"));
    buttonsNamed(third, "Submit")[0].click();
    expect(model.sentOfType("answer").at(-1)).toMatchObject({ question_id: "q2", text: "green" });
  });
});

describe("a view drawn again keeps nothing", () => {
  it("for a question that is not the one it was typed for", async () => {
    const { model, el } = await asking();
    type(byLabel(el, "Reason if denied (optional)"), "for q1");
    host.removeView(el);
    model.kernelSends({ type: "call", card: card({ ...DELETE, approved_arguments: null, text_offset: 0, question: question({ id: "q5" }) }) });
    const again = host.render();
    await nextFrame();
    expect(byLabel(again, "Reason if denied (optional)").value).toBe("");
  });

  it("from another widget", async () => {
    const { el } = await asking();
    type(byLabel(el, "Reason if denied (optional)"), "for widget 7");
    host.removeView(el);
    host.dispose();
    const other = await asking(question(), { ...WIDGET, _dom_classes: ["mead-key-8"] });
    expect(byLabel(other.el, "Reason if denied (optional)").value).toBe("");
  });
});
