// Tool cards.
import { test } from "node:test";
import assert from "node:assert/strict";
import { setup, state } from "./helpers.js";
import { diffLine } from "../cards.js";

test("tool cards: awaiting approval, and a malformed call that did not run", () => {
  const { doc, view } = setup();
  const base = { args_text: "{}", start: 0, duration_ms: null, result_text: "", images: [], is_error: false, diff: null, not_run: null };
  view.receive({
    type: "snapshot", seq: 0,
    ...state({
      messages: [{ role: "assistant", blocks: [{ type: "toolCall", id: "a", name: "run_python" }, { type: "toolCall", id: "b", name: "nope" }], stop_reason: "toolUse", error: null }],
      tools: {
        a: { ...base, id: "a", name: "run_python", status: "awaiting-approval" },
        b: { ...base, id: "b", name: "nope", status: "rejected", is_error: true, result_text: "Tool nope not found", not_run: "no tool of that name" },
      },
    }),
  });
  const card = (id) => doc.querySelector(`.pi-tool-card[data-tool-call-id="${id}"]`);
  assert.equal(card("a").querySelector(".pi-tool-status").textContent, "awaiting approval");
  assert.equal(card("b").querySelector(".pi-tool-status").textContent, "malformed call: not run");
  assert.equal(card("b").querySelector(".pi-tool-not-run").textContent,
    "The model's call was malformed (no tool of that name): the tool did not run.");
});

test("the namespace diff in one line", () => {
  assert.equal(diffLine({ created: ["a", "b"], changed: [], deleted: ["c"] }), "namespace — created: a, b; deleted: c");
  assert.equal(diffLine({ created: [], changed: [], deleted: [] }), "namespace unchanged");
  assert.equal(
    diffLine({ created: ["x"], changed: [], deleted: [], imported: ["np", "plt"] }),
    "namespace — created: x; imported: np, plt",
  );
});

test("a call whose reply the server rejected: not run, no result, the error once", () => {
  const { doc, view } = setup();
  const error = "Failed to parse input at pos 12: ```\n<tool_call> (server_error)";
  view.receive({
    type: "snapshot", seq: 0,
    ...state({
      messages: [{ role: "assistant", blocks: [{ type: "toolCall", id: "c", name: "run_python" }], stop_reason: "error", error }],
      tools: {
        c: { id: "c", name: "run_python", label: "run_python", args_text: '{"code": "print(1)"}', status: "reply-failed", start: null, duration_ms: null, result_text: "", images: [], is_error: false, diff: null, not_run: "the server could not parse the model's tool call" },
      },
    }),
  });
  const card = doc.querySelector('.pi-tool-card[data-tool-call-id="c"]');
  assert.equal(card.getAttribute("data-status"), "reply-failed");
  assert.equal(card.querySelector(".pi-tool-status").textContent, "not run");
  assert.equal(card.querySelector(".pi-tool-not-run").textContent,
    "the server could not parse the model's tool call: nothing ran.");
  assert.equal(card.querySelector(".pi-tool-result"), null);
  const transcript = doc.querySelector(".pi-transcript").textContent;
  assert.equal(transcript.split("Failed to parse input").length - 1, 1);
});

test("tool cards: what the approval did, in one line (static.py writes the same)", () => {
  const { doc, view } = setup();
  const base = { args_text: "{}", start: 0, duration_ms: 1, result_text: "", images: [], is_error: false, diff: null, not_run: null };
  view.receive({
    type: "snapshot", seq: 0,
    ...state({
      messages: [{ role: "assistant", blocks: [{ type: "toolCall", id: "a", name: "read_file" }, { type: "toolCall", id: "b", name: "run_python" }, { type: "toolCall", id: "c", name: "ping" }], stop_reason: "toolUse", error: null }],
      tools: {
        a: { ...base, id: "a", name: "read_file", status: "done", approval: "allowed (always allow read_file)" },
        b: { ...base, id: "b", name: "run_python", status: "error", is_error: true, result_text: "denied and stopped by the user", approval: "denied and stopped by the user" },
        c: { ...base, id: "c", name: "ping", status: "done", approval: null },
      },
    }),
  });
  const line = (id) => doc.querySelector(`.pi-tool-card[data-tool-call-id="${id}"] .pi-tool-approval`);
  assert.equal(line("a").textContent, "Approval: allowed (always allow read_file)");
  assert.equal(line("b").textContent, "Approval: denied and stopped by the user");
  assert.equal(line("c"), null);
});
