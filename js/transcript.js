// The transcript: one div.pi-message per message of the state tree, in order (data-role,
// data-index). Assistant messages hold their blocks (text, thinking, tool cards); a tool result
// its card shows keeps its place, hidden; the run's notebook context is one collapsed entry
// (notebook_context.js); a compaction is one line. Frames update a message
// in place: new messages are appended, a changed text block is synced (text.js), anything
// else in a message draws that message again.
//
// While the run is live the transcript scrolls in its own box (.pi-is-live, panel.css) and
// follows the end unless the reader scrolled up, so the status line above and the controls
// below stay in view: a long answer cannot push Abort off-screen.

import { cssEscape, h, safeImage } from "./dom.js";
import { preview } from "./format.js";
import { renderNotebookContext } from "./notebook_context.js";
import { createTextBodies } from "./text.js";

// "user", or for a queued message delivered during the run "user (steer, after turn 1's
// tools)" (static.py's queued_label).
export function userLabel(entry) {
  if (entry.queued !== "steer" && entry.queued !== "followup") return "user";
  const word = entry.queued === "steer" ? "steer" : "follow-up";
  return `user (${entry.entered ? `${word}, ${entry.entered}` : word})`;
}

// Within this many pixels of the end, the reader is following it.
const FOLLOW_SLACK = 24;

export function createTranscript({ doc, state, disclosures }, cards, answerCells) {
  const node = h(doc, "div", "pi-transcript");
  const text = createTextBodies(doc);

  const renderBlock = (index, j, block) => {
    if (block.type === "text") {
      const body = h(doc, "div", "pi-text", { "data-block": j });
      text.fill(body, block);
      return body;
    }
    if (block.type === "thinking") {
      const box = disclosures.details(`thinking:${index}:${j}`, "pi-thinking", "thinking");
      box.setAttribute("data-block", j);
      const body = h(doc, "div", "pi-thinking-text");
      text.fill(body, block);
      box.append(body);
      return box;
    }
    if (block.type === "toolCall") return cards.render(block.id);
    return h(doc, "div");
  };

  const renderAssistant = (message, index, entry) => {
    entry.blocks.forEach((block, j) => message.append(renderBlock(index, j, block)));
    if (entry.stop_reason && answerCells) answerCells.decorate(message); // ended: redacted text
    if (entry.error || entry.stop_reason === "aborted") {
      const line = h(doc, "div", "pi-message-error");
      line.textContent = `[${entry.stop_reason || "error"}]${entry.error ? " " + entry.error : ""}`;
      message.append(line);
    }
    if (entry.note) {
      const line = h(doc, "div", "pi-message-note");
      line.textContent = `[${entry.stop_reason || "note"}] ${entry.note}`;
      message.append(line);
    }
  };

  // A user, tool result or custom message: its role, its text, its images.
  const renderOther = (message, entry) => {
    const label = h(doc, "span", "pi-role");
    label.textContent =
      entry.role === "toolResult"
        ? `${entry.tool_name}${entry.is_error ? " (error)" : ""} →`
        : entry.role === "user"
          ? userLabel(entry)
          : entry.custom_role || "custom";
    message.append(label);
    if (entry.role === "toolResult" && state().tools[entry.tool_call_id]) {
      // Its tool card above shows the result: the message keeps its place, shown once.
      message.hidden = true;
      message.replaceChildren();
      return;
    } else if (entry.role === "toolResult") {
      const result = h(doc, "pre", "pi-result-text");
      result.textContent = preview(entry.text || "");
      message.append(result);
    } else {
      const body = h(doc, "div", "pi-text");
      if (typeof entry.html === "string") body.innerHTML = entry.html;
      else body.textContent = entry.text || ""; // widget state saved by an older version
      message.append(body);
    }
    for (const image of entry.images || []) {
      const img = safeImage(doc, image);
      if (img) message.append(img);
    }
  };

  const renderMessage = (index) => {
    const entry = state().messages[index];
    const message = h(doc, "div", "pi-message", { "data-role": entry.role, "data-index": index });
    if (entry.queued) message.setAttribute("data-queued", entry.queued);
    if (entry.role === "compaction") {
      // One line: from here on the model sees a summary of the earlier messages.
      const line = h(doc, "span", "pi-compaction");
      line.textContent = entry.text || `compacted ${entry.count} messages`;
      message.append(line);
    } else if (entry.role === "notebookContext") {
      message.append(renderNotebookContext(doc, disclosures, entry, index));
    } else if (entry.role === "assistant") renderAssistant(message, index, entry);
    else renderOther(message, entry);
    return message;
  };

  const messageNode = (index) => node.querySelector(`:scope > .pi-message[data-index="${index}"]`);

  // Appends the nodes of messages that have none yet, in transcript order.
  const appendNew = () => {
    const messages = state().messages;
    for (let i = node.children.length; i < messages.length; i++) node.append(renderMessage(i));
  };

  const updateMessage = (index) => {
    const old = messageNode(index);
    if (old) old.replaceWith(renderMessage(index));
    else appendNew();
  };

  // Block j of message `index` changed: sync a text or thinking body, else draw the message.
  const updateBlock = (index, j, change) => {
    const old = messageNode(index);
    const block = state().messages[index]?.blocks?.[j];
    const target = old && old.querySelector(`:scope > [data-block="${j}"]`);
    if (!old || !block || !target) return updateMessage(index);
    if (block.type === "text") text.sync(target, block, change);
    else if (block.type === "thinking") text.sync(target.querySelector(".pi-thinking-text"), block, change);
    else updateMessage(index);
  };

  // What a lifecycle node's target ({message} or {tool}) points at: its message or its card.
  const nodeFor = (target) => {
    if (!target) return null;
    if (target.message != null) {
      // A tool result its card shows is hidden: its node points at that card.
      const current = state();
      const entry = current.messages[target.message];
      if (entry && entry.role === "toolResult" && current.tools[entry.tool_call_id]) {
        return nodeFor({ tool: entry.tool_call_id });
      }
      return messageNode(target.message);
    }
    if (target.tool != null) {
      return node.querySelector(`.pi-tool-card[data-tool-call-id="${cssEscape(target.tool)}"]`);
    }
    return null;
  };

  return {
    node,
    // How many messages have a node (the ones a frame may update rather than append).
    get count() {
      return node.children.length;
    },
    render() {
      node.replaceChildren();
      state().messages.forEach((_, i) => node.append(renderMessage(i)));
    },
    appendNew,
    updateMessage,
    updateBlock,
    nodeFor,
    // Whether the reader is at the end (so a frame keeps them there).
    atEnd() {
      return node.scrollTop + node.clientHeight >= node.scrollHeight - FOLLOW_SLACK;
    },
    scrollToEnd() {
      node.scrollTop = node.scrollHeight;
    },
  };
}
