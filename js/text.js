// Streaming text bodies (answers and thinking). A text block is {html: [finished top-level
// blocks], tail: html of the part still streaming, raw: null | that part as plain text (when it
// is long)}. A frame appends the new finished blocks before the tail and replaces only the
// tail (or appends to the raw text), so the work per frame depends on the new text, never on
// the whole answer. The finished blocks sit in chunks of CHUNK (div.pi-chunk), so the layout
// of a frame does not walk them all.
//
// The HTML is the kernel's: Markdown rendered and sanitised by markdown-it-py
// (pi_notebook/notebook/panel/markdown.py); the raw text is set as text.

import { h } from "./dom.js";

export const CHUNK = 32;

export function createTextBodies(doc) {
  const shown = new WeakMap(); // text body -> what it shows {html, count, chunk, inChunk, tail, tailHtml, raw}

  const syncTail = (rec, block, reset, appended) => {
    if (block.raw == null) {
      if (rec.raw || rec.tailHtml !== block.tail) {
        rec.tail.className = "pi-tail";
        rec.tail.innerHTML = block.tail || "";
        rec.tailHtml = block.tail;
        rec.raw = null;
      }
    } else if (!rec.raw || reset) {
      rec.tail.className = "pi-tail pi-raw";
      rec.raw = doc.createTextNode(block.raw);
      rec.tail.replaceChildren(rec.raw);
      rec.tailHtml = null;
    } else if (appended) {
      rec.raw.appendData(appended);
    }
  };

  // Finished blocks go into chunks of CHUNK blocks, so a frame's layout visits a few chunks,
  // not every block of a long answer (the chunks are plain divs: margins collapse through).
  const appendBlocks = (rec, list, from) => {
    for (let k = from; k < list.length; ) {
      if (!rec.chunk || rec.inChunk === CHUNK) {
        rec.chunk = h(doc, "div", "pi-chunk");
        rec.tail.before(rec.chunk);
        rec.inChunk = 0;
      }
      const take = Math.min(CHUNK - rec.inChunk, list.length - k);
      rec.chunk.insertAdjacentHTML("beforeend", list.slice(k, k + take).join(""));
      rec.inChunk += take;
      k += take;
    }
    rec.count = list.length;
  };

  // Draw `block` into `body` from scratch.
  const fill = (body, block) => {
    const tail = h(doc, "div", "pi-tail");
    body.replaceChildren(tail);
    if (block.html === undefined && typeof block.text === "string") {
      // Widget state saved by an older version (blocks of raw text): show it as text.
      block = { html: [], tail: "", raw: block.text };
    }
    const rec = { html: block.html, count: 0, chunk: null, inChunk: 0, tail, tailHtml: "", raw: null };
    shown.set(body, rec);
    appendBlocks(rec, block.html || [], 0);
    syncTail(rec, block, true, "");
  };

  // Bring a text body up to its block after a frame: only the new blocks and the tail.
  // `change` is {reset, appended} for the raw text (see changes.js).
  const sync = (body, block, change) => {
    const rec = shown.get(body);
    if (!rec || rec.html !== block.html) return fill(body, block);
    appendBlocks(rec, block.html, rec.count);
    syncTail(rec, block, change.reset, change.appended);
  };

  return { fill, sync };
}
