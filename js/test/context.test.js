// The context view (what the model is sent).
import { test } from "node:test";
import assert from "node:assert/strict";
import { frame, setup, state } from "./helpers.js";

const CONTEXT = {
  turn: 2, model: "faux/faux-1", held: true, tokens: 52, message_count: 3, skipped: 0,
  system: { text: "Be terse.", tokens: 3 },
  messages: [
    { n: 1, role: "user", label: "user", text: "What is 2 + 3?", tokens: 4 },
    { n: 2, role: "assistant", label: "assistant", text: '→ add({"a": 2, "b": 3})', tokens: 6 },
    { n: 3, role: "toolResult", label: "toolResult add", text: "5", tokens: 1 },
  ],
  tools: [{ name: "add", description: "Add two numbers.", tokens: 38 }],
  options: { max_tokens: 256 },
  json: null,
};

test("the context view lists what the model is sent, collapsed, raw JSON on demand", () => {
  const { doc, sent, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state() });
  const box = doc.querySelector(".pi-context");
  assert.equal(box.hidden, true, "no request yet");
  view.receive(frame(1, [["s", ["context"], CONTEXT]]));
  assert.equal(box.hidden, false);
  assert.equal(box.open, false, "collapsed by default");
  assert.equal(box.getAttribute("data-held"), "true");
  assert.equal(box.querySelector("summary").textContent,
    "What the model will be sent — turn 2: 3 messages, 1 tool, ≈ 52 tokens");
  const items = [...box.querySelectorAll(".pi-context-item")].map((li) => [
    li.getAttribute("data-role"),
    li.querySelector(".pi-context-role").textContent,
    li.querySelector(".pi-context-tokens").textContent,
    li.querySelector(".pi-context-text").textContent,
  ]);
  assert.deepEqual(items, [
    ["system", "system prompt", "≈ 3 tokens", "Be terse."],
    ["user", "1. user", "≈ 4 tokens", "What is 2 + 3?"],
    ["assistant", "2. assistant", "≈ 6 tokens", '→ add({"a": 2, "b": 3})'],
    ["toolResult", "3. toolResult add", "≈ 1 token", "5"],
  ]);
  assert.equal(box.querySelector(".pi-context-tool").textContent, "add — Add two numbers. (≈ 38 tokens)");
  assert.equal(box.querySelector(".pi-context-options").textContent, "options: max_tokens=256");
  const raw = box.querySelector(".pi-context-json");
  raw.open = true;
  raw.dispatchEvent(new doc.defaultView.Event("toggle"));
  assert.deepEqual(sent.at(-1), { type: "context_json" });
  view.receive(frame(2, [["s", ["context", "json"], '{"systemPrompt": "Be terse."}'], ["s", ["context", "held"], false]]));
  assert.equal(doc.querySelector(".pi-context-raw").textContent, '{"systemPrompt": "Be terse."}');
  assert.match(doc.querySelector(".pi-context summary").textContent, /^What the model was sent/);
  assert.equal(doc.querySelector(".pi-context-json").open, true, "stays open across frames");
});
