"""Issue 27.4 in a real kernel: a ``%%agent`` cell whose reply llama.cpp's server rejected
(a ``run_python`` call streamed, then ``Failed to parse input``) says that nothing ran, in the
static transcript the cell keeps and in plain mode, with the server's message once; the
namespace is untouched. The server is ``tests/providers/llamacpp_errors.py`` on 127.0.0.1,
started inside the kernel."""

from __future__ import annotations

from .conftest import Kernel
from .test_panel_kernel import PanelClient, run_cell

NOTHING_RAN = "the server could not parse the model's tool call: nothing ran"

SERVER = """
from tests.providers.server import ScriptServer
from tests.providers.llamacpp_errors import unparsed_tool_call
from pi_notebook.ai import Model
llama = ScriptServer()
await llama.start()
llama.queue(unparsed_tool_call())
local = Model(id="qwen2.5-coder-1.5b", api="openai-completions", provider="llamacpp",
              base_url=llama.url + "/v1")
"""

AGENT = "%%agent --model local --new --tools notebook --approve none {flags}\nPrint 40 + 2."


def _start(kernel: Kernel) -> None:
    kernel.ok("%agent reset")
    kernel.ok(SERVER)


def _requests(kernel: Kernel) -> int:
    return int(kernel.ok("print(len(llama.requests))").stdout)


def test_the_static_transcript_says_nothing_ran(ui_kernel: Kernel) -> None:
    _start(ui_kernel)
    client = PanelClient(ui_kernel)
    try:
        assert run_cell(ui_kernel, AGENT.format(flags=""), client) == "ok"
        assert _requests(ui_kernel) == 1  # nothing ran: no second request with a result
    finally:
        ui_kernel.ok("await llama.stop()")
    final = client.updates[-1]
    html = final["text/html"].replace("&#x27;", "'")
    transcript = html.split('<div class="pi-transcript">', 1)[1]
    assert 'data-status="reply-failed"' in transcript
    assert f'<div class="pi-tool-not-run">{NOTHING_RAN}.</div>' in transcript
    assert "pi-tool-result" not in transcript and '<pre class="pi-code">' not in transcript
    assert transcript.count("Failed to parse input at pos 12") == 1
    assert NOTHING_RAN in final["text/plain"]
    assert final["text/plain"].count("Failed to parse input at pos 12") == 1
    # The code never ran: print(40 + 2) printed nothing, in the cell or anywhere.
    assert "42" not in client.stdout


def test_plain_mode_says_nothing_ran(kernel: Kernel) -> None:
    _start(kernel)
    try:
        result = kernel.run(AGENT.format(flags="--plain"))
        assert _requests(kernel) == 1
    finally:
        kernel.ok("await llama.stop()")
    text = result.text
    assert f'assistant -> run_python({{"code": "print(40 + 2)"}}) — {NOTHING_RAN}' in text
    assert text.count("Failed to parse input at pos 12") == 1
    assert "assistant: ```" not in text and "\n42\n" not in text
