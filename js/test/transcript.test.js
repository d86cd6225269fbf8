// The transcript: messages, streaming text and thinking, hidden results, markers.
import { test } from "node:test";
import assert from "node:assert/strict";
import { frame, setup, state, TEXT, textBlock } from "./helpers.js";

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

test("a reply cut by the output limit says so", () => {
  const { doc, view } = setup();
  view.receive({ type: "snapshot", seq: 0, ...state({ messages: [{ role: "assistant", blocks: [], stop_reason: "length", error: null, note: "cut off: the reply reached the output limit (64 tokens); raise it with %%agent --max-tokens N" }] }) });
  assert.equal(doc.querySelector(".pi-message-note").textContent,
    "[length] cut off: the reply reached the output limit (64 tokens); raise it with %%agent --max-tokens N");
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
