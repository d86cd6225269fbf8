// The run's timeline, live: swimlanes drawn as an inline SVG (the kernel's timeline.py keeps
// the lanes and spans; timeline_render.py draws the same picture for the static transcript).
// Lanes: the model's requests (waiting, streaming), one per tool call (prepared, running),
// the listeners (step-mode holds), the queues; turn starts are vertical rules; in step mode a
// cursor marks the current hold. Colours come from panel.css (Jupyter's theme variables) and
// kinds differ by opacity and dash pattern too. Every text goes in as a text node. Labels are
// placed (placeLabels) so none covers another or passes the right edge; a cut one has a <title>.

import { h } from "./dom.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 760;
const LABEL_WIDTH = 190;
const ROW = 22;
const BAR = 12;
const TOP = 30;
// The model lane is taller: its requests are named under their bars, on a line of their own.
const NAMES_ROW = 11;
// Labels are placed as timeline_render.py places them: a label's width is estimated at
// EM_PER_CHAR ems a character; none over another on its line, none past the right edge.
const EM_PER_CHAR = 0.6;
const GAP = 6;
const MARGIN = 4;
const FEWEST_CHARS = 4;
// How each kind of span is drawn: [class, fill opacity, dash pattern].
const LOOK = {
  waiting: ["model", 0.15, "3 2"],
  streaming: ["model", 0.65, ""],
  prepared: ["tool", 0.12, "3 2"],
  running: ["tool", 0.65, ""],
  held: ["held", 0.35, "1 2"],
  queued: ["queue", 0.25, "4 2"],
};
const WORDS = {
  waiting: "waiting for the first token",
  streaming: "streaming",
  prepared: "prepared, not running",
  running: "running",
  held: "held (step mode)",
  queued: "queued",
};

const seconds = (ms) => `${(ms / 1000).toFixed(2)}s`;

function el(doc, tag, attrs = {}, text = null) {
  const node = doc.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text != null) node.textContent = text;
  return node;
}

const textWidth = (text, size) => text.length * size * EM_PER_CHAR;

// [x, text] labels of one line placed left to right: each at its x, moved left to end at
// `right` if it would pass it, but never over the label before (then just after it, cut with
// an ellipsis to fit); left out when too little of it would fit. {x, text, full} each.
export function placeLabels(labels, size, left, right) {
  const placed = [];
  let free = left;
  for (const [x, text] of [...labels].sort((a, b) => a[0] - b[0])) {
    const at = Math.max(free, Math.min(x, right - textWidth(text, size)));
    const room = Math.floor((right - at) / (size * EM_PER_CHAR));
    const shown = text.length <= room ? text : `${text.slice(0, room - 1)}…`;
    if (room < 1 || shown.length < Math.min(FEWEST_CHARS, text.length)) continue;
    placed.push({ x: Math.round(at * 10) / 10, text: shown, full: text });
    free = at + textWidth(shown, size) + GAP;
  }
  return placed;
}

// A placed label as <text>; a cut one carries its full text as its <title>.
function label(doc, placed, y, size = null) {
  const node = el(doc, "text", { class: "fg", x: placed.x, y, ...(size ? { "font-size": size } : {}) });
  if (placed.text !== placed.full) node.append(el(doc, "title", {}, placed.full));
  node.append(doc.createTextNode(placed.text));
  return node;
}

// The last moment the timeline knows of (open spans reach it).
export function timelineEnd(timeline) {
  let end = 0;
  for (const t of timeline.turns) end = Math.max(end, t);
  for (const span of timeline.spans) end = Math.max(end, span.start, span.end == null ? 0 : span.end);
  return end;
}

// The <svg> of `timeline`, or null when it has no lane.
export function timelineSvg(doc, timeline) {
  const lanes = timeline.lanes || [];
  if (!lanes.length) return null;
  const end = timelineEnd(timeline) || 1;
  const plot = WIDTH - LABEL_WIDTH - 12;
  const x = (ms) => Math.round((LABEL_WIDTH + (plot * Math.max(0, Math.min(ms, end))) / end) * 10) / 10;
  const topOf = new Map(); // each lane's top edge (the model lane is taller)
  let bottom = TOP;
  for (const lane of lanes) {
    topOf.set(lane.id, bottom);
    bottom += ROW + (lane.kind === "model" ? NAMES_ROW : 0);
  }
  const height = bottom + 24;
  const svg = el(doc, "svg", { class: "pi-timeline", role: "img", width: WIDTH, height, viewBox: `0 0 ${WIDTH} ${height}`, "font-size": 11 });
  svg.append(el(doc, "title", {}, `Timeline of the run: ${lanes.length} lanes over ${seconds(end)}`));
  for (let i = 0; i <= 5; i++) {
    const t = (end / 5) * i;
    const anchor = i === 0 ? "start" : i === 5 ? "end" : "middle";
    // Milliseconds on a run shorter than a second (else every tick reads 0.00s).
    const tick = end < 1000 ? `${t.toFixed(end < 10 ? 1 : 0)}ms` : seconds(t);
    svg.append(el(doc, "text", { class: "fg", x: x(t), y: 12, "text-anchor": anchor, "fill-opacity": 0.7 }, tick));
  }
  for (const start of timeline.turns) {
    svg.append(el(doc, "line", { class: "rule pi-timeline-turn", x1: x(start), y1: 16, x2: x(start), y2: bottom, "stroke-opacity": 0.6, "stroke-dasharray": "2 3" }));
  }
  const turns = timeline.turns.map((start, n) => [x(start) + 2, `turn ${n + 1}`]);
  for (const p of placeLabels(turns, 11, LABEL_WIDTH, WIDTH - MARGIN)) svg.append(label(doc, p, 25));
  for (const lane of lanes) {
    const y = topOf.get(lane.id);
    const below = y + ROW - 3 + (lane.kind === "model" ? NAMES_ROW : 0);
    const g = el(doc, "g", { class: "pi-timeline-lane", "data-lane": lane.id });
    for (const p of placeLabels([[4, lane.label]], 11, 4, LABEL_WIDTH - GAP)) g.append(label(doc, p, y + BAR));
    g.append(el(doc, "line", { class: "rule", x1: LABEL_WIDTH, y1: below, x2: WIDTH - 12, y2: below, "stroke-opacity": 0.2 }));
    svg.append(g);
  }
  // Each request named once, under its first span, by its fullest label.
  const requests = new Map();
  for (const span of timeline.spans) {
    const y = topOf.get(span.lane);
    if (y == null) continue;
    const stop = span.end == null ? end : span.end;
    const left = x(span.start);
    const [cls, opacity, dash] = LOOK[span.kind] || ["tool", 0.4, ""];
    const g = el(doc, "g", { class: "pi-timeline-span", "data-kind": span.kind, "data-lane": span.lane, "data-start": span.start, "data-end": stop });
    const rect = el(doc, "rect", { class: cls, x: left, y: y + 2, width: Math.max(1.5, Math.round((x(stop) - left) * 10) / 10), height: BAR - 2, "fill-opacity": opacity, "stroke-opacity": 0.9 });
    if (dash) rect.setAttribute("stroke-dasharray", dash);
    const outcome = span.outcome ? `, ${span.outcome}` : "";
    const until = span.end == null ? "now" : seconds(stop);
    rect.append(el(doc, "title", {}, `${span.label}: ${WORDS[span.kind] || span.kind}${outcome}, ${seconds(span.start)} to ${until}`));
    g.append(rect);
    if (span.lane === "model" && span.label) {
      const key = span.label.split(" (")[0];
      const [at, name] = requests.get(key) || [left, ""];
      requests.set(key, [at, span.label.length > name.length ? span.label : name]);
    }
    svg.append(g);
  }
  if (topOf.has("model")) {
    const under = topOf.get("model") + BAR + NAMES_ROW - 1;
    for (const p of placeLabels([...requests.values()], 9, LABEL_WIDTH, WIDTH - MARGIN)) svg.append(label(doc, p, under, 9));
  }
  const cursor = timeline.spans.find((s) => s.kind === "held" && s.end == null);
  if (cursor) {
    const line = el(doc, "line", { class: "cursor pi-timeline-cursor", x1: x(cursor.start), y1: 16, x2: x(cursor.start), y2: bottom, "stroke-width": 2 });
    line.append(el(doc, "title", {}, `held now: ${cursor.label}`));
    svg.append(line);
  }
  svg.append(el(doc, "text", { class: "fg", x: 4, y: bottom + 16, "fill-opacity": 0.8 }, "prepared: dashed · running: solid · held: dotted"));
  return svg;
}

export function createTimeline({ doc, state, disclosures }) {
  const box = disclosures.details("timeline", "pi-timeline-box", "Timeline");
  const wrap = h(doc, "div", "pi-timeline-wrap");
  box.append(wrap);
  return {
    node: box,
    render() {
      const timeline = state().timeline;
      const svg = timeline ? timelineSvg(doc, timeline) : null;
      box.hidden = !svg;
      // In step mode the picture is the lesson: open unless the reader closed it.
      if (!disclosures.known("timeline") && state().step && state().step.enabled) box.open = true;
      wrap.replaceChildren(...(svg ? [svg] : []));
    },
  };
}
