// The synced traits of `NotebookInteraction`, mirrored from
// `mead_notebook/widget.py`; the contract is `docs/widget-protocol.md`.
// Keep the three in step.

export type TurnStatus = "idle" | "running" | "done" | "error" | "interrupted";
export type CallStatus = "pending" | "in_progress" | "completed" | "failed";
export type Outcome = "denied" | "cancelled" | "expired" | "interrupted" | null;

export interface Answer {
  decision: "allow" | "deny" | "expired" | "interrupted" | "no_answer";
  option_id: string | null;
  by: "person" | "policy" | "timeout" | "fallback" | "kernel";
  note: string;
}

export interface Question {
  id: string;
  kind: "permission" | "choice";
  prompt: string | null;
  options: { id: string; label: string }[] | null;
  /** epoch milliseconds, or null when no timeout applies */
  deadline: number | null;
  answer: Answer | null;
}

export interface Card {
  tool_call_id: string;
  title: string;
  tool: string;
  server: string;
  class: "read" | "effect";
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
