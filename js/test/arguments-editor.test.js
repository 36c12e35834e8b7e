import { describe, expect, it } from "vitest";
import { MAX_ARGUMENTS, readEdit, sameValue } from "../src/arguments-editor.js";

describe("readEdit", () => {
  const original = { path: "a.png", width: 4000 };

  it("the text as given is unchanged, whatever its layout or key order", () => {
    expect(readEdit('{"width": 4000, "path": "a.png"}', original)).toEqual({ kind: "unchanged" });
    expect(readEdit('{\n  "path": "a.png",\n  "width": 4000.0\n}', original)).toEqual({ kind: "unchanged" });
  });

  it("an edit is its parsed object", () => {
    expect(readEdit('{"path": "a.png", "width": 800}', original)).toEqual({
      kind: "edited",
      value: { path: "a.png", width: 800 },
    });
  });

  it.each([
    ['{"path": "a.png",', "not valid JSON"],
    ["{'path': 'a.png'}", "not valid JSON"],
    ["", "not valid JSON"],
    ["[1, 2]", "must be a JSON object"],
    ['"a.png"', "must be a JSON object"],
    ["null", "must be a JSON object"],
    ["42", "must be a JSON object"],
  ])("%j is refused: %s", (text, reason) => {
    const edit = readEdit(text, original);
    expect(edit.kind).toBe("invalid");
    expect(edit.reason).toContain(reason);
  });

  it("refuses arguments over the kernel's size limit", () => {
    const text = JSON.stringify({ text: "x".repeat(MAX_ARGUMENTS) });
    const edit = readEdit(text, original);
    expect(edit.kind).toBe("invalid");
    expect(edit.reason).toContain("too long");
  });
});

describe("sameValue", () => {
  it.each([
    [{ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 }, true],
    [{ a: 1 }, { a: 1, b: 2 }, false],
    [{ a: [1, 2] }, { a: [2, 1] }, false],
    [{ a: null }, { b: null }, false],
    [[], {}, false],
    ["1", 1, false],
  ])("%j and %j: %s", (a, b, same) => {
    expect(sameValue(a, b)).toBe(same);
    expect(sameValue(b, a)).toBe(same);
  });
});
