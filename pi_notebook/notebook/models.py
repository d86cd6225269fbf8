"""Which model a ``%%agent`` run uses, and the built-in ``demo`` model.

Order: ``--model`` > ``$PI_NOTEBOOK_MODEL`` > a provider whose API key is set (Anthropic, then
OpenAI, then OpenRouter) > a local Ollama answering on localhost:11434 > the ``demo`` model (a
faux provider with a short scripted tour that explains how to configure a real model).

This module must never print, log or return an API key: it only asks whether one is set, and
its errors name the environment variable, never the value. The providers package is imported
lazily so the notebook layer still works (with the demo model) when it is unavailable.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..ai import (
    AssistantMessage,
    Context,
    FauxProvider,
    FauxState,
    Model,
    StreamOptions,
    faux_assistant_message,
    register_faux_provider,
)
from ..settings import MODEL
from .hints import SETUP_HINT

OLLAMA_URL = "http://localhost:11434"
OLLAMA_TIMEOUT = 0.3

#: Providers tried when their key is set, with the model used by default.
KEYED_DEFAULTS: tuple[tuple[str, str], ...] = (
    ("anthropic", "claude-sonnet-4-5"),
    ("openai", "gpt-4.1-mini"),
    ("openrouter", "openai/gpt-4o-mini"),
)


class ModelError(ValueError):
    """A model cannot be used; the message is one readable line (never a key)."""


@dataclass(frozen=True)
class ResolvedModel:
    model: Model
    source: str
    """Why this model: ``--model``, ``PI_NOTEBOOK_MODEL``, ``ANTHROPIC_API_KEY``, ``ollama``..."""


# -- the demo model ------------------------------------------------------------------------------

HOW_TO_CONFIGURE = (
    "To talk to a real model, set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY in "
    "the kernel's environment (then restart the kernel), or run Ollama on localhost:11434, or "
    "pick one per cell with `%%agent --model provider/id` (e.g. `--model openai/gpt-4.1-mini`), "
    f"or set {MODEL.variable}=provider/id. "
    "No key? Any OpenAI-compatible local server works, e.g. llama.cpp's "
    "`llama-server -m model.gguf --port 8080`: "
    '`local = Model(id="local", api="openai-completions", provider="llamacpp", '
    'base_url="http://127.0.0.1:8080/v1")` in a cell, then `%%agent --model local`.'
)

DEMO_TOUR: tuple[str, ...] = (
    "Hello! I am `demo`, the scripted model built into pi_notebook - not a real LLM, so my "
    "answers are a short tour. " + HOW_TO_CONFIGURE,
    "This conversation persists across cells: each `%%agent` cell continues it. "
    "`%agent history` shows the transcript, `%agent status` the model and token counts, "
    "`%agent reset` starts over. Prompts can use notebook variables as {name} or {expr}.",
    "The final text of my last reply is in the variable `_agent_reply`, ready for the next "
    "cell. `%%agent --help` lists the options (model, system prompt, tools, max turns...).",
)

DEMO_DONE = (
    "I am the demo model and my scripted tour is over, so I cannot really answer. "
    + HOW_TO_CONFIGURE
)

_demo: FauxProvider | None = None


def _demo_reply(
    context: Context, options: StreamOptions | None, state: FauxState, model: Model
) -> AssistantMessage:
    assert _demo is not None
    _demo.append_responses([_demo_reply])  # never run out of answers
    turns = sum(1 for m in context.messages if getattr(m, "role", None) == "assistant")
    text = DEMO_TOUR[turns] if turns < len(DEMO_TOUR) else DEMO_DONE
    return faux_assistant_message(text)


def demo_model() -> Model:
    """The ``demo/demo`` model (registered once per process)."""
    global _demo
    if _demo is None:
        _demo = register_faux_provider(
            token_size=(4, 4),
            models=[{"id": "demo", "name": "pi_notebook demo (scripted)", "input": ["text"]}],
            api="pi-notebook-demo",
            provider="demo",
        )
        _demo.set_responses([_demo_reply])
    return _demo.get_model()


# -- resolution ----------------------------------------------------------------------------------


def _providers() -> Any:
    """The real-providers package, or None when it is not importable."""
    try:
        from ..ai import providers
    except Exception:
        return None
    return providers


def _model_from_object(value: Any) -> Model | None:
    if isinstance(value, Model):
        return value
    if isinstance(value, FauxProvider):
        return value.get_model()
    return None


def model_from_name(name: str, namespace: Mapping[str, Any] | None = None) -> Model:
    """A model from ``--model NAME`` / ``%agent model NAME``; raises :class:`ModelError`."""
    name = name.strip()
    if not name:
        raise ModelError("empty model name")
    if namespace is not None and name.isidentifier() and name in namespace:
        found = _model_from_object(namespace[name])
        if found is not None:
            return found
        raise ModelError(
            f"{name!r} in the notebook namespace is a {type(namespace[name]).__name__}, "
            "not a Model or faux provider"
        )
    if name in ("demo", "demo/demo"):
        return demo_model()
    providers = _providers()
    if providers is None:
        raise ModelError(
            f"cannot use model {name!r}: the providers package is not available "
            "(only 'demo' and Model objects from the namespace work)"
        )
    if "/" in name:
        try:
            model: Model = providers.resolve_model(name)
        except (KeyError, ValueError) as exc:
            known = ", ".join(providers.list_providers())
            raise ModelError(f"{_reason(exc)} (known providers: {known})") from None
        return model
    matches = [m for m in providers.list_models() if m.id == name]
    if not matches:
        raise ModelError(
            f"unknown model {name!r}: use 'provider/id' (e.g. openai/gpt-4.1-mini), "
            f"a catalogue id, 'demo', or the name of a Model variable ({SETUP_HINT})"
        )
    first: Model = matches[0]
    return first


def _reason(exc: BaseException) -> str:
    return str(exc.args[0]) if exc.args else type(exc).__name__


def check_api_key(model: Model) -> None:
    """Raise :class:`ModelError` when ``model``'s provider needs a key that is not set."""
    if model.api.startswith(("faux", "replay-")) or model.api == "pi-notebook-demo":
        return
    if model.api.startswith("record-"):  # a recording needs what the recorded model needs
        from ..ai.replay import Recorder, handle_of

        handle = handle_of(model)
        if isinstance(handle, Recorder):
            return check_api_key(handle.target)
    providers = _providers()
    if providers is None:
        return
    if not providers.requires_api_key(model.provider):
        return
    if providers.get_env_api_key(model.provider) is None:
        names = " or ".join(providers.env_var_names(model.provider))
        raise ModelError(
            f"no API key for {model.provider}/{model.id}: set {names} in the kernel's "
            "environment, or choose another model with --model (e.g. --model demo)"
        )


def _ollama_model() -> str | None:
    """The first model of a local Ollama, if one answers within ``OLLAMA_TIMEOUT``."""
    try:
        with urllib.request.urlopen(f"{OLLAMA_URL}/api/tags", timeout=OLLAMA_TIMEOUT) as reply:
            data = json.loads(reply.read().decode("utf-8"))
    except Exception:
        return None
    models = data.get("models") if isinstance(data, dict) else None
    if not models or not isinstance(models, list):
        return None
    name = models[0].get("name") or models[0].get("model")
    return str(name) if name else None


def resolve_default_model(namespace: Mapping[str, Any] | None = None) -> ResolvedModel:
    """The model when ``--model`` is not given; raises :class:`ModelError` for a bad env value."""
    spec = MODEL.value()
    if spec:
        try:
            return ResolvedModel(model_from_name(spec, namespace), MODEL.variable)
        except ModelError as exc:
            raise ModelError(f"{MODEL.variable}: {exc}") from None
    providers = _providers()
    if providers is not None:
        for provider, model_id in KEYED_DEFAULTS:
            if providers.get_env_api_key(provider) is not None:
                model = providers.resolve_model(f"{provider}/{model_id}")
                return ResolvedModel(model, providers.env_var_names(provider)[0])
        local = _ollama_model()
        if local is not None:
            return ResolvedModel(providers.resolve_model(f"ollama/{local}"), "ollama")
    return ResolvedModel(demo_model(), "demo")


__all__ = [
    "DEMO_DONE",
    "DEMO_TOUR",
    "ModelError",
    "ResolvedModel",
    "check_api_key",
    "demo_model",
    "model_from_name",
    "resolve_default_model",
]
