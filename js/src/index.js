// The frontend of `mead_notebook.NotebookInteraction` (`mead_notebook/widget.py`;
// contract in `docs/widget-protocol.md`). The page gets this module once per kernel
// session from the shared frontend widget; `loader.js`, each widget's own `_esm`,
// imports it and hands it anywidget's lifecycle.

import { version } from "../package.json";
import { attachMerger } from "./state.js";
import { TurnView } from "./view.js";

/** The version of the frontend, `js/package.json`'s, which the Python package shares. */
export { version };

/** @type {import("./model").TurnWidget} */
export default {
  // Runs once per model: kernel messages are merged once however many views exist.
  initialize({ model }) {
    return attachMerger(model);
  },
  render({ model, el }) {
    const view = new TurnView(model, el);
    return () => view.dispose();
  },
};
