"""One ``StreamOptions``: carried by ``AgentLoopConfig`` and ``Agent`` to every model request."""

from __future__ import annotations

from typing import Any

import pytest

from pi_notebook.agent import AbortController, Agent, run_agent_loop
from pi_notebook.ai import (
    FauxProvider,
    StreamOptions,
    UserMessage,
    faux_assistant_message,
)

from .conftest import Log, make_config, make_context

PER_REQUEST = {"api_key", "signal", "reasoning"}
"""Set by the loop for each request; every other option passes through as given."""


def recording(faux: FauxProvider, seen: list[StreamOptions]) -> Any:
    def stream_fn(model: Any, context: Any, options: StreamOptions | None) -> Any:
        assert options is not None
        seen.append(options)
        return faux.stream(model, context, options)

    return stream_fn


async def test_every_stream_option_of_the_config_reaches_the_request(
    faux: FauxProvider, log: Log
) -> None:
    # A distinct marker per field, whatever the fields are: adding an option to
    # StreamOptions needs no other edit for it to reach the provider.
    markers = {name: object() for name in StreamOptions.model_fields if name not in PER_REQUEST}
    options = StreamOptions(api_key="config-key", reasoning="low").model_copy(update=markers)
    seen: list[StreamOptions] = []
    faux.set_responses([faux_assistant_message("hi")])
    controller = AbortController()
    await run_agent_loop(
        [UserMessage(content="a")],
        make_context(),
        make_config(faux, stream_options=options),
        log.emit,
        controller.signal,
        recording(faux, seen),
    )
    [sent] = seen
    assert all(getattr(sent, name) is marker for name, marker in markers.items())
    assert sent.api_key == "config-key" and sent.reasoning == "low"
    assert sent.signal is controller.signal
    assert options.signal is None  # the config's own options are not changed


async def test_get_api_key_wins_over_the_configured_key(faux: FauxProvider, log: Log) -> None:
    seen: list[StreamOptions] = []
    faux.set_responses([faux_assistant_message("hi")])
    config = make_config(
        faux, get_api_key=lambda provider: "hook-key", stream_options=StreamOptions(api_key="x")
    )
    await run_agent_loop(
        [UserMessage(content="a")], make_context(), config, log.emit, None, recording(faux, seen)
    )
    assert seen[0].api_key == "hook-key"


async def test_agent_takes_stream_options_whole_or_as_keywords(faux: FauxProvider) -> None:
    seen: list[StreamOptions] = []
    faux.set_responses([faux_assistant_message("hi")])
    agent = Agent(
        model=faux.get_model(),
        stream_fn=recording(faux, seen),
        thinking_level="high",
        stream_options=StreamOptions(max_tokens=10, temperature=0.5, session_id="s"),
        max_tokens=60,
        api_key="k",
    )
    await agent.prompt("hi")
    [sent] = seen
    assert (sent.max_tokens, sent.temperature, sent.session_id) == (60, 0.5, "s")
    assert sent.api_key == "k" and sent.reasoning == "high"
    assert sent.signal is not None
    assert agent.stream_options.max_tokens == 60


async def test_agent_thinking_off_sends_no_reasoning(faux: FauxProvider) -> None:
    seen: list[StreamOptions] = []
    faux.set_responses([faux_assistant_message("hi")])
    agent = Agent(model=faux.get_model(), stream_fn=recording(faux, seen), reasoning="low")
    await agent.prompt("hi")
    assert seen[0].reasoning is None  # thinking_level "off" decides


def test_agent_rejects_an_unknown_option_by_name() -> None:
    with pytest.raises(TypeError, match="max_tokns"):
        Agent(max_tokns=5)


def test_agent_validates_keyword_options() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        Agent(max_tokens="many")
