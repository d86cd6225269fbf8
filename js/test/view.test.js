// The whole view: its DOM contract, resyncs, order, frames against a fresh render, safety.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PAYLOADS } from "./payloads.js";
import { frame, setup, state } from "./helpers.js";

test("the DOM contract: status line, transcript, controls", () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state() });
  const root = doc.querySelector(".pi-panel");
  assert.equal(root.getAttribute("data-state"), "streaming");
  assert.equal(doc.querySelector(".pi-status .pi-model").textContent, "faux/faux-1");
  assert.equal(doc.querySelector(".pi-turn").textContent, "turn 1");
  assert.equal(doc.querySelector(".pi-tokens").textContent, "10 in / 5 out");
  assert.equal(doc.querySelector(".pi-cost").textContent, "$0.0012");
  assert.equal(doc.querySelector(".pi-elapsed").textContent, "1.5s");
  assert.equal(doc.querySelector('.pi-message[data-role="user"] .pi-text').textContent, "Hi");
  for (const sel of ["textarea.pi-input", "button.pi-steer", "button.pi-followup", "button.pi-abort", ".pi-queue", "button.pi-clear-queue", ".pi-lifecycle"]) {
    assert.ok(doc.querySelector(sel), sel);
  }
  assert.equal(doc.querySelectorAll('.pi-lifecycle .pi-node[data-kind="run"] .pi-node[data-kind="turn"]').length, 1);
  assert.equal(doc.querySelector(".pi-step").hidden, true, "step controls only in step mode");
});

test("a lost frame makes the view ask for a resync, and the snapshot repairs it", () => {
  const { doc, sent, view } = setup();
  view.receive({ type: "snapshot", seq: 5, ...state() });
  view.receive(frame(7, [["s", ["status", "turn"], 7]]));
  assert.deepEqual(sent, [{ type: "resync" }]);
  assert.equal(doc.querySelector(".pi-turn").textContent, "turn 1");
  view.receive({ type: "snapshot", seq: 7, ...state({ status: { ...state().status, turn: 7 } }) });
  assert.equal(doc.querySelector(".pi-turn").textContent, "turn 7");
});

test("model text, tool arguments and tool results cannot inject markup", () => {
  const { doc, view } = setup();
  const tools = {};
  const blocks = [];
  PAYLOADS.forEach((payload, i) => {
    // Block HTML comes from the kernel's renderer (escaped there); everything else is text.
    const escaped = payload.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
    blocks.push({ type: "text", html: [`<p>${escaped}</p>`], tail: "", raw: null }, { type: "toolCall", id: `t${i}"><img src=x onerror=alert(1)>`, name: payload });
    tools[`t${i}"><img src=x onerror=alert(1)>`] = {
      id: `t${i}`, name: payload, args_text: payload, status: "done", start: 0, duration_ms: 1,
      result_text: payload, images: [{ mime: "image/svg+xml", data: "PHN2Zz4=" }, { mime: "image/png", data: '"><script>' }],
      is_error: false, diff: { created: [payload], changed: [], deleted: [] },
    };
  });
  view.receive({
    type: "snapshot", seq: 0,
    ...state({
      messages: [
        { role: "user", html: "<p>payloads</p>", images: [] },
        { role: "assistant", blocks, stop_reason: "error", error: PAYLOADS[1] },
        { role: "toolResult", tool_call_id: "t0", tool_name: PAYLOADS[0], text: PAYLOADS.join("\n"), images: [], is_error: true },
      ],
      tools,
      queue: [{ kind: "steer", text: PAYLOADS[1] }],
      approvals: [{ tool_call_id: PAYLOADS[2], tool_name: PAYLOADS[0], summary: PAYLOADS[1], args_text: PAYLOADS[3] }],
    }),
  });
  const root = doc.querySelector(".pi-panel");
  assert.equal(root.querySelectorAll("script, iframe, style, svg").length, 0);
  for (const node of root.querySelectorAll("*")) {
    for (const attr of node.attributes) {
      assert.ok(!/^on/i.test(attr.name), `${node.tagName} has ${attr.name}`);
      if (attr.name === "href") assert.match(attr.value, /^(https?:\/\/|mailto:)/i);
      if (attr.name === "src") assert.match(attr.value, /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*$/);
    }
  }
  assert.equal(root.querySelectorAll("img").length, 0, "the svg and the bad png data are refused");
  assert.equal(doc.querySelectorAll(".pi-tool-card").length, PAYLOADS.length);
});

test("messages pushed in one frame keep their order even when only a later one is updated", () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state() });
  const assistant = { role: "assistant", blocks: [], stop_reason: null, error: null };
  view.receive(frame(1, [
    ["p", ["messages"], { role: "toolResult", tool_call_id: "a", tool_name: "add", text: "sum=3", images: [], is_error: false }],
    ["p", ["messages"], assistant],
    ["p", ["messages", 2, "blocks"], { type: "text", html: [], tail: "", raw: null }],
    ["s", ["messages", 2, "blocks", 0, "tail"], "<p>One</p>"],
    ["s", ["messages", 2, "stop_reason"], "stop"],
  ]));
  view.receive(frame(2, [["t", ["messages", 2, "blocks", 0, "tail"], [6, " approved.</p>"]]]));
  const nodes = [...doc.querySelectorAll(".pi-transcript > .pi-message")];
  assert.deepEqual(nodes.map((n) => n.getAttribute("data-index")), ["0", "1", "2"]);
  assert.deepEqual(nodes.map((n) => n.getAttribute("data-role")), ["user", "toolResult", "assistant"]);
  assert.equal(nodes[2].querySelector(".pi-text").textContent, "One approved.");
});

test("after any frame sequence the DOM equals a fresh render of the same state", () => {
  // Replays a realistic op stream frame by frame and compares against a view built from the
  // final state in one go (the snapshot path).
  const live = setup();
  const fresh = setup();
  live.view.receive({ type: "snapshot", seq: 0, ...state() });
  const ops = [
    ["p", ["messages"], { role: "assistant", blocks: [], stop_reason: null, error: null }],
    ["p", ["messages", 1, "blocks"], { type: "toolCall", id: "c1", name: "add" }],
    ["s", ["tools", "c1"], { id: "c1", name: "add", args_text: "", status: "pending", start: null, duration_ms: null, result_text: "", images: [], is_error: false, diff: null }],
    ["a", ["tools", "c1", "args_text"], "{\"a\": 1}"],
    ["s", ["messages", 1, "stop_reason"], "toolUse"],
    ["s", ["tools", "c1", "status"], "running"],
    ["s", ["tools", "c1", "status"], "done"],
    ["s", ["tools", "c1", "result_text"], "1"],
    ["p", ["messages"], { role: "toolResult", tool_call_id: "c1", tool_name: "add", text: "1", images: [], is_error: false }],
    ["p", ["messages"], { role: "assistant", blocks: [], stop_reason: null, error: null }],
    ["p", ["messages", 3, "blocks"], { type: "text", html: [], tail: "", raw: null }],
    ["s", ["messages", 3, "blocks", 0, "tail"], "<p>Done</p>"],
    ["p", ["messages", 3, "blocks", 0, "html"], "<p>Done</p>"],
    ["s", ["messages", 3, "blocks", 0, "tail"], "<p>long</p>"],
    ["s", ["messages", 3, "blocks", 0, "raw"], "long **raw"],
    ["s", ["messages", 3, "blocks", 0, "tail"], ""],
    ["a", ["messages", 3, "blocks", 0, "raw"], " text"],
    ["a", ["messages", 3, "blocks", 0, "raw"], "**"],
    ["p", ["messages", 3, "blocks", 0, "html"], "<p>long <strong>raw text</strong></p>"],
    ["s", ["messages", 3, "blocks", 0, "raw"], null],
    ["s", ["messages", 3, "blocks", 0, "tail"], "<p>end</p>"],
    ["s", ["messages", 3, "blocks", 0, "html"], ["<p>Done</p>", "<p>long <strong>raw text</strong></p>", "<p>end</p>"]],
    ["s", ["messages", 3, "blocks", 0, "tail"], ""],
    ["s", ["messages", 3, "stop_reason"], "stop"],
    ["s", ["status", "state"], "done"],
  ];
  for (const size of [1, 2, 3, 5, 15]) {
    const a = setup();
    a.view.receive({ type: "snapshot", seq: 0, ...state() });
    let seq = 0;
    for (let i = 0; i < ops.length; i += size) {
      a.view.receive(frame(++seq, structuredClone(ops.slice(i, i + size)))); // as if from JSON
    }
    fresh.view.adopt(a.view.receiver.state);
    assert.equal(
      a.doc.querySelector(".pi-transcript").innerHTML,
      fresh.doc.querySelector(".pi-transcript").innerHTML,
      `frames of ${size} ops`,
    );
    a.view.destroy();
  }
  live.view.destroy();
});

test("widget state saved by an older version (raw text blocks) still shows its text", () => {
  const { doc, view } = setup();
  view.adopt(state({
    messages: [
      { role: "user", text: "<b>old</b> prompt", images: [] },
      { role: "assistant", blocks: [{ type: "text", text: "old **answer**" }], stop_reason: "stop", error: null },
    ],
  }));
  assert.equal(doc.querySelector('.pi-message[data-role="user"] .pi-text').textContent, "<b>old</b> prompt");
  assert.equal(doc.querySelector('.pi-message[data-role="assistant"] .pi-text').textContent, "old **answer**");
  assert.equal(doc.querySelector(".pi-panel b"), null);
});
