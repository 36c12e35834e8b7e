// The synced traits and messages of `NotebookInteraction`, mirrored from
// `mead_notebook/notebook/protocol.py` (cards, questions, messages) and
// `mead_notebook/interaction.py` (statuses, outcomes); described in
// `docs/widget-protocol.md`. tests/test_protocol_types.py fails when they disagree.
// The shared frontend widget's traits are mirrored from `mead_notebook/notebook/frontend.py`.

import type { AnyModel, Initialize, Render } from "@anywidget/types";
import type { Ticker } from "./countdown.js";

export type TurnStatus = "idle" | "running" | "done" | "error" | "interrupted";
export type CallStatus = "pending" | "in_progress" | "completed" | "failed";
export type ToolClass = "read" | "effect";
export type Outcome =
  | "denied"
  | "cancelled"
  | "expired"
  | "interrupted"
  | "timeout"
  | "error"
  | "unknown"
  | "invalid_arguments"
  | "no_answer";
export type Decision = "allow" | "deny" | "picked" | "expired" | "interrupted" | "no_answer";
export type DecidedBy = "person" | "policy" | "rule" | "timeout" | "fallback" | "kernel";
/** What an "Allow always" covers: this tool, this server, or every read tool. */
export type Scope = "tool" | "server" | "class";

export interface Answer {
  decision: Decision;
  option_id: string | null;
  /** every option picked (one unless the choice is multiple) */
  option_ids: string[] | null;
  /** an "Other" answer */
  text: string | null;
  /** the arguments approved, when the person edited them */
  arguments: Record<string, unknown> | null;
  /** the "Allow always" rule that answered, or that this answer made */
  rule: string | null;
  by: DecidedBy;
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
  /** a choice that takes several options */
  multiple: boolean;
  /** the scopes "Allow always" may take for this permission */
  scopes: Scope[];
  /** the tool's JSON schema, for editing the arguments */
  schema: Record<string, unknown> | null;
  /** epoch milliseconds, or null when no timeout applies */
  deadline: number | null;
  /** why the last answer from a view was refused, until one settles the question */
  rejected: string | null;
  /** how many answers from views were refused: a view sees each refusal, even a repeated one */
  rejections: number;
  answer: Answer | null;
}

export interface Card {
  tool_call_id: string;
  title: string;
  tool: string;
  server: string;
  class: ToolClass | null;
  arguments: Record<string, unknown>;
  status: CallStatus;
  outcome: Outcome | null;
  current_step: string | null;
  /** a fraction in [0, 1], or null when unknown */
  progress: number | null;
  cancellable: boolean;
  result: string | null;
  error: string | null;
  question: Question | null;
  /** the arguments the tool ran with, when the person edited them */
  approved_arguments: Record<string, unknown> | null;
  /** where the call belongs in the text: UTF-16 code units streamed before it */
  text_offset: number;
}

export interface Model {
  prompt: string;
  status: TurnStatus;
  stop_reason: string;
  error: string;
  text: string;
  calls: Record<string, Card>;
  order: string[];
  /** whether a focused question answers keys (Enter, Esc, numbers) */
  keyboard: boolean;
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

/** Kernel to frontend: the text from UTF-16 offset `start` on is `delta`. */
export interface TextMessage {
  type: "text";
  start: number;
  delta: string;
}

/** Kernel to frontend: one whole card. */
export interface CallMessage {
  type: "call";
  card: Card;
}

/** Kernel to frontend, while a question waits: every view answers with a pong. */
export interface PingMessage {
  type: "ping";
  seq: number;
}

export type KernelMessage = TextMessage | CallMessage | PingMessage;

/** Frontend to kernel: a view has rendered. */
export interface RenderedMessage {
  type: "rendered";
}

/**
 * Frontend to kernel: a permission carries `decision` (on allow, maybe edited
 * `arguments` and a `remember` scope); a choice carries `option_ids` or `text`.
 */
export interface AnswerMessage {
  type: "answer";
  question_id: string;
  decision?: "allow" | "deny" | null;
  option_id?: string | null;
  option_ids?: string[] | null;
  text?: string | null;
  arguments?: Record<string, unknown> | null;
  remember?: Scope | null;
  note?: string;
}

/** Frontend to kernel: cancel a running call. */
export interface CancelMessage {
  type: "cancel";
  tool_call_id: string;
}

/** Frontend to kernel: a view answers the ping numbered `seq`. */
export interface PongMessage {
  type: "pong";
  seq: number;
}

/** Frontend to kernel: a view was disposed. */
export interface GoneMessage {
  type: "gone";
}

/** Frontend to kernel: this page does not know the shared frontend widget. */
export interface NeedFrontendMessage {
  type: "need_frontend";
}

export type FrontendMessage =
  | RenderedMessage
  | AnswerMessage
  | CancelMessage
  | PongMessage
  | GoneMessage
  | NeedFrontendMessage;

/** What the parts of one view share. */
export interface ViewContext {
  /** send a message to the kernel, unless the view is gone */
  send(message: FrontendMessage): void;
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
  dispose(): void;
}
