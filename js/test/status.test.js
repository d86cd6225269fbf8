// The status line.
import { test } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import { mountPanel } from "../view.js";
import { frame, setup, state } from "./helpers.js";
import { stateLabel, tokenCounts } from "../status.js";

test("while waiting for the first token the status says so, with the seconds waited", () => {
  let clock = 0;
  const dom = new JSDOM(`<div id="host"></div>`);
  const doc = dom.window.document;
  const view = mountPanel(doc.getElementById("host"), { send: () => {}, tick: false, now: () => clock });
  view.receive({ type: "snapshot", seq: 0, ...state({ status: { ...state().status, state: "waiting", waiting_since: 500, elapsed_ms: 12_700 } }) });
  const label = doc.querySelector(".pi-state-label");
  assert.equal(label.textContent, "waiting for the model (12s)");
  assert.equal(doc.querySelector(".pi-abort").disabled, false, "Abort works while waiting");
  view.receive(frame(1, [["s", ["status", "state"], "streaming"], ["s", ["status", "waiting_since"], null]]));
  assert.equal(label.textContent, "streaming");
});

test("token counts show the estimate while streaming and after a reply without usage", () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state() });
  const tokens = doc.querySelector(".pi-tokens");
  assert.equal(tokens.textContent, "10 in / 5 out");
  view.receive(frame(1, [["s", ["status", "est_in"], 812], ["s", ["status", "est_out"], 40]]));
  assert.equal(tokens.textContent, "~822 in / ~45 out (estimate)");
  assert.match(tokens.title, /4 characters a token/);
  // The reply was aborted before the provider reported usage: the estimate is kept.
  view.receive(frame(2, [
    ["s", ["status", "tokens_in"], 822], ["s", ["status", "tokens_out"], 45],
    ["s", ["status", "est_in"], 0], ["s", ["status", "est_out"], 0], ["s", ["status", "estimated"], true],
    ["s", ["status", "state"], "aborted"],
  ]));
  assert.equal(tokens.textContent, "~822 in / ~45 out (estimate)");
});

test("the state in words, and token counts with the estimate", () => {
  assert.equal(stateLabel({ state: "running-tools" }, 0), "running tools");
  assert.equal(stateLabel({ state: "waiting", waiting_since: 1000 }, 3999), "waiting for the model (2s)");
  assert.equal(stateLabel({ state: "waiting", waiting_since: null }, 3999), "waiting for the model");
  assert.equal(stateLabel({ state: "done" }, 0), "done");
  const base = { tokens_in: 10, tokens_out: 5 };
  assert.deepEqual(tokenCounts(base), { text: "10 in / 5 out", estimated: false });
  assert.deepEqual(tokenCounts({ ...base, est_out: 3 }), { text: "~10 in / ~8 out (estimate)", estimated: true });
  assert.equal(tokenCounts({ ...base, estimated: true }).estimated, true);
});
