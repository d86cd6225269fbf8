// Streaming text bodies: finished blocks in chunks, the tail, the raw text.
import { test } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import { CHUNK, createTextBodies } from "../text.js";

test("sync appends only the new finished blocks and keeps the old nodes", () => {
  const doc = new JSDOM("<!doctype html>").window.document;
  const text = createTextBodies(doc);
  const body = doc.createElement("div");
  const block = { html: ["<p>a</p>"], tail: "<p>b", raw: null };
  text.fill(body, block);
  assert.equal(body.innerHTML, '<div class="pi-chunk"><p>a</p></div><div class="pi-tail"><p>b</p></div>');
  const first = body.querySelector("p");
  for (let k = 0; k < CHUNK; k++) block.html.push(`<p>${k}</p>`);
  block.tail = "";
  text.sync(body, block, { reset: false, appended: "" });
  assert.equal(body.querySelector("p"), first);
  assert.deepEqual([...body.querySelectorAll(".pi-chunk")].map((c) => c.children.length), [CHUNK, 1]);
  assert.equal(body.lastElementChild.outerHTML, '<div class="pi-tail"></div>');
});

test("a raw tail is text, appended to in place; a new html list draws the body again", () => {
  const doc = new JSDOM("<!doctype html>").window.document;
  const text = createTextBodies(doc);
  const body = doc.createElement("div");
  const block = { html: [], tail: "", raw: "<b>x" };
  text.fill(body, block);
  const tail = body.querySelector(".pi-tail.pi-raw");
  assert.equal(tail.textContent, "<b>x");
  block.raw += "y";
  text.sync(body, block, { reset: false, appended: "y" });
  assert.equal(tail.textContent, "<b>xy");
  assert.equal(tail.querySelector("*"), null);
  text.sync(body, { html: ["<p>new</p>"], tail: "", raw: null }, { reset: false, appended: "" });
  assert.equal(body.innerHTML, '<div class="pi-chunk"><p>new</p></div><div class="pi-tail"></div>');
});
