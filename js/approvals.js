// Approval cards: "Run tool? summary" with its arguments, Approve and Deny (the answer names
// the tool call id).

import { h } from "./dom.js";

export function createApprovals({ doc, send }) {
  const node = h(doc, "div", "pi-approvals");
  node.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    const card = button && button.closest(".pi-approval");
    if (!card) return;
    const approved = button.classList.contains("pi-approve");
    if (!approved && !button.classList.contains("pi-deny")) return;
    send({ type: "approval", tool_call_id: card.getAttribute("data-tool-call-id"), approved });
  });

  const card = (approval) => {
    const item = h(doc, "div", "pi-approval", { "data-tool-call-id": approval.tool_call_id });
    const text = h(doc, "div", "pi-approval-summary");
    text.textContent = `Run ${approval.tool_name}? ${approval.summary}`;
    const args = h(doc, "pre", "pi-approval-args");
    args.textContent = approval.args_text || "";
    const yes = h(doc, "button", "pi-approve", { type: "button" });
    yes.textContent = "Approve";
    const no = h(doc, "button", "pi-deny", { type: "button" });
    no.textContent = "Deny";
    item.append(text, args, yes, no);
    return item;
  };

  return {
    node,
    render(state) {
      node.replaceChildren(...(state.approvals || []).map(card));
    },
  };
}
