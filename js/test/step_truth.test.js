// Step mode tells the truth (issue 29.1) and the live timeline (29.2), in the view.
import { test } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import { mountPanel } from "../view.js";
import { frame, setup, state } from "./helpers.js";
import { userLabel } from "../transcript.js";

const card = (over) => ({
  id: "c1", name: "read_station", label: "read_station (north)", args_text: "{}", status: "prepared",
  start: null, duration_ms: null, result_text: "", images: [], is_error: false, diff: null, not_run: null, ...over,
});

test("a held card reads prepared with its label, and running only once its batch runs", () => {
  const { doc, view } = setup();
  const message = { role: "assistant", blocks: [{ type: "toolCall", id: "c1", name: "read_station" }], stop_reason: "toolUse", error: null, note: null };
  view.receive({ type: "snapshot", seq: 0, ...state({ messages: [message], tools: { c1: card() } }) });
  const head = () => doc.querySelector(".pi-tool-card .pi-tool-head");
  assert.equal(head().querySelector(".pi-tool-name").textContent, "read_station (north)");
  assert.equal(head().querySelector(".pi-tool-status").textContent, "prepared, waiting to run");
  view.receive(frame(1, [["s", ["tools", "c1", "status"], "running"]]));
  assert.equal(head().querySelector(".pi-tool-status").textContent, "running");
  view.receive(frame(2, [["s", ["tools", "c1", "status"], "aborted"], ["s", ["tools", "c1", "not_run"], "the run was aborted before the tool ran"]]));
  assert.equal(head().querySelector(".pi-tool-status").textContent, "not run (aborted)");
  assert.equal(doc.querySelector(".pi-tool-not-run").textContent, "Not run: the run was aborted before the tool ran.");
});

test("held, the status line says so and its clock stands still, never going back", () => {
  let clock = 0;
  const dom = new JSDOM(`<div id="host"></div>`);
  const doc = dom.window.document;
  const view = mountPanel(doc.getElementById("host"), { send: () => {}, tick: false, now: () => clock });
  view.receive({ type: "snapshot", seq: 0, ...state({ status: { ...state().status, state: "streaming", elapsed_ms: 14_700, held: null, held_ms: 0 } }) });
  const label = doc.querySelector(".pi-state-label");
  const elapsed = doc.querySelector(".pi-elapsed");
  assert.equal(elapsed.textContent, "14.7s");
  view.receive(frame(1, [["s", ["status", "held"], "held before tool `add` runs (prepared, not running yet)"]]));
  assert.equal(label.textContent, "held (step mode): before tool add runs (prepared, not running yet)");
  assert.doesNotMatch(label.textContent, /waiting for the model|streaming|running tools/);
  // A frame with an older figure (a status written before the last tick) never turns it back.
  view.receive(frame(2, [["s", ["status", "elapsed_ms"], 800], ["s", ["status", "held"], null], ["s", ["status", "held_ms"], 21_300]]));
  assert.equal(elapsed.textContent, "14.7s");
  assert.equal(doc.querySelector(".pi-held-time").textContent, "(held 21.3s)");
  assert.equal(label.textContent, "streaming");
});

test("a delivered steer is marked with where it entered", () => {
  assert.equal(userLabel({ role: "user" }), "user");
  assert.equal(userLabel({ role: "user", queued: "steer", entered: "after turn 1's tools" }), "user (steer, after turn 1's tools)");
  assert.equal(userLabel({ role: "user", queued: "followup", entered: "after turn 2" }), "user (follow-up, after turn 2)");
  const { doc, view } = setup();
  const steer = { role: "user", html: "<p>F too</p>", images: [], queued: "steer", entered: "after turn 1's tools" };
  view.receive({ type: "snapshot", seq: 0, ...state({ messages: [state().messages[0], steer] }) });
  const node = doc.querySelector('.pi-message[data-queued="steer"] .pi-role');
  assert.equal(node.textContent, "user (steer, after turn 1's tools)");
});

test("the live timeline names each call and request, and marks the current hold", () => {
  const { doc, view } = setup();
  const timeline = {
    lanes: [
      { id: "model", kind: "model", label: "model requests" },
      { id: "tool:a", kind: "tool", label: "read_station (north)" },
      { id: "tool:b", kind: "tool", label: "read_station (south)" },
      { id: "listeners", kind: "listeners", label: "listeners (holds)" },
    ],
    spans: [
      { lane: "model", kind: "streaming", label: "request 1 (turn 1)", start: 0, end: 40, outcome: "" },
      { lane: "tool:a", kind: "running", label: "read_station (north)", start: 50, end: 90, outcome: "" },
      { lane: "tool:b", kind: "running", label: "read_station (south)", start: 50, end: 80, outcome: "" },
      { lane: "listeners", kind: "held", label: "held <script>", start: 95, end: null, outcome: "" },
    ],
    turns: [0],
  };
  view.receive({ type: "snapshot", seq: 0, ...state({ timeline, step: { enabled: true, held: "turn_end", count: 3 } }) });
  const svg = doc.querySelector(".pi-timeline-box svg.pi-timeline");
  assert.ok(svg, "the timeline is drawn");
  assert.ok(doc.querySelector(".pi-timeline-box").open, "open in step mode");
  const texts = [...svg.querySelectorAll("text")].map((t) => t.textContent);
  assert.ok(texts.includes("read_station (north)") && texts.includes("read_station (south)"));
  assert.ok(texts.includes("request 1 (turn 1)"));
  assert.ok(svg.querySelector(".pi-timeline-cursor"), "a cursor at the current hold");
  assert.equal(svg.querySelector("script"), null, "labels are text");
  const bars = [...svg.querySelectorAll('.pi-timeline-span[data-kind="running"] rect')].map((r) => [Number(r.getAttribute("x")), Number(r.getAttribute("x")) + Number(r.getAttribute("width"))]);
  assert.equal(bars.length, 2);
  assert.ok(Math.max(bars[0][0], bars[1][0]) < Math.min(bars[0][1], bars[1][1]), "parallel calls overlap");
  view.receive(frame(1, [["s", ["timeline", "spans", 3, "end"], 120]]));
  assert.equal(doc.querySelector(".pi-timeline-cursor"), null, "released: no cursor");
});
