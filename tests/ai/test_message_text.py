"""``message_text``: one reading of a message (or content) as text, with its options."""

from __future__ import annotations

from pi_notebook.ai import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    message_text,
)

REPLY = AssistantMessage(
    content=[
        ThinkingContent(thinking="let me see"),
        TextContent(text="Plotting **now**"),
        ToolCall(id="c1", name="plot", arguments={"n": 3, "title": "é"}),
        TextContent(text="done"),
    ],
    api="faux",
    provider="faux",
    model="faux-1",
)
RESULT = ToolResultMessage(
    tool_call_id="c1",
    tool_name="plot",
    content=[
        TextContent(text="drawn"),
        ImageContent(data="AAAA", mime_type="image/png"),
        ImageContent(data="PHN2Zz4=", mime_type="image/svg+xml"),
    ],
    is_error=False,
)


def test_by_default_text_blocks_and_images_one_a_line() -> None:
    assert message_text(REPLY) == "Plotting **now**\ndone"
    assert message_text(RESULT) == "drawn\n[image image/png]\n[image image/svg+xml]"
    assert message_text(RESULT.content) == message_text(RESULT)
    assert message_text(UserMessage(content="plain string")) == "plain string"
    assert message_text("a content string") == "a content string"


def test_thinking_and_tool_calls_on_request() -> None:
    text = message_text(REPLY, thinking=True, tool_calls=True)
    assert text.split("\n") == [
        "(thinking) let me see",
        "Plotting **now**",
        '→ plot({"n": 3, "title": "é"})',
        "done",
    ]


def test_images_left_out_or_hidden_by_type() -> None:
    assert message_text(RESULT, images=False) == "drawn"
    assert message_text(RESULT, hidden_images={"image/png"}) == "drawn\n[image image/svg+xml]"


def test_separator_one_line_and_limit() -> None:
    assert message_text(REPLY, separator="") == "Plotting **now**done"
    message = UserMessage(content=[TextContent(text="a  b\n\nc"), TextContent(text="d")])
    assert message_text(message, separator=" ", one_line=True) == "a b c d"
    assert message_text(message, one_line=True, limit=4) == "a b…"
    assert message_text(message, one_line=True, limit=100) == "a b c d"
    assert len(message_text("x" * 500, limit=80)) == 80


def test_an_empty_text_block_stays_an_empty_line() -> None:
    message = UserMessage(
        content=[TextContent(text="a"), TextContent(text=""), TextContent(text="b")]
    )
    assert message_text(message) == "a\n\nb"
