import { test } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import { mountPanel } from "../view.js";
import { PAYLOADS } from "./payloads.js";

function setup() {
  const dom = new JSDOM(`<div id="host"></div>`);
  const doc = dom.window.document;
  const sent = [];
  const view = mountPanel(doc.getElementById("host"), { send: (m) => sent.push(m), tick: false });
  return { dom, doc, sent, view };
}

function state(overrides = {}) {
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

const frame = (seq, ops) => ({ type: "deltas", seq, ops });

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

const textBlock = (kind = "text") => ({ type: kind, html: [], tail: "", raw: null });
const TEXT = ["messages", 1, "blocks", 1];

test("streamed deltas update text, thinking and a tool card in place", () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state() });
  view.receive(frame(1, [
    ["p", ["messages"], { role: "assistant", blocks: [], stop_reason: null, error: null }],
    ["p", ["messages", 1, "blocks"], textBlock("thinking")],
    ["s", ["messages", 1, "blocks", 0, "tail"], "<p>hmm</p>"],
    ["p", ["messages", 1, "blocks"], textBlock()],
    ["s", [...TEXT, "tail"], "<p>Hello **wor</p>"],
  ]));
  const text = () => doc.querySelector('.pi-message[data-role="assistant"] .pi-text');
  assert.equal(text().querySelector(".pi-tail").innerHTML, "<p>Hello **wor</p>");
  // The kernel splices the tail: keep 9 characters, append the rest.
  view.receive(frame(2, [["t", [...TEXT, "tail"], [9, "<strong>world</strong></p>"]]]));
  assert.equal(text().innerHTML, '<div class="pi-tail"><p>Hello <strong>world</strong></p></div>');
  assert.equal(doc.querySelector("details.pi-thinking").textContent, "thinkinghmm");
  view.receive(frame(3, [
    ["p", ["messages", 1, "blocks"], { type: "toolCall", id: "t1", name: "add" }],
    ["s", ["tools", "t1"], { id: "t1", name: "add", args_text: "", status: "pending", start: null, duration_ms: null, result_text: "", images: [], is_error: false, diff: null }],
    ["a", ["tools", "t1", "args_text"], '{"a": 1'],
  ]));
  let card = doc.querySelector('.pi-tool-card[data-tool-call-id="t1"]');
  assert.equal(card.getAttribute("data-status"), "pending");
  assert.equal(card.querySelector(".pi-tool-args").textContent, '{"a": 1');
  view.receive(frame(4, [
    ["a", ["tools", "t1", "args_text"], ', "b": 2}'],
    ["s", ["tools", "t1", "status"], "done"],
    ["s", ["tools", "t1", "duration_ms"], 250],
    ["s", ["tools", "t1", "result_text"], "3"],
    ["s", ["tools", "t1", "images"], [{ mime: "image/png", data: "iVBORw0KGgo=" }]],
    ["s", ["tools", "t1", "diff"], { created: ["x"], changed: [], deleted: [] }],
  ]));
  card = doc.querySelector('.pi-tool-card[data-tool-call-id="t1"]');
  assert.equal(card.getAttribute("data-status"), "done");
  assert.equal(card.querySelector(".pi-tool-name").textContent, "add");
  assert.equal(card.querySelector(".pi-tool-args").textContent, '{"a": 1, "b": 2}');
  assert.equal(card.querySelector(".pi-tool-duration").textContent, "0.3s");
  assert.equal(card.querySelector(".pi-tool-result pre").textContent, "3");
  assert.equal(card.querySelector(".pi-tool-result img").getAttribute("src"), "data:image/png;base64,iVBORw0KGgo=");
  assert.match(card.querySelector(".pi-tool-diff").textContent, /created: x/);
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

test("controls send the contract's messages; Enter steers and Escape aborts", () => {
  const { dom, doc, sent, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state() });
  const input = doc.querySelector(".pi-input");
  input.value = "  go left ";
  doc.querySelector(".pi-steer").click();
  input.value = "and then";
  doc.querySelector(".pi-followup").click();
  doc.querySelector(".pi-steer").click(); // empty input: nothing sent
  doc.querySelector(".pi-abort").click();
  doc.querySelector(".pi-clear-queue").click();
  input.value = "by keyboard";
  input.dispatchEvent(new dom.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  input.value = "multi";
  input.dispatchEvent(new dom.window.KeyboardEvent("keydown", { key: "Enter", shiftKey: true, bubbles: true }));
  doc.querySelector(".pi-panel").dispatchEvent(new dom.window.KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
  assert.deepEqual(sent, [
    { type: "steer", text: "go left" },
    { type: "followup", text: "and then" },
    { type: "abort" },
    { type: "clear_queue" },
    { type: "steer", text: "by keyboard" },
    { type: "abort" },
  ]);
  assert.equal(input.value, "multi", "Shift+Enter keeps typing");
});

test("queue items and clearing", () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state() });
  assert.equal(doc.querySelector(".pi-queue-box").hidden, true);
  view.receive(frame(1, [["s", ["queue"], [{ kind: "steer", text: "a" }, { kind: "followup", text: "b" }]]]));
  const items = () => [...doc.querySelectorAll(".pi-queue-item")].map((li) => li.textContent);
  // Each item says where it will land: steering waits for this answer (or these tools).
  assert.deepEqual(items(), ["steer (after this answer): a", "follow-up (when the agent would stop): b"]);
  view.receive(frame(2, [["s", ["status", "state"], "running-tools"]]));
  assert.equal(items()[0], "steer (after these tools): a");
  view.receive(frame(3, [["s", ["queue"], [{ kind: "interrupt", text: "now" }]]]));
  assert.deepEqual(items(), ["interrupt & send (as soon as the stream stops): now"]);
  view.receive(frame(4, [["s", ["queue"], []]]));
  assert.equal(doc.querySelectorAll(".pi-queue-item").length, 0);
});

test("step mode shows the held event and Next / Run to end", () => {
  const { doc, sent, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state({ step: { enabled: true, held: null, count: 0 } }) });
  assert.equal(doc.querySelector(".pi-step").hidden, false);
  view.receive(frame(1, [["s", ["step", "held"], "turn_start"], ["s", ["step", "count"], 1]]));
  assert.equal(doc.querySelector(".pi-step-event").textContent, "turn_start");
  doc.querySelector(".pi-next").click();
  doc.querySelector(".pi-run-to-end").click();
  assert.deepEqual(sent, [{ type: "next" }, { type: "run_to_end" }]);
  view.receive(frame(2, [["s", ["step", "held"], null]]));
  assert.equal(doc.querySelector(".pi-next").disabled, true, "nothing held: nothing to release");
  view.receive(frame(3, [["s", ["status", "state"], "done"]]));
  assert.equal(doc.querySelector(".pi-step").hidden, true);
  assert.equal(doc.querySelector(".pi-steer").disabled, true, "controls are off after the run");
});

test("held at agent_end (the state already final) the step bar, Next and Abort stay", () => {
  const { doc, sent, view } = setup();
  const step = { enabled: true, granularity: "lifecycle", held: null, what: null, next: null, count: 15 };
  view.receive({ type: "snapshot", seq: 0, ...state({ step }) });
  view.receive(frame(1, [
    ["s", ["status", "state"], "done"],
    ["s", ["step", "count"], 16],
    ["s", ["step", "what"], "held at the end of the run"],
    ["s", ["step", "next"], "the run is over and the cell finishes"],
    ["s", ["step", "held"], "agent_end"],
  ]));
  const bar = doc.querySelector(".pi-step");
  assert.equal(bar.hidden, false, "a held loop always shows its Next");
  assert.equal(doc.querySelector(".pi-next").disabled, false);
  assert.equal(doc.querySelector(".pi-abort").disabled, false, "Abort releases a held loop");
  assert.equal(doc.querySelector(".pi-step-mode").textContent, "Step mode (lifecycle events)");
  assert.equal(doc.querySelector(".pi-step-what").textContent, "held at the end of the run");
  assert.equal(doc.querySelector(".pi-step-next").textContent, " — next: the run is over and the cell finishes");
  doc.querySelector(".pi-next").click();
  assert.deepEqual(sent.at(-1), { type: "next" });
  view.receive(frame(2, [["s", ["step", "held"], null], ["s", ["step", "what"], null], ["s", ["step", "next"], null]]));
  assert.equal(bar.hidden, true, "released at the end: the bar goes");
  assert.equal(doc.querySelector(".pi-abort").disabled, true);
});

test("the step bar names tools in code, never as markup", () => {
  const { doc, view } = setup();
  const step = {
    enabled: true, granularity: "tools", held: "tool_execution_end", count: 1,
    what: "held after tool `run_python` finished", next: "the tool results enter the conversation",
  };
  view.receive({ type: "snapshot", seq: 0, ...state({ step }) });
  const what = doc.querySelector(".pi-step-what");
  assert.equal(what.querySelector("code").textContent, "run_python");
  assert.equal(what.textContent, "held after tool run_python finished");
  view.receive(frame(1, [["s", ["step", "what"], "held before tool `<img src=x onerror=alert(1)>` runs"]]));
  assert.equal(doc.querySelector(".pi-step-what img"), null);
  assert.equal(doc.querySelector(".pi-step-what code").textContent, "<img src=x onerror=alert(1)>");
});

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

test("tree leaves have no disclosure, show time without the held time, and link to the card", () => {
  const { doc, dom, view } = setup();
  const scrolled = [];
  dom.window.HTMLElement.prototype.scrollIntoView = function () {
    scrolled.push(this);
  };
  const lifecycle = [
    { id: 0, parent: null, kind: "run", label: "Agent Run", detail: "", start: 0, end: 9000, held: 8000, updates: 0, target: null },
    { id: 1, parent: 0, kind: "turn", label: "Turn 1", detail: "", start: 5, end: 8990, held: 8000, updates: 0, target: null },
    { id: 2, parent: 1, kind: "message", label: "Message", detail: "user", start: 6, end: 3010, held: 3000, updates: 0, target: { message: 0 } },
    { id: 3, parent: 1, kind: "tool", label: "Tool Execution", detail: "add", start: 4000, end: 9000, held: 4750, updates: 2, target: { tool: "t1" } },
  ];
  const tools = { t1: { id: "t1", name: "add", args_text: "{}", status: "done", duration_ms: 250, result_text: "5", images: [], is_error: false, diff: null } };
  const messages = [
    { role: "user", html: "<p>Hi</p>", images: [] },
    { role: "assistant", blocks: [{ type: "toolCall", id: "t1", name: "add" }], stop_reason: "toolUse", error: null },
  ];
  view.receive({ type: "snapshot", seq: 0, ...state({ lifecycle, tools, messages }) });
  const tree = doc.querySelector(".pi-lifecycle");
  assert.equal(tree.querySelectorAll("details.pi-node").length, 2, "run and turn have children");
  const leaves = [...tree.querySelectorAll(".pi-node.pi-leaf")];
  assert.equal(leaves.length, 2);
  assert.equal(leaves.filter((l) => l.tagName === "DETAILS" || l.querySelector("summary")).length, 0);
  assert.deepEqual(leaves.map((l) => l.textContent), [
    "Message (user) · 0.004s · held 3.0s",
    "Tool Execution (add) · 0.250s · held 4.8s · 2 updates",
  ]);
  assert.equal(tree.querySelector("summary").textContent, "Agent Run · 1.000s · held 8.0s");
  leaves[1].querySelector(".pi-node-link").click();
  assert.equal(scrolled.length, 1);
  assert.ok(scrolled[0].matches('.pi-tool-card[data-tool-call-id="t1"]'));
  assert.ok(scrolled[0].classList.contains("pi-flash"));
  leaves[0].querySelector(".pi-node-link").dispatchEvent(new dom.window.KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
  assert.ok(scrolled[1].matches('.pi-message[data-index="0"]'));
});

test("approvals: Approve and Deny answer with the tool call id", () => {
  const { doc, sent, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state({ approvals: [{ tool_call_id: "c1", tool_name: "run_python", summary: "3 lines", args_text: "{}" }] }) });
  const card = doc.querySelector('.pi-approval[data-tool-call-id="c1"]');
  card.querySelector(".pi-approve").click();
  card.querySelector(".pi-deny").click();
  assert.deepEqual(sent, [
    { type: "approval", tool_call_id: "c1", approved: true },
    { type: "approval", tool_call_id: "c1", approved: false },
  ]);
});

test("an open thinking block stays open while text streams in", () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state({ messages: [{ role: "assistant", blocks: [{ type: "thinking", html: ["<p>a</p>"], tail: "", raw: null }], stop_reason: null, error: null }] }) });
  const details = doc.querySelector("details.pi-thinking");
  details.open = true;
  details.dispatchEvent(new doc.defaultView.Event("toggle"));
  view.receive(frame(1, [["p", ["messages", 0, "blocks"], { type: "text", html: ["<p>b</p>"], tail: "", raw: null }]]));
  assert.equal(doc.querySelector("details.pi-thinking").open, true);
});

test("a tool result shown in its card is not repeated in the transcript", () => {
  const { doc, view } = setup();
  const card = { id: "c1", name: "add", args_text: "{}", status: "done", start: 0, duration_ms: 5, result_text: "3", images: [], is_error: false, diff: null };
  view.receive({
    type: "snapshot", seq: 0,
    ...state({
      messages: [
        { role: "assistant", blocks: [{ type: "toolCall", id: "c1", name: "add" }], stop_reason: "toolUse", error: null },
        { role: "toolResult", tool_call_id: "c1", tool_name: "add", text: "3", images: [], is_error: false },
        { role: "toolResult", tool_call_id: "other", tool_name: "x", text: "orphan", images: [], is_error: true },
      ],
      tools: { c1: card },
    }),
  });
  const [covered, orphan] = doc.querySelectorAll('.pi-message[data-role="toolResult"]');
  assert.equal(covered.hidden, true, "the card shows it; the message keeps its place, hidden");
  assert.equal(covered.textContent, "");
  assert.ok(!doc.querySelector(".pi-panel").textContent.includes("shown in the card"));
  assert.equal(orphan.hidden, false);
  assert.equal(orphan.querySelector("details"), null);
  assert.equal(orphan.querySelector(".pi-result-text").textContent, "orphan");
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

test("finished blocks are inserted once and never re-rendered; only the tail changes", () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state() });
  view.receive(frame(1, [
    ["p", ["messages"], { role: "assistant", blocks: [], stop_reason: null, error: null }],
    ["p", ["messages", 1, "blocks"], textBlock()],
    ["p", [...TEXT.slice(0, 3), 0, "html"], "<h2>Title</h2>"],
    ["s", [...TEXT.slice(0, 3), 0, "tail"], "<p>first</p>"],
  ]));
  const body = doc.querySelector('.pi-message[data-role="assistant"] .pi-text');
  const title = body.querySelector("h2");
  let seq = 1;
  for (let k = 0; k < 5; k++) {
    view.receive(frame(++seq, [
      ["p", [...TEXT.slice(0, 3), 0, "html"], `<p>para ${k}</p>`],
      ["s", [...TEXT.slice(0, 3), 0, "tail"], `<p>tail ${k}</p>`],
    ]));
  }
  assert.ok(title.isConnected, "the first block's node is the same one");
  assert.deepEqual([...body.querySelectorAll(".pi-chunk > *, .pi-tail")].map((n) => n.textContent), [
    "Title", "para 0", "para 1", "para 2", "para 3", "para 4", "tail 4",
  ]);
  // Finished blocks sit in chunks, so a frame's layout does not walk every block.
  for (let k = 5; k < 70; k++) {
    view.receive(frame(++seq, [["p", [...TEXT.slice(0, 3), 0, "html"], `<p>para ${k}</p>`]]));
  }
  const sizes = [...body.querySelectorAll(".pi-chunk")].map((c) => c.children.length);
  assert.ok(sizes.length >= 2 && sizes.slice(0, -1).every((n) => n === sizes[0]), String(sizes));
  assert.equal(sizes.reduce((a, b) => a + b), 71);
  assert.equal(body.lastElementChild.className, "pi-tail");
  // A long tail is raw text: appended to one text node, not re-rendered.
  view.receive(frame(++seq, [
    ["s", [...TEXT.slice(0, 3), 0, "tail"], ""],
    ["s", [...TEXT.slice(0, 3), 0, "raw"], "| a | b |"],
  ]));
  const tail = body.querySelector(".pi-tail.pi-raw");
  const node = tail.firstChild;
  view.receive(frame(++seq, [["a", [...TEXT.slice(0, 3), 0, "raw"], "\n|---|---|"]]));
  assert.equal(tail.firstChild, node);
  assert.equal(tail.textContent, "| a | b |\n|---|---|");
  assert.equal(tail.querySelector("*"), null, "raw text is never parsed as HTML");
  view.receive(frame(++seq, [
    ["p", [...TEXT.slice(0, 3), 0, "html"], "<table><tr><td>a</td></tr></table>"],
    ["s", [...TEXT.slice(0, 3), 0, "raw"], null],
  ]));
  assert.equal(body.querySelector(".pi-tail").className, "pi-tail");
  assert.equal(body.querySelector("table td").textContent, "a");
  assert.ok(title.isConnected);
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

test("a reply cut by the output limit says so", () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state({ messages: [{ role: "assistant", blocks: [], stop_reason: "length", error: null, note: "cut off: the reply reached the output limit (64 tokens); raise it with %%agent --max-tokens N" }] }) });
  assert.equal(doc.querySelector(".pi-message-note").textContent,
    "[length] cut off: the reply reached the output limit (64 tokens); raise it with %%agent --max-tokens N");
});

test("the draft reaches the kernel as it is typed and once more, final, when the run closes", () => {
  const timers = [];
  const dom = new JSDOM(`<div id="host"></div>`);
  const doc = dom.window.document;
  const sent = [];
  const view = mountPanel(doc.getElementById("host"), {
    send: (m) => sent.push(m), tick: false,
    setTimer: (fn) => { timers.push(fn); return timers.length; }, clearTimer: (id) => { timers[id - 1] = null; },
  });
  view.receive({ type: "snapshot", seq: 0, ...state() });
  const input = doc.querySelector(".pi-input");
  const type = (text) => { input.value = text; input.dispatchEvent(new dom.window.Event("input")); };
  type("half");
  type("half a th");
  const fire = () => timers.splice(0).forEach((fn) => fn && fn());
  fire(); // the debounce: one message for the burst, with the latest text
  assert.deepEqual(sent, [{ type: "draft", text: "half a th" }]);
  type("half a thought");  // typed after the last debounced send: still pending
  view.receive(frame(1, [["s", ["status", "state"], "done"]]));
  view.receive({ type: "closing" });
  assert.deepEqual(sent.at(-1), { type: "draft", text: "half a thought", final: true });
  assert.equal(input.value, "half a thought", "the box keeps what was typed");
  assert.equal(input.disabled, true);
  fire();
  assert.equal(sent.filter((m) => m.type === "draft").length, 2, "nothing after the final draft");
});

test("Interrupt & send sends the text at once; the placeholder says where a steer lands", () => {
  const { doc, sent, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state() });
  const input = doc.querySelector(".pi-input");
  assert.match(input.placeholder, /Steer \(lands after this answer\)/);
  input.value = "stop and do this";
  doc.querySelector("button.pi-interrupt").click();
  assert.deepEqual(sent, [{ type: "interrupt_send", text: "stop and do this" }]);
  assert.equal(input.value, "");
  view.receive(frame(1, [["s", ["status", "state"], "running-tools"]]));
  assert.match(input.placeholder, /Steer \(lands after these tools\)/);
});

test("a compaction marker is one line in the transcript, as text", () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state() });
  view.receive(frame(1, [
    ["p", ["messages"], { role: "compaction", count: 12, text: "compacted 12 messages<b>" }],
    ["p", ["messages"], { role: "assistant", blocks: [], stop_reason: null, error: null }],
  ]));
  const marker = doc.querySelector('.pi-message[data-role="compaction"]');
  assert.equal(marker.getAttribute("data-index"), "1");
  assert.equal(marker.textContent, "compacted 12 messages<b>");
  assert.equal(marker.querySelector("b"), null);
  assert.equal(marker.children.length, 1);
  assert.equal(marker.querySelector(".pi-role"), null, "no role label: a marker, not a message");
});
