// The anywidget entry point of the agent panel. The view announces itself with
// {"type": "hello"} once it listens, so the kernel answers with a snapshot before any delta
// (anywidget drops custom messages sent before a view listens); the hello carries the seq of
// the state the view already has (-1 for none). The synced `state` trait
// (low rate during a run, always at its end) is adopted when it is at least as new.

import { mountPanel } from "./view.js";

const WIDGET_MIME = "application/vnd.jupyter.widget-view+json";

// A new code cell holding `text` below the cell showing this panel. JupyterLab and Notebook 7
// load widgets through @jupyter-widgets/jupyterlab-manager, whose manager's public `context`
// is the notebook's document context: its shared model takes the cell. The panel's cell is the
// one whose widget output is a model with this panel's `key`. Elsewhere (VS Code, Colab, a
// saved notebook's widget state) the text goes to the clipboard.
async function insertCell(model, text, inserted) {
  const manager = model.widget_manager;
  const notebook = manager && manager.context && manager.context.model && manager.context.model.sharedModel;
  if (notebook && typeof notebook.insertCell === "function") {
    const key = model.get("key");
    for (let i = 0; i < notebook.cells.length; i++) {
      const cell = notebook.cells[i];
      const outputs = cell.cell_type === "code" && typeof cell.getOutputs === "function" ? cell.getOutputs() : [];
      for (const output of outputs) {
        const id = output.data && output.data[WIDGET_MIME] && output.data[WIDGET_MIME].model_id;
        const other = id ? await manager.get_model(id).catch(() => null) : null;
        if (key && other && other.get("key") === key) {
          notebook.insertCell(i + 1 + inserted.count++, { cell_type: "code", source: text });
          return "inserted";
        }
      }
    }
  }
  const clipboard = globalThis.navigator && globalThis.navigator.clipboard;
  if (clipboard && typeof clipboard.writeText === "function") {
    await clipboard.writeText(text);
    return "copied";
  }
  return "";
}

function render({ model, el }) {
  const send = (message) => {
    try {
      model.send(message);
    } catch (error) {
      // A model restored from saved widget state has no kernel to talk to: show the state.
      console.debug("pi-panel: cannot reach the kernel", error);
    }
  };
  const inserted = { count: 0 }; // cells this view put below its cell, in click order
  const view = mountPanel(el, { send, insertCell: (text) => insertCell(model, text, inserted) });
  const initial = model.get("state");
  if (initial && initial.status) view.adopt(initial);
  const onMessage = (message) => view.receive(message);
  const onState = () => {
    const state = model.get("state");
    if (state && state.status && (typeof state.seq !== "number" || state.seq >= view.seq)) {
      view.adopt(state);
    }
  };
  model.on("msg:custom", onMessage);
  model.on("change:state", onState);
  // The seq of the state already shown lets the kernel skip the snapshot of a finished run.
  model.send({ type: "hello", seq: view.seq });
  return () => {
    model.off("msg:custom", onMessage);
    model.off("change:state", onState);
    view.destroy();
  };
}

export default { render };
