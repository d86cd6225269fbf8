// The DOM helpers and the formatting every region shares.
import { test } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import { cssEscape, Disclosures, h, safeImage, words } from "../dom.js";
import { formatElapsed, nodeTimes, PREVIEW_CHARS, preview, tokens } from "../format.js";

const doc = () => new JSDOM("<!doctype html>").window.document;

test("h makes an element with its class and attributes", () => {
  const node = h(doc(), "span", "pi-x", { "data-index": 3, title: "t" });
  assert.equal(node.outerHTML, '<span class="pi-x" data-index="3" title="t"></span>');
});

test("safeImage shows raster base64 data only", () => {
  const d = doc();
  assert.equal(safeImage(d, { mime: "image/png", data: "iVBORw0KGgo=" }).src, "data:image/png;base64,iVBORw0KGgo=");
  assert.equal(safeImage(d, { mime: "image/svg+xml", data: "PHN2Zz4=" }), null);
  assert.equal(safeImage(d, { mime: "image/png", data: '"><script>' }), null);
  assert.equal(safeImage(d, { mime: "image/png", data: 7 }), null);
  assert.equal(safeImage(d, null), null);
});

test("words puts backticked names in <code> and everything as text", () => {
  const box = doc().createElement("div");
  box.append(...words(box.ownerDocument, "run `<b>x</b>` now"));
  assert.equal(box.innerHTML, "run <code>&lt;b&gt;x&lt;/b&gt;</code> now");
  assert.deepEqual(words(box.ownerDocument, null).map((n) => n.textContent), [""]);
});

test("cssEscape quotes a value for an attribute selector", () => {
  assert.equal(cssEscape('a"b\\c'), 'a\\"b\\\\c');
  const d = doc();
  const node = h(d, "div", "", { "data-id": 'x"]y' });
  d.body.append(node);
  assert.equal(d.querySelector(`[data-id="${cssEscape('x"]y')}"]`), node);
});

test("Disclosures remember what the reader opened, by key", () => {
  const d = doc();
  const open = new Disclosures(d);
  const first = open.details("k", "pi-thing", "more");
  assert.equal(first.outerHTML, '<details class="pi-thing"><summary>more</summary></details>');
  assert.equal(open.known("k"), false);
  first.open = true;
  first.dispatchEvent(new d.defaultView.Event("toggle"));
  assert.equal(open.isOpen("k") && open.known("k"), true);
  assert.equal(open.details("k", "pi-thing", "more").open, true, "drawn again: still open");
  assert.equal(open.details("other", "pi-thing", "more").open, false);
});

test("times, token counts and previews read as the static transcript writes them", () => {
  assert.equal(formatElapsed(1500), "1.5s");
  assert.equal(formatElapsed(-5), "0.0s");
  assert.equal(formatElapsed(125_000), "2m5s");
  assert.equal(nodeTimes({ start: 0, end: 9000, held: 8000, updates: 0 }), "1.000s · held 8.0s");
  assert.equal(nodeTimes({ start: 0, end: null, updates: 1 }), "… · 1 update");
  assert.equal(tokens(1), "≈ 1 token");
  assert.equal(tokens(52), "≈ 52 tokens");
  assert.equal(preview("short"), "short");
  const long = "x".repeat(PREVIEW_CHARS + 1);
  assert.equal(preview(long), "x".repeat(PREVIEW_CHARS) + " …");
});
