"""The model catalogue against Pi's own data: ``@earendil-works/pi-ai`` as installed for the
benchmark (``bench/.pi``, installed here with npm when missing).

* ``catalog.json`` is exactly what ``scripts/generate_catalog.py`` makes of Pi's data files;
* every catalogue model taken from Pi is Pi's runtime model (``getBuiltinModel``): context
  window, max tokens, prices and their long-context tiers, thinking levels, compat;
* ``calculate_cost`` gives Pi's ``calculateCost`` for those models, tiers included.

Without npm (or the network) the tests skip, except in CI (``CI=true``), where they must run.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.ai import Usage, calculate_cost
from pi_notebook.ai.providers import catalog

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "bench"))

import generate_catalog  # noqa: E402

pytestmark = pytest.mark.oracle

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CATALOG_JSON = ROOT / "pi_notebook" / "ai" / "providers" / "catalog.json"


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"Pi's model data is needed in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def pi_dir() -> Path:
    """bench/.pi with Pi installed (as bench/bench_loop.py installs it)."""
    if shutil.which("node") is None:
        _unavailable("node is not on PATH")
    try:
        generate_catalog.ensure_pi_installed()
    except (SystemExit, subprocess.CalledProcessError, OSError) as exc:
        _unavailable(f"could not install {generate_catalog.PI_AI}: {exc}")
    return Path(generate_catalog.PI_DIR)


def _from_pi() -> list[tuple[str, str]]:
    document = json.loads(CATALOG_JSON.read_text())
    return [
        (provider, model_id) for provider, ids in document["models"].items() for model_id in ids
    ]


_USAGES = [
    {"input": 1200, "output": 350, "cacheRead": 0, "cacheWrite": 0},
    {"input": 250_000, "output": 4000, "cacheRead": 30_000, "cacheWrite": 2000},  # > 272k
    {"input": 272_000, "output": 10, "cacheRead": 0, "cacheWrite": 0},  # at a threshold
    {"input": 100, "output": 10, "cacheRead": 5000, "cacheWrite": 8000, "cacheWrite1h": 3000},
]


@pytest.fixture(scope="module")
def pi_answers(pi_dir: Path) -> dict[str, Any]:
    request = {"models": _from_pi(), "usages": [{**u, "totalTokens": 0} for u in _USAGES]}
    done = subprocess.run(
        ["node", str(ROOT / "scripts" / "pi_models.mjs"), str(pi_dir), json.dumps(request)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answers: dict[str, Any] = json.loads(done.stdout)
    assert answers["version"] == generate_catalog.PI_VERSION
    return answers


@pytest.mark.timeout(300)
def test_catalog_json_is_what_pi_s_data_generates(pi_dir: Path) -> None:
    expected = generate_catalog.render(generate_catalog.generate(generate_catalog.pi_data_dir()))
    assert CATALOG_JSON.read_text() == expected, (
        "catalog.json differs from Pi's data: run python scripts/generate_catalog.py"
    )


@pytest.mark.timeout(300)
def test_catalogue_models_are_pi_s_models(pi_answers: dict[str, Any]) -> None:
    for (provider, model_id), theirs in zip(_from_pi(), pi_answers["models"], strict=True):
        assert theirs is not None, f"Pi has no {provider}/{model_id}"
        ours = catalog.get_model(provider, model_id)
        api = theirs["api"]
        assert ours.api == (
            api if api in catalog.IMPLEMENTED_APIS else catalog.PROVIDERS[provider]["api"]
        )
        mine = {
            "id": ours.id,
            "name": ours.name,
            "provider": ours.provider,
            "baseUrl": ours.base_url,
            "reasoning": ours.reasoning,
            "input": ours.input,
            "cost": ours.cost.model_dump(by_alias=True, exclude_none=True),
            "contextWindow": ours.context_window,
            "maxTokens": ours.max_tokens,
            "thinkingLevelMap": ours.thinking_level_map,
            "compat": ours.compat,
        }
        pis = {key: theirs.get(key) for key in mine}
        assert mine == pis, f"{provider}/{model_id}"


@pytest.mark.timeout(300)
def test_costs_are_pi_s_costs_with_long_context_tiers(pi_answers: dict[str, Any]) -> None:
    tiered = 0
    for (provider, model_id), costs in zip(_from_pi(), pi_answers["costs"], strict=True):
        model = catalog.get_model(provider, model_id)
        tiered += bool(model.cost.tiers)
        for usage_json, theirs in zip(_USAGES, costs, strict=True):
            usage = Usage.model_validate(usage_json)
            cost = calculate_cost(model, usage).model_dump(by_alias=True)
            for part in ("input", "output", "cacheRead", "cacheWrite", "total"):
                assert math.isclose(cost[part], theirs[part], rel_tol=1e-12, abs_tol=1e-15), (
                    f"{provider}/{model_id} {usage_json} {part}: {cost[part]} != {theirs[part]}"
                )
    assert tiered >= 1  # the comparison covers at least one long-context price tier
    gpt = catalog.get_model("openai", "gpt-5.4")
    above = calculate_cost(gpt, Usage(input=280_000))
    assert above.input == pytest.approx(5 / 1e6 * 280_000)  # the tier's rate, not 2.5
