// Script-injection payloads and the checks that a rendered subtree stays inert.

import { expect } from "vitest";

export const PAYLOADS = [
  `<img src=x onerror="document.documentElement.dataset.meadPwned='img'">`,
  `<script>document.documentElement.dataset.meadPwned='script'</script>`,
  `<svg onload="document.documentElement.dataset.meadPwned='svg'"><circle r="1"/></svg>`,
  `<iframe src="javascript:parent.document.documentElement.dataset.meadPwned='iframe'"></iframe>`,
  `<a href="javascript:document.documentElement.dataset.meadPwned='href'">click</a>`,
  `[click](javascript:document.documentElement.dataset.meadPwned='md-link')`,
  `[click](JaVaScRiPt:document.documentElement.dataset.meadPwned='md-link-case')`,
  `![x](javascript:document.documentElement.dataset.meadPwned='md-image')`,
  `<div onclick="document.documentElement.dataset.meadPwned='div'" onmouseover="document.documentElement.dataset.meadPwned='div'">hover</div>`,
  `<details open ontoggle="document.documentElement.dataset.meadPwned='toggle'">x</details>`,
  `<body onload="document.documentElement.dataset.meadPwned='body'">`,
  `<style>*{background:url("javascript:document.documentElement.dataset.meadPwned='css'")}</style>`,
  `<object data="javascript:document.documentElement.dataset.meadPwned='object'"></object>`,
  `<form action="javascript:document.documentElement.dataset.meadPwned='form'"><button>go</button></form>`,
  `<math><mtext><table><mglyph><style><img src=x onerror="document.documentElement.dataset.meadPwned='mxss'">`,
];

/**
 * Invisible and bidirectional characters that make text read otherwise than it
 * runs (Trojan Source), and zero-width characters that make two names look alike.
 */
export const INVISIBLE_PAYLOADS = [
  "s = '''\u2067''' ;return",
  'access_level = "user\u202e \u2066// Check if admin\u2069 \u2066"',
  "rm\u200b -rf ~",
  "read_file\u2060",
  `<img src=x onerror="document.documentElement.dataset.meadPwned='bidi'">\u202e`,
  "a\u2028b\u2029c\ufeff\u061c\u200e",
];

/** The flag an executed payload sets (inline handlers run in the page's own scope). */
export function pwned() {
  return document.documentElement.dataset.meadPwned;
}

const EVENTS = ["error", "load", "click", "mouseover", "focus", "toggle", "submit"];

/** Fire every event an inline handler could listen to, on every element. */
export function poke(root) {
  for (const el of [root, ...root.querySelectorAll("*")]) {
    for (const type of EVENTS) el.dispatchEvent(new Event(type, { bubbles: false }));
  }
}

/** Assert a rendered subtree holds nothing that could run. */
export function expectInert(root) {
  expect(root.querySelectorAll("script, iframe, object, embed, svg, math, style, form, img")).toHaveLength(0);
  for (const el of root.querySelectorAll("*")) {
    for (const attr of el.attributes) {
      expect(attr.name.startsWith("on"), `${el.tagName} has ${attr.name}`).toBe(false);
      expect(attr.value.replace(/\s/g, "").toLowerCase()).not.toContain("javascript:");
    }
  }
  poke(root);
  for (const a of root.querySelectorAll("a")) a.click();
  expect(pwned()).toBeUndefined();
}
