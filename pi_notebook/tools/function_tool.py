"""``@tool``: an :class:`AgentTool` from a typed Python function.

The function's name is the tool's name and its docstring the description (an ``Args:`` /
``Parameters`` section, or ``:param x:`` lines, describe the parameters). Parameters come from
the type hints -- anything pydantic understands: pydantic models, ``Literal``, optionals, lists,
defaults -- and are validated (with Pi-style coercion) before the call. ``signal`` and
``on_update`` parameters are injected (the abort signal and a progress callback taking any
value a tool may return) and left out of the schema. The return value becomes the result
(:func:`pi_notebook.tools.results.to_result`). Async functions are awaited on the event loop;
sync functions run on a worker thread (:func:`~.worker.run_on_thread`, in the caller's context),
so a blocking call cannot freeze the kernel: the stop button and Abort end ``time.sleep`` and busy
loops there as they do in ``run_python``, and ``on_update`` may be called from that thread.

Re-running the cell that defines a tool replaces it: the latest tool of each name is kept in a
registry and :func:`refresh_tools` swaps older definitions in an agent's tool list for it.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import threading
import typing
from collections.abc import Callable, Sequence
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..agent import AgentTool, AgentToolResult, ToolExecutionMode, ToolUpdate
from ..ai import AbortSignal
from .results import to_result
from .summary import DEFAULT_MAX_CHARS
from .worker import run_on_thread

INJECTED = ("signal", "on_update")
TOOL_GRACE_SECONDS = 1.0
"""How long an aborted sync tool stuck in a C call is waited for (the loop's own grace is 2 s)."""

_latest: dict[str, AgentTool] = {}
"""The newest function tool of each name (what re-running a defining cell replaces)."""


class FunctionExecute:
    """The ``execute`` of a function tool: validated model in, result out."""

    def __init__(
        self,
        fn: Callable[..., Any],
        fields: list[str],
        injected: set[str],
        max_chars: int,
        grace: float = TOOL_GRACE_SECONDS,
        *,
        registered: bool = True,
    ) -> None:
        self.fn = fn
        self.registered = registered
        self.fields = fields
        self.injected = injected
        self.max_chars = max_chars
        self.grace = grace

    async def __call__(
        self,
        tool_call_id: str,
        params: Any,
        signal: AbortSignal | None,
        on_update: ToolUpdate,
    ) -> AgentToolResult:
        if isinstance(params, BaseModel):
            kwargs = {name: getattr(params, name) for name in self.fields}
        else:
            kwargs = dict(params or {})
        if "signal" in self.injected:
            kwargs["signal"] = signal
        if "on_update" in self.injected:
            kwargs["on_update"] = self._progress(on_update)
        if inspect.iscoroutinefunction(self.fn):
            value = await self.fn(**kwargs)
        else:
            value = await self._on_thread(kwargs, signal)
        if inspect.isawaitable(value):
            value = await value
        return to_result(value, self.max_chars)

    async def _on_thread(self, kwargs: dict[str, Any], signal: AbortSignal | None) -> Any:
        """A sync function on a worker thread, so the stop button and Abort reach it."""
        outcome = await run_on_thread(
            functools.partial(self.fn, **kwargs),
            signal,
            grace=self.grace,
            name=f"pi-tool-{getattr(self.fn, '__name__', 'tool')}",
        )
        if outcome.still_running:
            raise RuntimeError(
                "aborted: the tool is still inside a blocking call and stops when it returns"
            )
        if outcome.aborted:
            raise RuntimeError(f"aborted after {outcome.seconds:.2f} s")
        error = outcome.error
        if error is not None:
            if not isinstance(error, Exception):  # SystemExit and the like end only the call
                raise RuntimeError(f"{type(error).__name__}: {error}") from error
            raise error
        return outcome.value

    def _progress(self, on_update: ToolUpdate) -> Callable[[Any], None]:
        """The injected ``on_update``: from a worker thread, handed to the loop's thread."""
        max_chars = self.max_chars
        loop = asyncio.get_running_loop()
        loop_thread = threading.get_ident()

        def progress(value: Any) -> None:
            result = to_result(value, max_chars)
            if threading.get_ident() == loop_thread:
                on_update(result)
            else:
                loop.call_soon_threadsafe(on_update, result)

        return progress


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """``(description, {parameter: description})`` from a Google, NumPy or reST docstring."""
    text = inspect.cleandoc(doc or "")
    if not text:
        return "", {}
    params: dict[str, str] = {}
    lines = text.splitlines()
    cut = len(lines)
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        rest = re.match(r":param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)", stripped)
        if rest:
            cut = min(cut, i)
            params[rest.group(1)] = rest.group(2).strip()
            i += 1
            continue
        if stripped in ("Args:", "Arguments:", "Parameters:", "Params:") or (
            stripped == "Parameters" and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}
        ):
            cut = min(cut, i)
            numpy_style = stripped == "Parameters"
            i += 2 if numpy_style else 1
            current: str | None = None
            current_indent = 0  # the indent of the line that named ``current``
            while i < len(lines):
                entry = lines[i]
                if entry.strip() and not entry.startswith((" ", "\t")) and not numpy_style:
                    break
                if (
                    numpy_style
                    and entry.strip()
                    and i + 1 < len(lines)
                    and set(lines[i + 1].strip()) == {"-"}
                ):
                    break
                if numpy_style:
                    head = re.match(r"(\w+)\s*(?::.*)?$", entry)
                    if head and not entry.startswith((" ", "\t")):
                        current = head.group(1)
                        params[current] = ""
                    elif current and entry.strip():
                        params[current] = f"{params[current]} {entry.strip()}".strip()
                else:
                    head = re.match(r"\s+\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)", entry)
                    indent = len(entry) - len(entry.lstrip())
                    if head and (current is None or indent <= current_indent):
                        current = head.group(1)
                        current_indent = indent
                        params[current] = head.group(2).strip()
                    elif current and entry.strip():
                        params[current] = f"{params[current]} {entry.strip()}".strip()
                i += 1
            continue
        if re.match(r"(Returns?|Raises|Yields|Examples?|Notes?):?$", stripped) and cut == len(
            lines
        ):
            cut = i
        i += 1
    description = "\n".join(lines[:cut]).strip()
    return description, params


def _arguments_model(
    fn: Callable[..., Any], tool_name: str, docs: dict[str, str]
) -> tuple[type[BaseModel], list[str], set[str]]:
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise TypeError(f"@tool {tool_name}: cannot resolve the type hints: {exc}") from None
    fields: dict[str, Any] = {}
    names: list[str] = []
    injected: set[str] = set()
    for name, parameter in signature.parameters.items():
        if name in INJECTED:
            injected.add(name)
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            raise TypeError(f"@tool {tool_name}: *args / **kwargs cannot be tool parameters")
        if parameter.kind is parameter.POSITIONAL_ONLY:
            raise TypeError(f"@tool {tool_name}: positional-only parameter {name!r}")
        annotation = hints.get(name, Any)
        default = ... if parameter.default is parameter.empty else parameter.default
        description = docs.get(name)
        fields[name] = (annotation, Field(default, description=description))
        names.append(name)
    model_name = "".join(part.capitalize() for part in tool_name.split("_")) + "Arguments"
    model: type[BaseModel] = create_model(
        model_name, __config__=ConfigDict(arbitrary_types_allowed=True), **fields
    )
    return model, names, injected


@overload
def tool(fn: Callable[..., Any], /) -> AgentTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    writes_namespace: bool = False,
    execution_mode: ToolExecutionMode | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    label: str | None = None,
    register: bool = True,
) -> Callable[[Callable[..., Any]], AgentTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    writes_namespace: bool = False,
    execution_mode: ToolExecutionMode | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    label: str | None = None,
    register: bool = True,
) -> AgentTool | Callable[[Callable[..., Any]], AgentTool]:
    """Make an :class:`AgentTool` from ``fn`` (``@tool``, ``@tool(...)`` or ``tool(fn)``).

    ``writes_namespace=True`` marks a tool that changes notebook variables (``--approve
    writes`` asks before it). ``max_chars`` bounds the text of the result. ``label`` is the
    human name (default: the name). ``register=False`` keeps the tool out of the registry that
    re-running a defining cell updates (:func:`refresh_tools` leaves it alone): the built-in
    tools, made per namespace, use it.
    """

    def build(function: Callable[..., Any]) -> AgentTool:
        if not callable(function):
            raise TypeError(f"@tool needs a function, got {type(function).__name__}")
        tool_name: str = name or str(getattr(function, "__name__", ""))
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,63}", tool_name):
            raise ValueError(f"@tool: {tool_name!r} is not a valid tool name")
        summary, docs = parse_docstring(inspect.getdoc(function))
        model, fields, injected = _arguments_model(function, tool_name, docs)
        try:
            model.model_json_schema()
        except Exception as exc:
            raise TypeError(
                f"@tool {tool_name}: a parameter type has no JSON schema: {exc}"
            ) from None
        execute = FunctionExecute(function, fields, injected, max_chars, registered=register)
        made = AgentTool(
            name=tool_name,
            label=label or "",
            description=description if description is not None else summary,
            parameters=model,
            execute=execute,
            execution_mode=execution_mode,
            writes_namespace=writes_namespace,
        )
        if register:
            _latest[tool_name] = made
        return made

    if fn is not None:
        return build(fn)
    return build


def is_function_tool(value: Any) -> bool:
    return isinstance(value, AgentTool) and isinstance(value.execute, FunctionExecute)


def refresh_tools(tools: Sequence[AgentTool]) -> list[AgentTool]:
    """``tools`` with each function tool replaced by the newest definition of its name."""
    refreshed: list[AgentTool] = []
    for item in tools:
        replaceable = isinstance(item.execute, FunctionExecute) and item.execute.registered
        newest = _latest.get(item.name) if replaceable else None
        refreshed.append(newest if newest is not None else item)
    return refreshed


__all__ = ["FunctionExecute", "is_function_tool", "parse_docstring", "refresh_tools", "tool"]
