// An open choice question: radios (or checkboxes when the question is
// `multiple`), an answer in the person's own words, and Submit. The words, when
// given, are sent instead of the options. The question's `typed` says what they
// are: "Other" beside the options, or the answer itself (a question asked in words,
// whose options only stand aside), which the box's label says and which takes the
// focus first.

import { MAX_TEXT, TYPED_LABEL } from "./constants.gen.js";
import { countdownFor, focusElement, questionSection, setDisabled, validOptions } from "./controls.js";
import { h, setShown, setText } from "./dom.js";
import { listenForShortcuts } from "./keys.js";
import { revealNodes } from "./reveal.js";

/** @typedef {import("./model").AnswerMessage} AnswerMessage */
/** @typedef {import("./model").Question} Question */
/** @typedef {import("./model").QuestionView} QuestionView */
/** @typedef {import("./model").ViewContext} ViewContext */

/** Longest Other answer, in characters (the kernel keeps no more). */
export const MAX_OTHER = MAX_TEXT;

/**
 * @param {ViewContext} ctx
 * @param {Question} question
 * @returns {QuestionView}
 */
export function buildChoice(ctx, question) {
  const options = validOptions(question);
  const multiple = question.multiple === true;
  const keyboard = ctx.keyboard();
  const name = ctx.uid();
  const legendText = typeof question.prompt === "string" && question.prompt ? question.prompt : "Choose an option";
  const submit = h("button", { type: "button", class: "mead-button mead-submit", disabled: true, text: "Submit" });
  const status = h("span", { class: "mead-sent", role: "status" });
  const countdown = countdownFor(ctx, question, "Expires");
  const lostNote = h("p", { class: "mead-kernel-gone", role: "alert", hidden: true });
  const inputs = options.map((option, i) => {
    const id = ctx.uid();
    const input = h("input", { type: multiple ? "checkbox" : "radio", id, name, value: option.id });
    const digit = keyboard && i < 9 ? h("span", { class: "mead-key", "aria-hidden": "true", text: String(i + 1) }) : null;
    // A click anywhere on the row picks the option: its label fills the row, and the
    // rest of it (the key's digit, the space around) clicks the input.
    const row = h("div", { class: "mead-option" }, [digit, input, h("label", { for: id }, revealNodes(option.label, true))]);
    row.addEventListener("click", (event) => {
      if (event.target === row || event.target === digit) input.click();
    });
    return { input, row };
  });
  const fieldset = h("fieldset", { class: "mead-options" }, [
    h("legend", { class: "mead-question-prompt" }, revealNodes(legendText)),
    ...inputs.map((r) => r.row),
  ]);
  if (inputs.length === 0) fieldset.append(h("p", { text: "No options were given." }));
  const inWords = question.typed === "answer";
  const otherId = ctx.uid();
  const other = h("input", { type: "text", id: otherId, class: "mead-other-input", autocomplete: "off", maxlength: String(MAX_OTHER) });
  const otherHint = h("span", { class: "mead-hint", hidden: true });
  const hint = keyboard ? `${multiple ? "1–9 tick" : "1–9 pick"} · Enter submits` : "";

  const el = questionSection("choice", { "data-multiple": multiple ? "true" : "false" }, [
    lostNote,
    fieldset,
    h("div", { class: "mead-other" }, [h("label", { for: otherId, text: TYPED_LABEL[inWords ? "answer" : "other"] }), other, otherHint]),
    h("div", { class: "mead-actions" }, [
      submit,
      countdown,
      h("span", { class: "mead-hint", "aria-hidden": "true", text: hint }),
      status,
    ]),
  ]);

  const picked = () => inputs.filter((r) => r.input.checked).map((r) => r.input.value);
  let sent = false;
  const refresh = () => {
    if (sent) return;
    const ownWords = other.value.trim() !== "";
    fieldset.disabled = ownWords;
    setText(otherHint, ownWords ? "Your own answer is sent instead of the options." : "");
    setShown(otherHint, ownWords);
    submit.disabled = !ownWords && picked().length === 0;
  };
  /** @returns {boolean} whether an answer was sent */
  const send = () => {
    if (sent) return false;
    const text = other.value.trim();
    /** @type {AnswerMessage} */
    let message;
    if (text !== "") {
      message = { type: "answer", question_id: question.id, text };
    } else {
      const ids = picked();
      if (ids.length === 0) return false;
      message = { type: "answer", question_id: question.id, option_ids: multiple ? ids : ids.slice(0, 1) };
    }
    if (typeof question.version === "number") message.version = question.version;
    sent = true;
    setDisabled([submit, other, fieldset], true);
    setText(status, "Sending…");
    ctx.answer(message); // last: a kernel gone meanwhile says so over this
    return true;
  };
  fieldset.addEventListener("change", refresh);
  other.addEventListener("input", refresh);
  submit.addEventListener("click", send);
  listenForShortcuts(el, ctx.keyboard, (key) => {
    if (key === "enter") return send();
    if (typeof key !== "number" || sent || fieldset.disabled || key > inputs.length) return false;
    const { input } = inputs[key - 1];
    input.checked = multiple ? !input.checked : true;
    focusElement(input);
    refresh();
    return true;
  });

  return {
    el,
    open: true,
    focus: () => focusElement(inputs.length > 0 && !inWords ? inputs[0].input : other),
    update() {},
    lost(note) {
      sent = true;
      setDisabled([submit, other, fieldset], true);
      setText(status, "");
      if (countdown) {
        ctx.ticker.remove(countdown);
        countdown.remove();
      }
      setText(lostNote, note);
      setShown(lostNote, true);
    },
    dispose() {
      if (countdown) ctx.ticker.remove(countdown);
    },
  };
}
