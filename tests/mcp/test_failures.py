"""MCP servers that fail: to start, mid-call, by hanging, by sending what is not MCP. Each gives
a readable error naming the server, the run's events close, and the next call reconnects."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pi_notebook.agent import AgentTool
from pi_notebook.ai import FauxProvider
from pi_notebook.tools import McpServerError, mcp_tools
from pi_notebook.tools.mcp import McpServer

from .conftest import HttpLab, lab_command, run_agent, text_of

pytestmark = pytest.mark.kernel


def server_of(tools: list[AgentTool]) -> McpServer:
    server: McpServer = tools[0].execute.server  # type: ignore[attr-defined]
    return server


def test_a_command_that_does_not_exist() -> None:
    with pytest.raises(McpServerError) as caught:
        mcp_tools("no-such-mcp-server-here --flag")
    assert str(caught.value) == (
        "MCP server 'no-such-mcp-server-here' (no-such-mcp-server-here --flag) could not run "
        "'no-such-mcp-server-here': No such file or directory"
    )


def test_a_server_that_exits_at_start_shows_its_stderr() -> None:
    code = "import sys; sys.stderr.write('config error: MY_TOKEN is not set\\n'); sys.exit(2)"
    with pytest.raises(McpServerError) as caught:
        mcp_tools([sys.executable, "-c", code], name="broken")
    message = str(caught.value)
    assert message.startswith("MCP server 'broken' (")
    assert "failed to start" in message
    assert message.endswith("its stderr ended with: config error: MY_TOKEN is not set")


def test_secrets_in_a_servers_stderr_are_redacted() -> None:
    code = (
        "import os, sys; sys.stderr.write('bad key sk-abcdefghijklmnopqrstuvwx1234 for '"
        " + os.environ['SERVICE_PASS'] + '\\n'); sys.exit(2)"
    )
    with pytest.raises(McpServerError) as caught:
        mcp_tools([sys.executable, "-c", code], name="leaky", env={"SERVICE_PASS": "pw-0123456789"})
    message = str(caught.value)
    assert "sk-abcdefghijklmnopqrstuvwx1234" not in message
    assert "pw-0123456789" not in message
    assert "its stderr ended with: bad key [redacted" in message


def test_a_server_that_does_not_start_in_time() -> None:
    code = "import time; time.sleep(600)"
    with pytest.raises(McpServerError) as caught:
        mcp_tools([sys.executable, "-c", code], name="sleepy", start_timeout=0.5)
    assert "did not start within 0.5 s" in str(caught.value)


async def test_a_failed_restart_is_an_error_result_and_the_run_ends(
    faux: FauxProvider, tmp_path: Path
) -> None:
    tools = mcp_tools(lab_command("--once", str(tmp_path / "started")), name="lab")
    [result] = await run_agent(faux, tools, [("lab__echo", {"text": "hi"})])
    assert result.is_error
    text = text_of(result)
    assert text.startswith("MCP server 'lab' (")
    assert "failed to start" in text
    assert text.endswith("lab server: refusing a second start")
    assert server_of(tools).state == "failed to start"


async def test_a_crash_mid_call_then_the_next_call_reconnects(faux: FauxProvider) -> None:
    tools = mcp_tools(lab_command(), name="lab")
    crashed, after = await run_agent(
        faux, tools, [("lab__crash", {})], [("lab__echo", {"text": "back"})]
    )
    assert crashed.is_error
    assert text_of(crashed).startswith(
        "MCP server 'lab' closed the connection during 'crash' (it exited or crashed); it is "
        "restarted on the next call; its stderr ended with: "
    )
    assert text_of(crashed).endswith("lab server: starting | lab server: crashing now")
    assert not after.is_error
    assert text_of(after) == "back"
    assert server_of(tools).starts == 2


async def test_a_hung_call_times_out_and_the_server_restarts(faux: FauxProvider) -> None:
    tools = mcp_tools(lab_command(), name="lab", timeout=1)
    hung, after = await run_agent(faux, tools, [("lab__hang", {})], [("lab__pid", {})])
    assert hung.is_error
    assert text_of(hung) == (
        "MCP server 'lab' did not answer 'hang' within 1 s; the request was cancelled and the "
        "server is restarted on the next call"
    )
    assert not after.is_error
    assert server_of(tools).starts == 2


async def test_a_reply_that_is_not_mcp(faux: FauxProvider) -> None:
    tools = mcp_tools(lab_command(), name="lab")
    garbage, after = await run_agent(
        faux, tools, [("lab__garbage", {})], [("lab__echo", {"text": "still here"})]
    )
    assert garbage.is_error
    assert text_of(garbage) == (
        "MCP server 'lab' answered 'garbage' with a reply that is not valid MCP: "
        "CallToolResult.content: Input should be a valid list (got 'not a list')"
    )
    assert text_of(after) == "still here"


async def test_a_stray_line_on_stdout_is_ignored_and_reported_in_status(
    faux: FauxProvider,
) -> None:
    tools = mcp_tools(lab_command(), name="lab")
    [result] = await run_agent(faux, tools, [("lab__noise", {"text": "fine"})])
    assert text_of(result) == "fine"
    status = "\n".join(server_of(tools).status_lines())
    assert "ignored output that is not MCP: Invalid JSON" in status
    assert "'this line is not JSON-RPC'" in status


async def test_http_server_crash_mid_call_then_a_new_server_on_the_url(
    faux: FauxProvider, http_lab: HttpLab
) -> None:
    tools = mcp_tools(http_lab.url, name="web", timeout=30)
    [crashed] = await run_agent(faux, tools, [("web__crash", {})])
    assert crashed.is_error
    assert text_of(crashed).startswith(
        "MCP server 'web' closed the connection during 'crash' (it exited or crashed)"
    )
    http_lab.stop()
    http_lab.start()
    [after] = await run_agent(faux, tools, [("web__echo", {"text": "new process"})])
    assert text_of(after) == "new process"
    assert server_of(tools).starts == 2


def test_stderr_is_kept_not_printed(capfd: pytest.CaptureFixture[str]) -> None:
    tools = mcp_tools(lab_command(), name="lab")
    stderr = server_of(tools).stderr
    assert stderr is not None
    assert stderr.lines() == ["lab server: starting"]
    captured = capfd.readouterr()
    assert "lab server" not in captured.err
    assert "lab server" not in captured.out
