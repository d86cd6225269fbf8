"""What ``mcp_tools(command_or_url, ...)`` points at: a stdio command or a streamable-HTTP URL.

Parsing and naming only: this module never starts a process, opens a socket or imports the MCP
SDK, and never puts an ``env`` or ``headers`` value in a repr or a message (they may hold keys).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from urllib.parse import urlsplit

LAUNCHERS = ("uvx", "npx", "pipx", "bunx", "pnpx", "uv")
"""Commands that run another program: the server's name is that program's."""
TOOL_NAME_LIMIT = 64
"""Provider limit on tool names (OpenAI, Anthropic)."""
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_-]")
_SECRET_OPTION = re.compile(r"(?i)key|token|secret|password|passwd|auth")


@dataclass(frozen=True)
class StdioTarget:
    """A server started as a subprocess, spoken to over its stdin / stdout."""

    argv: tuple[str, ...]
    env: Mapping[str, str] | None = field(default=None, repr=False)
    cwd: str | None = None

    @property
    def transport(self) -> str:
        return "stdio"

    def describe(self) -> str:
        """The command line, with the values of options named like secrets hidden."""
        shown: list[str] = []
        hide_next = False
        for part in self.argv:
            flag, equals, _ = part.partition("=")
            if hide_next:
                shown.append("[redacted]")
            elif equals and flag.startswith("-") and _SECRET_OPTION.search(flag):
                shown.append(f"{flag}=[redacted]")
            else:
                shown.append(part)
            hide_next = part.startswith("-") and not equals and bool(_SECRET_OPTION.search(part))
        return shlex.join(shown)


@dataclass(frozen=True)
class HttpTarget:
    """A server at a streamable-HTTP endpoint."""

    url: str = field(repr=False)
    headers: Mapping[str, str] | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return f"HttpTarget({self.describe()!r})"

    @property
    def transport(self) -> str:
        return "streamable HTTP"

    def describe(self) -> str:
        parts = urlsplit(self.url)
        netloc = parts.hostname or ""
        if parts.port is not None:
            netloc = f"{netloc}:{parts.port}"
        return parts._replace(netloc=netloc, query="", fragment="").geturl()  # no userinfo


Target = StdioTarget | HttpTarget


def parse_target(
    command_or_url: str | Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Target:
    """A command string (split like a shell), an argv list, or an ``http(s)://`` URL.

    Raises ``ValueError`` (one readable line) for an empty command or options that do not
    apply to the kind of server (``env`` / ``cwd`` for a URL, ``headers`` for a command).
    """
    if isinstance(command_or_url, str) and re.match(r"(?i)https?://", command_or_url.strip()):
        if env is not None or cwd is not None:
            raise ValueError("mcp_tools: env= and cwd= apply to a command, not to a URL")
        return HttpTarget(command_or_url.strip(), dict(headers) if headers else None)
    if headers is not None:
        raise ValueError("mcp_tools: headers= apply to an http(s):// URL, not to a command")
    if isinstance(command_or_url, str):
        try:
            argv = tuple(shlex.split(command_or_url))
        except ValueError as exc:
            raise ValueError(f"mcp_tools: cannot parse the command: {exc}") from None
    elif isinstance(command_or_url, Sequence):
        argv = tuple(os.fspath(part) for part in command_or_url)
    else:
        raise ValueError(
            "mcp_tools: expected a command string, an argv list or an http(s):// URL, "
            f"got {type(command_or_url).__name__}"
        )
    if not argv or not argv[0]:
        raise ValueError("mcp_tools: the command is empty")
    return StdioTarget(argv, dict(env) if env else None, os.fspath(cwd) if cwd else None)


def default_name(target: Target) -> str:
    """A short name for messages and ``%agent status``: the program, module or host."""
    if isinstance(target, HttpTarget):
        parts = urlsplit(target.url)
        host = parts.hostname or "server"
        return f"{host}:{parts.port}" if parts.port is not None else host
    argv = target.argv
    program = PurePath(argv[0]).name
    if "-m" in argv[1:-1] and program.startswith("python"):
        return argv[argv.index("-m", 1) + 1]
    if program in LAUNCHERS:
        rest = [a for a in argv[1:] if not a.startswith("-") and a not in ("run", "tool")]
        if rest:
            return PurePath(rest[0]).name.split("@")[0] or rest[0]
    return PurePath(program).stem or program


def agent_tool_name(prefix: str | None, tool: str) -> str:
    """``<prefix>__<tool>`` (or ``tool``), with characters providers refuse made ``_``."""
    name = f"{prefix}__{tool}" if prefix else tool
    return _NOT_IN_NAME.sub("_", name)[:TOOL_NAME_LIMIT]


def secret_values(target: Target) -> tuple[str, ...]:
    """The ``env`` / ``headers`` values long enough to be keys (redacted from what we show)."""
    values = target.env if isinstance(target, StdioTarget) else target.headers
    found: set[str] = set()
    for value in (values or {}).values():  # "Bearer sk-..." and the token alone
        found.update(part for part in (value, *value.split()) if len(part) >= 8)
    if isinstance(target, HttpTarget):
        password = urlsplit(target.url).password
        if password:
            found.add(password)
    return tuple(sorted(found, key=len, reverse=True))


def redactor(secrets: Sequence[str]) -> Callable[[str], str]:
    """A function replacing each of ``secrets`` in a text by ``[redacted]``."""

    def redact(text: str) -> str:
        for secret in secrets:
            text = text.replace(secret, "[redacted]")
        return text

    return redact


__all__ = [
    "HttpTarget",
    "StdioTarget",
    "Target",
    "agent_tool_name",
    "default_name",
    "parse_target",
    "redactor",
    "secret_values",
]
