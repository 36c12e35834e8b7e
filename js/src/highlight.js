// Python code highlighted in the theme's own editor colours. Lezer's Python
// parser (the one JupyterLab's editor uses) finds the tokens; each styled range
// becomes a <span class="mead-tok-…"> named after the JupyterLab editor colour it
// is drawn in (`--jp-mirror-editor-keyword-color` for `mead-tok-keyword`, as
// JupyterLab's own highlight style maps the same tags). The text goes in as
// text, invisible characters marked (reveal.js): the code reads exactly as it runs.

import { highlightTree, tagHighlighter, tags as t } from "@lezer/highlight";
import { parser } from "@lezer/python";
import { h } from "./dom.js";
import { revealNodes } from "./reveal.js";

/** JupyterLab's highlight style, tag by tag, as class names (the colours are in styles.css). */
const HIGHLIGHTER = tagHighlighter([
  { tag: t.meta, class: "mead-tok-meta" },
  { tag: t.keyword, class: "mead-tok-keyword" },
  { tag: t.atom, class: "mead-tok-atom" },
  { tag: t.bool, class: "mead-tok-keyword" },
  { tag: t.number, class: "mead-tok-number" },
  { tag: [t.definition(t.name), t.function(t.definition(t.variableName))], class: "mead-tok-def" },
  { tag: t.standard(t.variableName), class: "mead-tok-builtin" },
  { tag: [t.special(t.variableName), t.self], class: "mead-tok-variable-2" },
  { tag: t.punctuation, class: "mead-tok-punctuation" },
  { tag: t.propertyName, class: "mead-tok-property" },
  { tag: t.operator, class: "mead-tok-operator" },
  { tag: t.comment, class: "mead-tok-comment" },
  { tag: t.string, class: "mead-tok-string" },
  { tag: [t.labelName, t.monospace, t.special(t.string)], class: "mead-tok-string-2" },
  { tag: t.bracket, class: "mead-tok-bracket" },
  { tag: [t.separator, t.derefOperator, t.paren], class: "mead-tok-plain" },
]);

/** Longest code highlighted; longer code is shown plain (still whole, still revealed). */
export const HIGHLIGHT_MAX = 200_000;

/**
 * The styled ranges of `code`, in order: `[from, to, classes]`.
 * @param {string} code
 * @returns {[number, number, string][]}
 */
export function tokens(code) {
  /** @type {[number, number, string][]} */
  const ranges = [];
  highlightTree(parser.parse(code), HIGHLIGHTER, (from, to, classes) => {
    ranges.push([from, to, classes]);
  });
  return ranges;
}

/**
 * `code` as nodes: Python highlighted, any other language (or code past
 * HIGHLIGHT_MAX) plain. Every character of the code is in the text, in order.
 * @param {string} code
 * @param {string} language
 * @returns {(string | HTMLElement)[]}
 */
export function highlightNodes(code, language) {
  if (language !== "python" || code.length > HIGHLIGHT_MAX) return revealNodes(code);
  let ranges;
  try {
    ranges = tokens(code);
  } catch {
    return revealNodes(code);
  }
  /** @type {(string | HTMLElement)[]} */
  const nodes = [];
  let position = 0;
  for (const [from, to, classes] of ranges) {
    if (from < position || to <= from) continue;
    if (from > position) nodes.push(...revealNodes(code.slice(position, from)));
    nodes.push(h("span", { class: classes }, revealNodes(code.slice(from, to))));
    position = to;
  }
  if (position < code.length) nodes.push(...revealNodes(code.slice(position)));
  return nodes;
}
