"""Tests for pi_notebook.ai.types: Pi's JSON in, Pi's JSON out (reference 1.1–1.3)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import Field

from pi_notebook.ai import (
    AssistantMessage,
    CustomMessage,
    ImageContent,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UsageCost,
    UserMessage,
    dump_transcript,
    parse_agent_message,
    parse_message,
    parse_transcript,
)

# --------------------------------------------------------------------------------------------
# Realistic Pi JSON, exactly as Pi 0.82.1 serialises it


def user_json() -> dict[str, Any]:
    return {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {"type": "image", "data": "iVBORw0KGgoAAAANSUhEUgAAAAE=", "mimeType": "image/png"},
        ],
        "timestamp": 1767225600000,
    }


def assistant_json() -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "The user wants a description; I should look it up.",
                "thinkingSignature": "EqQBCkYIBxgCKkDsig==",
            },
            {
                "type": "text",
                "text": "Let me check the weather first.",
                "textSignature": "msg_0123456789abcdef",
            },
            {
                "type": "toolCall",
                "id": "call_abc123",
                "name": "get_weather",
                "arguments": {"city": "Paris", "units": "metric", "days": 3},
                "thoughtSignature": "CiQB0e2Kb3v8",
            },
        ],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "responseId": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "usage": {
            "input": 1200,
            "output": 345,
            "cacheRead": 5000,
            "cacheWrite": 800,
            "cacheWrite1h": 300,
            "totalTokens": 7345,
            "cost": {
                "input": 0.0036,
                "output": 0.005175,
                "cacheRead": 0.0015,
                "cacheWrite": 0.003675,
                "total": 0.01395,
            },
        },
        "stopReason": "error",
        "errorMessage": "Provider finish_reason: content_filter",
        "timestamp": 1767225601234,
    }


def tool_result_json() -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": "call_abc123",
        "toolName": "get_weather",
        "content": [
            {"type": "text", "text": "Sunny, 21°C"},
            {"type": "image", "data": "R0lGODlhAQABAAAAACw=", "mimeType": "image/gif"},
        ],
        "details": {"raw": {"temp": 21.5, "sky": "clear"}, "source": "meteo"},
        "addedToolNames": ["get_forecast"],
        "isError": False,
        "timestamp": 1767225602000,
    }


# --------------------------------------------------------------------------------------------
# Parsing Pi JSON


def test_user_message_with_text_and_image_parses_into_typed_blocks() -> None:
    message = parse_message(user_json())
    assert isinstance(message, UserMessage)
    assert isinstance(message.content, list)
    assert isinstance(message.content[0], TextContent)
    assert message.content[0].text == "What is in this picture?"
    assert isinstance(message.content[1], ImageContent)
    assert message.content[1].mime_type == "image/png"
    assert message.timestamp == 1767225600000


def test_assistant_message_fields_parse_into_snake_case_attributes() -> None:
    message = parse_message(assistant_json())
    assert isinstance(message, AssistantMessage)
    thinking, text, call = message.content
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking_signature == "EqQBCkYIBxgCKkDsig=="
    assert isinstance(text, TextContent)
    assert text.text_signature == "msg_0123456789abcdef"
    assert isinstance(call, ToolCall)
    assert call.thought_signature == "CiQB0e2Kb3v8"
    assert call.arguments == {"city": "Paris", "units": "metric", "days": 3}
    assert message.usage.cache_read == 5000
    assert message.usage.cache_write_1h == 300
    assert message.usage.total_tokens == 7345
    assert message.usage.cost.cache_write == pytest.approx(0.003675)
    assert message.stop_reason == "error"
    assert message.error_message == "Provider finish_reason: content_filter"
    assert message.response_id == "msg_01XFDUDYJgAACzvnptvVoYEL"


def test_tool_result_fields_parse_into_snake_case_attributes() -> None:
    message = parse_message(tool_result_json())
    assert isinstance(message, ToolResultMessage)
    assert message.tool_call_id == "call_abc123"
    assert message.tool_name == "get_weather"
    assert message.details == {"raw": {"temp": 21.5, "sky": "clear"}, "source": "meteo"}
    assert message.added_tool_names == ["get_forecast"]
    assert message.is_error is False
    assert isinstance(message.content[1], ImageContent)


@pytest.mark.parametrize("factory", [user_json, assistant_json, tool_result_json])
def test_parse_message_to_json_dict_round_trips_exactly(factory: Any) -> None:
    data = factory()
    assert parse_message(data).to_json_dict() == data


@pytest.mark.parametrize("factory", [user_json, assistant_json, tool_result_json])
def test_model_dump_by_alias_exclude_none_round_trips_exactly(factory: Any) -> None:
    data = factory()
    dumped = parse_message(data).model_dump(by_alias=True, exclude_none=True)
    assert dumped == data


@pytest.mark.parametrize("factory", [user_json, assistant_json, tool_result_json])
def test_parse_agent_message_round_trips_standard_messages(factory: Any) -> None:
    data = factory()
    message = parse_agent_message(data)
    assert type(message) is type(parse_message(data))
    assert message.to_json_dict() == data


def test_parse_transcript_and_dump_transcript_round_trip() -> None:
    data = [
        user_json(),
        assistant_json(),
        tool_result_json(),
        {"role": "notification", "text": "Build finished", "timestamp": 1767225603000},
    ]
    messages = parse_transcript(copy.deepcopy(data))
    assert [type(m) for m in messages] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        CustomMessage,
    ]
    assert dump_transcript(messages) == data


def test_parsing_does_not_mutate_the_input_dict() -> None:
    data = assistant_json()
    before = copy.deepcopy(data)
    parse_message(data)
    assert data == before


def test_user_message_with_string_content_round_trips() -> None:
    data = {"role": "user", "content": "hello", "timestamp": 1}
    message = parse_message(data)
    assert message.content == "hello"
    assert message.to_json_dict() == data


def test_redacted_thinking_round_trips() -> None:
    data = {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": "[Reasoning redacted]",
                "thinkingSignature": "opaque-payload",
                "redacted": True,
            }
        ],
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "stop",
        "timestamp": 2,
    }
    message = parse_message(data)
    assert message.content[0].redacted is True
    assert message.to_json_dict() == data


def test_absent_optionals_are_left_out_of_the_json() -> None:
    message = AssistantMessage(
        content=[TextContent(text="hi")], api="faux", provider="faux", model="m", timestamp=3
    )
    dumped = message.to_json_dict()
    for key in ("errorMessage", "responseId", "responseModel", "diagnostics"):
        assert key not in dumped
    assert "textSignature" not in dumped["content"][0]
    assert "cacheWrite1h" not in dumped["usage"]
    assert "reasoning" not in dumped["usage"]


def test_unknown_role_is_rejected_by_parse_message() -> None:
    with pytest.raises(ValueError):
        parse_message({"role": "notification", "text": "x", "timestamp": 1})


# --------------------------------------------------------------------------------------------
# snake_case construction


def test_snake_case_construction_dumps_pi_camel_case() -> None:
    message = ToolResultMessage(
        tool_call_id="call_1",
        tool_name="ls",
        content=[TextContent(text="a.txt", text_signature="sig")],
        details={"count": 1},
        added_tool_names=["cat"],
        is_error=True,
        timestamp=10,
    )
    assert message.to_json_dict() == {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "ls",
        "content": [{"type": "text", "text": "a.txt", "textSignature": "sig"}],
        "details": {"count": 1},
        "addedToolNames": ["cat"],
        "isError": True,
        "timestamp": 10,
    }


def test_snake_case_dict_parses_like_camel_case_dict() -> None:
    snake = {
        "role": "toolResult",
        "tool_call_id": "call_abc123",
        "tool_name": "get_weather",
        "content": [{"type": "image", "data": "AAAA", "mime_type": "image/png"}],
        "is_error": True,
        "added_tool_names": ["x"],
        "timestamp": 5,
    }
    camel = {
        "role": "toolResult",
        "toolCallId": "call_abc123",
        "toolName": "get_weather",
        "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
        "isError": True,
        "addedToolNames": ["x"],
        "timestamp": 5,
    }
    assert parse_message(snake) == parse_message(camel)
    assert parse_message(snake).to_json_dict() == camel


def test_snake_case_usage_construction_uses_pi_spelling_for_cache_write_1h() -> None:
    usage = Usage(input=1, output=2, cache_read=3, cache_write=4, cache_write_1h=2, total_tokens=10)
    dumped = usage.to_json_dict()
    assert dumped["cacheWrite1h"] == 2
    assert dumped["cacheRead"] == 3
    assert dumped["totalTokens"] == 10


def test_timestamp_defaults_to_now_in_milliseconds() -> None:
    message = UserMessage(content="hi")
    assert message.timestamp > 1_600_000_000_000  # milliseconds, not seconds


# --------------------------------------------------------------------------------------------
# Unknown fields


def test_unknown_top_level_fields_survive_the_round_trip() -> None:
    data = assistant_json()
    data["providerMeta"] = {"region": "eu", "attempts": [1, 2]}
    data["someFutureFlag"] = True
    assert parse_message(data).to_json_dict() == data


def test_unknown_fields_inside_blocks_and_usage_survive_the_round_trip() -> None:
    data = assistant_json()
    data["content"][1]["citations"] = [{"url": "https://example.com"}]
    data["content"][2]["partialJson"] = '{"city":"Paris"}'
    data["usage"]["cacheWrite5m"] = 500
    data["usage"]["cost"]["discount"] = 0.001
    assert parse_message(data).to_json_dict() == data


def test_unknown_field_with_explicit_null_survives_the_round_trip() -> None:
    data = user_json()
    data["providerMeta"] = None
    assert parse_message(data).to_json_dict() == data


# --------------------------------------------------------------------------------------------
# Tool-call arguments and details with None values


def test_tool_call_arguments_with_none_survive_to_json_dict() -> None:
    arguments = {"path": None, "options": {"recursive": None, "depth": 2}, "list": [None, 1]}
    call = ToolCall(id="c", name="ls", arguments=arguments)
    assert call.to_json_dict()["arguments"] == arguments


def test_tool_call_arguments_with_none_survive_model_dump_exclude_none() -> None:
    arguments = {"path": None, "options": {"recursive": None}}
    call = ToolCall(id="c", name="ls", arguments=arguments)
    dumped = call.model_dump(by_alias=True, exclude_none=True)
    assert dumped["arguments"] == arguments


def test_tool_call_null_arguments_survive_a_message_round_trip() -> None:
    data = assistant_json()
    data["content"][2]["arguments"] = {"city": None, "filters": {"min": None, "max": 3}}
    message = parse_message(data)
    assert message.content[2].arguments == {"city": None, "filters": {"min": None, "max": 3}}
    assert message.to_json_dict() == data
    assert message.model_dump(by_alias=True, exclude_none=True) == data


def test_tool_result_details_with_none_survive_the_round_trip() -> None:
    data = tool_result_json()
    data["details"] = {"exitCode": None, "stderr": None, "nested": {"x": None}}
    assert parse_message(data).to_json_dict() == data


# --------------------------------------------------------------------------------------------
# Custom messages


def test_custom_role_message_parses_as_custom_message() -> None:
    data = {"role": "notification", "text": "Deploy done", "timestamp": 42}
    message = parse_agent_message(data)
    assert isinstance(message, CustomMessage)
    assert message.role == "notification"
    assert message.text == "Deploy done"  # type: ignore[attr-defined]


def test_custom_message_constructed_with_extra_fields_round_trips() -> None:
    message = CustomMessage(role="notification", text="Deploy done", timestamp=42)
    dumped = message.to_json_dict()
    assert dumped == {"role": "notification", "text": "Deploy done", "timestamp": 42}
    again = parse_agent_message(dumped)
    assert isinstance(again, CustomMessage)
    assert again.to_json_dict() == dumped


class BashExecution(CustomMessage):
    role: str = "bashExecution"
    command: str
    exit_code: int | None = None
    output_lines: list[str] = Field(default_factory=list)


def test_custom_message_subclass_dumps_camel_case_fields() -> None:
    message = BashExecution(command="ls", exit_code=0, output_lines=["a"], timestamp=7)
    assert message.to_json_dict() == {
        "role": "bashExecution",
        "timestamp": 7,
        "command": "ls",
        "exitCode": 0,
        "outputLines": ["a"],
    }


def test_custom_message_subclass_json_parses_via_parse_agent_message_and_round_trips() -> None:
    dumped = BashExecution(command="ls", exit_code=1, timestamp=7).to_json_dict()
    parsed = parse_agent_message(dumped)
    assert isinstance(parsed, CustomMessage)
    assert parsed.role == "bashExecution"
    assert parsed.to_json_dict() == dumped
    # and the subclass validates the same JSON back into its typed fields
    typed = BashExecution.model_validate(dumped)
    assert typed.exit_code == 1
    assert typed.to_json_dict() == dumped


def test_custom_message_subclass_instance_passes_through_parse_agent_message() -> None:
    message = BashExecution(command="pwd", timestamp=8)
    parsed = parse_agent_message(message)
    assert isinstance(parsed, BashExecution)
    assert parsed.command == "pwd"


def test_parse_transcript_accepts_mixed_models_and_dicts() -> None:
    items: list[Any] = [UserMessage(content="hi", timestamp=1), tool_result_json()]
    messages = parse_transcript(items)
    assert isinstance(messages[0], UserMessage)
    assert isinstance(messages[1], ToolResultMessage)


# --------------------------------------------------------------------------------------------
# Defaults and secrets


def test_usage_defaults_are_zeros() -> None:
    usage = Usage()
    assert (usage.input, usage.output, usage.cache_read, usage.cache_write) == (0, 0, 0, 0)
    assert usage.total_tokens == 0
    assert usage.cost == UsageCost(input=0, output=0, cache_read=0, cache_write=0, total=0)
    assert usage.to_json_dict() == {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def test_usage_default_cost_is_not_shared_between_instances() -> None:
    a, b = Usage(), Usage()
    a.cost.total = 1.0
    assert b.cost.total == 0


def test_assistant_message_defaults_to_empty_usage_and_stop() -> None:
    message = AssistantMessage(api="a", provider="p", model="m")
    assert message.usage == Usage()
    assert message.stop_reason == "stop"
    assert message.content == []


def test_model_name_defaults_to_id() -> None:
    model = Model(id="gpt-4o-mini", api="openai-completions", provider="openai")
    assert model.name == "gpt-4o-mini"


def test_model_explicit_name_is_kept() -> None:
    model = Model(id="gpt-4o-mini", name="GPT-4o mini", api="openai-completions", provider="openai")
    assert model.name == "GPT-4o mini"


def test_stream_options_repr_does_not_contain_api_key() -> None:
    options = StreamOptions(api_key="sk-secret")
    assert "sk-secret" not in repr(options)
    assert "sk-secret" not in str(options)
    assert options.api_key == "sk-secret"


def test_stream_options_repr_does_not_contain_header_secrets() -> None:
    options = StreamOptions(headers={"Authorization": "Bearer sk-hidden"})
    assert "sk-hidden" not in repr(options)
