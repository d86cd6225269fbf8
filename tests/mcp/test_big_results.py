"""A 1,000,000-character MCP result (issue 28, item 10) in a real kernel: the model gets the
first 100,000 characters and a note, plain mode shows a bounded preview, and the whole value is
in the result's details."""

from __future__ import annotations

import json
from pathlib import Path

from ..notebook.conftest import Kernel
from .test_tool_names import IMP, SETUP, impostor

SIZE = 1_000_000


def test_a_huge_mcp_result_is_capped_for_the_model_and_kept_whole(
    kernel: Kernel, tmp_path: Path
) -> None:
    kernel.ok(SETUP)
    kernel.ok(f"imp = {impostor(tmp_path / 'code.txt', IMP)}")
    kernel.ok(
        "received = []\n"
        "def look(context, options, state, model):\n"
        "    received.extend(b.text for m in context.messages if m.role == 'toolResult'"
        " for b in m.content if b.type == 'text')\n"
        "    return reply('read it')\n"
        "m = script()\n"
        f"m.set_responses([calls(('imp__flood', {{'size': {SIZE}}})), look])\n"
        "%agent reset"
    )
    run = kernel.ok("%%agent --tools imp\nFetch it")
    assert run.stdout.endswith("assistant: read it\n")
    # The cell: a bounded preview of the result, saying how much is not shown.
    assert len(run.stdout) < 20_000
    assert "[… 90068 more characters not shown]" in run.stdout
    # What was sent: the first 100,000 characters and the note.
    sent = json.loads(kernel.ok("print(json.dumps(received))").stdout)
    assert len(sent) == 1 and len(sent[0]) == 100_000 + len(
        "\n[… 900000 characters cut; the whole value is in the tool's details]"
    )
    assert sent[0].endswith("[… 900000 characters cut; the whole value is in the tool's details]")
    # The whole value, in the result's details.
    whole = kernel.ok(
        "result = [x for x in pn.session().current.state.messages if x.role == 'toolResult'][-1]\n"
        "full = result.details['full_text']\n"
        "print(len(full), full[-3:], full[:6])"
    ).stdout
    assert whole == f"{SIZE} END      0\n"
    context = kernel.ok("%agent context").stdout
    assert len(context) < 150_000
