"""The benchmarks still run: each one, on a tiny workload, prints every row it promises.

Figures are not checked (tests assert no wall-clock times); the scripts' own assertions are
(every peer saw every chunk, the floor grew the whole text, the runs did not fail).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parent.parent


def run_bench(script: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.timeout(300)
def test_bench_providers_runs_every_peer_on_the_same_stream() -> None:
    out = run_bench("bench_providers.py", "--chunks", "400", "--repeat", "1")
    assert "'raw+events': 400, 'ours': 400, 'ours-plain': 400, 'sdk': 400" in out
    for row in (
        "raw ",
        "raw+json",
        "raw+events",
        "ours ",
        "ours-plain ",
        "sdk ",
        "ours / raw",
        "ours-plain / ours",
        "sdk / ours",
    ):
        assert row in out


@pytest.mark.timeout(300)
def test_bench_providers_runs_on_chunks_with_openais_obfuscation_field() -> None:
    out = run_bench("bench_providers.py", "--chunks", "400", "--repeat", "1", "--obfuscation")
    assert "'raw+events': 400, 'ours': 400, 'ours-plain': 400, 'sdk': 400" in out
    assert "with OpenAI's per-chunk obfuscation field" in out


@pytest.mark.timeout(300)
def test_bench_responses_runs_every_peer_on_the_same_stream() -> None:
    out = run_bench("bench_responses.py", "--deltas", "400", "--repeat", "1")
    assert "{'raw+json': 400, 'ours': 400, 'sdk': 400}" in out
    for row in ("raw+json", "ours ", "sdk ", "ours / raw+json", "sdk / ours"):
        assert row in out


@pytest.mark.timeout(300)
def test_loop_floor_prints_the_floor_and_ours() -> None:
    out = run_bench("loop_floor.py", "--deltas", "2000", "--repeat", "1")
    assert "one message of 2,000 deltas" in out
    assert "floor" in out and "ours / floor" in out


@pytest.mark.timeout(300)
def test_bench_loop_python_side_runs_without_pi() -> None:
    out = run_bench("bench_loop.py", "--no-pi", "--turns", "3", "--chars", "40", "--repeat", "1")
    assert "pi_notebook (python)" in out


@pytest.mark.timeout(300)
def test_bench_frontend_prints_ours_next_to_a_full_re_render() -> None:
    if not Path("/usr/bin/chromium").exists() and os.environ.get("CI", "") != "true":
        pytest.skip("/usr/bin/chromium not found (apt-get install chromium)")
    out = run_bench(
        "bench_frontend.py", "--tokens", "40,120", "--frame-tokens", "8", "--repeat", "1"
    )
    assert "answer: 120 tokens" in out and "full re-render" in out
    for mark in ("40", "120"):
        assert any(line.split()[:1] == [mark] for line in out.splitlines()), out
    assert "from 40 to 120 tokens (medians): ours x" in out


@pytest.mark.timeout(300)
def test_bench_memory_prints_every_mode_next_to_the_bare_agent() -> None:
    out = run_bench("bench_memory.py", "--runs", "3", "--tokens", "2000", "--events-tokens", "200")
    assert "3 runs of 20 tokens, then one run of 2,000 tokens" in out
    for row in (
        "  bare ",
        "  plain ",
        "  panel ",
        "mode / bare",
        "%agent events after a 200-token",
    ):
        assert row in out


@pytest.mark.timeout(300)
def test_bench_undo_prints_the_floor_and_ours_for_both_codes() -> None:
    out = run_bench("bench_undo.py", "--arrays", "2", "--mb", "1")
    for row in ("reads    floor", "reads    ours", "methods  floor", "methods  ours"):
        assert row in out
    assert "ours / floor" in out


@pytest.mark.timeout(300)
def test_bench_tool_args_prints_old_and_new_at_both_sizes() -> None:
    out = run_bench("bench_tool_args.py", "--sizes", "400,4000", "--repeat", "1")
    assert "400 chars" in out and "4,000 chars" in out
    for row in ("grower alone", "through the openai-completions client", "old ", "jiter", "new "):
        assert row in out
    assert out.count("old / new at 4,000 chars") == 2


@pytest.mark.timeout(300)
def test_bench_validation_prints_every_peer_and_workload() -> None:
    out = run_bench("bench_validation.py", "--calls", "3", "--repeat", "1")
    for word in ("ours", "uncached", "jsonschema", "fastjsonschema", "run_python", "4 mistakes"):
        assert word in out


@pytest.mark.timeout(300)
def test_bench_mcp_times_every_peer() -> None:
    out = run_bench("bench_mcp.py", "--calls", "5", "--repeat", "1")
    for row in ("sdk ", "ours ", "ours+tool ", "ours / sdk", "ours+tool / sdk"):
        assert row in out


@pytest.mark.timeout(300)
def test_bench_sessions_prints_ours_next_to_both_peers() -> None:
    out = run_bench("bench_sessions.py", "--runs", "5", "--chars", "50", "--window", "2")
    assert "conversation of 5 runs (20 messages" in out
    for row in ("  ours ", "  full dump ", "  append ", "full dump / ours", "ours / append"):
        assert row in out


@pytest.mark.timeout(300)
def test_bench_startup_prints_ours_beside_ipywidgets_with_and_without_the_format_extras() -> None:
    out = run_bench("bench_startup.py", "--repeat", "1", "--kernels", "1")
    for row in (
        "import ipywidgets ",
        "import pi_notebook.notebook ",
        "... + the schema validator (before)",
        "with extras: ours / ipywidgets = ",
        "without extras: ours / ipywidgets = ",
        "%load_ext pi_notebook / import ipywidgets = ",
    ):
        assert row in out, row


@pytest.mark.timeout(300)
def test_bench_context_prints_ours_beside_a_full_walk_and_get_range() -> None:
    out = run_bench("bench_context.py", "--cells", "20", "60", "--repeat", "2")
    assert "notebook context collection, ms (best of 2)" in out
    for column in ("ours first", "ours N new", "full walk", "get_range", "walk/ours"):
        assert column in out
    rows = [line.split() for line in out.splitlines() if line.strip()[:2] in ("20", "60")]
    assert [row[0] for row in rows] == ["20", "60"] and all(len(row) == 7 for row in rows)


@pytest.mark.timeout(300)
def test_bench_first_tool_prints_the_first_tool_call_with_and_without_the_warm_up() -> None:
    out = run_bench("bench_first_tool.py", "--repeat", "1", "--delays", "0.3", "--tokens", "5")
    assert "model replies after 0.3 s, 5 tokens" in out
    for row in ("warm-up on ", "warm-up off ", "reply -> tool: off / on = ", "stream: on / off = "):
        assert row in out, row
