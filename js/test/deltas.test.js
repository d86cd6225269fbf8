import { test } from "node:test";
import assert from "node:assert/strict";
import { applyOps, Receiver } from "../deltas.js";

const base = () => ({
  status: { state: "idle", turn: 0 },
  messages: [],
  tools: {},
});

test("set, append and push ops", () => {
  const state = base();
  applyOps(state, [
    ["p", ["messages"], { role: "assistant", blocks: [] }],
    ["p", ["messages", 0, "blocks"], { type: "text", text: "" }],
    ["a", ["messages", 0, "blocks", 0, "text"], "Hel"],
    ["a", ["messages", 0, "blocks", 0, "text"], "lo"],
    ["s", ["tools", "t1"], { status: "pending", args_text: "" }],
    ["a", ["tools", "t1", "args_text"], '{"a":'],
    ["s", ["status", "state"], "streaming"],
  ]);
  assert.equal(state.messages[0].blocks[0].text, "Hello");
  assert.equal(state.tools.t1.args_text, '{"a":');
  assert.equal(state.status.state, "streaming");
});

test("a splice keeps the first code units and appends", () => {
  const state = { t: "<p>Hello 😀 wor</p>" };
  applyOps(state, [["t", ["t"], ["<p>Hello 😀 wor".length, "ld</p>"]]]);
  assert.equal(state.t, "<p>Hello 😀 world</p>");
});

test("a move takes the head of a text block's tail onto its html list", () => {
  const state = { b: { html: ["<h1>a</h1>"], tail: "<p>😀 done</p><p>next", raw: null } };
  applyOps(state, [["m", ["b"], "<p>😀 done</p>".length]]);
  assert.deepEqual(state.b, { html: ["<h1>a</h1>", "<p>😀 done</p>"], tail: "<p>next", raw: null });
});

test("bad ops throw instead of corrupting the state", () => {
  assert.throws(() => applyOps(base(), [["x", ["status"], 1]]));
  assert.throws(() => applyOps(base(), [["s", [], 1]]));
  assert.throws(() => applyOps(base(), [["a", ["nope", "deeper", "x"], "t"]]));
});

test("the receiver waits for a snapshot, then applies frames in order", () => {
  const r = new Receiver();
  assert.deepEqual(r.receive({ type: "deltas", seq: 1, ops: [] }), { changed: null, resync: false });
  r.receive({ type: "snapshot", seq: 3, ...base() });
  assert.equal(r.seq, 3);
  const first = r.receive({ type: "deltas", seq: 4, ops: [["s", ["status", "turn"], 1]] });
  assert.deepEqual(first.changed, [["status", "turn"]]);
  assert.equal(r.state.status.turn, 1);
  assert.equal(r.state.type, undefined, "snapshot metadata is not state");
  // A duplicate (or a frame older than the snapshot) is ignored.
  assert.equal(r.receive({ type: "deltas", seq: 4, ops: [["s", ["status", "turn"], 9]] }).changed, null);
  assert.equal(r.state.status.turn, 1);
});

test("a gap asks for a resync and drops frames until the snapshot", () => {
  const r = new Receiver();
  r.receive({ type: "snapshot", seq: 0, ...base() });
  r.receive({ type: "deltas", seq: 1, ops: [["s", ["status", "turn"], 1]] });
  const gap = r.receive({ type: "deltas", seq: 3, ops: [["s", ["status", "turn"], 3]] });
  assert.equal(gap.resync, true);
  assert.equal(r.gaps, 1);
  assert.equal(r.receive({ type: "deltas", seq: 4, ops: [["s", ["status", "turn"], 4]] }).changed, null);
  assert.equal(r.state.status.turn, 1);
  r.receive({ type: "snapshot", seq: 4, ...base(), status: { state: "streaming", turn: 4 } });
  r.receive({ type: "deltas", seq: 5, ops: [["s", ["status", "turn"], 5]] });
  assert.equal(r.state.status.turn, 5);
});

test("the snapshot is copied: later frames never alter the message object", () => {
  const snapshot = { type: "snapshot", seq: 0, ...base() };
  const r = new Receiver();
  r.receive(snapshot);
  r.receive({ type: "deltas", seq: 1, ops: [["p", ["messages"], { role: "user" }]] });
  assert.equal(snapshot.messages.length, 0);
});
