"""Telling a context-overflow failure from other failures (Pi's ``isContextOverflow``).

A provider that refuses a request for being longer than the model's context window says so in
its error text, each in its own words (OpenAI "exceeds the context window", Anthropic "prompt
is too long", llama.cpp "exceeds the available context size", ...); some accept it silently and
report more input tokens than the window holds. The patterns are Pi 0.82.1's. This module only
reads a finished message: it must never make a request or change the message.
"""

from __future__ import annotations

import re

from .types import AssistantMessage

_OVERFLOW = re.compile(
    "|".join(
        (
            r"prompt is too long",  # Anthropic
            r"request_too_large",  # Anthropic, HTTP 413
            r"input is too long for requested model",  # Amazon Bedrock
            r"exceeds the context window",  # OpenAI
            r"exceeds (?:the )?(?:model'?s )?maximum context length"
            r"(?: of [\d,]+ tokens?|\s*\([\d,]+\))",  # OpenAI-compatible (vLLM, LiteLLM)
            r"input token count.*exceeds the maximum",  # Google
            r"maximum prompt length is \d+",  # xAI
            r"reduce the length of the messages",  # Groq
            r"maximum context length is \d+ tokens",  # OpenRouter, OpenAI
            r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
            r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
            r"exceeds the limit of \d+",  # GitHub Copilot
            r"exceeds the available context size",  # llama.cpp server
            r"greater than the context length",  # LM Studio
            r"context window exceeds limit",  # MiniMax
            r"exceeded model token limit",  # Kimi
            r"too large for model with \d+ maximum context length",  # Mistral
            r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
            r"model_context_window_exceeded",  # z.ai
            r"prompt too long; exceeded (?:max )?context length",  # Ollama
            r"range of input length should be",  # DashScope
            r"context[_ ]length[_ ]exceeded",
            r"too many tokens",
            r"token limit exceeded",
            r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",  # Cerebras
        )
    ),
    re.IGNORECASE,
)
_NOT_OVERFLOW = re.compile(
    r"^(?:Throttling error|Service unavailable):|rate limit|too many requests", re.IGNORECASE
)


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """Whether ``message`` is a provider's refusal (or silent overflow) of a too-long request.

    With ``context_window``, a successful reply whose input filled more than the window counts
    too (providers that truncate instead of refusing).
    """
    text = message.error_message
    if (
        message.stop_reason == "error"
        and text
        and not _NOT_OVERFLOW.search(text)
        and _OVERFLOW.search(text)
    ):
        return True
    if context_window:
        usage = message.usage
        prompt = usage.input + usage.cache_read
        if message.stop_reason == "stop" and prompt > context_window:
            return True
        if message.stop_reason == "length" and usage.output == 0:
            return prompt >= context_window * 0.99
    return False


__all__ = ["is_context_overflow"]
