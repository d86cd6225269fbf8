"""The model catalogue: known models of the built-in providers, and model-string resolution.

Each entry carries api, base_url, context window, max output tokens, reasoning support, input
kinds, prices ($ per million tokens, with long-context ``tiers`` where the provider charges
more above some prompt size), Pi's thinking-level map and compat switches. Most entries are
Pi's own data: ``catalog.json``, written by ``scripts/generate_catalog.py`` from
``@earendil-works/pi-ai``'s model files (``tests/providers/test_catalog_pi.py`` checks it
against them). The rest, models Pi's data does not list, are the rows below.

A model whose API Pi routes it to is not implemented here uses its provider's API from
:data:`PROVIDERS` instead. OpenAI's models are on ``openai-responses``, as in Pi, and so is an
``openai/`` id the catalogue does not list. ``resolve_model("ollama/qwen2.5:7b")`` also
accepts ids the catalogue does not know (a custom :class:`Model` on the provider's API and
base_url).

This module must never hold or look up API keys, and never touch the network.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from ..types import Model, ModelCost

OPENAI_COMPLETIONS = "openai-completions"
OPENAI_RESPONSES = "openai-responses"
ANTHROPIC_MESSAGES = "anthropic-messages"
GOOGLE_GENERATIVE_AI = "google-generative-ai"
IMPLEMENTED_APIS = frozenset(
    {OPENAI_COMPLETIONS, OPENAI_RESPONSES, ANTHROPIC_MESSAGES, GOOGLE_GENERATIVE_AI}
)
"""The APIs a catalogue model may keep from Pi's data; others fall back to the provider's."""


PROVIDERS: dict[str, dict[str, str]] = {
    "openai": {"api": OPENAI_RESPONSES, "base_url": "https://api.openai.com/v1"},
    "anthropic": {"api": ANTHROPIC_MESSAGES, "base_url": "https://api.anthropic.com"},
    "google": {
        "api": GOOGLE_GENERATIVE_AI,
        "base_url": "https://generativelanguage.googleapis.com/v1beta",
    },
    "openrouter": {"api": OPENAI_COMPLETIONS, "base_url": "https://openrouter.ai/api/v1"},
    "groq": {"api": OPENAI_COMPLETIONS, "base_url": "https://api.groq.com/openai/v1"},
    "deepseek": {"api": OPENAI_COMPLETIONS, "base_url": "https://api.deepseek.com"},
    "ollama": {"api": OPENAI_COMPLETIONS, "base_url": "http://localhost:11434/v1"},
}

_TI = ("text", "image")
_T = ("text",)

# Models Pi's data does not list.
# (id, name, reasoning, input, input $, output $, cache read $, cache write $, context, max out)
_Row = tuple[str, str, bool, tuple[str, ...], float, float, float, float, int, int]

_HAND_WRITTEN: dict[str, list[_Row]] = {
    # DeepSeek's API names (Pi 0.82 lists only deepseek-v4-flash and deepseek-v4-pro).
    "deepseek": [
        ("deepseek-chat", "DeepSeek Chat", False, _T, 0.28, 0.42, 0.028, 0, 128000, 8192),
        ("deepseek-reasoner", "DeepSeek Reasoner", True, _T, 0.28, 0.42, 0.028, 0, 128000, 65536),
    ],
    # Local models: no prices.
    "ollama": [
        ("llama3.2", "Llama 3.2 3B (Ollama)", False, _T, 0, 0, 0, 0, 131072, 8192),
        ("llama3.1:8b", "Llama 3.1 8B (Ollama)", False, _T, 0, 0, 0, 0, 131072, 8192),
        ("qwen2.5:7b", "Qwen2.5 7B (Ollama)", False, _T, 0, 0, 0, 0, 32768, 8192),
        ("qwen2.5-coder:7b", "Qwen2.5 Coder 7B (Ollama)", False, _T, 0, 0, 0, 0, 32768, 8192),
        ("qwen3:8b", "Qwen3 8B (Ollama)", True, _T, 0, 0, 0, 0, 40960, 8192),
        ("gpt-oss:20b", "GPT OSS 20B (Ollama)", True, _T, 0, 0, 0, 0, 131072, 32768),
        ("gemma3:4b", "Gemma 3 4B (Ollama)", False, _TI, 0, 0, 0, 0, 131072, 8192),
    ],
}

_EXTRA: dict[tuple[str, str], dict[str, Any]] = {
    ("deepseek", "deepseek-reasoner"): {"compat": {"supports_reasoning_effort": False}},
}

# Defaults for an id the catalogue does not know.
_CUSTOM_DEFAULTS: dict[str, Any] = {
    "reasoning": False,
    "input": ["text"],
    "context_window": 128000,
    "max_tokens": 16384,
}


def _from_pi(provider: str, entry: dict[str, Any]) -> Model:
    model = Model.model_validate(entry)
    if model.api not in IMPLEMENTED_APIS:
        model.api = PROVIDERS[provider]["api"]
    return model


def _from_row(provider: str, row: _Row) -> Model:
    model_id, name, reasoning, kinds, inp, out, cread, cwrite, context, max_out = row
    info = PROVIDERS[provider]
    fields: dict[str, Any] = {
        "id": model_id,
        "name": name,
        "api": info["api"],
        "provider": provider,
        "base_url": info["base_url"],
        "reasoning": reasoning,
        "input": list(kinds),
        "cost": ModelCost(input=inp, output=out, cache_read=cread, cache_write=cwrite),
        "context_window": context,
        "max_tokens": max_out,
    }
    fields.update(_EXTRA.get((provider, model_id), {}))
    return Model(**fields)


@functools.cache
def _catalogue() -> dict[str, dict[str, Model]]:
    """provider -> id -> model: Pi's data, then the hand-written rows (built on first use)."""
    document = json.loads(resources.files(__package__).joinpath("catalog.json").read_text())
    models: dict[str, dict[str, Model]] = {provider: {} for provider in PROVIDERS}
    for provider, entries in document["models"].items():
        for model_id, entry in entries.items():
            models[provider][model_id] = _from_pi(provider, entry)
    for provider, rows in _HAND_WRITTEN.items():
        for row in rows:
            models[provider].setdefault(row[0], _from_row(provider, row))
    return models


def list_providers() -> list[str]:
    return list(PROVIDERS)


def list_models(provider: str | None = None) -> list[Model]:
    """Copies of the catalogue's models (of one provider, or all)."""
    if provider is not None:
        if provider not in PROVIDERS:
            raise KeyError(f"Unknown provider: {provider}")
        return [m.model_copy(deep=True) for m in _catalogue()[provider].values()]
    return [m.model_copy(deep=True) for models in _catalogue().values() for m in models.values()]


def get_model(provider: str, model_id: str) -> Model:
    """A copy of a catalogue model; KeyError when the catalogue does not know it."""
    try:
        return _catalogue()[provider][model_id].model_copy(deep=True)
    except KeyError:
        raise KeyError(f"Unknown model: {provider}/{model_id}") from None


def custom_model(provider: str, model_id: str, **fields: Any) -> Model:
    """A model the catalogue does not list, on ``provider``'s API and base_url."""
    if provider not in PROVIDERS:
        raise KeyError(f"Unknown provider: {provider}")
    info = PROVIDERS[provider]
    data: dict[str, Any] = {
        **_CUSTOM_DEFAULTS,
        "id": model_id,
        "api": info["api"],
        "provider": provider,
        "base_url": info["base_url"],
    }
    data.update(fields)
    return Model(**data)


def resolve_model(spec: str, **overrides: Any) -> Model:
    """``"provider/model-id"`` (the id may itself contain ``/``) -> a :class:`Model`.

    Unknown ids resolve to a custom model on the provider's base_url (any OpenAI-compatible
    server serves models the catalogue cannot list). ``overrides`` replace fields, e.g.
    ``base_url="http://gpu-box:11434/v1"``.
    """
    provider, sep, model_id = spec.partition("/")
    if not sep or not model_id:
        raise ValueError(f"Expected 'provider/model-id', got {spec!r}")
    if provider not in PROVIDERS:
        raise KeyError(f"Unknown provider: {provider}")
    known = _catalogue()[provider].get(model_id)
    model = known.model_copy(deep=True) if known is not None else custom_model(provider, model_id)
    if overrides:
        model = model.model_copy(update=overrides)
    return model


__all__ = [
    "ANTHROPIC_MESSAGES",
    "GOOGLE_GENERATIVE_AI",
    "IMPLEMENTED_APIS",
    "OPENAI_COMPLETIONS",
    "OPENAI_RESPONSES",
    "PROVIDERS",
    "custom_model",
    "get_model",
    "list_models",
    "list_providers",
    "resolve_model",
]
