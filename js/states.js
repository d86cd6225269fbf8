// The run's states (the contract's RunState) as the regions group them.

// A run that is going on: the clock ticks and the transcript follows its end.
export const LIVE = new Set(["waiting", "streaming", "running-tools", "awaiting-approval"]);
// A run that ended (its loop may still be held at agent_end in step mode).
export const FINAL = new Set(["done", "aborted", "error"]);
// Tools are running: a steer lands after them (Pi: steering waits for the turn to end).
export const TOOL_STATES = new Set(["running-tools", "awaiting-approval"]);

// Where a steer typed now lands.
export function steerLands(state) {
  return TOOL_STATES.has(state) ? "after these tools" : "after this answer";
}
