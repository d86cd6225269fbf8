// The lifecycle tree, collapsed under "Lifecycle": Run -> Turn -> Message / Tool. A node with
// children is a disclosure (data-kind), a leaf is a line (no empty triangle) that, with a
// target, is a link: a click (or Enter / Space) scrolls the transcript to its message or card
// and flashes it. Each node shows its own time (without the time held in step mode).

import { h } from "./dom.js";
import { nodeTimes } from "./format.js";

const FLASH_MS = 1500;

// The children of each node id (-1: the roots), in state order.
export function childrenOf(nodes) {
  const children = new Map();
  for (const node of nodes) {
    const key = node.parent == null ? -1 : node.parent;
    if (!children.has(key)) children.set(key, []);
    children.get(key).push(node);
  }
  return children;
}

export function createLifecycle({ doc, state, disclosures }, nodeFor) {
  const box = h(doc, "details", "pi-lifecycle-box");
  const summary = h(doc, "summary");
  summary.textContent = "Lifecycle";
  const tree = h(doc, "div", "pi-lifecycle");
  box.append(summary, tree);

  const reveal = (target) => {
    const node = nodeFor(target);
    if (!node) return;
    if (typeof node.scrollIntoView === "function") node.scrollIntoView({ block: "center", behavior: "smooth" });
    node.classList.add("pi-flash");
    setTimeout(() => node.classList.remove("pi-flash"), FLASH_MS);
  };
  tree.addEventListener("click", (event) => {
    const link = event.target.closest(".pi-node-link");
    if (link && link.piTarget) reveal(link.piTarget);
  });
  tree.addEventListener("keydown", (event) => {
    const link = event.target.closest(".pi-node-link");
    if (link && link.piTarget && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      reveal(link.piTarget);
    }
  });

  const line = (node) => {
    const extra = node.detail ? ` (${node.detail})` : "";
    const label = h(doc, "span", "pi-node-label");
    label.textContent = `${node.label}${extra}`;
    const times = h(doc, "span", "pi-node-times");
    times.textContent = ` · ${nodeTimes(node)}`;
    return [label, times];
  };

  const leaf = (node) => {
    const item = h(doc, "div", "pi-node pi-leaf", { "data-kind": node.kind });
    if (node.target) {
      const link = h(doc, "span", "pi-node-link", { role: "link", tabindex: "0", title: "Show it in the transcript" });
      link.piTarget = node.target;
      link.append(...line(node));
      item.append(link);
    } else item.append(...line(node));
    return item;
  };

  const build = (node, children) => {
    const kids = children.get(node.id) || [];
    if (!kids.length) return leaf(node);
    const key = `node:${node.id}`;
    const item = disclosures.details(key, "pi-node", "");
    item.setAttribute("data-kind", node.kind);
    item.querySelector("summary").append(...line(node));
    for (const child of kids) item.append(build(child, children));
    if (!disclosures.known(key)) item.open = node.kind !== "message";
    return item;
  };

  return {
    node: box,
    render() {
      const children = childrenOf(state().lifecycle);
      tree.replaceChildren(...(children.get(-1) || []).map((node) => build(node, children)));
    },
  };
}
