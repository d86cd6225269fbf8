// The panel's DOM: mountPanel(el, {send}) builds the view, follows snapshots and delta frames
// through a Receiver, and turns the controls into messages for the kernel. There is no
// Markdown parser here: the kernel renders Markdown to sanitised HTML (markdown-it-py, see
// pi_notebook/notebook/panel/markdown.py) and that HTML is the only markup inserted; every
// other model or tool text is set as textContent, images only for raster data URLs.
//
// A text block is {html: [finished top-level blocks], tail: html of the part still
// streaming, raw: null | that part as plain text (when it is long)}. A frame appends the new
// finished blocks before the tail and replaces only the tail (or appends to the raw text), so
// the work per frame depends on the new text, never on the whole answer. The finished blocks
// sit in chunks of CHUNK (div.pi-chunk), so the layout of a frame does not walk them all.
//
// The wire contract (the state tree, the ops, the messages both ways) is docs/panel-protocol.md;
// js/test/contract.test.js checks this view against its generated fixture.

import { Receiver } from "./deltas.js";

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;
const PREVIEW_CHARS = 600;
const CHUNK = 32;
const LIVE = new Set(["waiting", "streaming", "running-tools", "awaiting-approval"]);
const FINAL = new Set(["done", "aborted", "error"]);
const STATE_LABELS = {
  waiting: "waiting for the model",
  "running-tools": "running tools",
  "awaiting-approval": "awaiting approval",
};
const TOOL_LABELS = { "awaiting-approval": "awaiting approval", rejected: "malformed call: not run" };
// Where a queued message lands, by the run's state (Pi: steering waits for the turn to end).
const TOOL_STATES = new Set(["running-tools", "awaiting-approval"]);
const DRAFT_DEBOUNCE_MS = 250;

function h(doc, tag, cls, attrs = {}) {
  const node = doc.createElement(tag);
  if (cls) node.className = cls;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

export function safeImage(doc, image) {
  if (!image || !IMAGE_TYPES.has(image.mime) || typeof image.data !== "string") return null;
  if (!BASE64.test(image.data)) return null;
  const img = h(doc, "img", "pi-image", { alt: "tool image" });
  img.src = `data:${image.mime};base64,${image.data}`;
  return img;
}

function formatElapsed(ms) {
  const s = Math.max(0, ms) / 1000;
  return s < 60 ? `${s.toFixed(1)}s` : `${Math.floor(s / 60)}m${Math.round(s % 60)}s`;
}

// Plain words with `names` in backticks: text nodes and <code> elements (never markup).
function words(doc, text) {
  const parts = String(text || "").split("`");
  return parts.map((part, i) => {
    if (i % 2 === 0) return doc.createTextNode(part);
    const code = doc.createElement("code");
    code.textContent = part;
    return code;
  });
}

const GRANULARITY = {
  lifecycle: "lifecycle events",
  all: "every event and model request",
  tools: "tools and model requests",
};

// A lifecycle node's own time: its span without the time it was held in step mode.
function nodeTimes(node) {
  const own = node.end == null ? "…" : `${(Math.max(0, node.end - node.start - (node.held || 0)) / 1000).toFixed(3)}s`;
  const held = node.held ? ` · held ${formatElapsed(node.held)}` : "";
  const updates = node.updates ? ` · ${node.updates} update${node.updates === 1 ? "" : "s"}` : "";
  return `${own}${held}${updates}`;
}

function tokens(n) {
  return `≈ ${n} token${n === 1 ? "" : "s"}`;
}

function preview(text) {
  return text.length <= PREVIEW_CHARS ? text : text.slice(0, PREVIEW_CHARS) + " …";
}

export function mountPanel(el, { send, now = () => Date.now(), tick = true, setTimer = setTimeout, clearTimer = clearTimeout } = {}) {
  const doc = el.ownerDocument;
  const receiver = new Receiver();
  const openDetails = new Map(); // key -> open? (survives re-rendering)
  let elapsedBase = 0;
  let elapsedAt = now();

  const root = h(doc, "div", "pi-panel", { "data-state": "idle", tabindex: "0" });
  const status = h(doc, "div", "pi-status");
  const parts = {};
  for (const name of ["model", "state-label", "turn", "tokens", "cost", "elapsed"]) {
    parts[name] = h(doc, "span", `pi-${name}`);
    status.append(parts[name]);
  }
  const note = h(doc, "span", "pi-note");
  const error = h(doc, "span", "pi-error");
  status.append(note, error);
  const transcript = h(doc, "div", "pi-transcript");
  const approvals = h(doc, "div", "pi-approvals");
  const stepBox = h(doc, "div", "pi-step", { role: "status" });
  const stepMode = h(doc, "span", "pi-step-mode");
  const stepEvent = h(doc, "code", "pi-step-event");
  const stepWhat = h(doc, "span", "pi-step-what");
  const stepNext = h(doc, "span", "pi-step-next");
  const stepText = h(doc, "span", "pi-step-text");
  stepText.append(stepWhat, stepNext);
  const next = h(doc, "button", "pi-next", { type: "button" });
  next.textContent = "Next";
  const runToEnd = h(doc, "button", "pi-run-to-end", { type: "button" });
  runToEnd.textContent = "Run to end";
  stepBox.append(stepMode, stepEvent, stepText, next, runToEnd);
  stepBox.hidden = true;
  const contextBox = h(doc, "details", "pi-context");
  const contextSummary = h(doc, "summary", "pi-context-summary");
  const contextBody = h(doc, "div", "pi-context-body");
  contextBox.append(contextSummary, contextBody);
  contextBox.hidden = true;
  contextBox.addEventListener("toggle", () => openDetails.set("context", contextBox.open));
  const controls = h(doc, "div", "pi-controls");
  const input = h(doc, "textarea", "pi-input", { rows: "1" });
  const steer = h(doc, "button", "pi-steer", { type: "button" });
  steer.textContent = "Steer";
  const interrupt = h(doc, "button", "pi-interrupt", {
    type: "button",
    title: "Stop the answer now (what streamed is kept, marked aborted) and send this at once",
  });
  interrupt.textContent = "Interrupt & send";
  const followup = h(doc, "button", "pi-followup", { type: "button" });
  followup.textContent = "Follow-up";
  const abort = h(doc, "button", "pi-abort", { type: "button" });
  abort.textContent = "Abort";
  controls.append(input, steer, interrupt, followup, abort);
  const queueBox = h(doc, "div", "pi-queue-box");
  const queue = h(doc, "ul", "pi-queue");
  const clearQueue = h(doc, "button", "pi-clear-queue", { type: "button" });
  clearQueue.textContent = "Clear queue";
  queueBox.append(queue, clearQueue);
  const lifecycleBox = h(doc, "details", "pi-lifecycle-box");
  const lifecycleSummary = h(doc, "summary");
  lifecycleSummary.textContent = "Lifecycle";
  const lifecycle = h(doc, "div", "pi-lifecycle");
  lifecycleBox.append(lifecycleSummary, lifecycle);
  // While the run is live the transcript scrolls in its own box (.pi-is-live, panel.css) and
  // follows the end unless the reader scrolled up, so the status line above and the controls
  // below stay in view: a long answer cannot push Abort off-screen.
  root.append(status, transcript, contextBox, approvals, stepBox, controls, queueBox, lifecycleBox);
  el.append(root);

  // -- controls --------------------------------------------------------------------------
  // The draft in the box reaches the kernel as it is typed (debounced) and once more, final,
  // when the kernel says the run is closing, so an unsent draft outlives the run (the kernel
  // queues it as a follow-up for the next %%agent cell) and no keystroke is lost.
  let draftTimer = null;
  let sentDraft = "";
  let closing = false;
  const sendDraft = (final = false) => {
    if (draftTimer !== null) clearTimer(draftTimer);
    draftTimer = null;
    const text = input.value;
    if (final) send({ type: "draft", text, final: true });
    else if (text !== sentDraft) send({ type: "draft", text });
    sentDraft = text;
  };
  input.addEventListener("input", () => {
    if (closing) return;
    if (draftTimer !== null) clearTimer(draftTimer);
    draftTimer = setTimer(() => sendDraft(), DRAFT_DEBOUNCE_MS);
  });
  const submit = (type) => {
    const text = input.value.trim();
    if (!text || closing) return;
    send({ type, text });
    input.value = "";
    if (draftTimer !== null) clearTimer(draftTimer);
    draftTimer = null;
    sentDraft = ""; // the kernel forgets the draft it had when a message is sent
  };
  steer.addEventListener("click", () => submit("steer"));
  interrupt.addEventListener("click", () => submit("interrupt_send"));
  followup.addEventListener("click", () => submit("followup"));
  abort.addEventListener("click", () => send({ type: "abort" }));
  clearQueue.addEventListener("click", () => send({ type: "clear_queue" }));
  next.addEventListener("click", () => send({ type: "next" }));
  runToEnd.addEventListener("click", () => send({ type: "run_to_end" }));
  root.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      send({ type: "abort" });
    } else if (event.key === "Enter" && !event.shiftKey && event.target === input) {
      event.preventDefault();
      submit("steer");
    }
  });
  approvals.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    const card = button && button.closest(".pi-approval");
    if (!card) return;
    const approved = button.classList.contains("pi-approve");
    if (!approved && !button.classList.contains("pi-deny")) return;
    send({ type: "approval", tool_call_id: card.getAttribute("data-tool-call-id"), approved });
  });

  // -- rendering -------------------------------------------------------------------------
  const details = (key, cls, summaryText) => {
    const node = h(doc, "details", cls);
    const summary = h(doc, "summary");
    summary.textContent = summaryText;
    node.append(summary);
    if (openDetails.get(key)) node.open = true;
    node.addEventListener("toggle", () => openDetails.set(key, node.open));
    return node;
  };

  const stateLabel = (s, elapsed) => {
    const label = STATE_LABELS[s.state] || s.state;
    if (s.state !== "waiting" || s.waiting_since == null) return label;
    return `${label} (${Math.max(0, Math.floor((elapsed - s.waiting_since) / 1000))}s)`;
  };

  const renderStatus = () => {
    const s = receiver.state.status;
    root.setAttribute("data-state", s.state);
    root.classList.toggle("pi-is-live", LIVE.has(s.state) && !closing);
    parts.model.textContent = s.model;
    parts.turn.textContent = `turn ${s.turn}`;
    const estIn = s.est_in || 0;
    const estOut = s.est_out || 0;
    const estimated = estIn + estOut > 0 || !!s.estimated;
    const tokensIn = s.tokens_in + estIn;
    const tokensOut = s.tokens_out + estOut;
    parts.tokens.textContent = estimated
      ? `~${tokensIn} in / ~${tokensOut} out (estimate)`
      : `${tokensIn} in / ${tokensOut} out`;
    if (estimated) parts.tokens.title = "estimated at 4 characters a token where the provider has not reported usage";
    else parts.tokens.removeAttribute("title");
    parts.cost.textContent = `$${Number(s.cost).toFixed(4)}`;
    elapsedBase = s.elapsed_ms;
    elapsedAt = now();
    parts["state-label"].textContent = stateLabel(s, elapsedBase);
    parts.elapsed.textContent = formatElapsed(elapsedBase);
    note.textContent = s.note ? ` — ${s.note}` : "";
    error.textContent = s.error ? ` — ${s.error}` : "";
    renderControls();
  };

  // The run is over for the controls only when its state is final and nothing is held (held
  // at agent_end, the loop still waits: Abort and Next must work), or while the run closes.
  const renderControls = () => {
    const step = receiver.state.step || {};
    const state = receiver.state.status.state;
    const finished = (FINAL.has(state) && !step.held) || closing;
    for (const control of [steer, interrupt, followup, abort, input]) control.disabled = finished;
    const where = TOOL_STATES.has(state) ? "after these tools" : "after this answer";
    input.placeholder = `Steer (lands ${where}) or follow up… Enter steers, Esc aborts`;
    steer.title = `Delivered ${where}: steering waits for the turn to end`;
    followup.title = "Delivered when the agent would otherwise stop";
  };

  const renderCard = (id) => {
    const card = receiver.state.tools[id];
    const node = h(doc, "div", "pi-tool-card", {
      "data-tool-call-id": id,
      "data-status": card ? card.status : "pending",
    });
    if (!card) return node;
    const head = h(doc, "div", "pi-tool-head");
    const name = h(doc, "span", "pi-tool-name");
    name.textContent = card.name;
    const state = h(doc, "span", "pi-tool-status");
    state.textContent = TOOL_LABELS[card.status] || card.status;
    const duration = h(doc, "span", "pi-tool-duration");
    duration.textContent = card.duration_ms == null ? "" : formatElapsed(card.duration_ms);
    head.append(name, state, duration);
    node.append(head);
    if (card.not_run) {
      const line = h(doc, "div", "pi-tool-not-run");
      line.textContent = `The model's call was malformed (${card.not_run}): the tool did not run.`;
      node.append(line);
    }
    const args = h(doc, "pre", "pi-tool-args");
    args.textContent = card.args_text;
    const result = h(doc, "div", "pi-tool-result");
    if (card.result_text) {
      const text = h(doc, "pre", "pi-tool-preview");
      text.textContent = preview(card.result_text);
      result.append(text);
    }
    for (const image of card.images || []) {
      const img = safeImage(doc, image);
      if (img) result.append(img);
    }
    node.append(args, result);
    if (card.result_text && card.result_text.length > PREVIEW_CHARS) {
      const more = details(`tool:${id}`, "pi-tool-details", "details");
      const full = h(doc, "pre");
      full.textContent = card.result_text;
      more.append(full);
      node.append(more);
    }
    if (card.diff) {
      const diff = h(doc, "div", "pi-tool-diff");
      const bits = ["created", "changed", "deleted"]
        .filter((k) => card.diff[k] && card.diff[k].length)
        .map((k) => `${k}: ${card.diff[k].join(", ")}`);
      diff.textContent = bits.length ? `namespace — ${bits.join("; ")}` : "namespace unchanged";
      node.append(diff);
    }
    return node;
  };

  // -- text blocks: finished HTML, then the tail ----------------------------------------
  const shown = new WeakMap(); // text body -> what it shows {html, count, tail, tailHtml, raw}

  const syncTail = (rec, block, reset, appended) => {
    if (block.raw == null) {
      if (rec.raw || rec.tailHtml !== block.tail) {
        rec.tail.className = "pi-tail";
        rec.tail.innerHTML = block.tail || "";
        rec.tailHtml = block.tail;
        rec.raw = null;
      }
    } else if (!rec.raw || reset) {
      rec.tail.className = "pi-tail pi-raw";
      rec.raw = doc.createTextNode(block.raw);
      rec.tail.replaceChildren(rec.raw);
      rec.tailHtml = null;
    } else if (appended) {
      rec.raw.appendData(appended);
    }
  };

  // Finished blocks go into chunks of CHUNK blocks, so a frame's layout visits a few chunks,
  // not every block of a long answer (the chunks are plain divs: margins collapse through).
  const appendBlocks = (rec, list, from) => {
    for (let k = from; k < list.length; ) {
      if (!rec.chunk || rec.inChunk === CHUNK) {
        rec.chunk = h(doc, "div", "pi-chunk");
        rec.tail.before(rec.chunk);
        rec.inChunk = 0;
      }
      const take = Math.min(CHUNK - rec.inChunk, list.length - k);
      rec.chunk.insertAdjacentHTML("beforeend", list.slice(k, k + take).join(""));
      rec.inChunk += take;
      k += take;
    }
    rec.count = list.length;
  };

  const fillText = (body, block) => {
    const tail = h(doc, "div", "pi-tail");
    body.replaceChildren(tail);
    if (block.html === undefined && typeof block.text === "string") {
      // Widget state saved by an older version (blocks of raw text): show it as text.
      block = { html: [], tail: "", raw: block.text };
    }
    const rec = { html: block.html, count: 0, chunk: null, inChunk: 0, tail, tailHtml: "", raw: null };
    shown.set(body, rec);
    appendBlocks(rec, block.html || [], 0);
    syncTail(rec, block, true, "");
  };

  // Bring a text body up to its block after a frame: only the new blocks and the tail.
  const syncText = (body, block, change) => {
    const rec = shown.get(body);
    if (!rec || rec.html !== block.html) return fillText(body, block);
    appendBlocks(rec, block.html, rec.count);
    syncTail(rec, block, change.reset, change.appended);
  };

  const renderBlock = (index, j, block) => {
    if (block.type === "text") {
      const node = h(doc, "div", "pi-text", { "data-block": j });
      fillText(node, block);
      return node;
    }
    if (block.type === "thinking") {
      const node = details(`thinking:${index}:${j}`, "pi-thinking", "thinking");
      node.setAttribute("data-block", j);
      const body = h(doc, "div", "pi-thinking-text");
      fillText(body, block);
      node.append(body);
      return node;
    }
    if (block.type === "toolCall") return renderCard(block.id);
    return h(doc, "div");
  };

  const renderMessage = (index) => {
    const entry = receiver.state.messages[index];
    const node = h(doc, "div", "pi-message", { "data-role": entry.role, "data-index": index });
    if (entry.role === "compaction") {
      // One line: from here on the model sees a summary of the earlier messages.
      const line = h(doc, "span", "pi-compaction");
      line.textContent = entry.text || `compacted ${entry.count} messages`;
      node.append(line);
    } else if (entry.role === "assistant") {
      entry.blocks.forEach((block, j) => node.append(renderBlock(index, j, block)));
      if (entry.error || entry.stop_reason === "aborted") {
        const line = h(doc, "div", "pi-message-error");
        line.textContent = `[${entry.stop_reason || "error"}]${entry.error ? " " + entry.error : ""}`;
        node.append(line);
      }
      if (entry.note) {
        const line = h(doc, "div", "pi-message-note");
        line.textContent = `[${entry.stop_reason || "note"}] ${entry.note}`;
        node.append(line);
      }
    } else {
      const label = h(doc, "span", "pi-role");
      label.textContent =
        entry.role === "toolResult"
          ? `${entry.tool_name}${entry.is_error ? " (error)" : ""} →`
          : entry.role === "user"
            ? "user"
            : entry.custom_role || "custom";
      node.append(label);
      if (entry.role === "toolResult" && receiver.state.tools[entry.tool_call_id]) {
        // Its tool card above shows the result: the message keeps its place, shown once.
        node.hidden = true;
        node.replaceChildren();
        return node;
      } else if (entry.role === "toolResult") {
        const text = h(doc, "pre", "pi-result-text");
        text.textContent = preview(entry.text || "");
        node.append(text);
      } else {
        const text = h(doc, "div", "pi-text");
        if (typeof entry.html === "string") text.innerHTML = entry.html;
        else text.textContent = entry.text || ""; // widget state saved by an older version
        node.append(text);
      }
      for (const image of entry.images || []) {
        const img = safeImage(doc, image);
        if (img) node.append(img);
      }
    }
    return node;
  };

  const messageNode = (index) => transcript.querySelector(`:scope > .pi-message[data-index="${index}"]`);

  // Appends the nodes of messages that have none yet, in transcript order.
  const appendNewMessages = () => {
    for (let i = transcript.children.length; i < receiver.state.messages.length; i++) {
      transcript.append(renderMessage(i));
    }
  };

  const updateMessage = (index) => {
    const old = messageNode(index);
    if (old) old.replaceWith(renderMessage(index));
    else appendNewMessages();
  };

  const updateBlock = (index, j, change) => {
    const old = messageNode(index);
    const block = receiver.state.messages[index]?.blocks?.[j];
    const target = old && old.querySelector(`:scope > [data-block="${j}"]`);
    if (!old || !block || !target) return updateMessage(index);
    if (block.type === "text") syncText(target, block, change);
    else if (block.type === "thinking") syncText(target.querySelector(".pi-thinking-text"), block, change);
    else updateMessage(index);
  };

  const updateCard = (id) => {
    for (const old of root.querySelectorAll(`.pi-tool-card[data-tool-call-id="${CSS_escape(id)}"]`)) {
      old.replaceWith(renderCard(id));
    }
  };

  const renderTranscript = () => {
    transcript.replaceChildren();
    receiver.state.messages.forEach((_, i) => transcript.append(renderMessage(i)));
  };

  // What a lifecycle node points at in the transcript: its message or its tool card.
  const targetOf = (target) => {
    if (!target) return null;
    if (target.message != null) {
      // A tool result its card shows is hidden: its node points at that card.
      const entry = receiver.state.messages[target.message];
      if (entry && entry.role === "toolResult" && receiver.state.tools[entry.tool_call_id]) {
        return targetOf({ tool: entry.tool_call_id });
      }
      return messageNode(target.message);
    }
    if (target.tool != null) {
      return transcript.querySelector(`.pi-tool-card[data-tool-call-id="${CSS_escape(target.tool)}"]`);
    }
    return null;
  };

  const reveal = (target) => {
    const node = targetOf(target);
    if (!node) return;
    if (typeof node.scrollIntoView === "function") node.scrollIntoView({ block: "center", behavior: "smooth" });
    node.classList.add("pi-flash");
    setTimeout(() => node.classList.remove("pi-flash"), 1500);
  };

  lifecycle.addEventListener("click", (event) => {
    const link = event.target.closest(".pi-node-link");
    if (link && link.piTarget) reveal(link.piTarget);
  });
  lifecycle.addEventListener("keydown", (event) => {
    const link = event.target.closest(".pi-node-link");
    if (link && link.piTarget && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      reveal(link.piTarget);
    }
  });

  // Run -> Turn -> Message / Tool: a node with children is a disclosure, a leaf is a line
  // (no empty triangle) that, with a target, scrolls the transcript to it.
  const renderLifecycle = () => {
    const nodes = receiver.state.lifecycle;
    const children = new Map();
    for (const node of nodes) {
      const key = node.parent == null ? -1 : node.parent;
      if (!children.has(key)) children.set(key, []);
      children.get(key).push(node);
    }
    const line = (node) => {
      const extra = node.detail ? ` (${node.detail})` : "";
      const label = h(doc, "span", "pi-node-label");
      label.textContent = `${node.label}${extra}`;
      const times = h(doc, "span", "pi-node-times");
      times.textContent = ` · ${nodeTimes(node)}`;
      return [label, times];
    };
    const build = (node) => {
      const kids = children.get(node.id) || [];
      if (!kids.length) {
        const leaf = h(doc, "div", "pi-node pi-leaf", { "data-kind": node.kind });
        if (node.target) {
          const link = h(doc, "span", "pi-node-link", { role: "link", tabindex: "0", title: "Show it in the transcript" });
          link.piTarget = node.target;
          link.append(...line(node));
          leaf.append(link);
        } else leaf.append(...line(node));
        return leaf;
      }
      const item = details(`node:${node.id}`, "pi-node", "");
      item.setAttribute("data-kind", node.kind);
      item.querySelector("summary").append(...line(node));
      for (const child of kids) item.append(build(child));
      if (!openDetails.has(`node:${node.id}`)) item.open = node.kind !== "message";
      return item;
    };
    lifecycle.replaceChildren(...(children.get(-1) || []).map(build));
  };

  const landing = (kind) => {
    const state = receiver.state.status.state;
    if (FINAL.has(state)) return kind === "steer" ? "with the next %%agent cell's prompt" : "after the next %%agent cell's answer";
    if (kind === "interrupt") return "as soon as the stream stops";
    if (kind === "steer") return TOOL_STATES.has(state) ? "after these tools" : "after this answer";
    return "when the agent would stop";
  };

  // What the model is (about to be) sent: the latest request, as a readable list.
  const renderContext = () => {
    const context = receiver.state.context;
    contextBox.hidden = !context;
    if (!context) return;
    contextBox.setAttribute("data-held", context.held ? "true" : "false");
    const count = context.message_count;
    const tools = context.tools.length;
    contextSummary.textContent =
      `What the model ${context.held ? "will be" : "was"} sent — turn ${context.turn}: ` +
      `${count} message${count === 1 ? "" : "s"}, ${tools} tool${tools === 1 ? "" : "s"}, ${tokens(context.tokens)}`;
    contextBox.open = !!openDetails.get("context");
    const list = h(doc, "ol", "pi-context-list");
    const item = (role, label, n, text) => {
      const li = h(doc, "li", "pi-context-item", { "data-role": role });
      const head = h(doc, "div", "pi-context-head");
      const name = h(doc, "span", "pi-context-role");
      name.textContent = label;
      const size = h(doc, "span", "pi-context-tokens");
      size.textContent = tokens(n);
      head.append(name, size);
      const body = h(doc, "pre", "pi-context-text");
      body.textContent = text;
      li.append(head, body);
      return li;
    };
    list.append(item("system", "system prompt", context.system.tokens, context.system.text || "(none)"));
    if (context.skipped) {
      const li = h(doc, "li", "pi-context-skipped");
      li.textContent = `… ${context.skipped} earlier messages (%agent context ${context.turn} prints them all)`;
      list.append(li);
    }
    for (const m of context.messages) list.append(item(m.role, `${m.n}. ${m.label}`, m.tokens, m.text));
    const toolList = h(doc, "ul", "pi-context-tools");
    for (const t of context.tools) {
      const li = h(doc, "li", "pi-context-tool");
      const name = h(doc, "code");
      name.textContent = t.name;
      li.append(name, ` ${t.description ? "— " + t.description + " " : ""}(${tokens(t.tokens)})`);
      toolList.append(li);
    }
    const toolsHead = h(doc, "div", "pi-context-head");
    toolsHead.textContent = tools ? "tools (their JSON schemas are sent too)" : "no tools";
    const options = h(doc, "div", "pi-context-options");
    const names = Object.keys(context.options || {});
    options.textContent = names.length
      ? `options: ${names.map((k) => `${k}=${JSON.stringify(context.options[k])}`).join(", ")}`
      : "options: none set";
    const note = h(doc, "div", "pi-context-note");
    note.textContent = "≈: an estimate, 4 characters a token (as Pi counts)";
    const raw = details("context-json", "pi-context-json", "raw JSON");
    const pre = h(doc, "pre", "pi-context-raw");
    pre.textContent = context.json == null ? "loading…" : context.json;
    raw.append(pre);
    const ask = () => {
      if (raw.open && receiver.state.context && receiver.state.context.json == null) send({ type: "context_json" });
    };
    raw.addEventListener("toggle", ask);
    contextBody.replaceChildren(list, toolsHead, toolList, options, note, raw);
    ask();
  };

  const renderQueue = () => {
    const items = receiver.state.queue || [];
    const names = { steer: "steer", followup: "follow-up", interrupt: "interrupt & send" };
    queue.replaceChildren(
      ...items.map((item) => {
        const li = h(doc, "li", "pi-queue-item", { "data-kind": item.kind });
        li.textContent = `${names[item.kind] || item.kind} (${landing(item.kind)}): ${item.text}`;
        return li;
      }),
    );
    queueBox.hidden = items.length === 0;
  };

  // A held loop always shows its Next / Run to end, also once the state is final (held at
  // agent_end); the bar goes only when nothing is held and the run is over.
  const renderStep = () => {
    const step = receiver.state.step || {};
    const over = FINAL.has(receiver.state.status.state);
    stepBox.hidden = !step.held && (!step.enabled || over);
    stepBox.setAttribute("data-count", String(step.count || 0));
    stepBox.setAttribute("data-held", step.held || "");
    stepMode.textContent = `Step mode${step.granularity ? ` (${GRANULARITY[step.granularity] || step.granularity})` : ""}`;
    stepEvent.textContent = step.held || "—";
    stepWhat.replaceChildren(...words(doc, step.held ? step.what || `held at ${step.held}` : "running to the next hold…"));
    stepNext.replaceChildren(...(step.held && step.next ? [doc.createTextNode(" — next: "), ...words(doc, step.next)] : []));
    next.disabled = !step.held;
    runToEnd.disabled = !step.held && over;
    renderControls();
  };

  const renderApprovals = () => {
    approvals.replaceChildren(
      ...(receiver.state.approvals || []).map((card) => {
        const node = h(doc, "div", "pi-approval", { "data-tool-call-id": card.tool_call_id });
        const text = h(doc, "div", "pi-approval-summary");
        text.textContent = `Run ${card.tool_name}? ${card.summary}`;
        const args = h(doc, "pre", "pi-approval-args");
        args.textContent = card.args_text || "";
        const yes = h(doc, "button", "pi-approve", { type: "button" });
        yes.textContent = "Approve";
        const no = h(doc, "button", "pi-deny", { type: "button" });
        no.textContent = "Deny";
        node.append(text, args, yes, no);
        return node;
      }),
    );
  };

  const renderAll = () => {
    renderStatus();
    renderTranscript();
    renderContext();
    renderLifecycle();
    renderQueue();
    renderStep();
    renderApprovals();
  };

  // Follow the end of a live transcript, unless the reader scrolled up to read.
  const following = () =>
    root.classList.contains("pi-is-live") &&
    transcript.scrollTop + transcript.clientHeight >= transcript.scrollHeight - 24;

  const renderChanges = (ops) => {
    const follow = following();
    renderOps(ops);
    if (follow) transcript.scrollTop = transcript.scrollHeight;
  };

  const renderOps = (ops) => {
    const sections = new Set();
    const messages = new Set();
    const blocks = new Map(); // "i:j" -> {index, j, reset, appended}
    const cards = new Set();
    let newMessages = false;
    for (const [kind, path, value] of ops) {
      const [head, a, b, c, key] = path;
      if (head === "messages") {
        if (path.length === 1) newMessages = true;
        else if (b === "blocks" && (path.length === 5 || kind === "m")) {
          const id = `${a}:${c}`;
          const change = blocks.get(id) || { index: a, j: c, reset: false, appended: "" };
          if (key === "raw") {
            if (kind === "a") change.appended += value;
            else change.reset = true;
          }
          blocks.set(id, change);
        } else messages.add(a);
      } else if (head === "tools") {
        cards.add(a);
      } else sections.add(head);
    }
    if (sections.has("status")) {
      renderStatus();
      renderStep();
      renderQueue(); // where queued messages land depends on the state
    }
    // New messages first (in order), so an update never meets a message without its node.
    const known = transcript.children.length;
    if (newMessages) appendNewMessages();
    for (const index of messages) if (index < known) updateMessage(index);
    for (const change of blocks.values()) {
      if (change.index < known && !messages.has(change.index)) updateBlock(change.index, change.j, change);
    }
    for (const id of cards) updateCard(id);
    if (sections.has("lifecycle")) renderLifecycle();
    if (sections.has("context")) renderContext();
    if (sections.has("queue")) renderQueue();
    if (sections.has("step")) renderStep();
    if (sections.has("approvals")) renderApprovals();
  };

  const timer = tick
    ? setInterval(() => {
        const s = receiver.state && receiver.state.status;
        if (s && LIVE.has(s.state)) {
          const elapsed = elapsedBase + (now() - elapsedAt);
          parts.elapsed.textContent = formatElapsed(elapsed);
          if (s.state === "waiting") parts["state-label"].textContent = stateLabel(s, elapsed);
        }
      }, 250)
    : null;

  return {
    root,
    receiver,
    get seq() {
      return receiver.seq;
    },
    adopt(state) {
      receiver.adopt(state);
      renderAll();
    },
    receive(message) {
      if (message && message.type === "closing") {
        // The run ended and the kernel is about to replace this view: hand over the draft.
        sendDraft(true);
        closing = true;
        if (receiver.state) renderStatus();
        return { changed: null, resync: false };
      }
      const { changed, resync } = receiver.receive(message);
      if (resync) send({ type: "resync" });
      if (changed === "all") {
        renderAll();
        if (root.classList.contains("pi-is-live")) transcript.scrollTop = transcript.scrollHeight;
      } else if (changed) renderChanges(message.ops);
      return { changed, resync };
    },
    destroy() {
      if (timer !== null) clearInterval(timer);
      if (draftTimer !== null) clearTimer(draftTimer);
      root.remove();
    },
  };
}

function CSS_escape(value) {
  return String(value).replace(/["\\]/g, "\\$&");
}
