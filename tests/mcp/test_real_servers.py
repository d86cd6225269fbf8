"""The PyPI servers mcp-server-time and mcp-server-git (on a repository made here), driven by a
real Agent with a faux model; approvals follow the tools' annotations."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_notebook.agent import AgentTool
from pi_notebook.ai import AbortSignal, FauxProvider
from pi_notebook.tools import ApprovalRequest, approval_hook, mcp_tools

from .conftest import by_name, run_agent, text_of

pytestmark = pytest.mark.kernel

FIXED_DATE = "2026-01-02T03:04:05+00:00"


@pytest.fixture(scope="module")
def time_tools() -> list[AgentTool]:
    return mcp_tools(
        [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"], name="time"
    )


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.com",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.com",
        "GIT_AUTHOR_DATE": FIXED_DATE,
        "GIT_COMMITTER_DATE": FIXED_DATE,
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo),
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "notes.txt").write_text("first line\n")
    git(path, "add", "notes.txt")
    git(path, "commit", "-q", "-m", "Start the notes")
    return path


def git_tools(repo: Path) -> list[AgentTool]:
    return mcp_tools(
        [sys.executable, "-m", "mcp_server_git", "--repository", str(repo)],
        name="git",
        cwd=repo,
        env={"HOME": str(repo), "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "a@b.c"},
    )


def test_time_server_tools_are_listed_with_their_schemas(time_tools: list[AgentTool]) -> None:
    tools = by_name(time_tools)
    assert sorted(tools) == ["time__convert_time", "time__get_current_time"]
    schema = tools["time__convert_time"].json_schema()
    assert sorted(schema["required"]) == ["source_timezone", "target_timezone", "time"]
    assert not any(t.writes_namespace for t in time_tools)  # annotated read-only


async def test_time_server_converts_through_the_agent(
    faux: FauxProvider, time_tools: list[AgentTool]
) -> None:
    arguments = {"source_timezone": "UTC", "time": "16:30", "target_timezone": "Asia/Tokyo"}
    [result] = await run_agent(faux, time_tools, [("time__convert_time", arguments)])
    assert not result.is_error, text_of(result)
    assert json.loads(text_of(result)) == result.details
    assert result.details["target"]["timezone"] == "Asia/Tokyo"
    assert result.details["target"]["datetime"].endswith("T01:30:00+09:00")
    assert result.details["time_difference"] == "+9.0h"


async def test_time_server_error_is_an_error_result(
    faux: FauxProvider, time_tools: list[AgentTool]
) -> None:
    arguments = {"source_timezone": "Mars/Olympus", "time": "16:30", "target_timezone": "UTC"}
    [result] = await run_agent(faux, time_tools, [("time__convert_time", arguments)])
    assert result.is_error
    assert "Invalid timezone" in text_of(result)


async def test_git_server_reads_the_repository(faux: FauxProvider, repo: Path) -> None:
    tools = git_tools(repo)
    (repo / "notes.txt").write_text("first line\nsecond line\n")
    status, diff, log = await run_agent(
        faux,
        tools,
        [("git__git_status", {"repo_path": str(repo)})],
        [("git__git_diff_unstaged", {"repo_path": str(repo)})],
        [("git__git_log", {"repo_path": str(repo), "max_count": 5})],
    )
    assert "modified:   notes.txt" in text_of(status)
    assert "+second line" in text_of(diff)
    commit = git(repo, "rev-parse", "HEAD").strip()
    assert f"Commit: {commit}" in text_of(log)
    assert "Message: Start the notes" in text_of(log)


async def test_approve_writes_asks_before_the_tools_that_change_the_repository(
    faux: FauxProvider, repo: Path
) -> None:
    tools = git_tools(repo)
    writing = {t.name for t in tools if t.writes_namespace}
    assert {"git__git_add", "git__git_commit", "git__git_reset"} <= writing
    assert "git__git_status" not in writing and "git__git_log" not in writing
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest, signal: AbortSignal | None) -> bool:
        asked.append(request)
        return request.tool_name == "git__git_add"

    (repo / "notes.txt").write_text("changed\n")
    status, added, committed = await run_agent(
        faux,
        tools,
        [("git__git_status", {"repo_path": str(repo)})],
        [("git__git_add", {"repo_path": str(repo), "files": ["notes.txt"]})],
        [("git__git_commit", {"repo_path": str(repo), "message": "Change"})],
        before_tool_call=approval_hook("writes", lambda: approver),
    )
    assert [r.tool_name for r in asked] == ["git__git_add", "git__git_commit"]
    assert not status.is_error and not added.is_error
    assert committed.is_error and text_of(committed) == "denied by user"
    assert "Change" not in git(repo, "log", "--format=%s")  # the denied commit never ran
    assert "M  notes.txt" in git(repo, "status", "--short")  # the approved add did


async def test_approve_all_asks_before_every_mcp_call(
    faux: FauxProvider, time_tools: list[AgentTool]
) -> None:
    asked: list[str] = []

    async def approver(request: ApprovalRequest, signal: AbortSignal | None) -> Any:
        asked.append(request.summary)
        return False

    [result] = await run_agent(
        faux,
        time_tools,
        [("time__get_current_time", {"timezone": "UTC"})],
        before_tool_call=approval_hook("all", lambda: approver),
    )
    assert asked == ["time__get_current_time(timezone='UTC')"]
    assert text_of(result) == "denied by user"
