// The controls (message box, buttons, keys, the draft) and the approval cards.
import { test } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import { mountPanel } from "../view.js";
import { frame, setup, state } from "./helpers.js";

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

test("approvals: Approve and Deny answer with the tool call id", () => {
  const { doc, sent, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state({ approvals: [{ tool_call_id: "c1", tool_name: "run_python", summary: "3 lines", args_text: "{}" }] }) });
  const card = doc.querySelector('.pi-approval[data-tool-call-id="c1"]');
  // The summary names the tool itself ("run_python: 3 lines of code"): not twice.
  assert.equal(card.querySelector(".pi-approval-summary").textContent, "Run this call? 3 lines");
  card.querySelector(".pi-approve").click();
  card.querySelector(".pi-deny").click();
  assert.deepEqual(sent, [
    { type: "approval", tool_call_id: "c1", approved: true },
    { type: "approval", tool_call_id: "c1", approved: false },
  ]);
});

test("approvals: Always allow names the tool, and both new answers say which they are", () => {
  const { doc, sent, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state({ approvals: [{ tool_call_id: "c2", tool_name: "read_file", summary: "x", args_text: "{}" }] }) });
  const card = doc.querySelector('.pi-approval[data-tool-call-id="c2"]');
  const labels = [...card.querySelectorAll("button")].map((b) => b.textContent);
  assert.deepEqual(labels, ["Approve", "Always allow read_file", "Deny", "Deny and stop"]);
  card.querySelector(".pi-always").click();
  card.querySelector(".pi-deny-stop").click();
  assert.deepEqual(sent, [
    { type: "approval", tool_call_id: "c2", approved: true, answer: "always" },
    { type: "approval", tool_call_id: "c2", approved: false, answer: "stop" },
  ]);
});
