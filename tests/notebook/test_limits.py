"""The output limit every ``%%agent`` request carries (issue 16.9): ``--max-tokens`` for a cell,
the Agent's own, the model's, the catalogue's for its id, else a conservative default; and in a
real kernel, the limit on the wire of a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json

from pi_notebook.agent import Agent
from pi_notebook.ai import Model, UserMessage
from pi_notebook.notebook.limits import (
    DEFAULT_MAX_TOKENS,
    MIN_OUTPUT_TOKENS,
    output_limit,
    run_max_tokens,
)

from .conftest import Kernel


def local(**fields: object) -> Model:
    data: dict[str, object] = {
        "id": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "api": "openai-completions",
        "provider": "llamacpp",
        "base_url": "http://127.0.0.1:8080/v1",
    }
    data.update(fields)
    return Model(**data)  # type: ignore[arg-type]


def test_a_model_without_max_tokens_gets_a_conservative_default() -> None:
    limit = output_limit(Agent(model=local()))
    assert (limit.tokens, limit.source) == (
        DEFAULT_MAX_TOKENS,
        "the default for a model without max_tokens",
    )
    assert DEFAULT_MAX_TOKENS == 4096


def test_a_hand_made_model_of_a_known_id_gets_the_catalogues_value() -> None:
    model = local(id="gpt-4o-mini", provider="my-proxy")
    limit = output_limit(Agent(model=model))
    assert limit.tokens == 16384 and limit.source == "the catalogue's value for gpt-4o-mini"


def test_the_cell_the_agent_and_the_model_win_in_that_order() -> None:
    agent = Agent(model=local(max_tokens=2000))
    assert output_limit(agent).tokens == 2000
    agent = Agent(model=local(max_tokens=2000), max_tokens=300)
    assert output_limit(agent).text() == "300 tokens per reply (from the Agent's max_tokens)"
    assert output_limit(agent, 77).text() == "77 tokens per reply (from --max-tokens)"
    assert run_max_tokens(output_limit(agent, 77)) == 77  # the run's value, not the Agent's
    assert agent.stream_options.max_tokens == 300


def test_a_default_is_clamped_to_the_room_left_in_the_context_window() -> None:
    agent = Agent(model=local(context_window=12000))
    agent.state.messages.append(UserMessage(content="x" * 4000 * 4))  # ~4000 tokens
    limit = output_limit(agent)
    assert limit.tokens == 12000 - 4000 - 4096  # Pi: window - prompt - 4096 of safety
    assert "clamped to the room left in the context window" in limit.source
    assert output_limit(agent, 5000).tokens == 5000, "a value the user gave is kept"


def test_a_clamped_default_never_goes_below_the_floor() -> None:
    """A full window (or a compaction summary request on it) still gets room for a reply."""
    agent = Agent(model=local(context_window=8192))
    agent.state.messages.append(UserMessage(content="x" * 8000 * 4))  # ~8000 tokens
    assert output_limit(agent).tokens == MIN_OUTPUT_TOKENS == 1024
    small = Agent(model=local(context_window=8192, max_tokens=500))
    small.state.messages.append(UserMessage(content="x" * 8000 * 4))
    assert output_limit(small).tokens == 500  # the model's own limit is lower: it stands


SERVER = """
from tests.providers.server import ScriptServer, sse, stream_bytes
from pi_notebook.ai import Model
import pi_notebook.notebook as pn
server = ScriptServer()
await server.start()
reply = sse(
    {"choices": [{"index": 0, "delta": {"content": "So it goes, so it goes, so"}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
)
server.queue(stream_bytes(reply), stream_bytes(reply))
local = Model(id="local-gguf", api="openai-completions", provider="llamacpp",
              base_url=server.url + "/v1")
"""


def test_every_request_carries_the_limit_and_a_cut_reply_says_so(kernel: Kernel) -> None:
    kernel.ok(SERVER)
    try:
        first = kernel.ok("%%agent --model local --new --no-tools --approve none\nRepeat yourself")
        kernel.ok("%%agent --max-tokens 77\nAgain")
        bodies = json.loads(
            kernel.ok("import json; print(json.dumps([r.json() for r in server.requests]))").stdout
        )
        status = kernel.ok("%agent status").stdout
    finally:
        kernel.ok("await server.stop()")
    assert [b["max_tokens"] for b in bodies] == [4096, 77]
    assert "assistant [length]" in first.stdout
    assert (
        "output limit: 4096 tokens per reply (from the default for a model without max_tokens)"
        in status
    )


ENDLESS = """
from tests.providers.server import Endless, ScriptServer, endless, sse, stream_bytes
from pi_notebook.ai import Model
endless_server = ScriptServer()
await endless_server.start()
tally = Endless()
frame = sse({"choices": [{"index": 0, "delta": {"content": "again and again "}}]}, end=False)
fine = sse(
    {"choices": [{"index": 0, "delta": {"content": "Fine."}}]},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
)
endless_server.queue(endless(b"", frame, tally, frames=1_000_000), stream_bytes(fine))
runaway = Model(id="local-gguf", api="openai-completions", provider="llamacpp",
                base_url=endless_server.url + "/v1")
"""


def test_a_server_ignoring_the_limit_is_cut_and_the_next_cell_works(kernel: Kernel) -> None:
    """Issue 28, item 11: the reply stops at 8 characters a token of the limit sent."""
    kernel.ok(ENDLESS)
    try:
        cut = kernel.ok(
            "%%agent --model runaway --new --no-tools --approve none --max-tokens 1000\nTalk",
            timeout=60,
        )
        after = kernel.ok("%%agent --max-tokens 1000\nAnd now?")
        bodies = json.loads(
            kernel.ok(
                "import json; print(json.dumps([r.json() for r in endless_server.requests]))"
            ).stdout
        )
        frames = int(kernel.ok("await tally.finished.wait(); print(tally.frames)").stdout)
    finally:
        kernel.ok("await endless_server.stop()")
    assert [b["max_tokens"] for b in bodies] == [1000, 1000]
    note = cut.stdout.splitlines()[-1]
    assert note.startswith(
        "assistant [length]: the server ignored the output limit of 1000 tokens: stopped "
        "reading the reply after "
    )
    chars = int(note.split("after ")[1].split()[0])
    assert 8_000 < chars < 8_000 + 70_000
    assert frames < 1_000_000  # the kernel stopped reading; the server did not run out
    assert after.stdout.endswith("assistant: Fine.\n")
