// What the view tests share: a panel mounted in jsdom that records what it sends, a state tree
// with the contract's shape, and a delta frame.
import { JSDOM } from "jsdom";
import { mountPanel } from "../view.js";

export function setup(options = {}) {
  const dom = new JSDOM(`<div id="host"></div>`);
  const doc = dom.window.document;
  const sent = [];
  const view = mountPanel(doc.getElementById("host"), { send: (m) => sent.push(m), tick: false, ...options });
  return { dom, doc, sent, view };
}

export function state(overrides = {}) {
  return {
    v: 1,
    status: {
      state: "streaming", model: "faux/faux-1", turn: 1, tokens_in: 10, tokens_out: 5,
      cost: 0.0012, elapsed_ms: 1500, error: null, note: null,
    },
    messages: [{ role: "user", html: "<p>Hi</p>", images: [] }],
    tools: {},
    lifecycle: [
      { id: 0, parent: null, kind: "run", label: "Agent Run", detail: "", start: 0, end: null, updates: 0 },
      { id: 1, parent: 0, kind: "turn", label: "Turn 1", detail: "", start: 1, end: null, updates: 0 },
    ],
    queue: [],
    step: { enabled: false, held: null, count: 0 },
    approvals: [],
    ...overrides,
  };
}

export const frame = (seq, ops) => ({ type: "deltas", seq, ops });

export const textBlock = (kind = "text") => ({ type: kind, html: [], tail: "", raw: null });
export const TEXT = ["messages", 1, "blocks", 1];
