"""The request tap and the context views, on a real Agent run (faux model, no kernel)."""

from __future__ import annotations

import asyncio
import json

from pi_notebook.agent import Agent, RunConfig
from pi_notebook.ai import (
    StreamOptions,
    TextContent,
    UserMessage,
    faux_assistant_message,
    register_faux_provider,
)
from pi_notebook.notebook.context_view import (
    LISTED_MESSAGES,
    RequestTap,
    SentRequest,
    context_json,
    context_summary,
    context_text,
    estimate_tokens,
    options_view,
)

KEY = "sk-proj-" + "A1b2C3d4" * 6


def test_the_tap_keeps_the_providers_own_lists_and_leaves_the_agent_as_it_was() -> None:
    faux = register_faux_provider(token_size=(1, 1))
    faux.set_responses([faux_assistant_message("one"), faux_assistant_message("two")])
    agent = Agent(model=faux.get_model(), system_prompt="Be brief.")
    tap = RequestTap()
    run = RunConfig(on_request=tap)  # the tap is the run's request hook
    asyncio.run(agent.prompt("first", run=run))
    tap.next_prompt()  # the second prompt goes on in the same tap (Interrupt & send)
    asyncio.run(agent.prompt("second", run=run))
    assert agent.stream_fn is None and agent.on_request is None
    sent = [r.messages for r in tap.requests]
    received = [r.context.messages for r in faux.requests]
    assert all(a is b for a, b in zip(sent, received, strict=True)), "references, not copies"
    assert [r.turn for r in tap.requests] == [1, 2]
    assert tap.requests[1].system_prompt == "Be brief."


def test_no_key_header_value_or_signal_reaches_a_view() -> None:
    options = StreamOptions(
        api_key=KEY,
        headers={"Authorization": f"Bearer {KEY}", "X-Team": "blue"},
        max_tokens=64,
        on_payload=lambda payload, model: None,
    )
    shown = options_view(options)
    assert shown == {
        "max_tokens": 64,
        "headers": {"Authorization": "(value hidden)", "X-Team": "(value hidden)"},
        "on_payload": "(a callback)",
    }
    request = SentRequest(
        turn=1,
        model="openai/gpt-4o-mini",
        system_prompt=f"the key is {KEY}",
        messages=[UserMessage(content=[TextContent(text=f"use {KEY}")])],
        tools=[],
        options=shown,
    )
    for text in (
        context_text(request),
        context_json(request),
        json.dumps(context_summary(request), ensure_ascii=False),
    ):
        assert KEY not in text and "[redacted" in text


def test_the_panel_list_is_bounded_and_says_what_it_left_out() -> None:
    messages = [UserMessage(content=[TextContent(text=f"m{i} " + "x" * 1000)]) for i in range(150)]
    request = SentRequest(1, "faux/faux-1", "", messages, [])
    summary = context_summary(request)
    assert summary["message_count"] == 150 and summary["skipped"] == 150 - LISTED_MESSAGES
    assert [m["n"] for m in summary["messages"]][:2] == [51, 52]
    assert all(len(m["text"]) < 400 for m in summary["messages"])
    assert summary["messages"][0]["tokens"] == estimate_tokens("m50 " + "x" * 1000)
    assert len(context_text(request).splitlines()) > 300  # %agent context prints all of it


def test_token_estimates_count_as_pi_does() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    assert estimate_tokens("😀😀") == 1  # UTF-16 code units, as JavaScript's length


def test_what_the_model_will_be_sent_leaves_out_an_aborted_reply_the_provider_drops() -> None:
    aborted = faux_assistant_message("", stop_reason="aborted", error_message="Request was aborted")
    prompt = UserMessage(content=[TextContent(text="again")])
    request = SentRequest(2, "faux/faux-1", "", [prompt, aborted, prompt], [])
    summary = context_summary(request)
    assert [m["role"] for m in summary["messages"]] == ["user", "user"]
    assert summary["message_count"] == 2 and summary["dropped"] == 1
