// What a frame changed, by region: the ops' paths sorted into the parts of the view to update.
// Text blocks collect what their raw text got (appended, or reset), so the view appends to it
// instead of setting it again.

// {sections: Set of top-level keys other than messages and tools ("status", "queue", …),
//  newMessages: a message was pushed, messages: Set of message indexes changed other than
//  through one text block, blocks: Map "i:j" -> {index, j, reset, appended}, cards: Set of
//  tool call ids}.
export function classify(ops) {
  const sections = new Set();
  const messages = new Set();
  const blocks = new Map();
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
  return { sections, newMessages, messages, blocks, cards };
}
