// The panel's DOM: mountPanel(el, {send}) builds the view from its regions, follows snapshots
// and delta frames through a Receiver (deltas.js), and sends the controls' messages to the
// kernel. There is no Markdown parser in the front end: the kernel renders Markdown to
// sanitised HTML (markdown-it-py, see pi_notebook/notebook/panel/markdown.py) and that HTML is
// the only markup inserted; every other model or tool text is set as textContent, images only
// for raster data URLs.
//
// The regions, top to bottom: status.js (the status line), transcript.js (messages, with
// text.js for streaming text and cards.js for tool cards), context.js (what the model is
// sent), approvals.js, step.js (the step bar), controls.js (the message box and its buttons),
// queue.js, lifecycle.js (the lifecycle tree), timeline.js (the run's time as swimlanes). Each builds its node and draws it from the
// state; this module routes a frame's ops to the regions they change (changes.js).
//
// The wire contract (the state tree, the ops, the messages both ways) is docs/panel-protocol.md;
// js/test/contract.test.js checks this view against its generated fixture.

import { createAnswerCells } from "./answer_cells.js";
import { createApprovals } from "./approvals.js";
import { createCards } from "./cards.js";
import { classify } from "./changes.js";
import { createContextView } from "./context.js";
import { createControls } from "./controls.js";
import { Receiver } from "./deltas.js";
import { Disclosures, h } from "./dom.js";
import { createLifecycle } from "./lifecycle.js";
import { createQueue } from "./queue.js";
import { LIVE } from "./states.js";
import { createStatus } from "./status.js";
import { createStepBar } from "./step.js";
import { createTimeline } from "./timeline.js";
import { createTranscript } from "./transcript.js";

const TICK_MS = 250;

// `insertCell(text)` puts an answer's code block into a new cell (panel.js: the notebook's, or
// the clipboard) and resolves to "inserted", "copied" or "".
export function mountPanel(el, { send, now = () => Date.now(), tick = true, setTimer = setTimeout, clearTimer = clearTimeout, insertCell = async () => "" } = {}) {
  const doc = el.ownerDocument;
  const receiver = new Receiver();
  const root = h(doc, "div", "pi-panel", { "data-state": "idle", tabindex: "0" });
  // What every region is given: the document, the way to the kernel, the current state.
  const view = { doc, root, send, state: () => receiver.state, disclosures: new Disclosures(doc) };

  const status = createStatus(view, now);
  const cards = createCards(view);
  const transcript = createTranscript(view, cards, createAnswerCells(view, insertCell));
  const context = createContextView(view);
  const approvals = createApprovals(view);
  const step = createStepBar(view);
  const controls = createControls(view, { setTimer, clearTimer });
  const queue = createQueue(view);
  const lifecycle = createLifecycle(view, transcript.nodeFor);
  const timeline = createTimeline(view);
  root.append(status.node, transcript.node, context.node, approvals.node, step.node, controls.node, queue.node, lifecycle.node, timeline.node);
  root.addEventListener("keydown", controls.keydown);
  el.append(root);

  const live = () => root.classList.contains("pi-is-live");

  const renderStatus = () => {
    const state = receiver.state;
    root.setAttribute("data-state", state.status.state);
    root.classList.toggle("pi-is-live", LIVE.has(state.status.state) && !controls.closing);
    status.render(state.status);
    controls.render(state);
  };

  const renderStep = () => {
    step.render(receiver.state);
    controls.render(receiver.state);
  };

  const renderAll = () => {
    const state = receiver.state;
    renderStatus();
    transcript.render();
    context.render(state);
    lifecycle.render();
    timeline.render();
    queue.render(state);
    renderStep();
    approvals.render(state);
  };

  const renderOps = (ops) => {
    const state = receiver.state;
    const { sections, newMessages, messages, blocks, cards: changedCards } = classify(ops);
    if (sections.has("status")) {
      renderStatus();
      renderStep();
      queue.render(state); // where queued messages land depends on the state
    }
    // New messages first (in order), so an update never meets a message without its node.
    const known = transcript.count;
    if (newMessages) transcript.appendNew();
    for (const index of messages) if (index < known) transcript.updateMessage(index);
    for (const change of blocks.values()) {
      if (change.index < known && !messages.has(change.index)) transcript.updateBlock(change.index, change.j, change);
    }
    for (const id of changedCards) cards.update(id);
    if (sections.has("lifecycle")) lifecycle.render();
    if (sections.has("timeline")) timeline.render();
    if (sections.has("context")) context.render(state);
    if (sections.has("queue")) queue.render(state);
    if (sections.has("step")) renderStep();
    if (sections.has("approvals")) approvals.render(state);
  };

  // Follow the end of a live transcript, unless the reader scrolled up to read.
  const renderChanges = (ops) => {
    const follow = live() && transcript.atEnd();
    renderOps(ops);
    if (follow) transcript.scrollToEnd();
  };

  const timer = tick
    ? setInterval(() => {
        const s = receiver.state && receiver.state.status;
        if (s && LIVE.has(s.state)) status.tick(s);
      }, TICK_MS)
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
        controls.close();
        if (receiver.state) renderStatus();
        return { changed: null, resync: false };
      }
      const { changed, resync } = receiver.receive(message);
      if (resync) send({ type: "resync" });
      if (changed === "all") {
        renderAll();
        if (live()) transcript.scrollToEnd();
      } else if (changed) renderChanges(message.ops);
      return { changed, resync };
    },
    destroy() {
      if (timer !== null) clearInterval(timer);
      controls.destroy();
      root.remove();
    },
  };
}
