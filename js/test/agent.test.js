import { afterEach, describe, expect, it, vi } from "vitest";
import { agentText, ranByAgent, ranByAgentText, readAgent, readUsage, usageText } from "../src/agent.js";
import { readState } from "../src/state.js";
import { turnMarkdown } from "../src/transcript.js";
import { FakeModel, Host, buttonsNamed, card, nextFrame } from "./fake-model.js";
import AGENT_TURN from "../../tests/shared/copy-turn-agent.json";
import USAGE_TEXT from "../../tests/shared/usage-text.json";
import { PAYLOADS, expectInert, pwned } from "./payloads.js";

let host;

function setup(state = {}) {
  const model = new FakeModel(state);
  host = new Host(model);
  return model;
}

afterEach(() => {
  host?.dispose();
  host = undefined;
  document.body.replaceChildren();
  delete document.documentElement.dataset.meadPwned;
});

describe("the agent's description", () => {
  it("keeps only non-empty strings of the known fields, each bounded", () => {
    expect(readAgent(null)).toEqual({});
    expect(readAgent(["claude"])).toEqual({});
    expect(readAgent({ agent: "claude", mode: 3, sandbox: "", settings: null, extra: "x", model: "m".repeat(500) })).toEqual({
      agent: "claude",
      model: "m".repeat(200),
    });
  });

  it("says the agent, its mode, its sandbox and its settings in one line", () => {
    expect(agentText({})).toBe("");
    expect(agentText({ agent: "codex", mode: "untrusted", sandbox: "workspace-write", settings: "project" })).toBe(
      "codex · mode untrusted · sandbox workspace-write · its user and project settings",
    );
    expect(agentText({ mode: "yolo" })).toBe("the agent · mode yolo");
    expect(agentText(AGENT_TURN.state.agent)).toBe(AGENT_TURN.header);
  });

  it("says the agent's usage as the static transcript does, an unknown figure as ?", () => {
    for (const { usage, text } of USAGE_TEXT.cases) expect(usageText(usage)).toBe(text);
    expect(readUsage({ used: null, size: 200000 })).toEqual({ used: null, size: 200000, cost: null, currency: null });
    expect(readAgent({ agent: "codex", usage: { used: "5" } })).toEqual({ agent: "codex" });
    const agent = readAgent({ agent: "codex", model: "gpt-5.5", usage: { used: 12300, size: 200000, cost: 0.04, currency: "USD" } });
    expect(agentText(agent)).toBe("codex · model gpt-5.5 · 12.3k / 200k tokens · $0.04");
  });

  it("counts the calls the agent ran under its own rules from the cards", () => {
    const calls = {
      a: card({ tool_call_id: "a", decided_by: "agent" }),
      b: card({ tool_call_id: "b" }),
      c: card({ tool_call_id: "c", decided_by: "agent" }),
      d: "not a card",
    };
    expect(ranByAgent(calls)).toBe(2);
    expect(ranByAgentText(0)).toBe("");
    expect(ranByAgentText(1)).toBe("1 call ran under the agent's own rules, without asking anyone here");
    expect(ranByAgentText(2)).toMatch(/^2 calls ran/);
  });

  it("is in the Markdown the Copy button gives, as the static transcript writes it", () => {
    const model = new FakeModel(AGENT_TURN.state);
    const paragraphs = turnMarkdown(readState(model)).split("\n\n");
    expect(paragraphs[1]).toBe(AGENT_TURN.agent_markdown);
    expect(paragraphs.at(-1)).toBe(`${AGENT_TURN.ran_markdown}\n`);
    const unsaid = new FakeModel({ ...AGENT_TURN.state, agent: {}, calls: {}, order: [] });
    expect(turnMarkdown(readState(unsaid))).not.toMatch(/Agent:|own rules/);
  });
});

describe("the turn's header", () => {
  it("names the agent and its rules, and the footer counts the calls it ran unasked", async () => {
    const model = setup({ prompt: "go", status: "running" });
    const el = host.render();
    const line = el.querySelector(".mead-agent");
    const ran = el.querySelector(".mead-agent-ran");
    expect(line.hidden).toBe(true);
    expect(ran.hidden).toBe(true);
    model.set("agent", { agent: "claude", mode: "default", settings: "user" });
    await nextFrame();
    expect(line.hidden).toBe(false);
    expect(line.textContent).toBe("Agent: claude · mode default · its user settings only");
    expect(el.querySelector(".mead-turn-header").contains(line)).toBe(true);
    model.kernelSends({ type: "call", card: card({ tool_call_id: "x", status: "in_progress", decided_by: "agent" }) });
    await nextFrame();
    expect(ran.hidden).toBe(false);
    expect(ran.textContent).toBe("1 call ran under the agent's own rules, without asking anyone here.");
    model.set("agent", { agent: "claude", mode: "acceptEdits", settings: "user" });
    await nextFrame();
    expect(line.textContent).toBe("Agent: claude · mode acceptEdits · its user settings only");
  });

  it("shows the agent's words as text, never as markup", async () => {
    const model = setup({ status: "running" });
    const el = host.render();
    for (const payload of PAYLOADS) {
      model.set("agent", { agent: payload, mode: payload, model: payload });
      await nextFrame();
      expect(el.querySelector(".mead-agent").textContent).toContain(payload.slice(0, 50));
      expectInert(el);
    }
    expect(pwned()).toBeUndefined();
  });

  it("copies the agent line with the turn", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    vi.stubGlobal("navigator", { clipboard: { writeText } });
    try {
      setup(AGENT_TURN.state);
      const el = host.render();
      buttonsNamed(el, "Copy the turn as Markdown")[0].click();
      await vi.waitFor(() => expect(writeText).toHaveBeenCalled());
      expect(writeText.mock.calls[0][0]).toContain(AGENT_TURN.agent_markdown);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
