"""Tests for transform_messages / is_valid_history (reference 1.7, Pi's transform-messages.js)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pi_notebook.ai import (
    AssistantMessage,
    CustomMessage,
    ImageContent,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_notebook.ai.transform import is_valid_history, transform_messages

NO_RESULT = "No result provided"
IMAGE_NOTE = "(image omitted: model does not support images)"
TOOL_IMAGE_NOTE = "(tool image omitted: model does not support images)"

TARGET = Model(id="gpt-x", api="openai-completions", provider="openai", input=["text", "image"])
TEXT_ONLY = Model(id="gpt-x", api="openai-completions", provider="openai", input=["text"])


def user(text: str = "hi") -> UserMessage:
    return UserMessage(content=text, timestamp=1)


def assistant(
    *blocks: Any,
    stop_reason: Any = "stop",
    model: Model = TARGET,
    model_id: str | None = None,
) -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),
        api=model.api,
        provider=model.provider,
        model=model_id or model.id,
        stop_reason=stop_reason,
        error_message="boom" if stop_reason in ("error", "aborted") else None,
        timestamp=2,
    )


def foreign(*blocks: Any, stop_reason: Any = "stop") -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),
        api="anthropic-messages",
        provider="anthropic",
        model="claude-x",
        stop_reason=stop_reason,
        timestamp=2,
    )


def call(id: str, name: str = "ls", **kwargs: Any) -> ToolCall:
    return ToolCall(id=id, name=name, arguments={}, **kwargs)


def result(call_id: str, name: str = "ls", *content: Any) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id,
        tool_name=name,
        content=list(content) or [TextContent(text="ok")],
        timestamp=3,
    )


def image(data: str = "AAAA") -> ImageContent:
    return ImageContent(data=data, mime_type="image/png")


def is_synthetic(message: Any, call_id: str, name: str) -> bool:
    return (
        isinstance(message, ToolResultMessage)
        and message.tool_call_id == call_id
        and message.tool_name == name
        and message.is_error is True
        and message.content == [TextContent(text=NO_RESULT)]
    )


# --------------------------------------------------------------------------------------------
# Orphaned tool calls


def test_orphan_tool_call_followed_by_user_gets_a_synthetic_result_before_the_user() -> None:
    messages = [user("go"), assistant(call("c1", "ls")), user("never mind")]
    out = transform_messages(messages, TARGET)
    assert len(out) == 4
    assert out[1] is messages[1]
    assert is_synthetic(out[2], "c1", "ls")
    assert out[3] is messages[2]


def test_trailing_orphan_tool_call_gets_a_synthetic_result() -> None:
    messages = [user("go"), assistant(call("c1", "read"))]
    out = transform_messages(messages, TARGET)
    assert len(out) == 3
    assert is_synthetic(out[2], "c1", "read")


def test_only_unanswered_calls_get_synthetic_results_in_call_order() -> None:
    messages = [
        user(),
        assistant(call("a", "one"), call("b", "two"), call("c", "three")),
        result("b", "two"),
        user("next"),
    ]
    out = transform_messages(messages, TARGET)
    assert out[2] is messages[2]
    assert is_synthetic(out[3], "a", "one")
    assert is_synthetic(out[4], "c", "three")
    assert out[5] is messages[3]
    assert len(out) == 6


def test_orphan_tool_call_followed_by_assistant_gets_a_synthetic_result() -> None:
    messages = [user(), assistant(call("c1")), assistant(TextContent(text="later"))]
    out = transform_messages(messages, TARGET)
    assert [m.role for m in out] == ["user", "assistant", "toolResult", "assistant"]
    assert is_synthetic(out[2], "c1", "ls")


def test_fully_answered_calls_are_left_alone() -> None:
    messages = [user(), assistant(call("c1"), call("c2")), result("c2"), result("c1"), user()]
    out = transform_messages(messages, TARGET)
    assert out == messages
    assert all(a is b for a, b in zip(out, messages, strict=True))


def test_custom_messages_do_not_close_open_tool_calls() -> None:
    note = CustomMessage(role="notification", text="ping", timestamp=4)
    messages = [user(), assistant(call("c1")), note, result("c1")]
    out = transform_messages(messages, TARGET)
    assert out == messages


# --------------------------------------------------------------------------------------------
# Errored / aborted assistants


@pytest.mark.parametrize("stop_reason", ["error", "aborted"])
def test_errored_or_aborted_assistant_is_dropped(stop_reason: str) -> None:
    failed = assistant(TextContent(text="half an ans"), stop_reason=stop_reason)
    messages = [user(), failed, user("retry")]
    out = transform_messages(messages, TARGET)
    assert out == [messages[0], messages[2]]


def test_dropped_assistant_tool_calls_get_no_synthetic_results() -> None:
    messages = [user(), assistant(call("c1"), stop_reason="aborted"), user("again")]
    out = transform_messages(messages, TARGET)
    assert [m.role for m in out] == ["user", "user"]


def test_tool_results_of_a_dropped_assistant_are_kept() -> None:
    messages = [
        user(),
        assistant(call("c1"), stop_reason="error"),
        result("c1"),
        user("again"),
    ]
    out = transform_messages(messages, TARGET)
    assert out == [messages[0], messages[2], messages[3]]


def test_orphans_before_a_dropped_assistant_still_get_synthetic_results() -> None:
    messages = [user(), assistant(call("c1")), assistant(stop_reason="error")]
    out = transform_messages(messages, TARGET)
    assert [m.role for m in out] == ["user", "assistant", "toolResult"]
    assert is_synthetic(out[2], "c1", "ls")


# --------------------------------------------------------------------------------------------
# Thinking across models


def test_foreign_model_thinking_becomes_text() -> None:
    message = foreign(ThinkingContent(thinking="step 1", thinking_signature="sig"))
    out = transform_messages([user(), message], TARGET)
    assert out[1].content == [TextContent(text="step 1")]


def test_foreign_model_redacted_thinking_is_dropped() -> None:
    message = foreign(
        ThinkingContent(thinking="[Reasoning redacted]", thinking_signature="x", redacted=True),
        TextContent(text="answer"),
    )
    out = transform_messages([user(), message], TARGET)
    assert out[1].content == [TextContent(text="answer")]


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_foreign_model_empty_thinking_is_dropped(text: str) -> None:
    message = foreign(
        ThinkingContent(thinking=text, thinking_signature="sig"), TextContent(text="a")
    )
    out = transform_messages([user(), message], TARGET)
    assert out[1].content == [TextContent(text="a")]


def test_same_model_thinking_is_kept_unchanged() -> None:
    thinking = ThinkingContent(thinking="deep thought", thinking_signature="sig")
    message = assistant(thinking, TextContent(text="a"))
    out = transform_messages([user(), message], TARGET)
    assert out[1].content[0] == thinking
    assert out[1].content[0].thinking_signature == "sig"


def test_same_model_empty_thinking_with_signature_is_kept() -> None:
    thinking = ThinkingContent(thinking="", thinking_signature="encrypted-reasoning")
    out = transform_messages([user(), assistant(thinking)], TARGET)
    assert out[1].content == [thinking]


def test_same_model_redacted_thinking_is_kept() -> None:
    thinking = ThinkingContent(
        thinking="[Reasoning redacted]", thinking_signature="x", redacted=True
    )
    out = transform_messages([user(), assistant(thinking)], TARGET)
    assert out[1].content == [thinking]


def test_same_model_empty_thinking_without_signature_is_dropped() -> None:
    message = assistant(ThinkingContent(thinking="  "), TextContent(text="a"))
    out = transform_messages([user(), message], TARGET)
    assert out[1].content == [TextContent(text="a")]


def test_a_different_model_id_on_the_same_provider_counts_as_foreign() -> None:
    message = assistant(ThinkingContent(thinking="hmm", thinking_signature="s"), model_id="gpt-y")
    out = transform_messages([user(), message], TARGET)
    assert out[1].content == [TextContent(text="hmm")]


def test_foreign_tool_call_loses_its_thought_signature() -> None:
    message = foreign(call("c1", thought_signature="gsig"))
    out = transform_messages([user(), message, result("c1")], TARGET)
    block = out[1].content[0]
    assert block.thought_signature is None
    assert "thoughtSignature" not in block.to_json_dict()
    assert (block.id, block.name) == ("c1", "ls")


def test_same_model_tool_call_keeps_its_thought_signature() -> None:
    message = assistant(call("c1", thought_signature="gsig"))
    out = transform_messages([user(), message, result("c1")], TARGET)
    assert out[1].content[0].thought_signature == "gsig"


def test_foreign_text_block_loses_its_text_signature() -> None:
    message = foreign(TextContent(text="hello", text_signature="msg_123"))
    out = transform_messages([user(), message], TARGET)
    assert out[1].content == [TextContent(text="hello")]
    assert out[1].content[0].text_signature is None


# --------------------------------------------------------------------------------------------
# Images for a text-only model


def test_user_images_become_one_note_per_run_of_consecutive_images() -> None:
    message = UserMessage(
        content=[TextContent(text="a"), image(), image(), TextContent(text="b"), image()],
        timestamp=1,
    )
    out = transform_messages([message], TEXT_ONLY)
    assert out[0].content == [
        TextContent(text="a"),
        TextContent(text=IMAGE_NOTE),
        TextContent(text="b"),
        TextContent(text=IMAGE_NOTE),
    ]


def test_tool_result_images_become_the_tool_image_note() -> None:
    messages = [
        user(),
        assistant(call("c1", "screenshot")),
        result("c1", "screenshot", image(), image(), TextContent(text="done"), image()),
    ]
    out = transform_messages(messages, TEXT_ONLY)
    assert out[2].content == [
        TextContent(text=TOOL_IMAGE_NOTE),
        TextContent(text="done"),
        TextContent(text=TOOL_IMAGE_NOTE),
    ]
    assert out[2].tool_call_id == "c1"


def test_images_are_kept_for_an_image_capable_model() -> None:
    message = UserMessage(content=[TextContent(text="a"), image()], timestamp=1)
    out = transform_messages([message], TARGET)
    assert out[0] is message


def test_string_user_content_is_untouched_for_a_text_only_model() -> None:
    message = user("plain")
    assert transform_messages([message], TEXT_ONLY)[0] is message


def test_existing_placeholder_followed_by_image_is_not_duplicated() -> None:
    message = UserMessage(content=[TextContent(text=IMAGE_NOTE), image()], timestamp=1)
    out = transform_messages([message], TEXT_ONLY)
    assert out[0].content == [TextContent(text=IMAGE_NOTE)]


# --------------------------------------------------------------------------------------------
# Tool-call id normalisation


def normalize(call_id: str) -> str:
    return call_id.replace("|", "_")[:16]


def test_normalize_tool_call_id_rewrites_foreign_calls_and_remaps_their_results() -> None:
    long_id = "fc_abc|" + "x" * 40
    messages = [user(), foreign(call(long_id, "ls")), result(long_id, "ls"), user("next")]
    out = transform_messages(messages, TARGET, normalize)
    new_id = normalize(long_id)
    assert out[1].content[0].id == new_id
    assert out[2].tool_call_id == new_id
    assert out[2].tool_name == "ls"
    assert is_valid_history(out)
    assert len(out) == 4  # no synthetic results: the remapped result answers the call


def test_normalize_tool_call_id_is_not_applied_to_same_model_calls() -> None:
    long_id = "fc_abc|" + "x" * 40
    messages = [user(), assistant(call(long_id)), result(long_id)]
    out = transform_messages(messages, TARGET, normalize)
    assert out[1].content[0].id == long_id
    assert out[2].tool_call_id == long_id


def test_orphaned_normalized_call_gets_a_synthetic_result_with_the_new_id() -> None:
    messages = [user(), foreign(call("a|b", "ls"))]
    out = transform_messages(messages, TARGET, normalize)
    assert is_synthetic(out[2], "a_b", "ls")


# --------------------------------------------------------------------------------------------
# Purity


def test_input_list_and_messages_are_not_mutated() -> None:
    messages: list[Any] = [
        UserMessage(content=[TextContent(text="see"), image()], timestamp=1),
        foreign(
            ThinkingContent(thinking="plan", thinking_signature="s"),
            call("a|1", "ls", thought_signature="g"),
        ),
        result("a|1", "ls", image()),
        assistant(call("c2"), stop_reason="error"),
        assistant(call("c3")),
    ]
    snapshot = copy.deepcopy(messages)
    identities = [id(m) for m in messages]
    blocks = [list(m.content) for m in messages]
    out = transform_messages(messages, TEXT_ONLY, normalize)
    assert out is not messages
    assert [id(m) for m in messages] == identities
    assert messages == snapshot
    assert [list(m.content) for m in messages] == blocks


def test_empty_history_stays_empty() -> None:
    assert transform_messages([], TARGET) == []


# --------------------------------------------------------------------------------------------
# is_valid_history


def test_is_valid_history_accepts_answered_calls() -> None:
    assert is_valid_history([user(), assistant(call("a"), call("b")), result("b"), result("a")])


def test_is_valid_history_accepts_plain_conversation() -> None:
    assert is_valid_history([user(), assistant(TextContent(text="x")), user()])
    assert is_valid_history([])


def test_is_valid_history_rejects_trailing_orphan() -> None:
    assert not is_valid_history([user(), assistant(call("a"))])


def test_is_valid_history_rejects_user_before_all_results() -> None:
    assert not is_valid_history([user(), assistant(call("a"), call("b")), result("a"), user()])


def test_is_valid_history_rejects_assistant_before_results() -> None:
    assert not is_valid_history([user(), assistant(call("a")), assistant(), result("a")])


def test_transform_output_is_always_a_valid_history() -> None:
    messages = [
        user(),
        assistant(call("a"), call("b")),
        result("a"),
        user(),
        assistant(call("c"), stop_reason="aborted"),
        assistant(call("d")),
    ]
    assert not is_valid_history(messages)
    assert is_valid_history(transform_messages(messages, TARGET))
