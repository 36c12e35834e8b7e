// What the person was typing in a view of a turn, kept across a redraw. When the
// kernel announces a widget again (docs/widget-protocol.md: views that go away), the
// page draws a new view of it and disposes the old one, in either order. The view
// that goes hands its open questions' fields (a deny reason, edited arguments, an
// Other answer, the options ticked, an opened editor) and where the focus was to the
// view of the same widget that is drawn, now or within KEEP_FOR.

/** @typedef {{tag: string, type: string, value: string, checked: boolean}} Field */
/** @typedef {{question: string, fields: Field[], open: boolean[]}} CardDraft */
/** @typedef {{card: string, field: number, start: number | null, end: number | null}} Focus */
/** @typedef {{cards: Map<string, CardDraft>, focus: Focus | null, at: number}} Draft */
/** @typedef {(draft: Draft) => void} Adopt */

/** How long a draft waits for the new view of its widget, in ms. */
export const KEEP_FOR = 60_000;
/** Most widgets whose drafts wait at once. */
const MOST = 50;

/** @type {Map<string, Draft>} */
const waiting = new Map();
/** @type {Map<string, Set<Adopt>>} */
const live = new Map();

/**
 * The fields of an open question of a card, in document order.
 * @param {Element} card
 * @returns {(HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement)[]}
 */
function fieldsOf(card) {
  const question = card.querySelector(".mead-question:not(.mead-answered)");
  if (!question) return [];
  return /** @type {(HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement)[]} */ ([
    ...question.querySelectorAll("input, textarea, select"),
  ]).filter((f) => !(f instanceof HTMLInputElement && f.type === "hidden"));
}

/**
 * @param {Element} card
 * @returns {HTMLDetailsElement[]}
 */
function detailsOf(card) {
  const question = card.querySelector(".mead-question:not(.mead-answered)");
  return question ? [...question.querySelectorAll("details")] : [];
}

/**
 * @param {Element} root
 * @param {string} id
 * @returns {Element | null}
 */
function cardIn(root, id) {
  return [...root.querySelectorAll("[data-tool-call-id]")].find((el) => el.getAttribute("data-tool-call-id") === id) ?? null;
}

/**
 * What is typed in the open questions under `root`, and where the focus is.
 * @param {Element} root a view's element
 * @param {Map<string, string>} questions the open questions' ids, by card id
 * @returns {Draft | null} null when nothing is open
 */
export function capture(root, questions) {
  /** @type {Map<string, CardDraft>} */
  const cards = new Map();
  /** @type {Focus | null} */
  let focus = null;
  const active = root.ownerDocument.activeElement;
  for (const [id, question] of questions) {
    const card = cardIn(root, id);
    if (!card) continue;
    const fields = fieldsOf(card);
    cards.set(id, {
      question,
      fields: fields.map((f) => ({
        tag: f.tagName,
        type: f instanceof HTMLInputElement ? f.type : "",
        value: f.value,
        checked: f instanceof HTMLInputElement && f.checked,
      })),
      open: detailsOf(card).map((d) => d.open),
    });
    const at = fields.findIndex((f) => f === active);
    if (at >= 0) {
      const field = fields[at];
      const text = field instanceof HTMLTextAreaElement || (field instanceof HTMLInputElement && field.type === "text");
      focus = {
        card: id,
        field: at,
        start: text ? /** @type {HTMLInputElement} */ (field).selectionStart : null,
        end: text ? /** @type {HTMLInputElement} */ (field).selectionEnd : null,
      };
    }
  }
  return cards.size ? { cards, focus, at: Date.now() } : null;
}

/**
 * Put a draft into the view under `root`: each field of a question that is still
 * the one open (same id, same fields), and the focus if the page lost it.
 * @param {Element} root
 * @param {Map<string, string>} questions the open questions' ids, by card id
 * @param {Draft} draft
 * @returns {string | null} the id of the question whose field took the focus
 */
export function restore(root, questions, draft) {
  /** @type {string | null} */
  let focused = null;
  for (const [id, saved] of draft.cards) {
    if (questions.get(id) !== saved.question) continue;
    const card = cardIn(root, id);
    if (!card) continue;
    const fields = fieldsOf(card);
    const same =
      fields.length === saved.fields.length &&
      fields.every((f, i) => f.tagName === saved.fields[i].tag && (f instanceof HTMLInputElement ? f.type : "") === saved.fields[i].type);
    if (!same) continue;
    detailsOf(card).forEach((d, i) => {
      if (i < saved.open.length) d.open = saved.open[i];
    });
    fields.forEach((f, i) => {
      const was = saved.fields[i];
      if (f instanceof HTMLInputElement && (f.type === "checkbox" || f.type === "radio")) {
        if (f.checked === was.checked) return;
        f.checked = was.checked;
        f.dispatchEvent(new Event("change", { bubbles: true }));
      } else if (f.value !== was.value) {
        f.value = was.value;
        f.dispatchEvent(new Event(f instanceof HTMLSelectElement ? "change" : "input", { bubbles: true }));
      }
    });
    const focus = draft.focus;
    if (focus && focus.card === id && focusLost(root)) {
      const field = fields[focus.field];
      if (field) {
        field.focus();
        if (focus.start !== null && !(field instanceof HTMLSelectElement)) {
          field.setSelectionRange(focus.start, focus.end ?? focus.start);
        }
        focused = saved.question;
      }
    }
  }
  return focused;
}

/**
 * Whether the focus may go back: nothing has it (the element that had it was
 * removed), or the new view has it (it focused its question when drawn).
 * @param {Element} root
 */
function focusLost(root) {
  const active = root.ownerDocument.activeElement;
  return active === null || active === root.ownerDocument.body || !active.isConnected || root.contains(active);
}

/**
 * A view of the widget `key` is drawn: it adopts what a view of the same widget
 * left, now (returned) or when one goes later (`adopt`). Call the returned
 * `leave` when the view goes.
 * @param {string} key the widget's key, the same for every view of it on the page
 * @param {Adopt} adopt
 * @returns {{left: Draft | null, leave: () => void}}
 */
export function join(key, adopt) {
  let views = live.get(key);
  if (!views) live.set(key, (views = new Set()));
  views.add(adopt);
  const left = waiting.get(key) ?? null;
  waiting.delete(key);
  const fresh = left !== null && Date.now() - left.at <= KEEP_FOR ? left : null;
  return {
    left: fresh,
    leave: () => {
      views.delete(adopt);
      if (!views.size) live.delete(key);
    },
  };
}

/**
 * A view of the widget `key` goes, leaving `draft`: a view of the same widget drawn
 * already takes it, or the next one drawn within KEEP_FOR.
 * @param {string} key
 * @param {Draft | null} draft
 */
export function leave(key, draft) {
  if (draft === null) return;
  const views = live.get(key);
  if (views?.size) {
    for (const adopt of views) adopt(draft);
    return;
  }
  waiting.delete(key);
  waiting.set(key, draft);
  while (waiting.size > MOST) {
    const oldest = waiting.keys().next().value;
    if (oldest === undefined) break;
    waiting.delete(oldest);
  }
}
