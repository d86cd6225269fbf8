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

test("from the second request on, what changed comes first and the whole request is collapsed", () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state() });
  const changes = {
    since: 2, compacted: true, unchanged: 0, more: 0, tokens: -93, notes: ["tools added: add"],
    added: [
      { n: 1, role: "user", label: "user", why: "the compaction summary (it stands for 6 messages)", text: "[compacted conversation: …]", tokens: 22 },
      { n: 2, role: "user", label: "user", why: "steer, entered after turn 2's tools", text: "And in <b>German</b>.", tokens: 4 },
    ],
    removed: [{ n: 1, role: "user", label: "user", why: "replaced by the compaction summary", text: "PPPP", tokens: 100 }],
  };
  view.receive(frame(1, [["s", ["context"], { ...CONTEXT, turn: 3, changes }]]));
  const body = doc.querySelector(".pi-context-body");
  const first = body.firstElementChild;
  assert.ok(first.classList.contains("pi-context-changes"), "what changed comes first");
  assert.equal(first.querySelector(".pi-context-changes-head").textContent, "What changed since turn 2's request (≈ −93 tokens)");
  assert.equal(first.querySelector(".pi-context-change-note").textContent, "tools added: add");
  const added = [...first.querySelectorAll(".pi-context-added .pi-context-item")].map((li) => [
    li.querySelector(".pi-context-role").textContent, li.querySelector(".pi-context-why").textContent,
    li.querySelector(".pi-context-text").textContent,
  ]);
  assert.deepEqual(added, [
    ["+ 1. user", "the compaction summary (it stands for 6 messages)", "[compacted conversation: …]"],
    ["+ 2. user", "steer, entered after turn 2's tools", "And in <b>German</b>."],
  ]);
  assert.equal(first.querySelector("b"), null, "texts are text");
  assert.equal(first.querySelector(".pi-context-out-head").textContent,
    "out: 1 message the compaction summary replaced (turn 2's numbers)");
  assert.equal(first.querySelector(".pi-context-removed .pi-context-role").textContent, "− 1. user");
  assert.equal(first.querySelector(".pi-context-unchanged").textContent, "unchanged: 0 messages");
  const all = body.querySelector(".pi-context-all");
  assert.equal(all.open, false, "the whole request is collapsed");
  assert.equal(all.querySelector("summary").textContent, "the whole request: 3 messages, 1 tool, options");
  assert.equal(all.querySelectorAll(".pi-context-item").length, 4, "system prompt and the 3 messages");
  all.open = true;
  all.dispatchEvent(new doc.defaultView.Event("toggle"));
  view.receive(frame(2, [["s", ["context", "held"], false]]));
  assert.equal(doc.querySelector(".pi-context-all").open, true, "stays open across frames");
  view.receive(frame(3, [["s", ["context"], { ...CONTEXT, turn: 1, changes: null }]]));
  assert.equal(doc.querySelector(".pi-context-changes"), null, "a run's first request: the list alone");
  assert.equal(doc.querySelector(".pi-context-body").firstElementChild.tagName, "OL");
});
