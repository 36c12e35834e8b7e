import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MarkdownView, renderMarkdown, sanitizeHtml, stableBoundary } from "../src/markdown.js";
import { PAYLOADS, expectInert, poke, pwned } from "./payloads.js";

describe("renderMarkdown", () => {
  beforeEach(() => {
    delete document.documentElement.dataset.meadPwned;
  });
  afterEach(() => {
    document.body.replaceChildren();
  });

  it("renders Markdown", () => {
    const el = document.createElement("div");
    el.innerHTML = renderMarkdown("# Title\n\nSome **bold** and `code`.\n\n- one\n- two\n");
    expect(el.querySelector("h1")?.textContent).toBe("Title");
    expect(el.querySelector("strong")?.textContent).toBe("bold");
    expect(el.querySelector("code")?.textContent).toBe("code");
    expect([...el.querySelectorAll("li")].map((li) => li.textContent)).toEqual(["one", "two"]);
  });

  it("opens links in a new tab without an opener", () => {
    const el = document.createElement("div");
    el.innerHTML = renderMarkdown("[docs](https://example.org/a)");
    const a = el.querySelector("a");
    expect(a?.getAttribute("href")).toBe("https://example.org/a");
    expect(a?.getAttribute("target")).toBe("_blank");
    expect(a?.getAttribute("rel")).toContain("noopener");
  });

  it("shows raw HTML in the text as text", () => {
    const el = document.createElement("div");
    el.innerHTML = renderMarkdown("Use <b>bold</b> here");
    expect(el.querySelector("b")).toBeNull();
    expect(el.textContent).toContain("<b>bold</b>");
  });

  it("the payloads would run if written unsanitised (the detector works)", () => {
    const el = document.createElement("div");
    document.body.append(el);
    el.innerHTML = PAYLOADS[0];
    poke(el);
    expect(pwned()).toBe("img");
  });

  it.each(PAYLOADS)("renders %s inert", (payload) => {
    const el = document.createElement("div");
    document.body.append(el);
    el.innerHTML = renderMarkdown(`before\n\n${payload}\n\nafter ${payload}`);
    expectInert(el);
  });

  it.each(PAYLOADS)("sanitises raw HTML %s even without Markdown escaping", (payload) => {
    const el = document.createElement("div");
    document.body.append(el);
    el.innerHTML = sanitizeHtml(payload);
    expectInert(el);
  });
});

describe("stableBoundary", () => {
  it("is the start of the last block that follows a blank line", () => {
    const text = "one\n\ntwo\n\nthree";
    expect(stableBoundary(text)).toBe(text.indexOf("three"));
  });

  it("never splits inside a fenced code block", () => {
    const text = "intro\n\n```py\na = 1\n\nb = 2\n";
    expect(stableBoundary(text)).toBe(text.indexOf("```"));
    const closed = `${text}\`\`\`\n\nafter`;
    expect(stableBoundary(closed)).toBe(closed.indexOf("after"));
  });

  it("does not split before an indented continuation", () => {
    const text = "- item\n\n  more of the item";
    expect(stableBoundary(text)).toBe(0);
  });

  it("starts scanning from a previous boundary", () => {
    const text = "a\n\nb\n\nc";
    expect(stableBoundary(text, text.indexOf("b"))).toBe(text.indexOf("c"));
  });
});

describe("MarkdownView", () => {
  it("renders a growing text like a whole render, re-rendering only the tail", () => {
    const el = document.createElement("div");
    const view = new MarkdownView(el);
    const full = "# Head\n\npara one with **bold**\n\n```js\nlet a = 1;\n\nlet b = 2;\n```\n\n- x\n- y\n\nend.";
    let rendersBefore = 0;
    for (let i = 1; i <= full.length; i += 1) {
      rendersBefore = view.renders;
      view.update(full.slice(0, i));
      // One chunk plus at most the tail per update.
      expect(view.renders - rendersBefore).toBeLessThanOrEqual(2);
    }
    const whole = document.createElement("div");
    whole.innerHTML = renderMarkdown(full);
    expect(el.textContent.replace(/\s+/g, " ").trim()).toBe(whole.textContent.replace(/\s+/g, " ").trim());
    expect(el.querySelector("pre code")?.textContent).toBe("let a = 1;\n\nlet b = 2;\n");
    expect(el.querySelectorAll(".mead-md-done > div").length).toBeGreaterThan(1);
    // The tail alone is small: the finished blocks are not re-rendered.
    expect(el.querySelector(".mead-md-tail").textContent.trim()).toBe("end.");
  });

  it("keeps finished blocks' nodes when more text arrives", () => {
    const el = document.createElement("div");
    const view = new MarkdownView(el);
    view.update("first\n\nsecond");
    const first = el.querySelector(".mead-md-done p");
    view.update("first\n\nsecond\n\nthird");
    expect(el.querySelector(".mead-md-done p")).toBe(first);
  });

  it("starts over when the text is rewritten", () => {
    const el = document.createElement("div");
    const view = new MarkdownView(el);
    view.update("first\n\nsecond");
    view.update("other");
    expect(el.textContent.trim()).toBe("other");
  });

  it("renders reference links defined later in the text", () => {
    const el = document.createElement("div");
    const view = new MarkdownView(el);
    view.update("see [docs][1]\n\nmore\n\n[1]: https://example.org/");
    expect(el.querySelector("a")?.getAttribute("href")).toBe("https://example.org/");
  });
});
