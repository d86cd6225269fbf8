// The anywidget entry point of the agent panel. The view announces itself with
// {"type": "hello"} once it listens, so the kernel answers with a snapshot before any delta
// (anywidget drops custom messages sent before a view listens); the hello carries the seq of
// the state the view already has (-1 for none). The synced `state` trait
// (low rate during a run, always at its end) is adopted when it is at least as new.

import { mountPanel } from "./view.js";

function render({ model, el }) {
  const send = (message) => {
    try {
      model.send(message);
    } catch (error) {
      // A model restored from saved widget state has no kernel to talk to: show the state.
      console.debug("pi-panel: cannot reach the kernel", error);
    }
  };
  const view = mountPanel(el, { send });
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
