// The context view: what the model is (about to be) sent in the latest request, as a readable
// list (system prompt, messages, tools, options, each with its estimated tokens), collapsed;
// its raw JSON is asked of the kernel ({"type": "context_json"}) when the reader opens it.
// From a run's second request on, "what changed" since the previous request comes first (the
// new messages and why each is there, the ones a compaction replaced, other changes) and the
// full list is collapsed under it (the kernel's context_diff.py computes the changes).

import { h } from "./dom.js";
import { tokens } from "./format.js";

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function createContextView({ doc, send, state, disclosures }) {
  const node = h(doc, "details", "pi-context");
  const summary = h(doc, "summary", "pi-context-summary");
  const body = h(doc, "div", "pi-context-body");
  node.append(summary, body);
  node.hidden = true;
  disclosures.follow("context", node);

  const item = (role, label, n, text) => {
    const li = h(doc, "li", "pi-context-item", { "data-role": role });
    const head = h(doc, "div", "pi-context-head");
    const name = h(doc, "span", "pi-context-role");
    name.textContent = label;
    const size = h(doc, "span", "pi-context-tokens");
    size.textContent = tokens(n);
    head.append(name, size);
    const pre = h(doc, "pre", "pi-context-text");
    pre.textContent = text;
    li.append(head, pre);
    return li;
  };

  const messageList = (context) => {
    const list = h(doc, "ol", "pi-context-list");
    list.append(item("system", "system prompt", context.system.tokens, context.system.text || "(none)"));
    if (context.skipped) {
      const li = h(doc, "li", "pi-context-skipped");
      li.textContent = `… ${context.skipped} earlier messages (%agent context ${context.turn} prints them all)`;
      list.append(li);
    }
    for (const m of context.messages) list.append(item(m.role, `${m.n}. ${m.label}`, m.tokens, m.text));
    return list;
  };

  const toolList = (context) => {
    const list = h(doc, "ul", "pi-context-tools");
    for (const t of context.tools) {
      const li = h(doc, "li", "pi-context-tool");
      const name = h(doc, "code");
      name.textContent = t.name;
      li.append(name, ` ${t.description ? "— " + t.description + " " : ""}(${tokens(t.tokens)})`);
      list.append(li);
    }
    return list;
  };

  // "What changed since turn N": new messages first (each with why it is there), then the
  // messages that left, then one line for the rest.
  const changesBlock = (context, changes) => {
    const box = h(doc, "div", "pi-context-changes");
    const head = h(doc, "div", "pi-context-head pi-context-changes-head");
    const n = Math.abs(changes.tokens);
    const size = `≈ ${changes.tokens >= 0 ? "+" : "−"}${n} token${n === 1 ? "" : "s"}`;
    head.textContent = `What changed since turn ${changes.since}'s request (${size})`;
    box.append(head);
    for (const note of changes.notes) {
      const line = h(doc, "div", "pi-context-change-note");
      line.textContent = note;
      box.append(line);
    }
    if (changes.added.length) {
      const list = h(doc, "ol", "pi-context-list pi-context-added");
      for (const m of changes.added) {
        const li = item(m.role, `+ ${m.n}. ${m.label}`, m.tokens, m.text);
        li.classList.add("pi-context-new");
        const why = h(doc, "span", "pi-context-why");
        why.textContent = m.why;
        li.querySelector(".pi-context-head").append(why);
        list.append(li);
      }
      box.append(list);
    }
    if (changes.removed.length) {
      const out = h(doc, "div", "pi-context-head pi-context-out-head");
      out.textContent = changes.compacted
        ? `out: ${plural(changes.removed.length, "message")} the compaction summary replaced (turn ${changes.since}'s numbers)`
        : `no longer sent: ${plural(changes.removed.length, "message")} (turn ${changes.since}'s numbers)`;
      const list = h(doc, "ol", "pi-context-list pi-context-removed");
      for (const m of changes.removed) {
        const li = item(m.role, `− ${m.n}. ${m.label}`, m.tokens, m.text);
        li.classList.add("pi-context-gone");
        list.append(li);
      }
      box.append(out, list);
    }
    if (!changes.added.length && !changes.removed.length && !changes.notes.length) {
      const same = h(doc, "div", "pi-context-change-note");
      same.textContent = "no change: the same messages as before";
      box.append(same);
    }
    const rest = h(doc, "div", "pi-context-unchanged");
    const more = changes.more ? ` (${changes.more} more changes: %agent context ${context.turn} --diff lists them all)` : "";
    rest.textContent = `unchanged: ${plural(changes.unchanged, "message")}${more}`;
    box.append(rest);
    return box;
  };

  return {
    node,
    render(current) {
      const context = current.context;
      node.hidden = !context;
      if (!context) return;
      node.setAttribute("data-held", context.held ? "true" : "false");
      const tools = context.tools.length;
      summary.textContent =
        `What the model ${context.held ? "will be" : "was"} sent — turn ${context.turn}: ` +
        `${plural(context.message_count, "message")}, ${plural(tools, "tool")}, ${tokens(context.tokens)}`;
      node.open = disclosures.isOpen("context");
      const toolsHead = h(doc, "div", "pi-context-head");
      toolsHead.textContent = tools ? "tools (their JSON schemas are sent too)" : "no tools";
      const options = h(doc, "div", "pi-context-options");
      const names = Object.keys(context.options || {});
      options.textContent = names.length
        ? `options: ${names.map((k) => `${k}=${JSON.stringify(context.options[k])}`).join(", ")}`
        : "options: none set";
      const note = h(doc, "div", "pi-context-note");
      note.textContent = "≈: an estimate, 4 characters a token (as Pi counts)";
      const raw = disclosures.details("context-json", "pi-context-json", "raw JSON");
      const pre = h(doc, "pre", "pi-context-raw");
      pre.textContent = context.json == null ? "loading…" : context.json;
      raw.append(pre);
      // Asked when open and not there yet: the state at that moment (a toggle comes later).
      const ask = () => {
        const now = state().context;
        if (raw.open && now && now.json == null) send({ type: "context_json" });
      };
      raw.addEventListener("toggle", ask);
      const parts = [messageList(context), toolsHead, toolList(context), options];
      const changes = context.changes;
      if (changes) {
        // What changed first; the whole request (the unchanged rest too) collapsed under it.
        const all = disclosures.details("context-all", "pi-context-all",
          `the whole request: ${plural(context.message_count, "message")}, ${plural(tools, "tool")}, options`);
        all.append(...parts);
        body.replaceChildren(changesBlock(context, changes), all, note, raw);
      } else {
        body.replaceChildren(...parts, note, raw);
      }
      ask();
    },
  };
}
