// An open permission question: Allow, Deny with an optional reason, "Allow
// always" and "Deny always" for a scope the person picks among those the kernel
// offers (each with the kernel's words for what it covers), and an editor for
// the arguments. An answer the kernel refuses (arguments that break
// the tool's schema) leaves the question open with the reason shown. When the
// call changes while the question is open (a new `version`: an agent's late
// input), the question says so, shows the new arguments and asks again; every
// answer names the version it was made on.

import { ArgumentsEditor } from "./arguments-editor.js";
import { CLASS_HINT, KIND_HINT, MAX_NOTE, NOT_EDITABLE } from "./constants.gen.js";
import { countdownFor, focusElement, questionSection, setDisabled } from "./controls.js";
import { h, prettyJson, setAttr, setShown, setText } from "./dom.js";
import { enterAllows, listenForShortcuts } from "./keys.js";
import { badgeKind, lookup, scopeLabel } from "./labels.js";
import { revealText, setRevealed } from "./reveal.js";
import { isObject, nonEmptyOr } from "./state.js";

/** @typedef {import("./model").AnswerMessage} AnswerMessage */
/** @typedef {import("./model").Card} Card */
/** @typedef {import("./model").Question} Question */
/** @typedef {import("./model").QuestionView} QuestionView */
/** @typedef {import("./model").Scope} Scope */
/** @typedef {import("./model").ScopeOffer} ScopeOffer */
/** @typedef {import("./model").ViewContext} ViewContext */

/** The scopes of questions saved before the kernel sent their labels (protocol 4 and older). */
const OLD_SCOPES = ["tool", "server", "class"];

/**
 * The scopes to offer for "Allow always" and "Deny always": those the kernel
 * offers, in its order, with its words for what each covers. A question saved
 * before scopes had labels names them only ("tool", "server", "class").
 * @param {Card} card
 * @param {Question} question
 * @returns {ScopeOffer[]}
 */
export function offeredScopes(card, question) {
  const scopes = Array.isArray(question.scopes) ? question.scopes : [];
  /** @type {ScopeOffer[]} */
  const offers = [];
  for (const item of /** @type {unknown[]} */ (scopes)) {
    if (isObject(item) && typeof item.scope === "string" && typeof item.label === "string" && item.label) {
      offers.push({ scope: /** @type {Scope} */ (item.scope), label: item.label });
    } else if (typeof item === "string" && OLD_SCOPES.includes(item) && (item !== "class" || card.class === "read")) {
      offers.push({ scope: /** @type {Scope} */ (item), label: scopeLabel(/** @type {Scope} */ (item), card) });
    }
  }
  return offers;
}

/** What an open question says once the call it shows has changed. */
export const CHANGED_NOTE = "The call changed; check it again.";

/**
 * The version of the call a question shows (a question without one: 1).
 * @param {Question} question
 * @returns {number}
 */
export function questionVersion(question) {
  const version = question.version;
  return typeof version === "number" && Number.isSafeInteger(version) && version > 0 ? version : 1;
}

/**
 * The hint next to the buttons, saying which keys answer, and why Enter does not.
 * @param {boolean} keyboard
 * @param {boolean} enter whether Enter allows this call
 * @param {Card} card
 */
function keyHint(keyboard, enter, card) {
  if (!keyboard) return "";
  if (enter) return "Enter allows · Esc denies";
  const hides = card.invisible === true || card.incomplete === true;
  return `Esc denies · Enter is off: ${hides ? "this card does not show all of the call plainly" : "this call may change, delete or run things"}`;
}

/**
 * @param {ViewContext} ctx
 * @param {Card} card
 * @param {Question} question
 * @returns {QuestionView}
 */
export function buildPermission(ctx, card, question) {
  const editable = question.editable !== false;
  const keyboard = ctx.keyboard();
  const labelId = ctx.uid();
  const allow = h("button", { type: "button", class: "mead-button mead-allow", text: "Allow" });
  const deny = h("button", {
    type: "button",
    class: "mead-button mead-deny",
    "aria-keyshortcuts": keyboard ? "Escape" : null,
    text: "Deny",
  });
  const reasonId = ctx.uid();
  const reason = h("input", { type: "text", id: reasonId, class: "mead-reason-input", autocomplete: "off", maxlength: String(MAX_NOTE) });
  const status = h("span", { class: "mead-sent", role: "status" });
  const rejected = h("p", { class: "mead-rejected", role: "alert", hidden: true });
  const changed = h("p", { class: "mead-changed", role: "alert", hidden: true });
  const editor = editable ? new ArgumentsEditor(ctx, card.arguments) : null;
  const scopeId = ctx.uid();
  const scope = h("select", { id: scopeId, class: "mead-scope" });
  const always = h("button", { type: "button", class: "mead-button mead-allow-always", text: "Allow always" });
  const never = h("button", { type: "button", class: "mead-button mead-deny-always", text: "Deny always" });
  const alwaysRow = h("div", { class: "mead-always" }, [h("label", { for: scopeId, text: "Remember for" }), scope, always, never]);
  const countdown = countdownFor(ctx, question, "Denies");
  const lostNote = h("p", { class: "mead-kernel-gone", role: "alert", hidden: true });
  const prompt = h("p", { class: "mead-question-prompt", id: labelId });
  const args = h("pre", { class: "mead-question-args", "aria-label": "Arguments" });
  const hintEl = h("span", { class: "mead-hint", "aria-hidden": "true" });
  const actions = h("div", { class: "mead-actions" }, [allow, deny, countdown, hintEl, status]);

  const el = questionSection("permission", { role: "group", "aria-labelledby": labelId }, [
    prompt,
    lostNote,
    changed,
    args,
    editor ? editor.el : h("p", { class: "mead-not-editable", text: NOT_EDITABLE }),
    rejected,
    actions,
    editable
      ? h("div", { class: "mead-reason" }, [h("label", { for: reasonId, text: "Reason if denied (optional)" }), reason])
      : null,
  ]);
  const controls = editor ? [allow, deny, always, never, scope, reason, editor.input] : [allow, deny, always, never, scope];

  /** @type {ScopeOffer[]} */
  let scopes = [];
  let enter = false;
  /**
   * Show what the card says of its call now: who, what, the arguments, the keys and scopes.
   * @param {Card} shown
   * @param {Question} q
   */
  const show = (shown, q) => {
    const toolClass = nonEmptyOr(shown.class, "effect");
    const kind = badgeKind(shown);
    const hint = lookup(KIND_HINT, kind) || lookup(CLASS_HINT, toolClass) || "may do anything";
    // The card's header names the call, its server and its kind: the question asks.
    prompt.replaceChildren("Allow this call? ", h("span", { class: "mead-class-hint", text: `It ${hint}.` }));
    setRevealed(args, prettyJson(shown.arguments));
    enter = enterAllows(shown);
    setAttr(allow, "aria-keyshortcuts", keyboard && enter ? "Enter" : null);
    setText(hintEl, keyHint(keyboard, enter, shown));
    const offered = offeredScopes(shown, q);
    if (JSON.stringify(offered) !== JSON.stringify(scopes)) {
      scopes = offered;
      scope.replaceChildren(...scopes.map((s) => h("option", { value: s.scope, text: revealText(s.label, true) })));
    }
    if (scopes.length === 0) alwaysRow.remove();
    else if (alwaysRow.parentNode === null) actions.after(alwaysRow);
  };
  show(card, question);

  let waiting = false;
  let refusals = rejections(question);
  const opened = questionVersion(question);
  let version = opened;
  showRejected(rejected, question);

  /**
   * @param {"allow" | "deny"} decision
   * @param {Scope | null} remember
   */
  const answer = (decision, remember = null) => {
    if (waiting) return;
    /** @type {AnswerMessage} */
    const message = { type: "answer", question_id: question.id, decision, note: "" };
    if (typeof question.version === "number") message.version = version;
    if (decision === "allow" && editor) {
      const edit = editor.read();
      if (edit.kind === "invalid") {
        editor.showError(edit.reason);
        editor.focus();
        return;
      }
      if (edit.kind === "edited") message.arguments = edit.value;
    }
    if (remember !== null) message.remember = remember;
    if (decision === "deny" && editable) message.note = reason.value.trim();
    waiting = true;
    setDisabled(controls, true);
    setText(status, decision === "allow" ? "Allowing…" : "Denying…");
    ctx.answer(message); // last: a kernel gone meanwhile says so over this
  };
  let gone = false;
  const ready = () => {
    waiting = false;
    setDisabled(controls, false);
    setText(status, "");
  };
  allow.addEventListener("click", () => answer("allow"));
  deny.addEventListener("click", () => answer("deny"));
  /** @param {"allow" | "deny"} decision */
  const remembered = (decision) => {
    const picked = scopes.find((s) => s.scope === scope.value);
    if (picked) answer(decision, picked.scope);
  };
  always.addEventListener("click", () => remembered("allow"));
  never.addEventListener("click", () => remembered("deny"));
  listenForShortcuts(el, ctx.keyboard, (key) => {
    if (key === "escape") {
      answer("deny");
      return true;
    }
    if (key === "enter" && enter) {
      answer("allow");
      return true;
    }
    return false;
  });

  return {
    el,
    open: true,
    focus: () => focusElement(ctx.keyboard() && enter ? allow : el),
    update(next) {
      const q = next.question;
      if (!isObject(q)) return;
      if (gone) return;
      const now = questionVersion(q);
      if (now !== version) {
        // The call changed under the person: show it as it is now and ask again.
        version = now;
        show(next, q);
        editor?.follow(next.arguments);
        setText(changed, CHANGED_NOTE);
        if (waiting) ready();
      }
      // A refusal says why the call is asked again: the changed note would say it twice.
      setShown(changed, version !== opened && typeof q.rejected !== "string");
      showRejected(rejected, q);
      const count = rejections(q);
      if (count === refusals) return;
      refusals = count;
      if (!waiting) return;
      ready();
      if (editor?.read().kind === "edited") editor.focus();
    },
    lost(note) {
      gone = true;
      waiting = true;
      setDisabled(controls, true);
      setText(status, "");
      setText(hintEl, "");
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

/** @param {Question} question */
function rejections(question) {
  return typeof question.rejections === "number" ? question.rejections : 0;
}

/**
 * @param {HTMLElement} el
 * @param {Question} question
 */
function showRejected(el, question) {
  const reason = typeof question.rejected === "string" ? question.rejected : "";
  setText(el, reason ? `Not accepted: ${reason}` : "");
  setShown(el, reason !== "");
}
