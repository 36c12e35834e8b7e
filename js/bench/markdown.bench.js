// Streaming a long answer in small deltas: re-rendering the whole text on each
// frame versus MarkdownView, which re-renders only the unfinished tail.
// Run with `npm run bench`; vitest prints both side by side with the ratio.

import { bench, describe } from "vitest";
import { MarkdownView, renderMarkdown } from "../src/markdown.js";

const paragraph =
  "Some **bold** text with `code`, a [link](https://example.org) and a list:\n\n- one\n- two\n\n";
const fence = "```py\nfor i in range(3):\n    print(i)\n```\n\n";
const answer = Array.from({ length: 20 }, (_, i) => (i % 5 === 4 ? fence : paragraph)).join("");
const DELTA = 40;
const OPTIONS = { iterations: 5, time: 0, warmupIterations: 1, warmupTime: 0 };

describe(`stream ${answer.length} characters in ${DELTA}-character deltas`, () => {
  bench("whole text re-rendered each time", () => {
    const el = document.createElement("div");
    for (let end = DELTA; end < answer.length + DELTA; end += DELTA) {
      el.innerHTML = renderMarkdown(answer.slice(0, end));
    }
  }, OPTIONS);

  bench("MarkdownView (tail only)", () => {
    const view = new MarkdownView(document.createElement("div"));
    for (let end = DELTA; end < answer.length + DELTA; end += DELTA) {
      view.update(answer.slice(0, end));
    }
  }, OPTIONS);
});
