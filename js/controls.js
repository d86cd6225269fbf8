// The message box and its buttons: Steer, Interrupt & send, Follow-up, Abort; Enter steers and
// Escape aborts anywhere in the panel.
//
// The draft in the box reaches the kernel as it is typed (debounced) and once more, final,
// when the kernel says the run is closing, so an unsent draft outlives the run (the kernel
// queues it as a follow-up for the next %%agent cell) and no keystroke is lost.

import { h } from "./dom.js";
import { FINAL, steerLands } from "./states.js";

export const DRAFT_DEBOUNCE_MS = 250;

function button(doc, cls, text, attrs = {}) {
  const node = h(doc, "button", cls, { type: "button", ...attrs });
  node.textContent = text;
  return node;
}

export function createControls({ doc, send }, { setTimer, clearTimer }) {
  const node = h(doc, "div", "pi-controls");
  const input = h(doc, "textarea", "pi-input", { rows: "1" });
  const steer = button(doc, "pi-steer", "Steer");
  const interrupt = button(doc, "pi-interrupt", "Interrupt & send", {
    title: "Stop the answer now (what streamed is kept, marked aborted) and send this at once",
  });
  const followup = button(doc, "pi-followup", "Follow-up");
  const abort = button(doc, "pi-abort", "Abort");
  node.append(input, steer, interrupt, followup, abort);

  let draftTimer = null;
  let sentDraft = "";
  let closing = false;
  const stopTimer = () => {
    if (draftTimer !== null) clearTimer(draftTimer);
    draftTimer = null;
  };
  const sendDraft = (final = false) => {
    stopTimer();
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
    stopTimer();
    sentDraft = ""; // the kernel forgets the draft it had when a message is sent
  };
  steer.addEventListener("click", () => submit("steer"));
  interrupt.addEventListener("click", () => submit("interrupt_send"));
  followup.addEventListener("click", () => submit("followup"));
  abort.addEventListener("click", () => send({ type: "abort" }));

  return {
    node,
    // The run ended and the kernel is about to replace this view: hand over the draft, and
    // take no more messages.
    close() {
      sendDraft(true);
      closing = true;
    },
    get closing() {
      return closing;
    },
    // For the panel's keydown: Escape aborts, Enter in the box steers (Shift+Enter: a newline).
    keydown(event) {
      if (event.key === "Escape") {
        event.preventDefault();
        send({ type: "abort" });
      } else if (event.key === "Enter" && !event.shiftKey && event.target === input) {
        event.preventDefault();
        submit("steer");
      }
    },
    // The run is over for the controls only when its state is final and nothing is held (held
    // at agent_end, the loop still waits: Abort and Next must work), or while the run closes.
    render(state) {
      const step = state.step || {};
      const run = state.status.state;
      const finished = (FINAL.has(run) && !step.held) || closing;
      for (const control of [steer, interrupt, followup, abort, input]) control.disabled = finished;
      const where = steerLands(run);
      input.placeholder = `Steer (lands ${where}) or follow up… Enter steers, Esc aborts`;
      steer.title = `Delivered ${where}: steering waits for the turn to end`;
      followup.title = "Delivered when the agent would otherwise stop";
    },
    destroy() {
      stopTimer();
    },
  };
}
