// Each fact once on a card. Sources often say the same thing twice: an agent
// reports a command's output as a terminal block, again as text, and again as the
// call's result; an edit's result ("wrote greet.py") also comes as a text block.
// What the card shows keeps each in one place: a terminal's output under its
// command, the result on its own line, and a text block only when it says
// something neither says. The kernel's card keeps everything (what the model was
// told, the static transcript); this is how the live card shows it.

import { isObject } from "./state.js";

/**
 * Text as compared here: the same words, whatever the spacing around them.
 * @param {unknown} value
 * @returns {string}
 */
function said(value) {
  return typeof value === "string" ? value.trim() : "";
}

/**
 * A card's content blocks without the text blocks that repeat a terminal's output,
 * the result, or an earlier text block (a block cut short is always kept, with
 * what it leaves out); and whether the result line repeats a
 * terminal's output (then the output under its command says it).
 * @param {unknown[]} content
 * @param {unknown} result the card's result
 * @returns {{content: unknown[], showResult: boolean}}
 */
export function tellOnce(content, result) {
  const outputs = new Set(
    content.filter((b) => isObject(b) && b.type === "terminal").map((b) => said(/** @type {{output?: unknown}} */ (b).output)),
  );
  outputs.delete("");
  const told = said(result);
  const texts = new Set();
  const kept = content.filter((block) => {
    if (!isObject(block) || block.type !== "text" || (typeof block.cut === "number" && block.cut > 0)) return true;
    const text = said(block.text);
    if (text === "" || outputs.has(text) || text === told || texts.has(text)) return false;
    texts.add(text);
    return true;
  });
  return { content: kept, showResult: told !== "" && !outputs.has(told) };
}
