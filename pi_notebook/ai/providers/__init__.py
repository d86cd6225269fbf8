"""Real model providers over HTTP; importing this package registers their APIs.

``openai-completions`` (OpenRouter, Groq, DeepSeek, Ollama, vLLM, llama.cpp...),
``openai-responses`` (OpenAI's models), ``anthropic-messages`` and ``google-generative-ai``
(Gemini). Providers must never raise out of a stream, and never expose an API key.
"""

from __future__ import annotations

from ..registry import register_api_provider
from ._client import DEFAULT_TIMEOUT, aclose_client
from ._errors import MAX_ERROR_BODY_BYTES
from ._runaway import MIN_RUNAWAY_CHARS, runaway_chars
from ._sse import MAX_EVENT_BYTES
from .anthropic_messages import stream_anthropic_messages
from .catalog import custom_model, get_model, list_models, list_providers, resolve_model
from .google_generative_ai import stream_google_generative_ai
from .keys import env_var_names, get_env_api_key, requires_api_key, resolve_api_key
from .openai_completions import stream_openai_completions
from .openai_responses import stream_openai_responses

register_api_provider("openai-completions", stream_openai_completions)
register_api_provider("openai-responses", stream_openai_responses)
register_api_provider("anthropic-messages", stream_anthropic_messages)
register_api_provider("google-generative-ai", stream_google_generative_ai)

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_ERROR_BODY_BYTES",
    "MAX_EVENT_BYTES",
    "MIN_RUNAWAY_CHARS",
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
    "runaway_chars",
    "stream_anthropic_messages",
    "stream_google_generative_ai",
    "stream_openai_completions",
    "stream_openai_responses",
]
