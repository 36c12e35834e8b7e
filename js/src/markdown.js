// Markdown rendering of the streamed text: `marked` turns it into HTML, raw
// HTML in the text is shown as text, and DOMPurify sanitises the result before
// it reaches the page. `MarkdownView` re-renders only the unfinished tail of a
// growing text; blocks that can no longer change are rendered once.

import createDOMPurify from "dompurify";
import { Marked } from "marked";

const marked = new Marked({
  async: false,
  gfm: true,
  breaks: false,
  renderer: {
    // Raw HTML in model text is displayed, never interpreted.
    html({ text }) {
      return escapeHtml(text);
    },
    // Remote images could leak data through their URL: show a link instead.
    image({ href, text }) {
      const label = text ? `image: ${text}` : "image";
      return `<a href="${escapeHtml(href ?? "")}">${escapeHtml(label)}</a>`;
    },
  },
});

const PURIFY_CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [
    "style", "img", "svg", "math", "form", "input", "button", "textarea", "select", "option",
    "iframe", "frame", "object", "embed", "video", "audio", "source", "picture", "link", "meta",
    "base", "dialog",
  ],
  FORBID_ATTR: ["style", "id", "name", "srcset", "action", "formaction"],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
};

/** @type {import("dompurify").DOMPurify | null} */
let purifier = null;

/** @returns {import("dompurify").DOMPurify} */
function getPurifier() {
  if (purifier === null) {
    purifier = createDOMPurify(window);
    purifier.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A" && node.hasAttribute("href")) {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer nofollow");
      }
    });
  }
  return purifier;
}

/**
 * Sanitise an HTML string: no script, event handlers, dangerous URLs or embeds survive.
 * @param {string} html
 * @returns {string}
 */
export function sanitizeHtml(html) {
  return String(getPurifier().sanitize(html, PURIFY_CONFIG));
}

/**
 * Markdown to sanitised HTML.
 * @param {string} text
 * @returns {string}
 */
export function renderMarkdown(text) {
  let html;
  try {
    html = marked.parse(text);
  } catch {
    html = `<pre>${escapeHtml(text)}</pre>`;
  }
  return sanitizeHtml(typeof html === "string" ? html : "");
}

/**
 * Text as HTML that shows it literally.
 * @param {unknown} text
 * @returns {string}
 */
export function escapeHtml(text) {
  return String(text)
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const REFERENCE_DEFINITION = /^ {0,3}\[[^\]\n]+\]:/m;

/**
 * The offset, at or after `from`, up to which the text is made of finished
 * blocks: the start of the last line that follows a blank line outside a fenced
 * code block and starts a new block (no indentation). `from` must itself be such
 * a boundary (or 0).
 * @param {string} text
 * @param {number} [from]
 * @returns {number}
 */
export function stableBoundary(text, from = 0) {
  let boundary = from;
  /** @type {{char: string, length: number} | null} */
  let fence = null;
  let previousBlank = false;
  let position = from;
  while (position < text.length) {
    const end = text.indexOf("\n", position);
    if (end === -1) {
      // The last line may still be growing; a boundary can start it but nothing follows.
      if (fence === null && previousBlank && position > from && /^[^\s]/.test(text.slice(position))) {
        boundary = position;
      }
      break;
    }
    const line = text.slice(position, end);
    if (fence === null && previousBlank && position > from && /^[^\s]/.test(line)) {
      boundary = position;
    }
    const match = FENCE.exec(line);
    if (fence === null) {
      if (match && !(match[1][0] === "`" && match[2].includes("`"))) {
        fence = { char: match[1][0], length: match[1].length };
      }
    } else if (match && match[1][0] === fence.char && match[1].length >= fence.length && match[2].trim() === "") {
      fence = null;
    }
    previousBlank = line.trim() === "";
    position = end + 1;
  }
  return boundary;
}

/** Renders a growing Markdown text into an element, re-rendering only what changed. */
export class MarkdownView {
  /** @param {HTMLElement} el */
  constructor(el) {
    this.el = el;
    this.frozen = document.createElement("div");
    this.frozen.className = "mead-md-done";
    this.tail = document.createElement("div");
    this.tail.className = "mead-md-tail";
    this.frozenText = "";
    /** @type {string | null} */
    this.tailText = null;
    this.renders = 0;
    el.replaceChildren(this.frozen, this.tail);
  }

  /**
   * Render `text`, reusing the blocks rendered for an earlier prefix of it.
   * @param {unknown} text
   */
  update(text) {
    const value = typeof text === "string" ? text : "";
    const whole = REFERENCE_DEFINITION.test(value);
    if (whole || !value.startsWith(this.frozenText)) {
      this.frozen.replaceChildren();
      this.frozenText = "";
    }
    if (!whole) {
      const boundary = stableBoundary(value, this.frozenText.length);
      if (boundary > this.frozenText.length) {
        const block = document.createElement("div");
        block.innerHTML = renderMarkdown(value.slice(this.frozenText.length, boundary));
        this.renders += 1;
        this.frozen.append(block);
        this.frozenText = value.slice(0, boundary);
        this.tailText = null;
      }
    }
    const tail = value.slice(this.frozenText.length);
    if (tail !== this.tailText) {
      this.tail.innerHTML = renderMarkdown(tail);
      this.renders += 1;
      this.tailText = tail;
    }
  }
}
