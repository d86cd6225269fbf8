// The queue under the controls: the steers and follow-ups waiting for delivery, each saying
// when it lands, and Clear queue.

import { h } from "./dom.js";
import { FINAL, steerLands } from "./states.js";

const NAMES = { steer: "steer", followup: "follow-up", interrupt: "interrupt & send" };

// When a queued message of `kind` reaches the model, given the run's state.
export function landing(kind, state) {
  if (FINAL.has(state)) return kind === "steer" ? "with the next %%agent cell's prompt" : "after the next %%agent cell's answer";
  if (kind === "interrupt") return "as soon as the stream stops";
  if (kind === "steer") return steerLands(state);
  return "when the agent would stop";
}

export function createQueue({ doc, send }) {
  const node = h(doc, "div", "pi-queue-box");
  const list = h(doc, "ul", "pi-queue");
  const clear = h(doc, "button", "pi-clear-queue", { type: "button" });
  clear.textContent = "Clear queue";
  node.append(list, clear);
  clear.addEventListener("click", () => send({ type: "clear_queue" }));

  return {
    node,
    render(state) {
      const items = state.queue || [];
      const run = state.status.state;
      list.replaceChildren(
        ...items.map((item) => {
          const li = h(doc, "li", "pi-queue-item", { "data-kind": item.kind });
          li.textContent = `${NAMES[item.kind] || item.kind} (${landing(item.kind, run)}): ${item.text}`;
          return li;
        }),
      );
      node.hidden = items.length === 0;
    },
  };
}
