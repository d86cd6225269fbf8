// The live timeline's labels (issue 29.2): none drawn twice, none over another, none past the
// right edge (cut with an ellipsis and a <title>), on an instant replay's timeline.
import { test } from "node:test";
import assert from "node:assert/strict";
import { JSDOM } from "jsdom";
import { placeLabels, timelineSvg } from "../timeline.js";

const WIDTH = 760;
const span = (lane, kind, label, start, end) => ({ lane, kind, label, start, end, outcome: "" });
const REPLAYED = {
  lanes: [
    { id: "model", kind: "model", label: "model requests" },
    { id: "tool:n", kind: "tool", label: "read_station (north)" },
    { id: "tool:s", kind: "tool", label: "read_station (south)" },
    { id: "steer", kind: "steer", label: "steering queue" },
    { id: "tool:r", kind: "tool", label: "record_answer " + "with a long label ".repeat(3) },
  ],
  spans: [
    span("model", "waiting", "request 1 (turn 1)", 0.5, 1),
    span("model", "streaming", "request 1", 1, 2),
    span("model", "waiting", "request 2 (turn 2)", 2.2, 2.3),
    span("model", "streaming", "request 2 (turn 2)", 2.3, 2.4),
    span("tool:n", "running", "read_station (north)", 2, 2.1),
    span("tool:s", "running", "read_station (south)", 2, 2.1),
    span("steer", "queued", "Give the temperatures in Fahrenheit too.", 2.1, 2.2),
    span("model", "waiting", "request 3 (turn 3)", 2690, 2695),
    span("model", "streaming", "request 3 (turn 3)", 2695, 2700),
    span("tool:r", "running", "record_answer", 2700, 2700.5),
  ],
  turns: [0, 2.2, 2689],
};

// Every drawn <text> (its own text, not its <title>) with its estimated box.
function texts(svg) {
  return [...svg.querySelectorAll("text")].map((node) => {
    const text = [...node.childNodes].filter((c) => c.nodeType === 3).map((c) => c.textContent).join("");
    const size = Number(node.getAttribute("font-size") || svg.getAttribute("font-size") || 11);
    const x = Number(node.getAttribute("x"));
    const y = Number(node.getAttribute("y"));
    const width = text.length * size * 0.6;
    const anchor = node.getAttribute("text-anchor") || "start";
    const left = anchor === "end" ? x - width : anchor === "middle" ? x - width / 2 : x;
    const title = node.querySelector("title");
    return { text, title: title ? title.textContent : null, box: [left, left + width, y - 0.8 * size, y + 0.2 * size] };
  });
}

test("no timeline label is drawn twice, over another, or past the right edge", () => {
  const doc = new JSDOM("").window.document;
  const found = texts(timelineSvg(doc, REPLAYED));
  const drawn = found.map((t) => t.text);
  assert.equal(drawn.filter((t) => t === "request 1 (turn 1)").length, 1, "a request is named once");
  assert.equal(new Set(drawn).size, drawn.length, drawn.join(" | "));
  for (const t of found) assert.ok(t.box[0] >= 0 && t.box[1] <= WIDTH, `${t.text} ${t.box}`);
  found.forEach((a, n) => {
    for (const b of found.slice(n + 1)) {
      const overlap = a.box[0] < b.box[1] && b.box[0] < a.box[1] && a.box[2] < b.box[3] && b.box[2] < a.box[3];
      assert.ok(!overlap, `${a.text} over ${b.text}`);
    }
  });
  assert.ok(drawn.includes("turn 3") && drawn.includes("request 3 (turn 3)"), "the last ones moved in");
  const cut = found.filter((t) => t.text.endsWith("…"));
  assert.ok(cut.length >= 1, "the long lane label is cut");
  for (const t of cut) assert.ok(t.title && t.title.startsWith(t.text.slice(0, -1)));
});

test("labels are placed as the kernel's timeline_render places them", () => {
  const placed = placeLabels([[0, "aaaa"], [5, "bbbb"], [100, "cccccccccc"]], 10, 0, 110);
  assert.deepEqual(placed.map((p) => [p.x, p.text]), [[0, "aaaa"], [30, "bbbb"], [60, "ccccccc…"]]);
  assert.deepEqual(placeLabels([[100, "dd"]], 10, 0, 110).map((p) => [p.x, p.text]), [[98, "dd"]]);
  assert.deepEqual(placeLabels([[0, "aaaaaaaaaaaaaaaaa"], [1, "bbbbbb"]], 10, 0, 110).slice(1), []);
});

test("an instant run's ticks read in milliseconds, as the static picture's", () => {
  const doc = new JSDOM("").window.document;
  const quick = { ...REPLAYED, turns: [0], spans: [span("model", "streaming", "request 1", 0, 60)] };
  const ticks = [...timelineSvg(doc, quick).querySelectorAll("text")].slice(0, 6).map((t) => t.textContent);
  assert.deepEqual(ticks, ["0ms", "12ms", "24ms", "36ms", "48ms", "60ms"]);
});

test("the legend names each look as it is drawn: held spans are dotted, not dashed", () => {
  const doc = new JSDOM("").window.document;
  const drawn = texts(timelineSvg(doc, REPLAYED)).map((t) => t.text);
  assert.equal(drawn[drawn.length - 1], "prepared: dashed · running: solid · held: dotted");
});
