// Tool cards: the call's label (its name, told apart from same-named calls), status ("prepared,
// waiting to run" until its batch runs) and duration, its arguments, the result (a preview, the
// rest in a disclosure), its images and rich displays (a DataFrame's table: HTML the kernel
// rebuilt and sanitised, rich_html.py, inserted as the Markdown HTML is), the namespace diff, a
// line when the model's call was malformed and the tool did not run, and what its approval did
// ("allowed (always allow x)"). A call whose reply failed (the server could not parse it) never
// ran: its card says so and has no result section; the server's message is the message's error
// line, not repeated here. A card is drawn again whole when its entry changes.

import { cssEscape, h, safeImage } from "./dom.js";
import { formatElapsed, PREVIEW_CHARS, preview } from "./format.js";

const TOOL_LABELS = {
  "awaiting-approval": "awaiting approval",
  rejected: "malformed call: not run",
  prepared: "prepared, waiting to run",
  aborted: "not run (aborted)",
  "reply-failed": "not run",
};

// Why a card's tool did not run (static.py's not_run_line).
export function notRunLine(card) {
  if (card.status === "aborted") return `Not run: ${card.not_run}.`;
  if (card.status === "reply-failed") return `${card.not_run}: nothing ran.`;
  return `The model's call was malformed (${card.not_run}): the tool did not run.`;
}

// "namespace — created: a; imported: np; changed: b", or "namespace unchanged".
export function diffLine(diff) {
  const bits = ["created", "imported", "changed", "deleted"]
    .filter((k) => diff[k] && diff[k].length)
    .map((k) => `${k}: ${diff[k].join(", ")}`);
  return bits.length ? `namespace — ${bits.join("; ")}` : "namespace unchanged";
}

export function createCards({ doc, root, state, disclosures }) {
  const head = (card) => {
    const node = h(doc, "div", "pi-tool-head");
    const name = h(doc, "span", "pi-tool-name");
    name.textContent = card.label || card.name; // same-named calls told apart
    const status = h(doc, "span", "pi-tool-status");
    status.textContent = TOOL_LABELS[card.status] || card.status;
    const duration = h(doc, "span", "pi-tool-duration");
    duration.textContent = card.duration_ms == null ? "" : formatElapsed(card.duration_ms);
    node.append(name, status, duration);
    return node;
  };

  const result = (card) => {
    const node = h(doc, "div", "pi-tool-result");
    if (card.result_text) {
      const text = h(doc, "pre", "pi-tool-preview");
      text.textContent = preview(card.result_text);
      node.append(text);
    }
    for (const image of card.images || []) {
      const img = safeImage(doc, image);
      if (img) node.append(img);
    }
    for (const html of card.displays || []) {
      const display = h(doc, "div", "pi-tool-display");
      display.innerHTML = html; // kernel-sanitised (rich_html.py)
      node.append(display);
    }
    return node;
  };

  // The card of tool call `id` (an empty pending card until its entry arrives).
  const render = (id) => {
    const card = state().tools[id];
    const node = h(doc, "div", "pi-tool-card", {
      "data-tool-call-id": id,
      "data-status": card ? card.status : "pending",
    });
    if (!card) return node;
    node.append(head(card));
    if (card.not_run) {
      const line = h(doc, "div", "pi-tool-not-run");
      line.textContent = notRunLine(card);
      node.append(line);
    }
    if (card.approval) {
      const line = h(doc, "div", "pi-tool-approval"); // as static.py writes it
      line.textContent = `Approval: ${card.approval}`;
      node.append(line);
    }
    const args = h(doc, "pre", "pi-tool-args");
    args.textContent = card.args_text;
    node.append(args);
    if (card.status === "reply-failed") return node; // nothing ran: no result to show
    node.append(result(card));
    if (card.result_text && card.result_text.length > PREVIEW_CHARS) {
      const more = disclosures.details(`tool:${id}`, "pi-tool-details", "details");
      const full = h(doc, "pre");
      full.textContent = card.result_text;
      more.append(full);
      node.append(more);
    }
    if (card.diff) {
      const diff = h(doc, "div", "pi-tool-diff");
      diff.textContent = diffLine(card.diff);
      node.append(diff);
    }
    return node;
  };

  // Draw the card of `id` again wherever it is shown.
  const update = (id) => {
    for (const old of root.querySelectorAll(`.pi-tool-card[data-tool-call-id="${cssEscape(id)}"]`)) {
      old.replaceWith(render(id));
    }
  };

  return { render, update };
}
