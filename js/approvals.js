// Approval cards: "Run tool? summary" with its arguments and four answers (each names the tool
// call id): Approve, Always allow <tool> (this and every later call of the tool, for the
// conversation), Deny (the model may try again) and Deny and stop (the run ends at once).

import { h } from "./dom.js";

// Button class -> [approved, the answer it names]: Approve and Deny send `approved` alone, the
// other two name their answer too (approvals.py's Approvals.answer reads `answer` first).
const ANSWERS = {
  "pi-approve": [true, null],
  "pi-always": [true, "always"],
  "pi-deny": [false, null],
  "pi-deny-stop": [false, "stop"],
};

export function createApprovals({ doc, send }) {
  const node = h(doc, "div", "pi-approvals");
  node.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    const card = button && button.closest(".pi-approval");
    if (!card) return;
    const kind = Object.keys(ANSWERS).find((cls) => button.classList.contains(cls));
    if (!kind) return;
    const [approved, answer] = ANSWERS[kind];
    const message = { type: "approval", tool_call_id: card.getAttribute("data-tool-call-id"), approved };
    send(answer ? { ...message, answer } : message);
  });

  const button = (cls, label, title) => {
    const node = h(doc, "button", cls, { type: "button", title });
    node.textContent = label;
    return node;
  };

  const card = (approval) => {
    const item = h(doc, "div", "pi-approval", { "data-tool-call-id": approval.tool_call_id });
    const text = h(doc, "div", "pi-approval-summary");
    text.textContent = `Run this call? ${approval.summary}`; // the summary names the tool
    const args = h(doc, "pre", "pi-approval-args");
    args.textContent = approval.args_text || "";
    const name = approval.tool_name;
    item.append(
      text,
      args,
      button("pi-approve", "Approve", "Run this call"),
      button("pi-always", `Always allow ${name}`, `Run this and every later ${name} call of this conversation without asking (until %agent reset or --approve)`),
      button("pi-deny", "Deny", "Do not run this call; the model may try something else"),
      button("pi-deny-stop", "Deny and stop", "Do not run this call and end the run now"),
    );
    return item;
  };

  return {
    node,
    render(state) {
      node.replaceChildren(...(state.approvals || []).map(card));
    },
  };
}
