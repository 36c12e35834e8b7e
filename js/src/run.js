// Code a call will run, and what running it produced, as its card shows them:
// the code highlighted in the theme's editor colours with a Copy button, what it
// printed (stdout, stderr), its value, its traceback, a rich output's HTML (as
// the kernel sanitised it, sanitised again here before it reaches the page), and
// an image (only base64 of a PNG, JPEG or GIF, as a data URL). Everything else
// goes into the DOM as text, invisible characters marked.

import { OUTPUT_LABEL, RICH_NOT_SHOWN } from "./constants.gen.js";
import { h } from "./dom.js";
import { highlightNodes } from "./highlight.js";
import { leftOut, lookup } from "./labels.js";
import { sanitizeHtml } from "./markdown.js";
import { revealNodes } from "./reveal.js";

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif"]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const LANGUAGE = /^[a-z][a-z0-9+#._-]{0,31}$/;
/** How long "Copied" shows on a Copy button, in milliseconds. */
const COPIED_FOR = 1500;

/**
 * @param {unknown} value
 * @returns {number}
 */
function count(value) {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0 ? value : 0;
}

/**
 * What a block leaves out, as a paragraph, or null.
 * @param {string[]} said
 * @returns {HTMLElement | null}
 */
function notShownEl(said) {
  return said.length > 0 ? h("p", { class: "mead-not-shown", text: `${said.join("; ")}.` }) : null;
}

/**
 * What a rich output's block says when the kernel did not keep its HTML or image, or "".
 * @param {Record<string, unknown>} block
 * @returns {string}
 */
export function richLeftOut(block) {
  let what = "";
  if (block.type === "html" && typeof block.html !== "string") what = "HTML";
  else if (block.type === "image" && !validImage(block)) what = typeof block.mime_type === "string" ? block.mime_type : "image";
  if (!what) return "";
  return RICH_NOT_SHOWN.replace("{what}", what).replace("{n}", count(block.cut).toLocaleString("en-US"));
}

/**
 * What a code or output block leaves out, as sentences.
 * @param {Record<string, unknown>} block
 * @returns {string[]}
 */
export function runLeftOut(block) {
  const rich = richLeftOut(block);
  return rich ? [rich] : leftOut({ type: String(block.type), cut: count(block.cut) });
}

/**
 * Whether an image block carries base64 data of an image type a card shows.
 * @param {Record<string, unknown>} block
 * @returns {boolean}
 */
export function validImage(block) {
  const data = block.data;
  return (
    typeof block.mime_type === "string" &&
    IMAGE_TYPES.has(block.mime_type) &&
    typeof data === "string" &&
    data.length > 0 &&
    data.length % 4 === 0 &&
    BASE64.test(data)
  );
}

/**
 * A button that copies `text` to the clipboard (or selects `target` where the page may not).
 * @param {string} text
 * @param {HTMLElement} target
 * @returns {HTMLButtonElement}
 */
function copyButton(text, target) {
  const button = h("button", { type: "button", class: "mead-button mead-copy-code", text: "Copy code" });
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = "Copied";
      setTimeout(() => {
        button.textContent = "Copy code";
      }, COPIED_FOR);
    } catch {
      const selection = window.getSelection();
      if (selection) selection.selectAllChildren(target);
      button.textContent = "Selected: press Ctrl+C";
    }
  });
  return button;
}

/**
 * A code block: its language, a Copy button, the code highlighted.
 * @param {Record<string, unknown>} block
 * @returns {HTMLElement}
 */
export function codeEl(block) {
  const code = String(block.code);
  const language = typeof block.language === "string" && LANGUAGE.test(block.language) ? block.language : "text";
  const body = h("code", {}, highlightNodes(code, language));
  const pre = h("pre", { class: "mead-code", "data-language": language }, [body]);
  return h("div", { class: "mead-content-code" }, [
    h("div", { class: "mead-code-head" }, [h("span", { class: "mead-code-language", text: language }), copyButton(code, body)]),
    pre,
    notShownEl(runLeftOut(block)),
  ]);
}

/**
 * What running code printed, its value or its traceback, under its label.
 * @param {Record<string, unknown>} block
 * @returns {HTMLElement}
 */
export function outputEl(block) {
  const name = typeof block.name === "string" && lookup(OUTPUT_LABEL, block.name) ? block.name : "stdout";
  return h("div", { class: `mead-content-output mead-output-${name}` }, [
    h("p", { class: "mead-content-head", text: lookup(OUTPUT_LABEL, name) }),
    h("pre", { class: "mead-output" }, revealNodes(String(block.text))),
    notShownEl(runLeftOut(block)),
  ]);
}

/**
 * A rich output: its HTML, sanitised, or its text where the kernel kept no HTML.
 * @param {Record<string, unknown>} block
 * @returns {HTMLElement}
 */
export function htmlEl(block) {
  const text = typeof block.text === "string" ? block.text : "";
  /** @type {(HTMLElement | null)[]} */
  const parts = [];
  if (typeof block.html === "string") {
    const shown = h("div", { class: "mead-output-html" });
    shown.innerHTML = sanitizeHtml(block.html);
    parts.push(shown);
  } else if (text) {
    parts.push(h("pre", { class: "mead-output" }, revealNodes(text)));
  }
  parts.push(notShownEl(runLeftOut(block)));
  return h("div", { class: "mead-content-output mead-output-rich" }, parts);
}

/**
 * An image a call produced, from its base64 data; what it shows in words as its alt.
 * @param {Record<string, unknown>} block
 * @returns {HTMLElement}
 */
export function imageEl(block) {
  const alt = typeof block.alt === "string" ? block.alt : "";
  /** @type {(HTMLElement | null)[]} */
  const parts = [];
  if (validImage(block)) {
    parts.push(h("img", { class: "mead-output-image", src: `data:${block.mime_type};base64,${block.data}`, alt }));
  } else if (alt) {
    parts.push(h("pre", { class: "mead-output" }, revealNodes(alt)));
  }
  parts.push(notShownEl(runLeftOut(block)));
  return h("div", { class: "mead-content-output mead-output-rich" }, parts);
}

/**
 * A block of code or of its outputs as an element, or null for any other block.
 * @param {Record<string, unknown>} block
 * @returns {HTMLElement | null}
 */
export function runBlockEl(block) {
  if (block.type === "code" && typeof block.code === "string") return codeEl(block);
  if (block.type === "output" && typeof block.text === "string") return outputEl(block);
  if (block.type === "html" && (typeof block.html === "string" || typeof block.text === "string")) return htmlEl(block);
  if (block.type === "image" && typeof block.mime_type === "string") return imageEl(block);
  return null;
}
