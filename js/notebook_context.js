// A run's notebook context: what ran in the notebook since the conversation's last run, as
// the model was sent it. One collapsed entry at the start of the turn ("notebook context: 3
// cells, 1 error (KeyError)") that opens to each cell: In [n]'s source, Out[n], the error
// (type, message, the cell's frame and the last ones). All of it goes in as text; the static
// transcript draws the same (static.py's notebook_context_html).

import { h } from "./dom.js";

function pre(doc, cls, text) {
  const node = h(doc, "pre", cls);
  node.textContent = text;
  return node;
}

// The <details> of entry `index` (a notebookContext entry of the state's messages).
export function renderNotebookContext(doc, disclosures, entry, index) {
  const box = disclosures.details(
    `notebook-context:${index}`,
    "pi-nbcontext",
    entry.title || "notebook context",
  );
  if (entry.left_out) {
    const note = h(doc, "div", "pi-nbcontext-note");
    note.textContent = entry.left_out;
    box.append(note);
  }
  for (const cell of entry.cells || []) {
    const node = h(doc, "div", "pi-nbcell", { "data-cell": cell.number });
    const label = h(doc, "div", "pi-nbcell-label");
    label.textContent = `In [${cell.number}]:`;
    node.append(label, pre(doc, "pi-nbcell-source", cell.source || ""));
    if (cell.result != null) node.append(pre(doc, "pi-nbcell-out", `Out[${cell.number}]: ${cell.result}`));
    if (cell.error != null) node.append(pre(doc, "pi-nbcell-error", cell.error));
    box.append(node);
  }
  return box;
}
