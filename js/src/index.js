// The anywidget frontend of `mead_notebook.NotebookInteraction`
// (`mead_notebook/widget.py`; contract in `docs/widget-protocol.md`).

import { attachMerger } from "./state.js";
import { TurnView } from "./view.js";

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
