// How the panel writes times, token counts and long texts (pi_notebook/notebook/panel/static.py
// writes them the same way for the saved transcript).

export const PREVIEW_CHARS = 600;

export function formatElapsed(ms) {
  const s = Math.max(0, ms) / 1000;
  return s < 60 ? `${s.toFixed(1)}s` : `${Math.floor(s / 60)}m${Math.round(s % 60)}s`;
}

// A lifecycle node's own time: its span without the time it was held in step mode.
export function nodeTimes(node) {
  const own = node.end == null ? "…" : `${(Math.max(0, node.end - node.start - (node.held || 0)) / 1000).toFixed(3)}s`;
  const held = node.held ? ` · held ${formatElapsed(node.held)}` : "";
  const updates = node.updates ? ` · ${node.updates} update${node.updates === 1 ? "" : "s"}` : "";
  return `${own}${held}${updates}`;
}

export function tokens(n) {
  return `≈ ${n} token${n === 1 ? "" : "s"}`;
}

export function preview(text) {
  return text.length <= PREVIEW_CHARS ? text : text.slice(0, PREVIEW_CHARS) + " …";
}
