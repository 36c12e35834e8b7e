import { afterEach, describe, expect, it } from "vitest";
import { DESTRUCTIVE_KINDS } from "../src/constants.gen.js";
import { enterAllows, listenForShortcuts, shortcut } from "../src/keys.js";

afterEach(() => {
  document.body.replaceChildren();
});

describe("Enter allows", () => {
  it.each([
    // A known kind decides: never for the kinds that may change or destroy things.
    [{ kind: "edit", class: "effect", tool: "write_file" }, false],
    [{ kind: "delete", class: "effect", tool: "tidy" }, false],
    [{ kind: "move", class: "effect", tool: "rename" }, false],
    [{ kind: "execute", class: "effect", tool: "shell" }, false],
    [{ kind: "execute", class: "read", tool: "run" }, false],
    [{ kind: "read", class: "read", tool: "delete_preview" }, true],
    [{ kind: "search", class: "read", tool: "grep" }, true],
    [{ kind: "fetch", class: "read", tool: "get" }, false],
    [{ kind: "think", class: "read", tool: "think" }, true],
    // A kind that says nothing more falls back to the class.
    [{ kind: "other", class: "read", tool: "list" }, true],
    [{ kind: "other", class: "effect", tool: "write_note" }, false],
    [{ class: "read", tool: "delete_file" }, true],
    [{ class: "effect", tool: "write_note" }, false],
    [{ class: null, tool: "write_note" }, false],
    [{ kind: "unheard-of", class: "read", tool: "x" }, true],
    [{ kind: "unheard-of", class: "effect", tool: "x" }, false],
  ])("%j -> %s", (card, expected) => {
    expect(enterAllows(card)).toBe(expected);
  });

  it("uses the kernel's destructive kinds, not the call's name or arguments", () => {
    for (const kind of DESTRUCTIVE_KINDS) {
      expect(enterAllows({ kind, class: "read", tool: "read_file", arguments: {} })).toBe(false);
    }
    expect(enterAllows({ kind: "read", class: "read", tool: "rm", arguments: { force: true } })).toBe(true);
  });
});

describe("shortcut", () => {
  /** Dispatch a keydown on `target` inside a section; return what `shortcut` made of it. */
  function press(target, key, init = {}) {
    const section = document.createElement("section");
    document.body.append(section);
    section.append(target);
    let seen;
    section.addEventListener("keydown", (event) => {
      seen = shortcut(event);
    });
    target.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init }));
    return seen;
  }
  const el = (tag, attrs = {}) => Object.assign(document.createElement(tag), attrs);

  it.each([
    ["Enter", "enter"],
    ["Escape", "escape"],
    ["1", 1],
    ["9", 9],
    ["0", null],
    ["a", null],
    ["Tab", null],
  ])("%s on a plain element is %j", (key, expected) => {
    expect(press(el("div"), key)).toBe(expected);
  });

  it.each([
    ["textarea", {}],
    ["input", { type: "text" }],
    ["input", { type: "search" }],
    ["select", {}],
  ])("no key is a shortcut while typing in a %s", (tag, attrs) => {
    for (const key of ["Enter", "Escape", "1"]) expect(press(el(tag, attrs), key)).toBeNull();
  });

  it("leaves Enter to buttons, links and summaries, which act themselves", () => {
    expect(press(el("button"), "Enter")).toBeNull();
    expect(press(el("a", { href: "#x" }), "Enter")).toBeNull();
    expect(press(el("summary"), "Enter")).toBeNull();
    expect(press(el("button"), "Escape")).toBe("escape");
  });

  it("is a shortcut on radios and checkboxes", () => {
    expect(press(el("input", { type: "radio" }), "Enter")).toBe("enter");
    expect(press(el("input", { type: "checkbox" }), "2")).toBe(2);
  });

  it("ignores keys with modifiers and IME composition", () => {
    for (const mod of ["altKey", "ctrlKey", "metaKey", "shiftKey", "isComposing"]) {
      expect(press(el("div"), "Enter", { [mod]: true })).toBeNull();
    }
  });

  it("a listener acts only while enabled and only stops the keys it uses", () => {
    const section = document.createElement("section");
    document.body.append(section);
    let enabled = true;
    const acted = [];
    listenForShortcuts(section, () => enabled, (key) => {
      acted.push(key);
      return key === "escape";
    });
    const fire = (key) => {
      const event = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true });
      section.dispatchEvent(event);
      return event.defaultPrevented;
    };
    expect(fire("Escape")).toBe(true);
    expect(fire("Enter")).toBe(false);
    enabled = false;
    expect(fire("Escape")).toBe(false);
    expect(acted).toEqual(["escape", "enter"]);
  });
});
