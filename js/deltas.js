// Applying the kernel's delta frames (the twin of pi_notebook/notebook/panel/ops.py) and the
// sequence check: a frame must carry seq = last + 1; a gap means a lost frame, so the view
// drops frames until a fresh snapshot arrives (it asks for one with {"type": "resync"}).
//
// Ops: ["s", path, value] sets, ["a", path, text] appends to a string, ["p", path, value]
// pushes onto a list, ["t", path, [keep, text]] keeps the first `keep` code units of the string
// and appends text (the kernel's splice of a streaming tail), ["m", path, n] moves the first n
// code units of the text block's tail onto its html list (a block that finished as shown).
// A path is a list of keys and indexes.

export function applyOp(state, op) {
  const [kind, path, value] = op;
  if (!Array.isArray(path) || path.length === 0) throw new Error("an op needs a non-empty path");
  if (kind === "m") {
    const block = path.reduce((node, key) => node[key], state);
    block.html.push(block.tail.slice(0, value));
    block.tail = block.tail.slice(value);
    return;
  }
  let target = state;
  for (let i = 0; i < path.length - 1; i++) {
    target = target[path[i]];
    if (target === undefined || target === null) throw new Error(`bad op path ${JSON.stringify(path)}`);
  }
  const key = path[path.length - 1];
  if (kind === "s") target[key] = value;
  else if (kind === "a") target[key] = (target[key] ?? "") + value;
  else if (kind === "p") target[key].push(value);
  else if (kind === "t") target[key] = target[key].slice(0, value[0]) + value[1];
  else throw new Error(`unknown op kind ${kind}`);
}

export function applyOps(state, ops) {
  for (const op of ops) applyOp(state, op);
  return state;
}

const SNAPSHOT_META = new Set(["type", "seq"]);

// Follows one panel: snapshot -> state, deltas -> ops applied in order.
// receive() returns {changed: [paths...] | "all" | null, resync: bool}.
export class Receiver {
  constructor(initial = null) {
    this.state = initial;
    this.seq = initial && typeof initial.seq === "number" ? initial.seq : -1;
    this.waiting = true; // until a snapshot (or synced state) arrives
    this.gaps = 0;
  }

  adopt(state) {
    // A full state (a snapshot message or the synced trait); seq says how new it is.
    const copy = {};
    for (const [k, v] of Object.entries(state)) if (!SNAPSHOT_META.has(k)) copy[k] = v;
    this.state = structuredClone(copy);
    this.seq = typeof state.seq === "number" ? state.seq : this.seq;
    this.waiting = false;
  }

  receive(message) {
    if (!message || typeof message !== "object") return { changed: null, resync: false };
    if (message.type === "snapshot") {
      this.adopt(message);
      return { changed: "all", resync: false };
    }
    if (message.type !== "deltas") return { changed: null, resync: false };
    if (this.waiting || this.state === null) return { changed: null, resync: false };
    if (message.seq <= this.seq) return { changed: null, resync: false }; // already have it
    if (message.seq !== this.seq + 1) {
      this.gaps += 1;
      this.waiting = true;
      return { changed: null, resync: true };
    }
    applyOps(this.state, message.ops);
    this.seq = message.seq;
    return { changed: message.ops.map((op) => op[1]), resync: false };
  }
}
