// The lifecycle tree.
import { test } from "node:test";
import assert from "node:assert/strict";
import { setup, state } from "./helpers.js";
import { childrenOf } from "../lifecycle.js";

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

test("the tree's children by parent id, roots under -1, in state order", () => {
  const nodes = [
    { id: 0, parent: null }, { id: 1, parent: 0 }, { id: 2, parent: 1 }, { id: 3, parent: 0 }, { id: 4, parent: null },
  ];
  const children = childrenOf(nodes);
  assert.deepEqual(children.get(-1).map((n) => n.id), [0, 4]);
  assert.deepEqual(children.get(0).map((n) => n.id), [1, 3]);
  assert.deepEqual(children.get(1).map((n) => n.id), [2]);
  assert.equal(children.get(2), undefined);
});
