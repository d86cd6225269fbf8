"""API keys for the built-in providers, read from the usual environment variables.

A key is looked up when a request is made and handed straight to the request headers. This
module must never log, print, cache in a global, or put a key into any text or repr.
"""

from __future__ import annotations

import os

ENV_VARS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "cerebras": ("CEREBRAS_API_KEY",),
}

KEYLESS_PROVIDERS = frozenset({"ollama", "llamacpp", "vllm", "lmstudio"})
"""Local servers that need no key."""


def env_var_names(provider: str) -> tuple[str, ...]:
    """The environment variables consulted for ``provider`` (first non-empty wins)."""
    return ENV_VARS.get(provider, (f"{provider.upper().replace('-', '_')}_API_KEY",))


def get_env_api_key(provider: str) -> str | None:
    """The key for ``provider`` from the environment, or None."""
    for name in env_var_names(provider):
        value = os.environ.get(name)
        if value and value.strip():
            return value.strip()
    return None


def resolve_api_key(provider: str, explicit: str | None = None) -> str | None:
    """``explicit`` if given, else the environment's key for ``provider``."""
    if explicit:
        return explicit
    return get_env_api_key(provider)


def requires_api_key(provider: str) -> bool:
    return provider not in KEYLESS_PROVIDERS


__all__ = [
    "ENV_VARS",
    "KEYLESS_PROVIDERS",
    "env_var_names",
    "get_env_api_key",
    "requires_api_key",
    "resolve_api_key",
]
