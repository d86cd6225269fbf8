"""Issue 27.4: the code blocks of the agent's answer as a cell (``%agent code --answer``).

The pieces (which blocks, what the cell says) without a kernel; then in a real kernel
(interactive mode) a scripted answer's Python blocks come back in the reply's
``set_next_input`` payload as the next cell, other languages are counted in a comment, the
cell runs; an answer without a code block, or no answer yet, gets a one-line message.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from pi_notebook.notebook.answer_code import (
    ANSWER_HEADER,
    BLOCK_HEADER,
    ODD_BREAK,
    PYTHON_LANGUAGES,
    answer_cell,
    block_text,
    fences,
)
from pi_notebook.notebook.code_cell import REDACTED

from .conftest import ROOT, Kernel

ANSWER = """The column is `bmi`, lower case:

```python
import math
bmi_mean = round(math.fsum([20.5, 31.5]) / 2, 2)
```

Check what you have with

```bash
ls data/
```

which prints

```
bmi_mean    26.0
ratio       13.0
```

and then:

```
ratio = bmi_mean / 2
```
"""

EXPECTED = f"""{ANSWER_HEADER}
# left out: 1 bash block, 1 unlabelled non-Python block

# block 1
import math
bmi_mean = round(math.fsum([20.5, 31.5]) / 2, 2)

# block 2
ratio = bmi_mean / 2
"""


def test_the_fences_the_panel_shows() -> None:
    assert [(f.language, f.python) for f in fences(ANSWER)] == [
        ("python", True),
        ("bash", False),
        ("", False),  # an output sample: not Python
        ("", True),
    ]
    assert fences("`inline` and\n\n    indented code\n") == []  # fenced blocks only


def test_the_answers_python_blocks_make_the_cell() -> None:
    assert answer_cell(ANSWER) == (EXPECTED, None)
    one = "Try:\n\n```py\nx = 1\n```\n"
    assert answer_cell(one) == (f"{ANSWER_HEADER}\n\nx = 1\n", None)


def test_no_python_block_says_why() -> None:
    assert answer_cell("Just words.") == ("", "no code: the last answer has no fenced code block")
    assert answer_cell("```bash\nls\n```\n```sql\nselect 1\n```") == (
        "",
        "no code: the last answer's code blocks are not Python (1 bash block, 1 sql block)",
    )


def test_a_secret_is_redacted_and_said() -> None:
    token = "ghp_" + "a1B2c3D4e5" * 4
    text = block_text(f"headers = {{'Authorization': 'token {token}'}}\n")
    assert token not in text
    assert text.startswith(f"# {REDACTED}\nheaders = ")


@pytest.mark.parametrize("br", ["\r", "\u2028", "\x0c", "\x85"])
def test_an_odd_line_break_leaves_the_block_out(br: str) -> None:
    assert block_text(f"x = 1{br}import os; os.remove('f')\n") == f"# {ODD_BREAK}"


def test_a_language_name_that_is_not_a_plain_word_is_not_echoed() -> None:
    cell, _ = answer_cell("```{sh}<b>\nls\n```\n```python\ny = 2\n```\n")
    assert cell.splitlines()[1] == "# left out: 1 unnamed block"


def test_the_panels_button_follows_the_same_rules() -> None:
    """js/answer_cells.js writes the same header and knows the same Python labels."""
    source = (ROOT / "js" / "answer_cells.js").read_text(encoding="utf-8")
    assert f'export const BLOCK_HEADER = "{BLOCK_HEADER}";' in source
    (labels,) = re.findall(r"const PYTHON = new Set\(\[([^\]]*)\]\)", source)
    assert {name.strip().strip('"') for name in labels.split(",")} == PYTHON_LANGUAGES


# -- in a real kernel --------------------------------------------------------------------------

SETUP = """\
import pi_notebook.notebook as pn
from pi_notebook.ai import faux_assistant_message as reply, register_faux_provider
"""


def _execute(kernel: Kernel, code: str) -> dict[str, Any]:
    reply = kernel.kc.execute_interactive(code, timeout=60, output_hook=lambda msg: None)
    content: dict[str, Any] = reply["content"]
    assert content["status"] == "ok", content
    return content


def _answered(kernel: Kernel, name: str, answer: str) -> None:
    kernel.ok(
        SETUP + f"{name} = register_faux_provider(token_size=(4, 4))\n"
        f"{name}.set_responses([reply({answer!r})])\npn.use_model({name})\n"
        "globals().pop('bmi_mean', None); globals().pop('ratio', None)"
    )
    kernel.ok("%agent reset")
    content = _execute(kernel, "%%agent\nWhy did the cell above fail?")
    assert not content.get("payload")  # no tool ran: no code cell offered by the run


def test_the_last_answers_code_becomes_the_next_cell(ui_kernel: Kernel) -> None:
    _answered(ui_kernel, "ac1", ANSWER)
    content = _execute(ui_kernel, "%agent code --answer")
    assert content["payload"] == [{"source": "set_next_input", "text": EXPECTED, "replace": False}]
    # The cell runs as it reads.
    ui_kernel.ok(EXPECTED)
    assert ui_kernel.ok("print(bmi_mean, ratio)").stdout == "26.0 13.0\n"


def test_an_answer_without_a_code_block_gets_a_clear_message(ui_kernel: Kernel) -> None:
    _answered(ui_kernel, "ac2", "The column is `bmi`, lower case.")
    result = ui_kernel.ok("%agent code --answer")
    assert result.stdout == "no code: the last answer has no fenced code block\n"
    assert not _execute(ui_kernel, "%agent code --answer").get("payload")


def test_no_answer_yet(ui_kernel: Kernel) -> None:
    ui_kernel.ok("%agent reset")
    result = ui_kernel.ok("%agent code --answer")
    assert result.stdout == "no code: no answer yet in this conversation\n"
