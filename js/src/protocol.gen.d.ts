// Written by scripts/gen_protocol.py from mead_notebook/notebook/protocol.py: do not edit.
// The shapes and unions of the widget protocol (docs/widget-protocol.md), and the
// synced traits of NotebookInteraction as `Model`.

export type CallStatus = "pending" | "in_progress" | "completed" | "failed";

export type ToolClass = "read" | "effect";

export type ToolKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "other";

export type Outcome = "denied" | "cancelled" | "expired" | "interrupted" | "timeout" | "error" | "unknown" | "invalid_arguments" | "no_answer";

export type DecidedBy = "person" | "policy" | "rule" | "timeout" | "fallback" | "kernel" | "agent";

export type TurnStatus = "idle" | "running" | "done" | "error" | "interrupted";

export type Verdict = "allow" | "deny" | "picked" | "expired" | "interrupted" | "no_answer";

export type Scope = "tool" | "server" | "class" | "command" | "prefix" | "folder";

/** Text that says what a call will do or did. */
export interface TextBlock {
  type: "text";
  text: string;
}

/** A change to one file: ``old_text`` is None for a new file. */
export interface DiffBlock {
  type: "diff";
  path: string;
  old_text: string | null;
  new_text: string;
}

/** A shell command: ``cwd`` where it runs; ``output`` and ``exit_code`` once it ran. */
export interface TerminalBlock {
  type: "terminal";
  command: string;
  cwd?: string | null;
  output?: string | null;
  exit_code?: number | null;
}

/** Code a call will run or put in the notebook, in ``language`` (``python``). */
export interface CodeBlock {
  type: "code";
  language: string;
  code: string;
}

export type OutputName = "stdout" | "stderr" | "result" | "error";

/** Text that running code produced, as a cell shows it (``name`` says which). */
export interface OutputBlock {
  type: "output";
  name: OutputName;
  text: string;
}

/** A rich output as HTML (a DataFrame's table), and ``text`` for where HTML is not shown. */
export interface HtmlBlock {
  type: "html";
  html: string;
  text: string;
}

export type ImageType = "image/png" | "image/jpeg" | "image/gif";

/** An image a call produced (a figure): base64 ``data`` of type ``mime_type``, and ``alt``, what it shows in words (the output's text). */
export interface ImageBlock {
  type: "image";
  mime_type: ImageType;
  data: string;
  alt: string;
}

export type ContentBlock = TextBlock | DiffBlock | TerminalBlock | CodeBlock | OutputBlock | HtmlBlock | ImageBlock;

/** A file a call touches; ``line`` is 1-based, or None for the whole file. */
export interface Location {
  path: string;
  line: number | null;
}

/** One step of an agent's plan; ``priority`` is ``high``, ``medium`` or ``low``. */
export interface PlanEntry {
  content: string;
  status: "pending" | "in_progress" | "completed";
  priority?: "high" | "medium" | "low";
}

/** The agent's context usage: tokens ``used`` of the context's ``size``, and the session's ``cost`` so far in ``currency`` (ISO 4217); None where it did not say. */
export interface UsageInfo {
  used: number | null;
  size: number | null;
  cost: number | null;
  currency: string | null;
}

/** Who runs a turn and under which rules, as far as its source knows. */
export interface AgentInfo {
  agent?: string;
  mode?: string | null;
  sandbox?: string | null;
  settings?: string | null;
  model?: string | null;
  usage?: UsageInfo | null;
}

export type TypedAnswer = "other" | "answer";

export type DiffSign = " " | "-" | "+" | "@" | "\\";

/** One row of a unified diff, as the kernel computed it from the whole texts. */
export interface DiffRow {
  sign: DiffSign;
  old: number | null;
  new: number | null;
  text: string;
  cut: number;
}

/** Text that says what a call will do; ``cut``: characters not shown. */
export interface CardText {
  type: "text";
  text: string;
  cut: number;
}

/** A change to one file, as a card shows it. */
export interface CardDiff {
  type: "diff";
  path: string;
  new_file: boolean;
  rows: DiffRow[];
  added: number;
  removed: number;
  hidden: number;
  cut: number;
}

/** A shell command, where it runs, and once it ran its output and exit code. */
export interface CardTerminal {
  type: "terminal";
  command: string;
  cwd: string | null;
  output: string | null;
  exit_code: number | null;
  cut: number;
}

/** Code a call will run or put in the notebook, in ``language`` (a short lowercase name, ``text`` when the source gave none that looks like one); ``cut``: characters of the code not shown. */
export interface CardCode {
  type: "code";
  language: string;
  code: string;
  cut: number;
}

/** Text that running code produced: what it printed (``stdout``, ``stderr``), its ``result`` or the ``error`` it raised; ``cut``: characters not shown. */
export interface CardOutput {
  type: "output";
  name: OutputName;
  text: string;
  cut: number;
}

/** A rich output (a DataFrame's table): ``html`` as the kernel sanitised it (nh3, the static transcript's rules; every view sanitises it again before showing it), None when it is larger than :data:`MAX_HTML` or past the card's share of rich output (:data:`MAX_RICH`); ``text``, the output as text; ``cut``: characters of either not shown. */
export interface CardHtml {
  type: "html";
  html: string | null;
  text: string;
  cut: number;
}

/** An image (a figure): base64 ``data`` of ``mime_type``, empty when it was not a valid image of that type, larger than :data:`MAX_IMAGE` or past :data:`MAX_RICH` (``cut`` then counts its characters); ``alt`` says what it shows in words. */
export interface CardImage {
  type: "image";
  mime_type: ImageType;
  data: string;
  alt: string;
  cut: number;
}

export type CardBlock = CardText | CardDiff | CardTerminal | CardCode | CardOutput | CardHtml | CardImage;

/** How a question was settled. */
export interface Settlement {
  decision: Verdict;
  option_id: string | null;
  option_ids: string[] | null;
  text: string | null;
  arguments: Record<string, unknown> | null;
  rule: string | null;
  by: DecidedBy;
  note: string;
  username: string | null;
  display_name: string | null;
  page: string | null;
}

/** One scope a permission offers to remember, and what it would cover, in words. */
export interface ScopeOffer {
  scope: Scope;
  label: string;
}

/** One option of a choice, as a view shows it. */
export interface ChoiceOption {
  id: string;
  label: string;
}

/** The question on a card; ``deadline`` in epoch milliseconds, or None. */
export interface Question {
  id: string;
  kind: "permission" | "choice";
  prompt: string | null;
  options: ChoiceOption[] | null;
  multiple: boolean;
  typed: TypedAnswer;
  scopes: ScopeOffer[];
  schema: Record<string, unknown> | null;
  editable: boolean;
  deadline: number | null;
  rejected: string | null;
  rejections: number;
  version: number;
  answer: Settlement | null;
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
  progress: number | null;
  cancellable: boolean;
  result: string | null;
  error: string | null;
  question: Question | null;
  approved_arguments: Record<string, unknown> | null;
  text_offset: number;
  kind: ToolKind | null;
  content: CardBlock[];
  locations: Location[];
  decided_by: DecidedBy | null;
  blocks_hidden: number;
  locations_hidden: number;
  incomplete: boolean;
  invisible: boolean;
}

/** A message of an earlier turn: the person's ``prompt`` or the agent's ``text`` (Markdown); ``cut``: characters not shown. */
export interface HistoryText {
  type: "prompt" | "text";
  text: string;
  cut: number;
}

/** A tool call of an earlier turn: a card that has ended and asks nothing. */
export interface HistoryCard {
  type: "call";
  card: Card;
}

export type HistoryItem = HistoryText | HistoryCard;

/** Kernel to frontend: the text from UTF-16 offset ``start`` on is ``delta``. */
export interface TextMessage {
  type: "text";
  start: number;
  delta: string;
}

/** Kernel to frontend: the thoughts from UTF-16 offset ``start`` on are ``delta``. */
export interface ThoughtMessage {
  type: "thought";
  start: number;
  delta: string;
}

/** Kernel to frontend: the whole plan, each time it changes. */
export interface PlanMessage {
  type: "plan";
  entries: PlanEntry[];
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

export type KernelMessage = TextMessage | ThoughtMessage | PlanMessage | CallMessage | PingMessage;

/** Frontend to kernel: a view has rendered (someone can answer). */
export interface RenderedMessage {
  type: "rendered";
}

/** Frontend to kernel: the answer to a question. */
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
  username?: string | null;
  display_name?: string | null;
  page?: string | null;
  version?: number | null;
}

/** Frontend to kernel: cancel a running call. */
export interface CancelMessage {
  type: "cancel";
  tool_call_id: string;
}

/** Frontend to kernel: a view answers the ping numbered ``seq``. */
export interface PongMessage {
  type: "pong";
  seq?: number;
}

/** Frontend to kernel: a view was disposed. */
export interface GoneMessage {
  type: "gone";
}

/** Frontend to kernel: this page does not know the shared frontend widget. */
export interface NeedFrontendMessage {
  type: "need_frontend";
}

export type FrontendMessage = RenderedMessage | AnswerMessage | CancelMessage | PongMessage | GoneMessage | NeedFrontendMessage;

/** The synced traits of one NotebookInteraction. */
export interface Model {
  prompt: string;
  status: TurnStatus;
  stop_reason: string;
  error: string;
  text: string;
  thoughts: string;
  plan: PlanEntry[];
  protocol_version: number;
  calls: Record<string, Card>;
  order: string[];
  agent: AgentInfo;
  history: HistoryItem[];
  history_hidden: number;
  keyboard: boolean;
  _frontend: string;
  _widget_id: string;
}
