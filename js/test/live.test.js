// A view drawn from a model of its widget that cannot reach the kernel (the notebook's
// saved widget state: no comm), or from one the kernel has since replaced (a new
// comm_open under the same model id), moves to the live model of the widget once the
// page's widget manager has it; until then it says it is not connected and sends nothing.

import { afterEach, describe, expect, it } from "vitest";
import { NOT_CONNECTED_NOTE } from "../src/constants.gen.js";
import { findLive } from "../src/live.js";
import { FakeModel, Host, buttonsNamed, byLabel, card, choice, key, nextFrame, permission } from "./fake-model.js";

const ID = "5f0c";
const WIDGET = { _frontend: "IPY_MODEL_frontend", _dom_classes: ["mead-key-3"], _widget_id: ID };

/** The page's widget manager: the model of each id, the newest registered. */
class Manager {
  constructor() {
    this.models = new Map();
    this.lookups = 0;
  }

  register(id, model) {
    this.models.set(id, model);
  }

  async get_model(id) {
    this.lookups += 1;
    const found = this.models.get(id);
    if (found === undefined) throw new Error("widget model not found");
    return found;
  }
}

let hosts = [];

afterEach(() => {
  for (const h of hosts) h.dispose();
  hosts = [];
  document.body.replaceChildren();
});

function asking(question, extra = {}) {
  return {
    ...WIDGET,
    status: "running",
    calls: { call_1: card({ question, text_offset: 0 }) },
    order: ["call_1"],
    ...extra,
  };
}

/** A model of the widget registered under ID: live (a comm) or from saved state (none). */
function model(manager, state, { saved = false } = {}) {
  const m = new FakeModel(state, manager);
  if (saved) {
    m.comm = undefined;
    m.comm_live = false;
  }
  manager.register(ID, m);
  return m;
}

/** The page initializes a model (anywidget's `initialize`). */
function initialized(m) {
  const h = new Host(m);
  hosts.push(h);
  return h;
}

/** Let the widget manager answer and the views draw. */
async function settle() {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setTimeout(resolve, 0));
  await nextFrame();
}

function type(input, text) {
  input.focus();
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

const answers = (m) => [...m.sentOfType("answer"), ...m.dropped.filter((x) => x.type === "answer")];

describe("a view drawn from saved state (a model with no comm)", () => {
  it("says it is not connected, takes no answer and sends nothing", async () => {
    const manager = new Manager();
    const saved = model(manager, asking(permission()), { saved: true });
    const el = initialized(saved).render();
    await settle();
    const note = el.querySelector(".mead-question .mead-kernel-gone");
    expect(note.hidden).toBe(false);
    expect(note.textContent).toBe(NOT_CONNECTED_NOTE);
    const allow = buttonsNamed(el, "Allow")[0];
    expect(allow.disabled).toBe(true);
    allow.click();
    key(el.querySelector(".mead-question"), "Escape");
    expect(answers(saved)).toEqual([]);
    expect(el.querySelector(".mead-sent").textContent).toBe("");
  });

  it("moves to the kernel's new model of the widget: drawn from its state, answers go there", async () => {
    const manager = new Manager();
    const saved = model(manager, asking(permission()), { saved: true });
    const el = initialized(saved).render();
    await settle();
    const live = model(manager, asking(permission(), { text: "Checking the folder." }));
    initialized(live);
    await settle();
    expect(el.querySelector(".mead-question .mead-kernel-gone").hidden).toBe(true);
    expect(el.querySelector(".mead-text").textContent).toContain("Checking the folder.");
    expect(live.sentOfType("rendered")).toHaveLength(1);
    buttonsNamed(el, "Allow")[0].click();
    expect(live.sentOfType("answer")).toEqual([
      expect.objectContaining({ type: "answer", question_id: "q1", decision: "allow" }),
    ]);
    expect(answers(saved)).toEqual([]);
    // The kernel's word now comes through the live model, and the old one is let go.
    live.kernelSends({ type: "call", card: card({ question: permission({ answer: { decision: "allow", by: "person" } }) }) });
    await nextFrame();
    expect(el.querySelector(".mead-question.mead-answered")).not.toBeNull();
    expect(saved.listeners.filter((l) => l.context !== "initialize")).toEqual([]);
  });

  it("keeps saying so while the manager's model of the widget has no comm either", async () => {
    const manager = new Manager();
    const first = model(manager, asking(permission()), { saved: true });
    const el = initialized(first).render();
    await settle();
    initialized(model(manager, asking(permission()), { saved: true }));
    await settle();
    expect(el.querySelector(".mead-question .mead-kernel-gone").textContent).toBe(NOT_CONNECTED_NOTE);
    expect(buttonsNamed(el, "Allow")[0].disabled).toBe(true);
  });
});

describe("a view on a model the kernel replaced", () => {
  it("moves to the new one and keeps what the person was typing", async () => {
    const manager = new Manager();
    const old = model(manager, asking(permission()));
    const el = initialized(old).render();
    await settle();
    type(byLabel(el, "Reason if denied (optional)"), "not the archive");
    const live = model(manager, asking(permission()));
    initialized(live);
    await settle();
    expect(live.sentOfType("rendered")).toHaveLength(1);
    const reason = byLabel(el, "Reason if denied (optional)");
    expect(reason.value).toBe("not the archive");
    expect(document.activeElement).toBe(reason);
    buttonsNamed(el, "Deny")[0].click();
    expect(live.sentOfType("answer")).toEqual([
      expect.objectContaining({ question_id: "q1", decision: "deny", note: "not the archive" }),
    ]);
    expect(answers(old)).toEqual([]);
  });

  it("keeps its elements: a click begun on the old model's button ends on the same button", async () => {
    const manager = new Manager();
    const old = model(manager, asking(choice()));
    const el = initialized(old).render();
    await settle();
    byLabel(el, "Red").click();
    const submit = buttonsNamed(el, "Submit")[0];
    const card = el.querySelector(".mead-card");
    // The person presses the button; the kernel announces the widget again meanwhile.
    submit.dispatchEvent(new MouseEvent("mousedown", { bubbles: true }));
    const live = model(manager, asking(choice()));
    initialized(live);
    await settle();
    expect(el.querySelector(".mead-card")).toBe(card);
    expect(buttonsNamed(el, "Submit")[0]).toBe(submit);
    expect(submit.isConnected).toBe(true);
    submit.click();
    expect(live.sentOfType("answer")).toEqual([expect.objectContaining({ question_id: "q2", option_ids: ["red"] })]);
    expect(answers(old)).toEqual([]);
  });

  it("never carries what was picked over to another question, and sends nothing for it", async () => {
    const manager = new Manager();
    const old = model(manager, asking(choice()));
    const el = initialized(old).render();
    await settle();
    byLabel(el, "Red").click();
    expect(buttonsNamed(el, "Submit")[0].disabled).toBe(false);
    const live = model(manager, asking(choice({ id: "q9" })));
    initialized(live);
    await settle();
    expect(byLabel(el, "Red").checked).toBe(false);
    expect(buttonsNamed(el, "Submit")[0].disabled).toBe(true);
    expect(answers(live)).toEqual([]);
    expect(answers(old)).toEqual([]);
  });
});

describe("a view on the live model of its widget", () => {
  it("stays as it is and answers through it", async () => {
    const manager = new Manager();
    const live = model(manager, asking(permission()));
    const el = initialized(live).render();
    await settle();
    expect(manager.lookups).toBeGreaterThan(0);
    expect(el.querySelector(".mead-question .mead-kernel-gone").hidden).toBe(true);
    buttonsNamed(el, "Allow")[0].click();
    expect(live.sentOfType("answer")).toHaveLength(1);
    expect(live.sentOfType("rendered")).toHaveLength(1);
  });

  it("from state without the widget's id looks nothing up and takes answers as before", async () => {
    const manager = new Manager();
    const { _widget_id, ...older } = asking(permission());
    const m = model(manager, older);
    const el = initialized(m).render();
    await settle();
    expect(manager.lookups).toBe(0);
    buttonsNamed(el, "Allow")[0].click();
    expect(m.sentOfType("answer")).toHaveLength(1);
  });

  it("gone before the manager answers leaves no listener on the new model", async () => {
    const manager = new Manager();
    const saved = model(manager, asking(permission()), { saved: true });
    const h = initialized(saved);
    const el = h.render();
    await settle();
    const live = model(manager, asking(permission()));
    initialized(live); // the view looks again, and goes before the answer comes
    h.removeView(el);
    await settle();
    expect(live.listeners.filter((l) => l.context !== "initialize")).toEqual([]);
    expect(live.sentOfType("rendered")).toEqual([]);
  });
});

describe("findLive", () => {
  it("cannot tell without a manager, an answer, or an answer in time", async () => {
    const alone = new FakeModel(WIDGET);
    expect(await findLive(alone.proxy("v"), ID)).toEqual({ kind: "unknown" });
    const manager = new Manager();
    const m = new FakeModel(WIDGET, manager);
    expect(await findLive(m.proxy("v"), ID)).toEqual({ kind: "unknown" });
    const silent = { get_model: () => new Promise(() => {}) };
    const waiting = new FakeModel(WIDGET, silent);
    expect(await findLive(waiting.proxy("v"), ID, 10)).toEqual({ kind: "unknown" });
  });

  it("tells a model from another of the same id by the model itself, not its state", async () => {
    const manager = new Manager();
    const ours = model(manager, WIDGET);
    expect((await findLive(ours.proxy("v"), ID)).kind).toBe("live");
    const twin = model(manager, WIDGET);
    const link = await findLive(ours.proxy("v"), ID);
    expect(link.kind).toBe("moved");
    link.model.on("change:text", () => {});
    expect(twin.listeners).toHaveLength(1);
    link.release();
    expect(twin.listeners).toHaveLength(0);
    twin.comm_live = false; // its kernel went away
    expect((await findLive(ours.proxy("v"), ID)).kind).toBe("offline");
  });
});
