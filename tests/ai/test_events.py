"""Stream and agent events: plain slotted dataclasses, and Pi's JSON through ``dump_event``."""

from __future__ import annotations

import dataclasses
import json
import typing

import pytest

from pi_notebook.agent import (
    AGENT_EVENT_TYPES,
    AgentEndEvent,
    AgentEvent,
    AgentStartEvent,
    AgentToolResult,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
)
from pi_notebook.ai import (
    AssistantMessageEvent,
    DoneEvent,
    TextContent,
    TextDeltaEvent,
    ToolCall,
    ToolCallEndEvent,
    UserMessage,
    dump_event,
    faux_assistant_message,
)

ALL_EVENT_CLASSES = [*typing.get_args(AssistantMessageEvent), *typing.get_args(AgentEvent)]


@pytest.mark.parametrize("cls", ALL_EVENT_CLASSES, ids=lambda c: c.__name__)
def test_every_event_is_a_slotted_dataclass_with_a_constant_type(cls: type) -> None:
    assert dataclasses.is_dataclass(cls) and "__slots__" in vars(cls)
    assert "type" not in {f.name for f in dataclasses.fields(cls)}
    assert isinstance(cls.type, str)  # type: ignore[attr-defined]


def test_agent_event_types_name_the_ten_events_in_order() -> None:
    assert AGENT_EVENT_TYPES[0] == "agent_start" and AGENT_EVENT_TYPES[-1] == "tool_execution_end"
    assert len(set(AGENT_EVENT_TYPES)) == 10


def test_events_build_positionally_or_by_name_and_keep_no_instance_dict() -> None:
    message = faux_assistant_message("hello")
    by_position = TextDeltaEvent(0, "he", message)
    by_name = TextDeltaEvent(content_index=0, delta="he", partial=message)
    assert by_position == by_name and by_position.type == "text_delta"
    assert not hasattr(by_position, "__dict__")


def test_dump_event_is_pis_camel_case_json_with_the_message_inside() -> None:
    message = faux_assistant_message("hello", timestamp=5)
    delta = TextDeltaEvent(0, "he", message)
    assert dump_event(delta) == {
        "type": "text_delta",
        "contentIndex": 0,
        "delta": "he",
        "partial": message.to_json_dict(),
    }
    update = dump_event(MessageUpdateEvent(message, delta))
    assert list(update) == ["type", "message", "assistantMessageEvent"]
    assert update["assistantMessageEvent"] == dump_event(delta)
    assert update["message"]["content"] == [{"type": "text", "text": "hello"}]


def test_dump_event_covers_results_blocks_lists_and_empty_events() -> None:
    result = AgentToolResult(content=[TextContent(text="ok")], details={"n": 1})
    end = dump_event(ToolExecutionEndEvent("c1", "calc", result, False))
    assert end == {
        "type": "tool_execution_end",
        "toolCallId": "c1",
        "toolName": "calc",
        "result": {
            "content": [{"type": "text", "text": "ok"}],
            "details": {"n": 1},
            "terminate": False,
        },
        "isError": False,
    }
    call = ToolCall(id="c1", name="calc", arguments={"a": None})
    toolcall_end = dump_event(ToolCallEndEvent(0, call, faux_assistant_message([call])))
    assert toolcall_end["toolCall"] == {
        "type": "toolCall",
        "id": "c1",
        "name": "calc",
        "arguments": {"a": None},
    }
    user = UserMessage(content="hi", timestamp=1)
    assert dump_event(AgentEndEvent([user])) == {
        "type": "agent_end",
        "messages": [{"role": "user", "content": "hi", "timestamp": 1}],
    }
    assert dump_event(AgentStartEvent()) == {"type": "agent_start"}
    done = dump_event(DoneEvent("stop", faux_assistant_message("x")))
    assert done["reason"] == "stop" and done["message"]["role"] == "assistant"
    json.dumps([end, toolcall_end, done])  # plain JSON all the way down
