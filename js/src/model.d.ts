// The types of the frontend. The protocol's shapes and the synced traits (`Model`)
// are generated from `mead_notebook/notebook/protocol.py` into `protocol.gen.d.ts`
// (scripts/gen_protocol.py; tests/notebook/test_protocol.py fails when it is stale);
// described in `docs/widget-protocol.md`. The shared frontend widget's traits are
// mirrored from `mead_notebook/notebook/frontend.py`.

import type { AnyModel, Initialize, Render } from "@anywidget/types";
import type { Ticker } from "./countdown.js";

export * from "./protocol.gen";
import type { AnswerMessage, Card, FrontendMessage, Model } from "./protocol.gen";

/** The traits of the shared `Frontend` widget that holds the code. */
export interface FrontendCode {
  /** the ES module built from `src/index.js` */
  code: string;
  /** the stylesheet built from `src/styles.css` */
  css: string;
  /** SHA-256 of code and css, hex */
  digest: string;
  /** the mead_notebook version that sent them */
  version: string;
}

/** The model of one NotebookInteraction, as anywidget hands it over. */
export type TurnModel = AnyModel<Model>;

/** The anywidget lifecycle of the turn's frontend (`src/index.js`). */
export interface TurnWidget {
  initialize: Initialize<Model>;
  render: Render<Model>;
}

/** The page a view is in, as far as who decided goes. */
export interface Viewer {
  /** the random id of this page */
  page: string;
  /** the user name this page claims, once known */
  username(): string | null;
  /** ids of the questions this page sent an answer to, for this widget */
  answered: { has(id: string): boolean; add(id: string): void };
}

/** What the parts of one view share. */
export interface ViewContext {
  /** send a message to the kernel, unless the view is gone; false when it could not be sent */
  send(message: FrontendMessage): boolean;
  /** send an answer, with this page's claimed user and id, and note that this view answered;
   * false when it could not be sent (the kernel went away) */
  answer(message: AnswerMessage): boolean;
  viewer: Viewer;
  ticker: Ticker;
  /** an id unique in the page, for `id`/`for`/`name` attributes */
  uid(): string;
  /** whether a focused question answers keys now (the `keyboard` trait) */
  keyboard(): boolean;
}

/** The view of a card's question. */
export interface QuestionView {
  el: HTMLElement;
  /** whether it waits for an answer */
  open: boolean;
  /** move focus to its first control; false when it cannot take focus */
  focus(): boolean;
  /** show a newer state of the same question (a refused answer, the approved arguments) */
  update(card: Card): void;
  /** the kernel went away: say `note`, stop counting down, take no answer */
  lost(note: string): void;
  dispose(): void;
}
