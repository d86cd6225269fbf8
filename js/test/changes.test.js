// Sorting a frame's ops into the regions they change.
import { test } from "node:test";
import assert from "node:assert/strict";
import { classify } from "../changes.js";

test("ops are sorted into sections, new messages, messages, text blocks and cards", () => {
  const { sections, newMessages, messages, blocks, cards } = classify([
    ["s", ["status", "turn"], 2],
    ["s", ["queue"], []],
    ["p", ["messages"], { role: "user" }],
    ["s", ["messages", 1, "stop_reason"], "stop"],
    ["p", ["messages", 2, "blocks"], { type: "text" }],
    ["t", ["messages", 3, "blocks", 0, "tail"], [1, "x"]],
    ["m", ["messages", 3, "blocks", 0], 4],
    ["a", ["tools", "t1", "args_text"], "{"],
    ["s", ["tools", "t2"], {}],
  ]);
  assert.deepEqual([...sections], ["status", "queue"]);
  assert.equal(newMessages, true);
  assert.deepEqual([...messages], [1, 2], "a pushed block draws its message");
  assert.deepEqual([...blocks.entries()], [["3:0", { index: 3, j: 0, reset: false, appended: "" }]]);
  assert.deepEqual([...cards], ["t1", "t2"]);
});

test("a text block's raw text collects what was appended, or that it was set again", () => {
  const raw = ["messages", 1, "blocks", 0, "raw"];
  let { blocks } = classify([["a", raw, "ab"], ["a", raw, "c"]]);
  assert.deepEqual(blocks.get("1:0"), { index: 1, j: 0, reset: false, appended: "abc" });
  ({ blocks } = classify([["a", raw, "ab"], ["s", raw, "new"]]));
  assert.equal(blocks.get("1:0").reset, true);
  const none = classify([]);
  assert.equal(none.newMessages, false);
  assert.equal(none.sections.size + none.messages.size + none.blocks.size + none.cards.size, 0);
});
