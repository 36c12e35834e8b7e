// The question part of a card: a permission (Allow / Deny) or a choice (radio
// options and Submit), its countdown, and once answered, the decision alone.

import { h, isTextField, prettyJson, setText } from "./dom.js";
import { isObject, nonEmptyOr } from "./state.js";

/** @typedef {import("./model").Answer} Answer */
/** @typedef {import("./model").Card} Card */
/** @typedef {import("./model").Option} Option */
/** @typedef {import("./model").Question} Question */
/** @typedef {import("./model").QuestionView} QuestionView */
/** @typedef {import("./model").ViewContext} ViewContext */

/** @type {Record<string, string>} */
const BY = {
  person: "by you",
  policy: "by policy",
  timeout: "on timeout",
  fallback: "by fallback",
  kernel: "by the kernel",
};

// JupyterLab and Notebook 7 (Lumino) skip their keyboard shortcuts for keys
// pressed inside an element with this attribute, so Enter and Escape reach the
// question instead of switching the notebook's mode.
const SUPPRESS_HOST_SHORTCUTS = "data-lm-suppress-shortcuts";

/** @type {Record<string, string>} */
const CLASS_HINT = {
  read: "reads only",
  effect: "can change things",
};

/**
 * Whether a card's question is waiting for an answer.
 * @param {unknown} question
 * @returns {question is Question}
 */
export function isOpen(question) {
  return isObject(question) && (question.answer === null || question.answer === undefined);
}

/**
 * The options of a choice question that are well formed.
 * @param {Question} question
 * @returns {Option[]}
 */
export function validOptions(question) {
  if (!Array.isArray(question.options)) return [];
  return question.options.filter(
    (option) => isObject(option) && typeof option.id === "string" && typeof option.label === "string",
  );
}

/**
 * A short sentence for a settled question, e.g. "Allowed by you" or "Denied by policy".
 * @param {Question} question
 * @returns {string}
 */
export function describeAnswer(question) {
  /** @type {Partial<Answer>} */
  const answer = isObject(question.answer) ? question.answer : {};
  const by = typeof answer.by === "string" && BY[answer.by] ? ` ${BY[answer.by]}` : "";
  let text;
  if (typeof answer.option_id === "string" && answer.option_id !== "") {
    const option = validOptions(question).find((o) => o.id === answer.option_id);
    text = `Chose “${option ? option.label : answer.option_id}”${by}`;
  } else {
    switch (answer.decision) {
      case "allow":
        text = `Allowed${by}`;
        break;
      case "deny":
        text = `Denied${by}`;
        break;
      case "expired":
        text = "Expired";
        break;
      case "interrupted":
        text = "Interrupted";
        break;
      case "no_answer":
        text = "No answer";
        break;
      default:
        text = "Settled";
    }
  }
  const note = typeof answer.note === "string" ? answer.note.trim() : "";
  return note ? `${text}: ${note}` : text;
}

/**
 * The key under which a question's view stays valid; a new key means a rebuild.
 * @param {unknown} question
 * @returns {string}
 */
export function questionKey(question) {
  if (!isObject(question)) return "";
  const state = isOpen(question) ? "open" : `answered:${JSON.stringify(question.answer)}`;
  return `${question.id}|${question.kind}|${question.deadline}|${state}`;
}

/**
 * Build the view of a card's question (the card must have one: see `questionKey`).
 * @param {ViewContext} ctx
 * @param {Card & {question: Question}} card
 * @returns {QuestionView}
 */
export function buildQuestion(ctx, card) {
  const question = card.question;
  if (!isOpen(question)) return buildAnswered(question);
  if (question.kind === "permission") return buildPermission(ctx, card, question);
  if (question.kind === "choice") return buildChoice(ctx, question);
  const el = h("section", { class: "mead-question mead-question-unknown" }, [
    h("p", { text: "This question cannot be answered here." }),
  ]);
  return { el, open: false, focus: () => false, dispose() {} };
}

/**
 * @param {Question} question
 * @returns {QuestionView}
 */
function buildAnswered(question) {
  const decision = isObject(question.answer) ? String(question.answer.decision ?? "") : "";
  const el = h("section", {
    class: `mead-question mead-answered mead-decision-${cssToken(decision)}`,
  });
  if (question.kind === "choice" && typeof question.prompt === "string") {
    el.append(h("p", { class: "mead-question-prompt", text: question.prompt }));
  }
  el.append(h("p", { class: "mead-decision", text: describeAnswer(question) }));
  return { el, open: false, focus: () => false, dispose() {} };
}

/**
 * @param {ViewContext} ctx
 * @param {Card} card
 * @param {Question} question
 * @returns {QuestionView}
 */
function buildPermission(ctx, card, question) {
  const tool = nonEmptyOr(card.tool, "?");
  const server = nonEmptyOr(card.server, "?");
  const toolClass = nonEmptyOr(card.class, "effect");
  const labelId = ctx.uid();
  const allow = h("button", { type: "button", class: "mead-button mead-allow", "aria-keyshortcuts": "Enter", text: "Allow" });
  const deny = h("button", { type: "button", class: "mead-button mead-deny", "aria-keyshortcuts": "Escape", text: "Deny" });
  const reasonId = ctx.uid();
  const reason = h("input", { type: "text", id: reasonId, class: "mead-reason-input", autocomplete: "off" });
  const status = h("span", { class: "mead-sent", role: "status" });
  const countdown = question.deadline != null && Number.isFinite(question.deadline)
    ? ctx.ticker.create("Denies", question.deadline)
    : null;

  const el = h("section", {
    class: "mead-question mead-question-permission",
    role: "group",
    "aria-labelledby": labelId,
    [SUPPRESS_HOST_SHORTCUTS]: "true",
  }, [
    h("p", { class: "mead-question-prompt", id: labelId }, [
      "Allow ",
      h("strong", { text: tool }),
      " on ",
      h("strong", { text: server }),
      "? ",
      h("span", { class: `mead-badge mead-class-${cssToken(toolClass)}`, text: toolClass }),
      h("span", { class: "mead-class-hint", text: ` (${CLASS_HINT[toolClass] ?? "unknown class"})` }),
    ]),
    h("pre", { class: "mead-question-args", "aria-label": "Arguments" }, [prettyJson(card.arguments)]),
    h("div", { class: "mead-actions" }, [
      allow,
      deny,
      countdown,
      h("span", { class: "mead-hint", "aria-hidden": "true", text: "Enter allows · Esc denies" }),
      status,
    ]),
    h("div", { class: "mead-reason" }, [
      h("label", { for: reasonId, text: "Reason if denied (optional)" }),
      reason,
    ]),
  ]);

  let sent = false;
  /** @param {"allow" | "deny"} decision */
  const answer = (decision) => {
    if (sent) return;
    sent = true;
    const note = decision === "deny" ? reason.value.trim() : "";
    for (const control of [allow, deny, reason]) control.disabled = true;
    setText(status, decision === "allow" ? "Allowing…" : "Denying…");
    ctx.send({ type: "answer", question_id: question.id, decision, note });
  };
  allow.addEventListener("click", () => answer("allow"));
  deny.addEventListener("click", () => answer("deny"));
  el.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.isComposing || isTextField(event.target)) return;
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      answer("deny");
    } else if (event.key === "Enter" && !(event.target instanceof HTMLButtonElement)) {
      // On a focused button, Enter activates that button instead.
      event.preventDefault();
      event.stopPropagation();
      answer("allow");
    }
  });

  return {
    el,
    open: true,
    focus: () => focusElement(allow),
    dispose() {
      if (countdown) ctx.ticker.remove(countdown);
    },
  };
}

/**
 * @param {ViewContext} ctx
 * @param {Question} question
 * @returns {QuestionView}
 */
function buildChoice(ctx, question) {
  const options = validOptions(question);
  const name = ctx.uid();
  const legendText = typeof question.prompt === "string" && question.prompt ? question.prompt : "Choose an option";
  const submit = h("button", { type: "button", class: "mead-button mead-submit", disabled: true, text: "Submit" });
  const status = h("span", { class: "mead-sent", role: "status" });
  const countdown = question.deadline != null && Number.isFinite(question.deadline)
    ? ctx.ticker.create("Expires", question.deadline)
    : null;
  const radios = options.map((option) => {
    const id = ctx.uid();
    const input = h("input", { type: "radio", id, name, value: option.id });
    return { input, row: h("div", { class: "mead-option" }, [input, h("label", { for: id, text: option.label })]) };
  });
  const fieldset = h("fieldset", { class: "mead-options" }, [
    h("legend", { class: "mead-question-prompt", text: legendText }),
    ...radios.map((r) => r.row),
  ]);
  if (radios.length === 0) fieldset.append(h("p", { text: "No options were given." }));
  const el = h("section", { class: "mead-question mead-question-choice", [SUPPRESS_HOST_SHORTCUTS]: "true" }, [
    fieldset,
    h("div", { class: "mead-actions" }, [submit, countdown, status]),
  ]);

  const picked = () => radios.find((r) => r.input.checked)?.input.value ?? null;
  let sent = false;
  const send = () => {
    const optionId = picked();
    if (sent || optionId === null) return;
    sent = true;
    submit.disabled = true;
    for (const r of radios) r.input.disabled = true;
    setText(status, "Sending…");
    ctx.send({ type: "answer", question_id: question.id, option_id: optionId });
  };
  fieldset.addEventListener("change", () => {
    if (!sent) submit.disabled = picked() === null;
  });
  submit.addEventListener("click", send);
  el.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.isComposing || isTextField(event.target)) return;
    if (event.key === "Enter" && event.target instanceof HTMLInputElement && event.target.type === "radio") {
      event.preventDefault();
      send();
    }
  });

  return {
    el,
    open: true,
    focus: () => (radios.length > 0 ? focusElement(radios[0].input) : false),
    dispose() {
      if (countdown) ctx.ticker.remove(countdown);
    },
  };
}

/**
 * @param {HTMLElement} el
 * @returns {boolean} whether it could take focus
 */
function focusElement(el) {
  if (!el.isConnected) return false;
  el.focus({ preventScroll: false });
  return true;
}

/**
 * A value safe to use inside a class name.
 * @param {unknown} value
 * @returns {string}
 */
export function cssToken(value) {
  return String(value ?? "").toLowerCase().replace(/[^a-z0-9_-]/g, "") || "none";
}
