// "insert as cell" on the code blocks of an answer: once an assistant message has ended (its
// text is then the kernel's redacted rendering), each fenced Python block in its text (labelled
// Python, or unlabelled) gets a button that puts the block into a new code cell below the
// %%agent cell, under a header saying it has not run. The rules are those of %agent code
// --answer (pi_notebook/notebook/answer_code.py, which writes the same header): a block
// holding a line break Python and the editor read differently gets no button, so the cell shows
// the code that would run. Thinking, prompts and tool results get none.
//
// Where the cell goes is the host's (panel.js): JupyterLab and Notebook 7 insert it into the
// notebook; elsewhere the text is copied to the clipboard, and the button says which happened.

import { h } from "./dom.js";

export const BLOCK_HEADER = "# Code from the agent's answer (it has not run): read it, then run it.";
const PYTHON = new Set(["python", "py", "python3", "py3", "ipython", "ipython3"]);
// Line breaks other than \n that Python or an editor breaks a line at (answer_code.py).
const ODD_BREAKS = /[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;

// The cell for one block's code, or null when it gets no button.
export function blockCell(code, language) {
  if (language && !PYTHON.has(language.toLowerCase())) return null;
  if (ODD_BREAKS.test(code) || !code.trim()) return null;
  return `${BLOCK_HEADER}\n${code.replace(/\n+$/, "")}\n`;
}

const DONE = { inserted: "inserted below the %%agent cell", copied: "copied (no notebook here)" };

// `insert(text)` resolves to "inserted", "copied" or "" (neither could be done).
export function createAnswerCells({ doc }, insert) {
  // Buttons on the code blocks of the text bodies in `message` (an ended assistant message).
  const decorate = (message) => {
    for (const pre of message.querySelectorAll(":scope > .pi-text pre.pi-code")) {
      const cell = blockCell(pre.textContent, pre.getAttribute("data-lang"));
      if (cell === null) continue;
      const button = h(doc, "button", "pi-insert-cell", { type: "button", title: "A new code cell with this block, below the %%agent cell" });
      button.textContent = "insert as cell";
      button.addEventListener("click", async () => {
        button.disabled = true;
        let outcome = "";
        try {
          outcome = await insert(cell);
        } catch (error) {
          console.debug("pi-panel: cannot insert a cell", error);
        }
        button.textContent = DONE[outcome] || "cannot insert here: %agent code --answer";
        button.disabled = false;
      });
      pre.before(button);
    }
  };
  return { decorate };
}
