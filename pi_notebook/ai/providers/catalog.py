"""The model catalogue: known models of the built-in providers, and model-string resolution.

Each entry carries api, base_url, context window, max output tokens, reasoning support, input
kinds and prices ($ per million tokens). ``resolve_model("ollama/qwen2.5:7b")`` also accepts
ids the catalogue does not know for OpenAI-compatible providers (a custom :class:`Model` on the
provider's base_url). This module must never hold or look up API keys, and never touch the
network.
"""

from __future__ import annotations

from typing import Any

from ..types import Model, ModelCost

OPENAI_COMPLETIONS = "openai-completions"
ANTHROPIC_MESSAGES = "anthropic-messages"


PROVIDERS: dict[str, dict[str, str]] = {
    "openai": {"api": OPENAI_COMPLETIONS, "base_url": "https://api.openai.com/v1"},
    "anthropic": {"api": ANTHROPIC_MESSAGES, "base_url": "https://api.anthropic.com"},
    "openrouter": {"api": OPENAI_COMPLETIONS, "base_url": "https://openrouter.ai/api/v1"},
    "groq": {"api": OPENAI_COMPLETIONS, "base_url": "https://api.groq.com/openai/v1"},
    "deepseek": {"api": OPENAI_COMPLETIONS, "base_url": "https://api.deepseek.com"},
    "ollama": {"api": OPENAI_COMPLETIONS, "base_url": "http://localhost:11434/v1"},
}

_TI = ("text", "image")
_T = ("text",)

# (id, name, reasoning, input, input $, output $, cache read $, cache write $, context, max out)
_Row = tuple[str, str, bool, tuple[str, ...], float, float, float, float, int, int]

_OPENAI: list[_Row] = [
    ("gpt-4o", "GPT-4o", False, _TI, 2.5, 10, 1.25, 0, 128000, 16384),
    ("gpt-4o-mini", "GPT-4o mini", False, _TI, 0.15, 0.6, 0.075, 0, 128000, 16384),
    ("gpt-4.1", "GPT-4.1", False, _TI, 2, 8, 0.5, 0, 1047576, 32768),
    ("gpt-4.1-mini", "GPT-4.1 mini", False, _TI, 0.4, 1.6, 0.1, 0, 1047576, 32768),
    ("gpt-4.1-nano", "GPT-4.1 nano", False, _TI, 0.1, 0.4, 0.025, 0, 1047576, 32768),
    ("gpt-5", "GPT-5", True, _TI, 1.25, 10, 0.125, 0, 400000, 128000),
    ("gpt-5-mini", "GPT-5 Mini", True, _TI, 0.25, 2, 0.025, 0, 400000, 128000),
    ("gpt-5-nano", "GPT-5 Nano", True, _TI, 0.05, 0.4, 0.005, 0, 400000, 128000),
    ("o3", "o3", True, _TI, 2, 8, 0.5, 0, 200000, 100000),
    ("o3-mini", "o3-mini", True, _T, 1.1, 4.4, 0.55, 0, 200000, 100000),
    ("o4-mini", "o4-mini", True, _TI, 1.1, 4.4, 0.275, 0, 200000, 100000),
]

_ANTHROPIC: list[_Row] = [
    ("claude-haiku-4-5", "Claude Haiku 4.5", True, _TI, 1, 5, 0.1, 1.25, 200000, 64000),
    ("claude-sonnet-4-5", "Claude Sonnet 4.5", True, _TI, 3, 15, 0.3, 3.75, 1000000, 64000),
    ("claude-opus-4-1", "Claude Opus 4.1", True, _TI, 15, 75, 1.5, 18.75, 200000, 32000),
    ("claude-opus-4-5", "Claude Opus 4.5", True, _TI, 5, 25, 0.5, 6.25, 200000, 64000),
    ("claude-sonnet-4-6", "Claude Sonnet 4.6", True, _TI, 3, 15, 0.3, 3.75, 1000000, 128000),
    ("claude-opus-4-6", "Claude Opus 4.6", True, _TI, 5, 25, 0.5, 6.25, 1000000, 128000),
]
# Models that only take adaptive thinking (an effort level, no token budget).
_ADAPTIVE = {"claude-sonnet-4-6", "claude-opus-4-6"}

_OPENROUTER: list[_Row] = [
    ("openai/gpt-4o", "OpenAI: GPT-4o", False, _TI, 2.5, 10, 1.25, 0, 128000, 16384),
    ("openai/gpt-4o-mini", "OpenAI: GPT-4o-mini", False, _TI, 0.15, 0.6, 0.075, 0, 128000, 16384),
    ("openai/gpt-5", "OpenAI: GPT-5", True, _TI, 1.25, 10, 0.125, 0, 400000, 128000),
    (
        "anthropic/claude-sonnet-4.5",
        "Anthropic: Claude Sonnet 4.5",
        True,
        _TI,
        3,
        15,
        0.3,
        3.75,
        1000000,
        64000,
    ),
    (
        "anthropic/claude-opus-4.5",
        "Anthropic: Claude Opus 4.5",
        True,
        _TI,
        5,
        25,
        0.5,
        6.25,
        200000,
        64000,
    ),
    (
        "google/gemini-2.5-flash",
        "Google: Gemini 2.5 Flash",
        True,
        _TI,
        0.3,
        2.5,
        0.03,
        0.083333,
        1048576,
        65535,
    ),
    (
        "deepseek/deepseek-chat-v3.1",
        "DeepSeek: DeepSeek V3.1",
        True,
        _T,
        0.25,
        0.95,
        0.13,
        0,
        163840,
        32768,
    ),
    ("deepseek/deepseek-r1-0528", "DeepSeek: R1 0528", True, _T, 0.5, 2.15, 0.35, 0, 163840, 32768),
    (
        "meta-llama/llama-3.3-70b-instruct",
        "Meta: Llama 3.3 70B Instruct",
        False,
        _T,
        0.13,
        0.4,
        0,
        0,
        131072,
        128000,
    ),
    ("qwen/qwen3-coder", "Qwen: Qwen3 Coder 480B A35B", False, _T, 0.3, 1, 0.1, 0, 262144, 65536),
]

_GROQ: list[_Row] = [
    ("llama-3.1-8b-instant", "Llama 3.1 8B", False, _T, 0.05, 0.08, 0, 0, 131072, 131072),
    ("llama-3.3-70b-versatile", "Llama 3.3 70B", False, _T, 0.59, 0.79, 0, 0, 131072, 32768),
    (
        "meta-llama/llama-4-scout-17b-16e-instruct",
        "Llama 4 Scout 17B 16E",
        False,
        _TI,
        0.11,
        0.34,
        0,
        0,
        131072,
        8192,
    ),
    ("openai/gpt-oss-120b", "GPT OSS 120B", True, _T, 0.15, 0.6, 0.075, 0, 131072, 65536),
    ("openai/gpt-oss-20b", "GPT OSS 20B", True, _T, 0.075, 0.3, 0.0375, 0, 131072, 65536),
    ("qwen/qwen3-32b", "Qwen3-32B", True, _T, 0.29, 0.59, 0, 0, 131072, 40960),
]

_DEEPSEEK: list[_Row] = [
    ("deepseek-chat", "DeepSeek Chat", False, _T, 0.28, 0.42, 0.028, 0, 128000, 8192),
    ("deepseek-reasoner", "DeepSeek Reasoner", True, _T, 0.28, 0.42, 0.028, 0, 128000, 65536),
]

_OLLAMA: list[_Row] = [
    ("llama3.2", "Llama 3.2 3B (Ollama)", False, _T, 0, 0, 0, 0, 131072, 8192),
    ("llama3.1:8b", "Llama 3.1 8B (Ollama)", False, _T, 0, 0, 0, 0, 131072, 8192),
    ("qwen2.5:7b", "Qwen2.5 7B (Ollama)", False, _T, 0, 0, 0, 0, 32768, 8192),
    ("qwen2.5-coder:7b", "Qwen2.5 Coder 7B (Ollama)", False, _T, 0, 0, 0, 0, 32768, 8192),
    ("qwen3:8b", "Qwen3 8B (Ollama)", True, _T, 0, 0, 0, 0, 40960, 8192),
    ("gpt-oss:20b", "GPT OSS 20B (Ollama)", True, _T, 0, 0, 0, 0, 131072, 32768),
    ("gemma3:4b", "Gemma 3 4B (Ollama)", False, _TI, 0, 0, 0, 0, 131072, 8192),
]

_EXTRA: dict[tuple[str, str], dict[str, Any]] = {
    **{("anthropic", m): {"compat": {"force_adaptive_thinking": True}} for m in _ADAPTIVE},
    ("deepseek", "deepseek-reasoner"): {"compat": {"supports_reasoning_effort": False}},
    ("groq", "qwen/qwen3-32b"): {
        "thinking_level_map": {
            "off": "none",
            "minimal": None,
            "low": None,
            "medium": None,
            "high": "default",
        }
    },
}

# Defaults for an id the catalogue does not know.
_CUSTOM_DEFAULTS: dict[str, Any] = {
    "reasoning": False,
    "input": ["text"],
    "context_window": 128000,
    "max_tokens": 16384,
}


def _build(provider: str, row: _Row) -> Model:
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


_TABLES: dict[str, list[_Row]] = {
    "openai": _OPENAI,
    "anthropic": _ANTHROPIC,
    "openrouter": _OPENROUTER,
    "groq": _GROQ,
    "deepseek": _DEEPSEEK,
    "ollama": _OLLAMA,
}

_MODELS: dict[str, dict[str, Model]] = {
    provider: {row[0]: _build(provider, row) for row in rows} for provider, rows in _TABLES.items()
}


def list_providers() -> list[str]:
    return list(PROVIDERS)


def list_models(provider: str | None = None) -> list[Model]:
    """Copies of the catalogue's models (of one provider, or all)."""
    if provider is not None:
        if provider not in _MODELS:
            raise KeyError(f"Unknown provider: {provider}")
        return [m.model_copy(deep=True) for m in _MODELS[provider].values()]
    return [m.model_copy(deep=True) for models in _MODELS.values() for m in models.values()]


def get_model(provider: str, model_id: str) -> Model:
    """A copy of a catalogue model; KeyError when the catalogue does not know it."""
    try:
        return _MODELS[provider][model_id].model_copy(deep=True)
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
    known = _MODELS[provider].get(model_id)
    model = known.model_copy(deep=True) if known is not None else custom_model(provider, model_id)
    if overrides:
        model = model.model_copy(update=overrides)
    return model


__all__ = [
    "ANTHROPIC_MESSAGES",
    "OPENAI_COMPLETIONS",
    "PROVIDERS",
    "custom_model",
    "get_model",
    "list_models",
    "list_providers",
    "resolve_model",
]
