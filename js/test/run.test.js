// Code on a card before Allow, and what running it produced after: highlighted in
// the theme's editor colours, read exactly as it runs, copied whole; outputs under
// their labels; a rich output's HTML sanitised, an image only as base64 of its type;
// Copy as Markdown as the kernel writes it; payloads inert everywhere.

import { afterEach, describe, expect, it, vi } from "vitest";
import { highlightNodes, tokens } from "../src/highlight.js";
import { codeEl, htmlEl, imageEl, outputEl, richLeftOut, validImage } from "../src/run.js";
import { turnMarkdown } from "../src/transcript.js";
import { readState } from "../src/state.js";
import { FakeModel, Host, buttonsNamed, card, cardEl, nextFrame, permission } from "./fake-model.js";
import { PAYLOADS, expectInert, poke, pwned } from "./payloads.js";
import RUN_TURN from "../../tests/shared/copy-turn-run.json";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const CODE = 'import os\n@cache\ndef f(self, x=1):\n    """Doc."""\n    return print(x + 2.5, True, None)  # note\n';

let host;

afterEach(() => {
  host?.dispose();
  host = undefined;
  document.body.replaceChildren();
  delete document.documentElement.dataset.meadPwned;
  vi.unstubAllGlobals();
});

function render(block) {
  const el = document.createElement("div");
  el.append(block);
  document.body.append(el);
  return el;
}

/** The text of each highlighted token, by its class. */
function styled(el, cls) {
  return [...el.querySelectorAll(`.${cls}`)].map((span) => span.textContent);
}

describe("highlighting", () => {
  it("colours Python as JupyterLab's editor does, and keeps every character in order", () => {
    const el = render(codeEl({ type: "code", language: "python", code: CODE, cut: 0 }));
    const code = el.querySelector("pre.mead-code code");
    expect(code.textContent).toBe(CODE);
    expect(styled(code, "mead-tok-keyword")).toEqual(expect.arrayContaining(["import", "def", "return", "True"]));
    expect(styled(code, "mead-tok-def")).toEqual(["f"]);
    expect(styled(code, "mead-tok-comment")).toEqual(["# note"]);
    expect(styled(code, "mead-tok-string")).toEqual(['"""Doc."""']);
    expect(styled(code, "mead-tok-number")).toEqual(["1", "2.5"]);
    expect(styled(code, "mead-tok-meta")).toEqual(expect.arrayContaining(["@"]));
    expect(el.querySelector(".mead-code-language").textContent).toBe("python");
  });

  it("marks invisible and bidirectional characters inside tokens", () => {
    const trojan = 'access = "user\u202e \u2066# admin\u2069 \u2066"\nrm\u200b = 1\r';
    const code = render(codeEl({ type: "code", language: "python", code: trojan, cut: 0 })).querySelector("code");
    const marks = [...code.querySelectorAll(".mead-invisible")].map((m) => m.textContent);
    expect(marks).toEqual(["⟨U+202E⟩", "⟨U+2066⟩", "⟨U+2069⟩", "⟨U+2066⟩", "⟨U+200B⟩", "⟨U+000D⟩"]);
    expect(code.textContent).not.toMatch(/[\u202e\u2066\u2069\u200b\r]/);
  });

  it("shows another language, or code it cannot parse, plain and whole", () => {
    expect(highlightNodes("SELECT 1", "sql")).toEqual(["SELECT 1"]);
    const broken = "def (:\n  ]]] 'unclosed";
    const el = render(codeEl({ type: "code", language: "python", code: broken, cut: 0 }));
    expect(el.querySelector("code").textContent).toBe(broken);
    expect(tokens("x = 1").length).toBeGreaterThan(0);
  });

  it("copies the code whole, and says what it cut", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText } });
    const el = render(codeEl({ type: "code", language: "python", code: CODE, cut: 12 }));
    const [copy] = buttonsNamed(el, "Copy code");
    copy.click();
    await Promise.resolve();
    expect(writeText).toHaveBeenCalledWith(CODE);
    expect(el.querySelector(".mead-not-shown").textContent).toBe("12 more characters not shown.");
  });
});

describe("outputs", () => {
  it("labels what the code printed, its value and its traceback", () => {
    const labels = ["stdout", "stderr", "result", "error"].map((name) => {
      const el = render(outputEl({ type: "output", name, text: `${name}\n`, cut: 0 }));
      return [el.querySelector(".mead-content-head").textContent, el.querySelector("pre").textContent];
    });
    expect(labels).toEqual([
      ["Output", "stdout\n"],
      ["Standard error", "stderr\n"],
      ["Out", "result\n"],
      ["Traceback", "error\n"],
    ]);
  });

  it("draws a table's HTML, sanitised again", () => {
    const el = render(htmlEl({ type: "html", html: "<table><tbody><tr><td>1</td></tr></tbody></table>", text: "t", cut: 0 }));
    expect(el.querySelector(".mead-output-html td").textContent).toBe("1");
  });

  it("draws an image only from base64 of its type, and says when the kernel kept none", () => {
    const el = render(imageEl({ type: "image", mime_type: "image/png", data: PNG, alt: "<Figure>", cut: 0 }));
    const img = el.querySelector("img");
    expect(img.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
    expect(img.getAttribute("alt")).toBe("<Figure>");
    for (const bad of [
      { mime_type: "image/svg+xml", data: PNG },
      { mime_type: "image/png", data: `${PNG}"><script>` },
      { mime_type: "image/png", data: "javascript:alert(1)" },
      { mime_type: "image/png", data: "" },
    ]) {
      const block = { type: "image", alt: "x", cut: 8, ...bad };
      expect(validImage(block)).toBe(false);
      expect(render(imageEl(block)).querySelector("img")).toBeNull();
    }
    expect(richLeftOut({ type: "image", mime_type: "image/png", data: "", cut: 1234 })).toBe(
      "image/png not shown (1,234 characters: over the card's limit, or not valid)",
    );
    expect(richLeftOut({ type: "html", html: null, text: "t", cut: 5 })).toBe(
      "HTML not shown (5 characters: over the card's limit, or not valid)",
    );
  });
});

describe("payloads", () => {
  it.each(PAYLOADS)("stay inert in code, outputs, HTML and an image's alt: %s", async (payload) => {
    for (const el of [
      codeEl({ type: "code", language: "python", code: payload, cut: 0 }),
      outputEl({ type: "output", name: "error", text: payload, cut: 0 }),
      htmlEl({ type: "html", html: payload, text: payload, cut: 0 }),
      htmlEl({ type: "html", html: null, text: payload, cut: 3 }),
    ]) {
      const root = render(el);
      expectInert(root);
    }
    const image = render(imageEl({ type: "image", mime_type: "image/png", data: PNG, alt: payload, cut: 0 }));
    expect([...image.querySelectorAll("*")].map((e) => e.tagName)).toEqual(["DIV", "IMG"]);
    expect([...image.querySelector("img").attributes].map((a) => a.name).sort()).toEqual(["alt", "class", "src"]);
    poke(image);
    await Promise.resolve();
    expect(pwned()).toBeUndefined();
  });
});

describe("on a card", () => {
  it("shows the code before Allow, and the code with its outputs once it ran", async () => {
    const model = new FakeModel({ status: "running" });
    host = new Host(model);
    const el = host.render();
    const asked = card({
      tool: "run_python",
      kind: "execute",
      arguments: { code: "print('hi')" },
      content: [{ type: "code", language: "python", code: "print('hi')", cut: 0 }],
      question: permission(),
      text_offset: 0,
      approved_arguments: null,
    });
    model.kernelSends({ type: "call", card: asked });
    await nextFrame();
    const before = cardEl(el, "call_1");
    expect(before.querySelector(".mead-content-code code").textContent).toBe("print('hi')");
    expect(before.querySelector(".mead-content-code").compareDocumentPosition(before.querySelector(".mead-question-slot")))
      .toBe(Node.DOCUMENT_POSITION_FOLLOWING);
    model.kernelSends({
      type: "call",
      card: {
        ...asked,
        status: "completed",
        question: null,
        result: "stdout:\nhi",
        content: [
          ...asked.content,
          { type: "output", name: "stdout", text: "hi\n", cut: 0 },
          { type: "image", mime_type: "image/png", data: PNG, alt: "a figure", cut: 0 },
        ],
      },
    });
    await nextFrame();
    const after = cardEl(el, "call_1");
    after.querySelector(".mead-card-toggle").click();
    expect(after.querySelector(".mead-output-stdout pre").textContent).toBe("hi\n");
    expect(after.querySelector("img.mead-output-image")).not.toBeNull();
  });

  it("copies the turn as Markdown exactly as the kernel writes it", () => {
    const model = new FakeModel(structuredClone(RUN_TURN.state));
    expect(turnMarkdown(readState(model))).toBe(RUN_TURN.markdown);
  });
});
