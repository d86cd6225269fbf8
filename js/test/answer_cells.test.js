// "insert as cell" on an answer's code blocks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { setup, state } from "./helpers.js";
import { BLOCK_HEADER, blockCell } from "../answer_cells.js";

const PY = '<pre class="pi-code" data-lang="python"><code>x = <span class="n">1</span>\n</code></pre>\n';
const BASH = '<pre class="pi-code" data-lang="bash"><code>ls\n</code></pre>\n';
const PLAIN = '<pre class="pi-code"><code>y = 2\n</code></pre>\n';

const answer = (stop_reason) => ({
  role: "assistant", stop_reason, error: null, note: null,
  blocks: [
    { type: "thinking", html: [PY], tail: "", raw: null },
    { type: "text", html: ["<p>Try:</p>\n", PY, BASH, PLAIN], tail: "", raw: null },
  ],
});

test("the cell for one block: Python or unlabelled, no odd line break", () => {
  assert.equal(blockCell("x = 1\n\n", "python"), `${BLOCK_HEADER}\nx = 1\n`);
  assert.equal(blockCell("y = 2\n", null), `${BLOCK_HEADER}\ny = 2\n`);
  assert.equal(blockCell("ls\n", "bash"), null);
  assert.equal(blockCell("x = 1\u2028import os\n", "python"), null);
  assert.equal(blockCell("x = 1\rimport os\n", "py"), null);
});

test("an ended answer's Python blocks get a button that inserts their cell", async () => {
  const asked = [];
  const { doc, view } = setup({ insertCell: async (text) => (asked.push(text), "inserted") });
  view.receive({ type: "snapshot", seq: 0, ...state({ messages: [{ role: "user", html: "<p>x</p>", images: [] }, answer(null)] }) });
  assert.equal(doc.querySelectorAll(".pi-insert-cell").length, 0, "not while it streams");
  view.receive({ type: "deltas", seq: 1, ops: [["s", ["messages", 1, "stop_reason"], "stop"]] });
  const buttons = [...doc.querySelectorAll(".pi-insert-cell")];
  assert.equal(buttons.length, 2); // the python and the unlabelled block; not bash, not thinking
  assert.equal(doc.querySelector(".pi-thinking .pi-insert-cell"), null);
  assert.equal(buttons[0].textContent, "insert as cell");
  buttons[0].click();
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(asked, [`${BLOCK_HEADER}\nx = 1\n`]);
  assert.equal(buttons[0].textContent, "inserted below the %%agent cell");
});

test("a host that can do neither says so", async () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state({ messages: [{ role: "user", html: "<p>x</p>", images: [] }, answer("stop")] }) });
  const button = doc.querySelector(".pi-insert-cell");
  button.click();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(button.textContent, "cannot insert here: %agent code --answer");
});
