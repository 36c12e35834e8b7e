// The frontend of `mead_notebook.NotebookInteraction` (`mead_notebook/widget.py`;
// contract in `docs/widget-protocol.md`). The page gets this module once per kernel
// session from the shared frontend widget; `loader.js`, each widget's own `_esm`,
// imports it and hands it anywidget's lifecycle.

import { version } from "../package.json";
import { modelInitialized } from "./live.js";
import { attachMerger } from "./state.js";
import { TurnView } from "./view.js";

/** The version of the frontend, `js/package.json`'s, which the Python package shares. */
export { version };

/** @type {import("./model").TurnWidget} */
export default {
  // Runs once per model: kernel messages are merged once however many views exist.
  // The views of a widget drawn from an older model of it look for the live one.
  initialize({ model }) {
    const cleanup = attachMerger(model);
    modelInitialized(model.get("_widget_id"));
    return cleanup;
  },
  render({ model, el }) {
    const view = new TurnView(model, el);
    return () => view.dispose();
  },
};
