// The step bar.
import { test } from "node:test";
import assert from "node:assert/strict";
import { frame, setup, state } from "./helpers.js";

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
