import { test } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import widget from "../panel.js";

// A stand-in for anywidget's model: the same on/off/get/send surface.
class FakeModel {
  constructor(state) {
    this.values = { state };
    this.handlers = new Map();
    this.sent = [];
  }
  get(name) { return this.values[name]; }
  on(name, fn) { this.handlers.set(name, [...(this.handlers.get(name) || []), fn]); }
  off(name, fn) { this.handlers.set(name, (this.handlers.get(name) || []).filter((f) => f !== fn)); }
  send(message) { this.sent.push(message); }
  emit(name, ...args) { for (const fn of this.handlers.get(name) || []) fn(...args); }
  set(name, value) { this.values[name] = value; this.emit(`change:${name}`); }
}

const status = (state, turn = 1) => ({ state, model: "m/x", turn, tokens_in: 0, tokens_out: 0, cost: 0, elapsed_ms: 0, error: null, note: null });
const full = (state, seq, extra = {}) => ({
  v: 1, seq, status: status(state), messages: [], tools: {}, lifecycle: [], queue: [],
  step: { enabled: false, held: null, count: 0 }, approvals: [], ...extra,
});

test("render says hello after listening, then follows snapshot and deltas", () => {
  const dom = new JSDOM(`<div id="el"></div>`);
  const el = dom.window.document.getElementById("el");
  const model = new FakeModel({});
  const cleanup = widget.render({ model, el });
  assert.deepEqual(model.sent, [{ type: "hello", seq: -1 }]);
  assert.equal(model.handlers.get("msg:custom").length, 1, "listening before the hello");
  model.emit("msg:custom", { type: "snapshot", ...full("streaming", 2) });
  model.emit("msg:custom", { type: "deltas", seq: 3, ops: [["p", ["messages"], { role: "user", html: "<p>yo</p>", images: [] }]] });
  assert.equal(el.querySelector('.pi-message[data-role="user"]').textContent, "useryo");
  cleanup();
  assert.equal(model.handlers.get("msg:custom").length, 0);
  assert.equal(el.querySelector(".pi-panel"), null);
});

test("a saved notebook (no kernel) shows the synced final state", () => {
  const dom = new JSDOM(`<div id="el"></div>`);
  const el = dom.window.document.getElementById("el");
  const model = new FakeModel(full("done", 9, { messages: [{ role: "user", html: "<p>kept</p>", images: [] }] }));
  const cleanup = widget.render({ model, el });
  assert.deepEqual(model.sent, [{ type: "hello", seq: 9 }]);
  assert.equal(el.querySelector(".pi-panel").getAttribute("data-state"), "done");
  assert.match(el.querySelector(".pi-transcript").textContent, /kept/);
  cleanup();
});

test("the synced state is adopted only when at least as new as the view", () => {
  const dom = new JSDOM(`<div id="el"></div>`);
  const el = dom.window.document.getElementById("el");
  const model = new FakeModel({});
  const cleanup = widget.render({ model, el });
  model.emit("msg:custom", { type: "snapshot", ...full("streaming", 5) });
  model.set("state", full("streaming", 3, { status: status("streaming", 99) }));
  assert.equal(el.querySelector(".pi-turn").textContent, "turn 1");
  model.set("state", full("done", 5, { status: status("done", 2) }));
  assert.equal(el.querySelector(".pi-turn").textContent, "turn 2");
  cleanup();
});
