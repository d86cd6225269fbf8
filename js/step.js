// The step bar: in step mode, the event the loop is held at, what happens there and next (tool
// names in <code>, never markup), and Next / Run to end.

import { h, words } from "./dom.js";
import { FINAL } from "./states.js";

const GRANULARITY = {
  lifecycle: "lifecycle events",
  all: "every event and model request",
  tools: "tools and model requests",
};

export function createStepBar({ doc, send }) {
  const node = h(doc, "div", "pi-step", { role: "status" });
  const mode = h(doc, "span", "pi-step-mode");
  const event = h(doc, "code", "pi-step-event");
  const what = h(doc, "span", "pi-step-what");
  const upcoming = h(doc, "span", "pi-step-next");
  const text = h(doc, "span", "pi-step-text");
  text.append(what, upcoming);
  const next = h(doc, "button", "pi-next", { type: "button" });
  next.textContent = "Next";
  const runToEnd = h(doc, "button", "pi-run-to-end", { type: "button" });
  runToEnd.textContent = "Run to end";
  node.append(mode, event, text, next, runToEnd);
  node.hidden = true;
  next.addEventListener("click", () => send({ type: "next" }));
  runToEnd.addEventListener("click", () => send({ type: "run_to_end" }));

  return {
    node,
    // A held loop always shows its Next / Run to end, also once the state is final (held at
    // agent_end); the bar goes only when nothing is held and the run is over.
    render(state) {
      const step = state.step || {};
      const over = FINAL.has(state.status.state);
      node.hidden = !step.held && (!step.enabled || over);
      node.setAttribute("data-count", String(step.count || 0));
      node.setAttribute("data-held", step.held || "");
      mode.textContent = `Step mode${step.granularity ? ` (${GRANULARITY[step.granularity] || step.granularity})` : ""}`;
      event.textContent = step.held || "—";
      what.replaceChildren(...words(doc, step.held ? step.what || `held at ${step.held}` : "running to the next hold…"));
      upcoming.replaceChildren(...(step.held && step.next ? [doc.createTextNode(" — next: "), ...words(doc, step.next)] : []));
      next.disabled = !step.held;
      runToEnd.disabled = !step.held && over;
    },
  };
}
