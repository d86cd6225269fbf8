"""Write pi_notebook/ai/providers/catalog.json from Pi's own model data.

    python scripts/generate_catalog.py            # regenerate from bench/.pi (installed if missing)
    python scripts/generate_catalog.py --check    # exit 1 if the checked-in file differs

Pi ships its model catalogue as JSON in ``@earendil-works/pi-ai`` (``dist/providers/data/
<provider>.json``, grouped by API). This script copies, for the models in :data:`SELECTION`,
Pi's entries as they are (camelCase, Pi's field names: context window, max tokens, prices with
their long-context ``tiers``, reasoning, input kinds, ``thinkingLevelMap``, ``compat``) into
``catalog.json``, which ``catalog.py`` loads. Pi is installed into ``bench/.pi/`` the way
``bench/bench_loop.py`` installs it (npm, ``--ignore-scripts``), at ``PI_VERSION``.

Models Pi's data does not have (local Ollama models, DeepSeek's ``deepseek-chat`` and
``deepseek-reasoner`` aliases) stay hand-written in ``catalog.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from bench_loop import PI_DIR, PI_VERSION, ensure_pi_installed  # noqa: E402

OUTPUT = ROOT / "pi_notebook" / "ai" / "providers" / "catalog.json"
PI_AI = "@earendil-works/pi-ai"

SELECTION: dict[str, list[str]] = {
    "openai": [
        "gpt-4o",
        "gpt-4o-mini",
        "gpt-4.1",
        "gpt-4.1-mini",
        "gpt-4.1-nano",
        "gpt-5",
        "gpt-5-mini",
        "gpt-5-nano",
        "gpt-5.4",  # priced higher above 272k input tokens
        "gpt-5.4-pro",  # likewise, with a 1.05M context
        "gpt-5.5",  # likewise
        "o3",
        "o3-mini",
        "o4-mini",
    ],
    "anthropic": [
        "claude-haiku-4-5",
        "claude-sonnet-4-5",
        "claude-opus-4-1",
        "claude-opus-4-5",
        "claude-sonnet-4-6",
        "claude-opus-4-6",
    ],
    "openrouter": [
        "openai/gpt-4o",
        "openai/gpt-4o-mini",
        "openai/gpt-5",
        "anthropic/claude-sonnet-4.5",
        "anthropic/claude-opus-4.5",
        "google/gemini-2.5-flash",
        "deepseek/deepseek-chat-v3.1",
        "deepseek/deepseek-r1-0528",
        "meta-llama/llama-3.3-70b-instruct",
        "qwen/qwen3-coder",
    ],
    "groq": [
        "llama-3.1-8b-instant",
        "llama-3.3-70b-versatile",
        "meta-llama/llama-4-scout-17b-16e-instruct",
        "openai/gpt-oss-120b",
        "openai/gpt-oss-20b",
        "qwen/qwen3-32b",
    ],
    "deepseek": ["deepseek-v4-flash", "deepseek-v4-pro"],
    "google": [
        "gemini-2.0-flash",
        "gemini-2.0-flash-lite",
        "gemini-2.5-flash",
        "gemini-2.5-flash-lite",
        "gemini-2.5-pro",
        "gemini-3-flash-preview",
        "gemini-3-pro-preview",
        "gemini-3.1-pro-preview",
        "gemini-flash-latest",
        "gemini-flash-lite-latest",
        "gemma-4-31b-it",
    ],
}


def pi_data_dir(pi_dir: Path = PI_DIR) -> Path:
    return pi_dir / "node_modules" / PI_AI / "dist" / "providers" / "data"


def generate(data_dir: Path) -> dict[str, Any]:
    """The catalogue document for :data:`SELECTION`, from Pi's data files in ``data_dir``."""
    models: dict[str, dict[str, Any]] = {}
    for provider, ids in SELECTION.items():
        by_id: dict[str, Any] = {}
        for entries in json.loads((data_dir / f"{provider}.json").read_text()).values():
            by_id.update(entries)
        missing = [model_id for model_id in ids if model_id not in by_id]
        if missing:
            raise SystemExit(f"Pi {PI_VERSION} has no {provider} model {', '.join(missing)}")
        models[provider] = {model_id: by_id[model_id] for model_id in ids}
    return {
        "source": f"{PI_AI}@{PI_VERSION} dist/providers/data, by scripts/generate_catalog.py",
        "models": models,
    }


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    ensure_pi_installed()
    text = render(generate(pi_data_dir()))
    if args.check:
        if OUTPUT.read_text() != text:
            raise SystemExit(f"{OUTPUT.relative_to(ROOT)} differs from Pi {PI_VERSION}'s data")
        print(f"{OUTPUT.relative_to(ROOT)} matches Pi {PI_VERSION}'s data")
        return
    OUTPUT.write_text(text)
    count = sum(len(ids) for ids in SELECTION.values())
    print(f"wrote {count} models to {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
