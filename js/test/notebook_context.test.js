// The run's notebook context entry and a tool card's rich displays.
import { test } from "node:test";
import assert from "node:assert/strict";
import { frame, setup, state } from "./helpers.js";

const CONTEXT = {
  role: "notebookContext",
  title: "notebook context: 2 cells, 1 error (KeyError)",
  cells: [
    { number: 3, source: "data = {'age': [50]}\ndata", result: "{'age': [50]}", error: null },
    { number: 4, source: "data['BMI']", result: null, error: "KeyError: 'BMI'\n  cell, line 1, in <module>: data['BMI']" },
  ],
  left_out: "In [1]–[2] left out to keep it short",
};

test("the notebook context is one collapsed entry that opens to its cells, as text", () => {
  const { doc, view } = setup();
  const user = { role: "user", html: "<p>why?</p>", images: [], queued: null, entered: null };
  view.receive({ type: "snapshot", seq: 0, ...state({ messages: [CONTEXT, user] }) });
  const entry = doc.querySelector('.pi-message[data-role="notebookContext"]');
  assert.equal(entry.getAttribute("data-index"), "0"); // first: the start of the turn
  const box = entry.querySelector("details.pi-nbcontext");
  assert.equal(box.open, false);
  assert.equal(box.querySelector("summary").textContent, CONTEXT.title);
  const cells = box.querySelectorAll(".pi-nbcell");
  assert.equal(cells.length, 2);
  assert.equal(cells[0].querySelector(".pi-nbcell-label").textContent, "In [3]:");
  assert.equal(cells[0].querySelector(".pi-nbcell-source").textContent, "data = {'age': [50]}\ndata");
  assert.equal(cells[0].querySelector(".pi-nbcell-out").textContent, "Out[3]: {'age': [50]}");
  assert.equal(cells[0].querySelector(".pi-nbcell-error"), null);
  assert.match(cells[1].querySelector(".pi-nbcell-error").textContent, /^KeyError: 'BMI'/);
  assert.equal(box.querySelector(".pi-nbcontext-note").textContent, CONTEXT.left_out);
  // Opened by the reader, it stays open when the entry is drawn again.
  box.open = true;
  box.dispatchEvent(new doc.defaultView.Event("toggle"));
  view.receive({ type: "snapshot", seq: 1, ...state({ messages: [CONTEXT, user] }) });
  assert.equal(doc.querySelector("details.pi-nbcontext").open, true);
});

test("a cell's text that looks like markup stays text", () => {
  const { doc, view } = setup();
  const cell = { number: 1, source: "<img src=x onerror=alert(1)>", result: "<b>x</b>", error: "<script>e</script>" };
  view.receive({ type: "snapshot", seq: 0, ...state({ messages: [{ ...CONTEXT, cells: [cell] }] }) });
  const box = doc.querySelector("details.pi-nbcontext");
  assert.equal(box.querySelectorAll("img, b, script").length, 0);
  assert.equal(box.querySelector(".pi-nbcell-source").textContent, cell.source);
});

test("a tool card shows its rich displays (kernel-sanitised HTML) after its images", () => {
  const { doc, view } = setup();
  const card = {
    id: "t1", name: "run_python", args_text: "{}", status: "running", start: 0, duration_ms: null,
    result_text: "", images: [], is_error: false, diff: null, displays: [], not_run: null, label: "run_python",
  };
  const assistant = { role: "assistant", blocks: [{ type: "toolCall", id: "t1", name: "run_python" }], stop_reason: null, error: null, note: null };
  view.receive({ type: "snapshot", seq: 0, ...state({ messages: [assistant], tools: { t1: card } }) });
  assert.equal(doc.querySelectorAll(".pi-tool-display").length, 0);
  view.receive(frame(1, [
    ["s", ["tools", "t1", "images"], [{ mime: "image/png", data: "iVBORw0KGgo=" }]],
    ["s", ["tools", "t1", "displays"], ["<table><tr><th>bmi</th></tr><tr><td>1.5</td></tr></table>"]],
    ["s", ["tools", "t1", "status"], "done"],
  ]));
  const result = doc.querySelector('.pi-tool-card[data-tool-call-id="t1"] .pi-tool-result');
  const display = result.querySelector(".pi-tool-display");
  assert.equal(display.querySelector("td").textContent, "1.5");
  assert.ok(result.querySelector("img.pi-image").compareDocumentPosition(display) & 4); // after
});
