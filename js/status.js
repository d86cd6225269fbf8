// The status line: model, state, turn, tokens, cost, the run's clock, the time held in step
// mode, a note and the error. The clock is the run's own time (the kernel leaves step-mode
// holds out): it ticks in the view between frames (tick()), stands still while held, and each
// frame's status re-bases it on the kernel's elapsed time without ever going back. While step
// mode holds, the state reads "held (step mode)" and what is held, never the state before.

import { h } from "./dom.js";
import { formatElapsed } from "./format.js";

const STATE_LABELS = {
  waiting: "waiting for the model",
  "running-tools": "running tools",
  "awaiting-approval": "awaiting approval",
};
const PARTS = ["model", "state-label", "turn", "tokens", "cost", "elapsed", "held-time"];
const ESTIMATE_TITLE = "estimated at 4 characters a token where the provider has not reported usage";

// The state in words; while waiting for the first token, with the seconds waited.
export function stateLabel(s, elapsed) {
  if (s.held) return `held (step mode): ${String(s.held).replace(/^held /, "").replace(/`/g, "")}`;
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
  let shown = 0; // the clock as shown: it never goes back
  const show = (ms) => {
    shown = Math.max(shown, ms);
    parts.elapsed.textContent = formatElapsed(shown);
  };

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
      elapsedBase = Math.max(s.elapsed_ms, shown);
      elapsedAt = now();
      parts["state-label"].textContent = stateLabel(s, elapsedBase);
      show(elapsedBase);
      parts["held-time"].textContent = s.held_ms ? `(held ${formatElapsed(s.held_ms)})` : "";
      note.textContent = s.note ? ` — ${s.note}` : "";
      error.textContent = s.error ? ` — ${s.error}` : "";
    },
    // Advance the clock (and the seconds waited) of a live run between frames.
    tick(s) {
      if (s.held) {
        elapsedAt = now(); // held: the run's clock stands still
        return;
      }
      const elapsed = elapsedBase + (now() - elapsedAt);
      show(elapsed);
      if (s.state === "waiting") parts["state-label"].textContent = stateLabel(s, elapsed);
    },
  };
}
