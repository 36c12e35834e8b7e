import { afterEach, describe, expect, it, vi } from "vitest";
import { createLoader } from "../src/loader.js";
import * as frontend from "../src/index.js";
import { FakeModel, Host, card, nextFrame } from "./fake-model.js";

/** The page's widget manager, as far as the loader uses it. */
class FakeManager {
  constructor() {
    this.models = new Map();
    this.lookups = 0;
  }

  add(id, traits) {
    this.models.set(id, { get: (name) => traits[name] });
  }

  async get_model(id) {
    this.lookups += 1;
    const found = this.models.get(id);
    if (found === undefined) throw new Error("widget model not found");
    return found;
  }
}

const SHARED = {
  code: "export default {}",
  css: ".mead-turn { color: red; }",
  digest: "d1e2f3",
  version: frontend.version,
};

/** Imports that record the code they were given and return the real frontend. */
function importer(result = async () => frontend) {
  const calls = [];
  const importCode = async (code) => {
    calls.push(code);
    return result(code);
  };
  return { calls, importCode };
}

let hosts = [];

function host(model, options) {
  const h = new Host(model, createLoader(options));
  hosts.push(h);
  return h;
}

function turnModel(manager, state = {}) {
  return new FakeModel({ _frontend: "IPY_MODEL_shared", ...state }, manager);
}

afterEach(() => {
  for (const h of hosts) h.dispose();
  hosts = [];
  delete globalThis[Symbol.for("mead_notebook.frontend")];
  for (const style of document.head.querySelectorAll("style")) style.remove();
  document.body.replaceChildren();
});

describe("the loader", () => {
  it("renders the turn with the shared widget's code and passes messages both ways", async () => {
    const manager = new FakeManager();
    manager.add("shared", SHARED);
    const { calls, importCode } = importer();
    const model = turnModel(manager, { prompt: "Tidy the folder" });
    const h = host(model, { importCode });
    await h.ready;
    const el = h.render();
    await h.rendered();
    expect(calls).toEqual([SHARED.code]);
    expect(el.querySelector(".mead-prompt").textContent).toBe("Tidy the folder");
    expect(model.sentOfType("rendered")).toHaveLength(1);
    model.kernelSends({ type: "text", start: 0, delta: "**hi**" });
    await nextFrame();
    expect(el.querySelector(".mead-text strong")?.textContent).toBe("hi");
  });

  it("imports a digest's code once per page and adds its stylesheet once", async () => {
    const manager = new FakeManager();
    manager.add("shared", SHARED);
    const { calls, importCode } = importer();
    const hs = [host(turnModel(manager), { importCode }), host(turnModel(manager), { importCode })];
    await Promise.all(hs.map((h) => h.ready));
    for (const h of hs) h.render();
    await Promise.all(hs.map((h) => h.rendered()));
    expect(calls).toHaveLength(1);
    const styles = document.head.querySelectorAll("style");
    expect(styles).toHaveLength(1);
    expect(styles[0].textContent).toBe(SHARED.css);
    expect(document.querySelectorAll(".mead-turn")).toHaveLength(2);
  });

  it("merges the kernel's messages that arrive while the code loads", async () => {
    const manager = new FakeManager();
    manager.add("shared", SHARED);
    let release;
    const loaded = new Promise((resolve) => {
      release = resolve;
    });
    const { importCode } = importer(async () => {
      await loaded;
      return frontend;
    });
    const model = turnModel(manager);
    const h = host(model, { importCode });
    model.kernelSends({ type: "text", start: 0, delta: "early " });
    model.kernelSends({ type: "call", card: card() });
    model.kernelSends({ type: "text", start: 6, delta: "text" });
    release();
    await h.ready;
    expect(model.get("text")).toBe("early text");
    expect(model.get("order")).toEqual(["call_1"]);
    model.kernelSends({ type: "text", start: 10, delta: "!" });
    expect(model.get("text")).toBe("early text!");
    expect(model.listeners.filter((l) => l.name === "msg:custom")).toHaveLength(1);
  });

  it("waits for a shared widget that the page learns of later", async () => {
    const manager = new FakeManager();
    setTimeout(() => manager.add("shared", SHARED), 150);
    const { importCode } = importer();
    const h = host(turnModel(manager, { status: "done" }), { importCode, wait: 5000 });
    await h.ready;
    const el = h.render();
    await h.rendered();
    expect(manager.lookups).toBeGreaterThan(1);
    expect(el.querySelector(".mead-turn-status").textContent).toBe("Done");
  });

  it("asks the kernel once for a shared widget the page does not know", async () => {
    const manager = new FakeManager();
    const model = turnModel(manager, { status: "done" });
    const send = model.send.bind(model);
    model.send = (message) => {
      send(message);
      if (message.type === "need_frontend") setTimeout(() => manager.add("shared", SHARED), 50);
    };
    const h = host(model, { importCode: importer().importCode, wait: 5000 });
    await h.ready;
    const el = h.render();
    await h.rendered();
    expect(model.sentOfType("need_frontend")).toHaveLength(1);
    expect(el.querySelector(".mead-turn-status").textContent).toBe("Done");
  });

  it("imports the code again for a new digest", async () => {
    const manager = new FakeManager();
    manager.add("shared", SHARED);
    manager.add("next", { ...SHARED, code: "export default {} // v2", digest: "abc999" });
    const { calls, importCode } = importer();
    const a = host(turnModel(manager), { importCode });
    const b = host(turnModel(manager, { _frontend: "IPY_MODEL_next" }), { importCode });
    await Promise.all([a.ready, b.ready]);
    expect(calls).toEqual([SHARED.code, "export default {} // v2"]);
  });
});

describe("when the code cannot be had", () => {
  /** Render one widget and return its element once the view has settled. */
  async function shown(model, options) {
    const h = host(model, options);
    await h.ready;
    const el = h.render();
    await h.rendered();
    return el;
  }

  function failure(el) {
    return el.querySelector("[role=alert]")?.textContent ?? "";
  }

  it("says so when the shared widget never comes", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const el = await shown(turnModel(new FakeManager()), { importCode: importer().importCode, wait: 100 });
    expect(failure(el)).toMatch(/cannot be shown: the shared frontend widget shared was not found in 0.1 s/);
    expect(failure(el)).toContain("widget model not found");
    expect(errors).toHaveBeenCalled();
  });

  it.each([
    ["", '("")'],
    [null, "(null)"],
    ["shared", '("shared")'],
  ])("says so when the widget's reference is %j", async (ref, shownRef) => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const manager = new FakeManager();
    manager.add("shared", SHARED);
    const el = await shown(turnModel(manager, { _frontend: ref }), { importCode: importer().importCode });
    expect(failure(el)).toContain(`the widget has no reference to its frontend ${shownRef}`);
    expect(manager.lookups).toBe(0);
  });

  it("says so when the shared widget holds no code", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const manager = new FakeManager();
    manager.add("shared", { ...SHARED, code: "" });
    const el = await shown(turnModel(manager), { importCode: importer().importCode });
    expect(failure(el)).toContain("the shared frontend widget holds no code");
  });

  it("says so when the code does not import, and a later widget tries again", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const manager = new FakeManager();
    manager.add("shared", SHARED);
    let attempts = 0;
    const { calls, importCode } = importer(async () => {
      attempts += 1;
      if (attempts === 1) throw new SyntaxError("Unexpected token");
      return frontend;
    });
    const first = await shown(turnModel(manager), { importCode });
    expect(failure(first)).toContain("Unexpected token");
    const second = await shown(turnModel(manager, { prompt: "again" }), { importCode });
    expect(calls).toHaveLength(2);
    expect(second.querySelector(".mead-prompt").textContent).toBe("again");
  });

  it("says so when the code has no widget lifecycle", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const manager = new FakeManager();
    manager.add("shared", SHARED);
    const el = await shown(turnModel(manager), { importCode: importer(async () => ({ default: {} })).importCode });
    expect(failure(el)).toContain("the shared frontend code has no initialize and render");
  });

  it("warns when the code's version is not the kernel's, and still renders", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const manager = new FakeManager();
    manager.add("shared", { ...SHARED, version: "9.9.9" });
    const el = await shown(turnModel(manager), { importCode: importer().importCode });
    expect(warn).toHaveBeenCalledWith(`mead_notebook: frontend ${frontend.version}, Python package 9.9.9`);
    expect(el.querySelector(".mead-turn")).not.toBeNull();
  });
});

describe("the frontend module", () => {
  it("reports js/package.json's version", async () => {
    const pkg = await import("../package.json");
    expect(frontend.version).toBe(pkg.version);
  });
});
