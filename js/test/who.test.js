// Who decided, on every view: an answer carries this page's id and claimed user;
// a settled question says "by you" only where its answer came from, names the
// person elsewhere, and a view whose own answer lost says it came too late.

import { afterEach, describe, expect, it } from "vitest";
import { FakeModel, Host, buttonsNamed, card, nextFrame } from "./fake-model.js";
import { Whoami, askServer, cleanName, forgetAsked, identityOf, pageId } from "../src/identity.js";
import { byPerson, describeAnswer, lateNotice } from "../src/labels.js";
import { MAX_NAME } from "../src/constants.gen.js";
import { PAYLOADS, expectInert } from "./payloads.js";

let host;

function setup(manager = null) {
  const model = new FakeModel({}, manager);
  host = new Host(model);
  return { model, el: host.render() };
}

afterEach(() => {
  host?.dispose();
  host = undefined;
  document.body.replaceChildren();
  forgetAsked();
});

const question = (overrides = {}) => ({
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
});

const settlement = (overrides = {}) => ({
  decision: "allow",
  option_id: null,
  option_ids: null,
  text: null,
  arguments: null,
  rule: null,
  by: "person",
  note: "",
  username: null,
  display_name: null,
  page: null,
  ...overrides,
});

const viewer = (overrides = {}) => ({ page: "page-a", username: () => null, answered: new Set(), ...overrides });

async function showCard(model, q) {
  model.kernelSends({ type: "call", card: card({ tool: "write_file", title: "write_file", question: q }) });
  await nextFrame();
}

describe("who decided", () => {
  it("says by you in the page that answered, the name elsewhere, another view without one", () => {
    const alice = settlement({ username: "alice", display_name: "Alice", page: "page-a" });
    expect(describeAnswer(question({ answer: alice }), viewer())).toBe("Allowed by you");
    expect(describeAnswer(question({ answer: alice }), viewer({ page: "page-b" }))).toBe("Allowed by Alice");
    const nameless = settlement({ page: "page-a" });
    expect(describeAnswer(question({ answer: nameless }), viewer({ page: "page-b" }))).toBe("Allowed by another view");
    expect(byPerson(settlement({ username: "alice", page: "page-a" }), viewer({ page: "page-b" }))).toBe("by alice");
  });

  it("says by you on another page of the same user, as a reloaded page would", () => {
    const alice = settlement({ username: "alice", page: "page-a" });
    const same = viewer({ page: "page-c", username: () => "alice" });
    expect(describeAnswer(question({ answer: { ...alice, decision: "deny", note: "no" } }), same)).toBe("Denied by you: no");
    expect(describeAnswer(question({ answer: alice }), viewer({ page: "page-c", username: () => "bob" }))).toBe("Allowed by alice");
  });

  it("reads state saved before answers said who as it did then", () => {
    const { username, display_name, page, ...old } = settlement();
    expect([username, display_name, page]).toEqual([null, null, null]);
    expect(describeAnswer(question({ answer: old }), viewer({ page: "page-z" }))).toBe("Allowed by you");
  });

  it("names nobody for a decision no person made", () => {
    expect(describeAnswer(question({ answer: settlement({ by: "policy" }) }), viewer())).toBe("Allowed by policy");
  });
});

describe("too late", () => {
  it("tells a view whose answer lost who answered first", () => {
    const bob = settlement({ decision: "deny", username: "bob", display_name: "Bob", page: "page-b" });
    const mine = viewer({ answered: new Set(["q1"]) });
    expect(lateNotice(question({ answer: bob }), mine)).toBe("Too late: Bob already denied this; your answer was not used.");
    expect(lateNotice(question({ answer: bob }), viewer()), "a view that did not answer gets no notice").toBe("");
    const own = settlement({ page: "page-a" });
    expect(lateNotice(question({ answer: own }), mine), "the answer that counted is no notice").toBe("");
    const expired = settlement({ decision: "expired", by: "timeout" });
    expect(lateNotice(question({ answer: expired }), mine)).toBe(
      "Too late: this was settled first (expired); your answer was not used.",
    );
  });

  it("shows the notice on the card of the view whose click came after another's", async () => {
    const { model, el } = setup();
    await showCard(model, question());
    buttonsNamed(el, "Allow")[0].click();
    expect(model.sentOfType("answer")).toEqual([{ type: "answer", question_id: "q1", decision: "allow", note: "" }]);
    expect(model.answerPages).toEqual([pageId()]);
    const bob = settlement({ decision: "deny", username: "bob", display_name: "Bob", page: "another-page" });
    await showCard(model, question({ answer: bob }));
    expect(el.querySelector(".mead-decision")?.textContent).toBe("Denied by Bob");
    const late = el.querySelector(".mead-too-late");
    expect(late?.textContent).toBe("Too late: Bob already denied this; your answer was not used.");
    expect(late?.getAttribute("role")).toBe("alert");
  });

  it("keeps the notice in a view drawn anew in the same page (the output updated at the turn's end)", async () => {
    const model = new FakeModel({ _frontend: "IPY_MODEL_f1", _dom_classes: ["mead-key-7"] });
    host = new Host(model);
    const first = host.render();
    await showCard(model, question({ id: "q9" }));
    buttonsNamed(first, "Allow")[0].click();
    host.dispose();
    host = new Host(model);
    const again = host.render();
    await showCard(model, question({ id: "q9", answer: settlement({ username: "bob", page: "elsewhere" }) }));
    expect(again.querySelector(".mead-too-late")?.textContent).toBe("Too late: bob already allowed this; your answer was not used.");
    const other = new FakeModel({ _frontend: "IPY_MODEL_f2", _dom_classes: ["mead-key-7"] });
    host.dispose();
    host = new Host(other);
    const unrelated = host.render();
    await showCard(other, question({ id: "q9", answer: settlement({ username: "bob", page: "elsewhere" }) }));
    expect(unrelated.querySelector(".mead-too-late"), "another kernel's widget of the same key").toBeNull();
  });

  it("shows by you and no notice where the click won", async () => {
    const { model, el } = setup();
    await showCard(model, question());
    buttonsNamed(el, "Allow")[0].click();
    await showCard(model, question({ answer: settlement({ page: pageId() }) }));
    expect(el.querySelector(".mead-decision")?.textContent).toBe("Allowed by you");
    expect(el.querySelector(".mead-too-late")).toBeNull();
  });

  it("puts a hostile name into the page as text", async () => {
    const { model, el } = setup();
    await showCard(model, question());
    buttonsNamed(el, "Deny")[0].click();
    const name = PAYLOADS[0].slice(0, MAX_NAME);
    await showCard(model, question({ answer: settlement({ display_name: name, page: "x" }) }));
    expect(el.querySelector(".mead-too-late")?.textContent).toContain(name);
    expectInert(el);
  });
});

describe("the claimed user", () => {
  it("comes from the kernel connection's user name where there is no server page (VS Code)", async () => {
    const { model, el } = setup({ kernel: { username: "ada" } });
    await showCard(model, question());
    buttonsNamed(el, "Allow")[0].click();
    expect(model.sentOfType("answer")[0].username).toBe("ada");
    expect(model.sentOfType("answer")[0].display_name).toBeUndefined();
  });

  it("is left out where nothing says (JupyterLab's empty kernel user name)", async () => {
    const { model, el } = setup({ kernel: { username: "" } });
    await showCard(model, question());
    buttonsNamed(el, "Allow")[0].click();
    expect(Object.keys(model.sentOfType("answer")[0])).not.toContain("username");
  });

  it("comes from the server's /api/me, with the page's token", async () => {
    const doc = document.implementation.createHTMLDocument("lab");
    const config = doc.createElement("script");
    config.id = "jupyter-config-data";
    config.textContent = JSON.stringify({ baseUrl: "/jupyter/", token: "t0k" });
    doc.body.append(config);
    const calls = [];
    const fetcher = async (url, init) => {
      calls.push([url, init.headers]);
      return { ok: true, json: async () => ({ identity: { username: "u1", name: "Ann", display_name: "Ann Lee" } }) };
    };
    const who = new Whoami({}, { doc, fetcher });
    expect(who.current()).toBeNull();
    expect(await who.ready).toEqual({ username: "u1", display_name: "Ann Lee" });
    expect(who.current()).toEqual({ username: "u1", display_name: "Ann Lee" });
    expect(calls).toEqual([["/jupyter/api/me", { Authorization: "token t0k" }]]);
  });

  it("redraws who decided once the page learns its user, as a reloaded page does", async () => {
    const config = document.createElement("script");
    config.id = "jupyter-config-data";
    config.type = "application/json";
    config.textContent = JSON.stringify({ baseUrl: "/", token: "" });
    document.head.append(config);
    let reply;
    const answered = new Promise((resolve) => (reply = resolve));
    const saved = globalThis.fetch;
    globalThis.fetch = async () => {
      await answered;
      return { ok: true, json: async () => ({ identity: { username: "u1", display_name: "Ann Lee" } }) };
    };
    try {
      const { model, el } = setup();
      const ann = settlement({ username: "u1", display_name: "Ann Lee", page: "an-earlier-page" });
      await showCard(model, question({ answer: ann }));
      expect(el.textContent).toContain("Allowed by Ann Lee");
      reply();
      await new Promise((resolve) => setTimeout(resolve, 0));
      await nextFrame();
      expect(el.textContent).toContain("Allowed by you");
      expect(el.textContent).not.toContain("by Ann Lee");
    } finally {
      globalThis.fetch = saved;
      config.remove();
    }
  });

  it("is unknown when the server fails, refuses or sends nonsense", async () => {
    const config = { baseUrl: "/" };
    expect(await askServer(config, async () => { throw new Error("offline"); })).toBeNull();
    expect(await askServer(config, async () => ({ ok: false, json: async () => ({}) }))).toBeNull();
    expect(await askServer(config, async () => ({ ok: true, json: async () => "nonsense" }))).toBeNull();
    expect(identityOf({ identity: { username: "x".repeat(MAX_NAME + 1), name: "\u202eeve" } })).toBeNull();
  });

  it("gives up on a server that does not answer", async () => {
    const hang = (_url, init) =>
      new Promise((_resolve, reject) => init.signal.addEventListener("abort", () => reject(new Error("aborted"))));
    const started = Date.now();
    expect(await askServer({}, hang)).toBeNull();
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 15_000);

  it("is cleaned as the kernel cleans it", () => {
    expect(cleanName("  bob ")).toBe("bob");
    for (const bad of ["", "  ", "a\u0000b", "a\u200fb", "x".repeat(MAX_NAME + 1), 3, null]) {
      expect(cleanName(bad)).toBeNull();
    }
  });
});
