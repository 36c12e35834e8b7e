// The synced traits of `NotebookInteraction`, mirrored from
// `mead_notebook/widget.py`; the contract is `docs/widget-protocol.md`.
// Keep the three in step. The shared frontend widget's traits are mirrored
// from `mead_notebook/notebook/frontend.py`.

import type { AnyModel, Initialize, Render } from "@anywidget/types";
import type { Ticker } from "./countdown.js";

export type TurnStatus = "idle" | "running" | "done" | "error" | "interrupted";
export type CallStatus = "pending" | "in_progress" | "completed" | "failed";
export type Outcome = "denied" | "cancelled" | "expired" | "interrupted" | null;

export interface Answer {
  decision: "allow" | "deny" | "expired" | "interrupted" | "no_answer";
  option_id: string | null;
  by: "person" | "policy" | "timeout" | "fallback" | "kernel";
  note: string;
}

export interface Option {
  id: string;
  label: string;
}

export interface Question {
  id: string;
  kind: "permission" | "choice";
  prompt: string | null;
  options: Option[] | null;
  /** epoch milliseconds, or null when no timeout applies */
  deadline: number | null;
  answer: Answer | null;
}

export interface Card {
  tool_call_id: string;
  title: string;
  tool: string;
  server: string;
  class: "read" | "effect" | null;
  arguments: unknown;
  status: CallStatus;
  outcome: Outcome;
  current_step: string | null;
  /** a fraction in [0, 1], or null when unknown */
  progress: number | null;
  cancellable: boolean;
  result: string | null;
  error: string | null;
  question: Question | null;
}

export interface Model {
  prompt: string;
  status: TurnStatus;
  stop_reason: string;
  error: string;
  text: string;
  calls: Record<string, Card>;
  order: string[];
  /** `"IPY_MODEL_<id>"` of the kernel session's shared `Frontend` widget */
  _frontend: string;
}

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

/** Kernel to frontend custom messages. */
export type KernelMessage =
  | { type: "text"; start: number; delta: string }
  | { type: "call"; card: Card };

/** Frontend to kernel custom messages. */
export type FrontendMessage =
  | { type: "rendered" }
  | { type: "answer"; question_id: string; decision: "allow" | "deny"; note: string }
  | { type: "answer"; question_id: string; option_id: string }
  | { type: "cancel"; tool_call_id: string };

/** What the parts of one view share. */
export interface ViewContext {
  /** send a message to the kernel, unless the view is gone */
  send(message: FrontendMessage): void;
  ticker: Ticker;
  /** an id unique in the page, for `id`/`for`/`name` attributes */
  uid(): string;
}

/** The view of a card's question. */
export interface QuestionView {
  el: HTMLElement;
  /** whether it waits for an answer */
  open: boolean;
  /** move focus to its first control; false when it cannot take focus */
  focus(): boolean;
  dispose(): void;
}
