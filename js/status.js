// The status line: model, state, turn, tokens, cost, the run's clock, a note and the error.
// The clock ticks in the view between frames (tick()); each frame's status resets it to the
// kernel's elapsed time.

import { h } from "./dom.js";
import { formatElapsed } from "./format.js";

const STATE_LABELS = {
  waiting: "waiting for the model",
  "running-tools": "running tools",
  "awaiting-approval": "awaiting approval",
};
const PARTS = ["model", "state-label", "turn", "tokens", "cost", "elapsed"];
const ESTIMATE_TITLE = "estimated at 4 characters a token where the provider has not reported usage";

// The state in words; while waiting for the first token, with the seconds waited.
export function stateLabel(s, elapsed) {
  const label = STATE_LABELS[s.state] || s.state;
  if (s.state !== "waiting" || s.waiting_since == null) return label;
  return `${label} (${Math.max(0, Math.floor((elapsed - s.waiting_since) / 1000))}s)`;
}

// "12 in / 5 out", or "~12 in / ~5 out (estimate)" while the provider has not reported usage.
export function tokenCounts(s) {
  const estIn = s.est_in || 0;
  const estOut = s.est_out || 0;
  const estimated = estIn + estOut > 0 || !!s.estimated;
  const tokensIn = s.tokens_in + estIn;
  const tokensOut = s.tokens_out + estOut;
  const text = estimated ? `~${tokensIn} in / ~${tokensOut} out (estimate)` : `${tokensIn} in / ${tokensOut} out`;
  return { text, estimated };
}

export function createStatus({ doc }, now) {
  const node = h(doc, "div", "pi-status");
  const parts = {};
  for (const name of PARTS) {
    parts[name] = h(doc, "span", `pi-${name}`);
    node.append(parts[name]);
  }
  const note = h(doc, "span", "pi-note");
  const error = h(doc, "span", "pi-error");
  node.append(note, error);
  let elapsedBase = 0; // the kernel's elapsed ms in the last status
  let elapsedAt = now(); // when it arrived

  return {
    node,
    // Draw the status `s` (the state tree's status).
    render(s) {
      parts.model.textContent = s.model;
      parts.turn.textContent = `turn ${s.turn}`;
      const counts = tokenCounts(s);
      parts.tokens.textContent = counts.text;
      if (counts.estimated) parts.tokens.title = ESTIMATE_TITLE;
      else parts.tokens.removeAttribute("title");
      parts.cost.textContent = `$${Number(s.cost).toFixed(4)}`;
      elapsedBase = s.elapsed_ms;
      elapsedAt = now();
      parts["state-label"].textContent = stateLabel(s, elapsedBase);
      parts.elapsed.textContent = formatElapsed(elapsedBase);
      note.textContent = s.note ? ` — ${s.note}` : "";
      error.textContent = s.error ? ` — ${s.error}` : "";
    },
    // Advance the clock (and the seconds waited) of a live run between frames.
    tick(s) {
      const elapsed = elapsedBase + (now() - elapsedAt);
      parts.elapsed.textContent = formatElapsed(elapsed);
      if (s.state === "waiting") parts["state-label"].textContent = stateLabel(s, elapsed);
    },
  };
}
