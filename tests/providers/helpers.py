"""Shared test helpers: models pointing at the scripted server, and event collection."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_notebook.ai import AssistantMessage, Model, ModelCost, maybe_await
from pi_notebook.ai.registry import stream

KEY = "sk-test-SECRET-0123456789abcdef"


def openai_model(base_url: str, **fields: Any) -> Model:
    data: dict[str, Any] = {
        "id": "test-model",
        "api": "openai-completions",
        "provider": "openai",
        "base_url": base_url + "/v1",
        "input": ["text", "image"],
        "cost": ModelCost(input=2, output=8, cache_read=1, cache_write=0),
        "context_window": 128000,
        "max_tokens": 4096,
    }
    data.update(fields)
    return Model(**data)


def anthropic_model(base_url: str, **fields: Any) -> Model:
    data: dict[str, Any] = {
        "id": "claude-test",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "base_url": base_url,
        "reasoning": True,
        "input": ["text", "image"],
        "cost": ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75),
        "context_window": 200000,
        "max_tokens": 64000,
    }
    data.update(fields)
    return Model(**data)


GEMINI_KEY = "AIzaSyTEST-gemini-0123456789abcdefghijk"
"""Shaped like a real Gemini key (``AIza`` + 35 characters)."""


def gemini_model(base_url: str, **fields: Any) -> Model:
    data: dict[str, Any] = {
        "id": "gemini-2.5-flash",
        "api": "google-generative-ai",
        "provider": "google",
        "base_url": base_url + "/v1beta",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": ModelCost(input=0.3, output=2.5, cache_read=0.03, cache_write=0),
        "context_window": 1048576,
        "max_tokens": 65536,
    }
    data.update(fields)
    return Model(**data)


async def collect(
    model: Model, context: Any, options: Any = None
) -> tuple[list[Any], AssistantMessage]:
    events_stream = await maybe_await(stream(model, context, options))
    events = []

    async def drain() -> None:
        async for event in events_stream:
            events.append(event)

    await asyncio.wait_for(drain(), 10)
    result = await asyncio.wait_for(events_stream.result(), 10)
    return events, result


def types_of(events: list[Any]) -> list[str]:
    return [e.type for e in events]


def squash(types: list[str]) -> list[str]:
    """Collapse runs of identical event types (delta counts depend on chunking)."""
    out: list[str] = []
    for t in types:
        if not out or out[-1] != t:
            out.append(t)
    return out
