"""Pure parts of the MCP layer: what a target is, names, the write rule, content conversion."""

from __future__ import annotations

import base64

import pytest
from mcp import types

from pi_notebook.agent import ToolFailure
from pi_notebook.ai import ImageContent, TextContent
from pi_notebook.tools.mcp.convert import agent_content, agent_result, progress_result, writes
from pi_notebook.tools.mcp.server import McpServer
from pi_notebook.tools.mcp.target import (
    HttpTarget,
    StdioTarget,
    agent_tool_name,
    default_name,
    parse_target,
)


def test_a_command_string_is_split_like_a_shell() -> None:
    target = parse_target("uvx mcp-server-time --local-timezone 'Europe/Oslo'")
    assert target == StdioTarget(("uvx", "mcp-server-time", "--local-timezone", "Europe/Oslo"))
    assert default_name(target) == "mcp-server-time"


def test_an_argv_list_with_env_and_cwd() -> None:
    target = parse_target(["python", "-m", "mcp_server_git"], env={"A": "1"}, cwd="/tmp")
    assert target == StdioTarget(("python", "-m", "mcp_server_git"), {"A": "1"}, "/tmp")
    assert default_name(target) == "mcp_server_git"


def test_a_url_is_streamable_http() -> None:
    target = parse_target("https://tools.example.com:8443/mcp", headers={"X-Team": "a"})
    assert isinstance(target, HttpTarget)
    assert default_name(target) == "tools.example.com:8443"


@pytest.mark.parametrize(
    ("command", "options", "message"),
    [
        ("", {}, "mcp_tools: the command is empty"),
        ("http://h/mcp", {"cwd": "/"}, "mcp_tools: env= and cwd= apply to a command, not to a URL"),
        ("srv", {"headers": {"a": "b"}}, "mcp_tools: headers= apply to an http(s):// URL"),
        ("srv 'open", {}, "mcp_tools: cannot parse the command: No closing quotation"),
    ],
)
def test_bad_targets_are_one_line_errors(
    command: str, options: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        parse_target(command, **options)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)


def test_tool_names_get_the_prefix_and_only_characters_providers_accept() -> None:
    assert agent_tool_name("time", "convert_time") == "time__convert_time"
    assert agent_tool_name(None, "files/read.v2") == "files_read_v2"
    assert len(agent_tool_name("x" * 40, "y" * 40)) == 64


def test_header_values_and_url_passwords_never_show() -> None:
    target = parse_target(
        "https://user:hunter2-password@example.com/mcp",
        headers={"Authorization": "Bearer sk-1234567890"},
    )
    server = McpServer(target, "remote")
    shown = repr(server) + "\n".join(server.status_lines()) + repr(target)
    assert "sk-1234567890" not in shown
    assert "hunter2-password" not in shown
    assert server.redact("Bearer sk-1234567890 rejected") == "[redacted] rejected"
    assert server.redact("key sk-1234567890 rejected") == "key [redacted] rejected"


def test_secret_looking_options_are_hidden_from_the_command_line_shown() -> None:
    target = parse_target("srv --api-key sk-abc --token=t0k3n --port 80 --verbose")
    shown = "srv --api-key '[redacted]' '--token=[redacted]' --port 80 --verbose"
    assert target.describe() == shown


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, False),
        (types.ToolAnnotations(), False),
        (types.ToolAnnotations(read_only_hint=True), False),
        (types.ToolAnnotations(read_only_hint=True, destructive_hint=True), False),
        (types.ToolAnnotations(read_only_hint=False), True),
        (types.ToolAnnotations(read_only_hint=False, destructive_hint=False), True),
        (types.ToolAnnotations(destructive_hint=True), True),
        (types.ToolAnnotations(destructive_hint=False), False),
    ],
)
def test_a_tool_writes_only_when_its_annotations_say_so(
    annotations: types.ToolAnnotations | None, expected: bool
) -> None:
    assert writes(annotations) is expected


def test_content_blocks_in_order() -> None:
    png = base64.b64encode(b"\x89PNG....").decode()
    blocks: list[types.ContentBlock] = [
        types.TextContent(type="text", text="one"),
        types.ImageContent(type="image", data=png, mime_type="image/png"),
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(uri="file:///a.txt", text="body"),
        ),
        types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(uri="mem://img", mime_type="image/gif", blob=png),
        ),
        types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(
                uri="mem://bin",
                mime_type="application/zip",
                blob=base64.b64encode(b"1234").decode(),
            ),
        ),
        types.ResourceLink(type="resource_link", name="log", uri="file:///var/log/x"),
        types.AudioContent(
            type="audio", data=base64.b64encode(b"abc").decode(), mime_type="audio/wav"
        ),
    ]
    assert agent_content(blocks) == [
        TextContent(text="one"),
        ImageContent(data=png, mime_type="image/png"),
        TextContent(text="[resource file:///a.txt]\nbody"),
        ImageContent(data=png, mime_type="image/gif"),
        TextContent(text="[resource mem://bin: application/zip, 4 bytes]"),
        TextContent(text="[resource link log: file:///var/log/x]"),
        TextContent(text="[audio audio/wav, 3 bytes, not shown]"),
    ]


def test_is_error_raises_with_the_text_and_structured_details() -> None:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="no such branch")],
        structured_content={"code": 7},
        is_error=True,
    )
    with pytest.raises(ToolFailure) as caught:
        agent_result(result)
    assert str(caught.value) == "no such branch"
    assert caught.value.details == {"code": 7}


def test_progress_text() -> None:
    assert progress_result(2, 5, "indexing").content == [TextContent(text="indexing (2/5)")]
    assert progress_result(0.5, None, None).content == [TextContent(text="0.5")]
