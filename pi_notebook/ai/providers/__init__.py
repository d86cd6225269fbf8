"""Real model providers over HTTP; importing this package registers their APIs.

``openai-completions`` (OpenAI, OpenRouter, Groq, DeepSeek, Ollama, vLLM, llama.cpp...) and
``anthropic-messages``. Providers must never raise out of a stream, and never expose an API key.
"""

from __future__ import annotations

from ..registry import register_api_provider
from ._client import aclose_client
from .anthropic_messages import stream_anthropic_messages
from .catalog import custom_model, get_model, list_models, list_providers, resolve_model
from .keys import env_var_names, get_env_api_key, requires_api_key, resolve_api_key
from .openai_completions import stream_openai_completions

register_api_provider("openai-completions", stream_openai_completions)
register_api_provider("anthropic-messages", stream_anthropic_messages)

__all__ = [
    "aclose_client",
    "custom_model",
    "env_var_names",
    "get_env_api_key",
    "get_model",
    "list_models",
    "list_providers",
    "requires_api_key",
    "resolve_api_key",
    "resolve_model",
    "stream_anthropic_messages",
    "stream_openai_completions",
]
