// The front end against the panel contract (docs/panel-protocol.md). The fixture is generated
// from the kernel's TypedDicts (pi_notebook/notebook/panel/contract.py) by
// tests/panel/contract_fixture.py, with one real run's snapshot, delta frames and final state.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { JSDOM } from "jsdom";
import { applyOp, applyOps, Receiver } from "../deltas.js";
import { mountPanel } from "../view.js";

const here = new URL(".", import.meta.url);
const text = readFileSync(new URL("../../tests/panel/fixtures/panel_contract.json", here), "utf8");
// A fresh copy per test: applied ops hand their values to the state, which later ops change.
const load = () => JSON.parse(text);
const fixture = load();
// Every module of the front end (js/*.js; the tests are in js/test/).
const sources = () =>
  readdirSync(new URL("..", here))
    .filter((name) => name.endsWith(".js"))
    .map((name) => readFileSync(new URL(`../${name}`, here), "utf8"))
    .join("\n");

test("the real run's frames, applied to its snapshot, rebuild the kernel's final state", () => {
  const { snapshot, frames, final } = load().example;
  const receiver = new Receiver();
  assert.equal(receiver.receive(snapshot).changed, "all");
  for (const frame of frames) assert.equal(receiver.receive(frame).resync, false);
  assert.equal(receiver.seq, frames.length);
  assert.deepEqual(receiver.state, final);
});

test("the ops alone rebuild it from the initial state", () => {
  const { initial_state: state, example } = load();
  applyOps(state, example.frames.flatMap((frame) => frame.ops));
  assert.deepEqual(state, example.final);
});

test("every op kind of the contract is applied", () => {
  const sample = {
    s: ["s", ["x"], 1],
    a: ["a", ["t"], "b"],
    p: ["p", ["l"], 2],
    t: ["t", ["t"], [1, "z"]],
    m: ["m", ["block"], 1],
  };
  for (const kind of fixture.op_kinds) {
    assert.ok(sample[kind], `no sample for op kind ${kind}`);
    const state = { x: 0, t: "ab", l: [], block: { html: [], tail: "<p>", raw: null } };
    assert.doesNotThrow(() => applyOp(state, sample[kind]), kind);
  }
  assert.deepEqual(Object.keys(sample).sort(), [...fixture.op_kinds].sort());
});

test("every message type the view sends or reads is in the contract", () => {
  const code = sources();
  const sent = /send\(\{ type: "([a-z_]+)"|submit\("([a-z_]+)"\)/g;
  const types = new Set([...code.matchAll(sent)].map((m) => m[1] ?? m[2]));
  const compared = new Set([...code.matchAll(/message\.type === "([a-z_]+)"/g)].map((m) => m[1]));
  assert.ok(types.size >= 8, "the view sends its messages as send({ type: ... })");
  for (const type of types) assert.ok(fixture.view_to_kernel.includes(type), `unknown: ${type}`);
  for (const type of compared) {
    assert.ok(fixture.kernel_to_view.includes(type), `unknown: ${type}`);
  }
});

test("the view renders the real run's final state: every message and tool card", () => {
  const dom = new JSDOM(`<div id="host"></div>`);
  const doc = dom.window.document;
  const view = mountPanel(doc.getElementById("host"), { send: () => {}, tick: false });
  const { snapshot, frames, final } = load().example;
  view.receive(snapshot);
  for (const frame of frames) view.receive(frame);
  for (const id of Object.keys(final.tools)) {
    assert.ok(doc.querySelector(`[data-tool-call-id="${id}"]`), `tool card ${id}`);
  }
  assert.equal(view.receiver.state.status.state, final.status.state);
  view.destroy();
});
