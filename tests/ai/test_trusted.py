"""``trusted()``: per-token objects built without validation behave as validated ones do.

Events are :class:`EventModel`s whose pydantic bookkeeping (fields-set, extra, private) is
filled on first use; these tests hold every pydantic operation against a validated twin.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest

from pi_notebook.agent.events import MessageUpdateEvent
from pi_notebook.ai import TextContent, faux_assistant_message
from pi_notebook.ai._base import EventModel, trusted
from pi_notebook.ai.events import TextDeltaEvent
from pi_notebook.ai.types import AssistantMessage, ThinkingContent, ToolCall


def _message() -> AssistantMessage:
    return faux_assistant_message("hello")


def _pair() -> tuple[TextDeltaEvent, TextDeltaEvent]:
    message = _message()
    built = trusted(
        TextDeltaEvent,
        {"type": "text_delta", "content_index": 0, "delta": "he", "partial": message},
    )
    validated = TextDeltaEvent(content_index=0, delta="he", partial=message)
    return built, validated


def test_every_event_class_fills_its_bookkeeping_on_first_use() -> None:
    assert issubclass(TextDeltaEvent, EventModel) and issubclass(MessageUpdateEvent, EventModel)
    built, _ = _pair()
    assert built.model_fields_set == {"type", "content_index", "delta", "partial"}
    assert built.__pydantic_extra__ == {} and built.__pydantic_private__ is None


def test_a_trusted_event_equals_dumps_and_round_trips_as_a_validated_one() -> None:
    built, validated = _pair()
    assert built == validated and validated == built
    dump: dict[str, Any] = built.model_dump(by_alias=True, exclude_none=True)
    assert dump == validated.model_dump(by_alias=True, exclude_none=True)
    assert dump["contentIndex"] == 0 and dump["partial"]["role"] == "assistant"
    assert built.model_dump_json() == validated.model_dump_json()
    assert TextDeltaEvent.model_validate(dump) == built
    assert repr(built) == repr(validated)


@pytest.mark.parametrize(
    "clone",
    [
        copy.copy,
        copy.deepcopy,
        lambda e: e.model_copy(),
        lambda e: pickle.loads(pickle.dumps(e)),
    ],
    ids=["copy", "deepcopy", "model_copy", "pickle"],
)
def test_copies_of_a_trusted_event_are_equal_and_independent(clone: Any) -> None:
    built, _ = _pair()
    twin = clone(built)
    assert twin == built and twin is not built
    twin.delta = "changed"
    assert built.delta == "he"


def test_assignment_and_unknown_fields_on_a_trusted_event() -> None:
    built, _ = _pair()
    built.delta = "hel"
    built.note = "kept"  # type: ignore[attr-defined]  # extra="allow", as for every wire model
    assert built.delta == "hel" and built.note == "kept"  # type: ignore[attr-defined]
    assert built.model_dump()["note"] == "kept"
    assert "note" not in built.__dict__
    updated = built.model_copy(update={"delta": "x"})
    assert updated.delta == "x" and built.delta == "hel"


def test_each_trusted_instance_gets_its_own_fields_set() -> None:
    first, _ = _pair()
    second, _ = _pair()
    assert first.model_fields_set is not second.model_fields_set


def test_other_models_get_their_bookkeeping_at_build_time() -> None:
    block = trusted(TextContent, {"type": "text", "text": "hi", "text_signature": None})
    assert block.model_fields_set == {"type", "text", "text_signature"}
    assert block == TextContent(type="text", text="hi", text_signature=None)
    assert block.__pydantic_extra__ == {} and block.__pydantic_private__ is None


def test_other_models_get_the_defaults_their_fields_leave_out() -> None:
    thinking = trusted(ThinkingContent, {"type": "thinking", "thinking": "x"})
    assert thinking.redacted is None and thinking.thinking_signature is None
    assert thinking.model_fields_set == {"type", "thinking"}
    assert thinking == ThinkingContent(thinking="x")
    call = trusted(ToolCall, {"type": "toolCall", "id": "c1", "name": "f"})
    assert call.arguments == {} and call.thought_signature is None
    other = trusted(ToolCall, {"type": "toolCall", "id": "c2", "name": "f"})
    assert other.arguments is not call.arguments  # a default factory runs per instance
