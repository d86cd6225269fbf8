// The queue of steers and follow-ups.
import { test } from "node:test";
import assert from "node:assert/strict";
import { frame, setup, state } from "./helpers.js";
import { landing } from "../queue.js";

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

test("where a queued message lands, by the run's state", () => {
  assert.equal(landing("steer", "streaming"), "after this answer");
  assert.equal(landing("steer", "awaiting-approval"), "after these tools");
  assert.equal(landing("followup", "streaming"), "when the agent would stop");
  assert.equal(landing("interrupt", "waiting"), "as soon as the stream stops");
  assert.equal(landing("steer", "done"), "with the next %%agent cell's prompt");
  assert.equal(landing("followup", "aborted"), "after the next %%agent cell's answer");
});
