import { afterEach, describe, expect, it } from "vitest";
import {
  DESTRUCTIVE_STEMS,
  argumentsSoundDestructive,
  enterAllows,
  listenForShortcuts,
  shortcut,
  soundsDestructive,
  words,
} from "../src/keys.js";

afterEach(() => {
  document.body.replaceChildren();
});

describe("words", () => {
  it.each([
    ["delete_file", ["delete", "file"]],
    ["deleteFile", ["delete", "file"]],
    ["rm -rf /tmp/x", ["rm", "rf", "tmp", "x"]],
    ["HTTP DELETE", ["http", "delete"]],
    ["git push --force", ["git", "push", "force"]],
    ["", []],
  ])("%j", (text, expected) => {
    expect(words(text)).toEqual(expected);
  });
});

describe("destructive names", () => {
  it.each([
    "delete_file",
    "deleteFile",
    "remove_dir",
    "rm",
    "rmdir",
    "unlink",
    "drop_table",
    "truncate",
    "overwrite_file",
    "destroy_vm",
    "kill_process",
    "wipe_disk",
    "erase",
    "purge_cache",
    "reset_db",
    "force_push",
    "shred",
    "files.deleted",
    "DeletionRequest",
  ])("%s sounds destructive", (name) => {
    expect(soundsDestructive(name)).toBe(true);
  });

  it.each(["read_file", "write_note", "list_dir", "remote_fetch", "format_text", "rmb", "model", "delta", "kilo"])(
    "%s does not",
    (name) => {
      expect(soundsDestructive(name)).toBe(false);
    },
  );

  it("documents short stems as whole words only", () => {
    for (const stem of DESTRUCTIVE_STEMS.filter((s) => s.length < 4)) {
      expect(soundsDestructive(stem)).toBe(true);
      expect(soundsDestructive(`${stem}x`)).toBe(false);
    }
  });
});

describe("destructive arguments", () => {
  it.each([
    [{ command: "rm -rf build" }, true],
    [{ mode: "overwrite" }, true],
    [{ force: true }, true],
    [{ options: { nested: [{ flag: "--force" }] } }, true],
    [{ method: "DELETE", url: "https://x" }, true],
    [{ overwrite: false, path: "a.txt" }, false],
    [{ force: null }, false],
    [{ force: 0 }, false],
    [{ path: "notes.txt", text: "hello" }, false],
    [{ count: 3, flags: [true, false] }, false],
    [{}, false],
  ])("%j -> %s", (args, expected) => {
    expect(argumentsSoundDestructive(args)).toBe(expected);
  });

  it("counts arguments too big or deep to read as destructive", () => {
    let deep = {};
    for (let i = 0; i < 50; i++) deep = { next: deep };
    expect(argumentsSoundDestructive(deep)).toBe(true);
    expect(argumentsSoundDestructive({ items: Array.from({ length: 5000 }, (_, i) => `item ${i}`) })).toBe(true);
  });
});

describe("Enter allows", () => {
  it.each([
    [{ class: "read", tool: "read_file", arguments: { path: "a" } }, true],
    [{ class: "read", tool: "delete_preview", arguments: {} }, true],
    [{ class: "effect", tool: "write_note", arguments: { text: "hi" } }, true],
    [{ class: "effect", tool: "delete_file", arguments: { path: "a" } }, false],
    [{ class: "effect", tool: "write_file", arguments: { path: "a", overwrite: true } }, false],
    [{ class: "effect", tool: "shell", arguments: { command: "rm a.txt" } }, false],
    [{ class: "effect", tool: "run", title: "Delete the cache", arguments: {} }, false],
    [{ class: null, tool: "delete_file", arguments: {} }, false],
    [{ class: null, tool: "write_note", arguments: {} }, true],
  ])("%j -> %s", (card, expected) => {
    expect(enterAllows(card)).toBe(expected);
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
