"""API keys for the built-in providers, read from the usual environment variables.

A key is looked up when a request is made and handed straight to the request headers. This
module must never log, print, cache in a global, or put a key into any text or repr.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

from ..secrets import API_KEY_ENV_VARS
from ._errors import ProviderError

ENV_VARS: dict[str, tuple[str, ...]] = {
    **{name.removesuffix("_API_KEY").lower(): (name,) for name in API_KEY_ENV_VARS},
    "google": ("GEMINI_API_KEY",),  # Pi's name for the Gemini API key
}
"""Provider -> its key variables, from the one list in ``pi_notebook.ai.secrets``
(``OPENAI_API_KEY`` is ``openai``'s; ``GEMINI_API_KEY`` is ``google``'s, as in Pi)."""

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


def is_local_url(base_url: str) -> bool:
    """A server on this machine (Ollama, llama.cpp, vLLM...), which needs no key."""
    host = (urlparse(base_url).hostname or "").lower()
    return host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.endswith(".local")


def request_api_key(
    provider: str,
    base_url: str,
    explicit: str | None,
    headers: dict[str, str | None] | None,
    auth_headers: tuple[str, ...],
) -> str | None:
    """The key for one request, or None where none is needed.

    Raises ``ProviderError`` (naming the provider, never a key) when the provider needs a key,
    none was given or found in the environment, the server is not local and no header named in
    ``auth_headers`` carries credentials.
    """
    key = resolve_api_key(provider, explicit)
    if key or not requires_api_key(provider) or is_local_url(base_url):
        return key
    if any(k.lower() in auth_headers and v for k, v in (headers or {}).items()):
        return key
    raise ProviderError(f"No API key for provider: {provider}")


__all__ = [
    "ENV_VARS",
    "KEYLESS_PROVIDERS",
    "env_var_names",
    "get_env_api_key",
    "is_local_url",
    "request_api_key",
    "requires_api_key",
    "resolve_api_key",
]
