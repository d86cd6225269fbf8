"""``@tool``: schemas from type hints, validation with coercion, injection, return values."""

from __future__ import annotations

import asyncio
import base64
import contextvars
import io
import json
import threading
import time
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from pi_notebook.agent import Agent, AgentToolResult
from pi_notebook.ai import AbortSignal, FauxProvider, ToolCall, faux_assistant_message
from pi_notebook.ai.validation import ToolArgumentsError, validate_tool_arguments
from pi_notebook.tools import is_function_tool, refresh_tools, tool
from pi_notebook.tools.function_tool import parse_docstring

from .conftest import run_agent, text_of, tool_turn


class Point(BaseModel):
    x: float
    y: float = 0.0


def test_schema_from_type_hints_and_docstring() -> None:
    @tool
    def place(
        name: str,
        count: int,
        kind: Literal["circle", "square"] = "circle",
        tags: list[str] | None = None,
        at: Point | None = None,
        signal: AbortSignal | None = None,
        on_update: Any = None,
    ) -> str:
        """Place shapes on the canvas.

        Args:
            name: what to call the shape
            count: how many
                (at least one).
            kind: the shape
        Returns:
            a confirmation
        """
        return name

    schema = place.json_schema()
    assert place.name == "place"
    assert place.description == "Place shapes on the canvas."
    props = schema["properties"]
    assert list(props) == ["name", "count", "kind", "tags", "at"]  # signal/on_update left out
    assert schema["required"] == ["name", "count"]
    assert props["count"]["type"] == "integer"
    assert props["count"]["description"] == "how many (at least one)."
    assert props["kind"]["enum"] == ["circle", "square"] and props["kind"]["default"] == "circle"
    assert props["tags"]["anyOf"][0] == {"items": {"type": "string"}, "type": "array"}
    assert schema["$defs"]["Point"]["required"] == ["x"]
    assert is_function_tool(place)


def test_arguments_are_coerced_and_validated_pi_style() -> None:
    @tool
    def scale(factor: float, times: int, at: Point) -> str:
        """Scale."""
        return "ok"

    call = ToolCall(id="1", name="scale", arguments={"factor": "2.5", "times": "3", "at": {"x": 1}})
    args = validate_tool_arguments(scale, call)
    assert (args.factor, args.times, args.at) == (2.5, 3, Point(x=1, y=0))
    bad = ToolCall(id="2", name="scale", arguments={"factor": "lots", "at": {}})
    with pytest.raises(ToolArgumentsError) as caught:
        validate_tool_arguments(scale, bad)
    text = str(caught.value)
    assert text.startswith('Validation failed for tool "scale"')
    assert "times" in text and "factor" in text and "at.x" in text


@pytest.mark.parametrize(
    ("doc", "description", "params"),
    [
        ("Just text.", "Just text.", {}),
        (
            "Sum.\n\n:param a: first\n:param int b: second\n:returns: the sum",
            "Sum.",
            {"a": "first", "b": "second"},
        ),
        (
            "Sum.\n\nParameters\n----------\na : int\n    first one\nb : int\n    second\n\n"
            "Returns\n-------\nint",
            "Sum.",
            {"a": "first one", "b": "second"},
        ),
        (
            "Sum.\n\nArgs:\n    a (int): first\n    b: second\n",
            "Sum.",
            {"a": "first", "b": "second"},
        ),
    ],
)
def test_docstring_styles(doc: str, description: str, params: dict[str, str]) -> None:
    assert parse_docstring(doc) == (description, params)


async def test_sync_and_async_tools_run_in_a_real_agent_loop(faux: FauxProvider) -> None:
    @tool
    def add(a: int, b: int = 10) -> int:
        """Add two numbers."""
        return a + b

    @tool
    async def stats(values: list[float]) -> dict[str, float]:
        """Summary statistics."""
        await asyncio.sleep(0)
        return {"n": len(values), "mean": sum(values) / len(values)}

    results = await run_agent(
        faux,
        [add, stats],
        [("add", {"a": "2"}), ("stats", {"values": [1, "2", 3]})],
    )
    assert [text_of(r) for r in results] == ["12", json.dumps({"n": 3, "mean": 2.0})]
    assert not any(r.is_error for r in results)


async def test_a_raising_tool_gives_an_error_result_and_the_run_goes_on(
    faux: FauxProvider,
) -> None:
    @tool
    def explode(reason: str) -> str:
        """Always fails."""
        raise RuntimeError(f"boom: {reason}")

    @tool
    def fine() -> str:
        """Works."""
        return "still here"

    results = await run_agent(
        faux, [explode, fine], [("explode", {"reason": "test"})], [("fine", {})]
    )
    assert results[0].is_error and text_of(results[0]) == "boom: test"
    assert not results[1].is_error and text_of(results[1]) == "still here"


async def test_signal_and_progress_are_injected(faux: FauxProvider) -> None:
    seen: list[Any] = []

    @tool
    async def work(steps: int, signal: AbortSignal | None = None, on_update: Any = None) -> str:
        """Work in steps."""
        seen.append(signal)
        for i in range(steps):
            on_update(f"step {i + 1}/{steps}")
        return "done"

    updates: list[str] = []
    faux.set_responses([tool_turn(("work", {"steps": 3})), faux_assistant_message("done")])
    agent = Agent(model=faux.get_model(), tools=[work])
    agent.subscribe(
        lambda e: (
            updates.append(e.partial_result.content[0].text)
            if e.type == "tool_execution_update"
            else None
        )
    )
    await agent.prompt("go")
    assert updates == ["step 1/3", "step 2/3", "step 3/3"]
    assert isinstance(seen[0], AbortSignal)


def test_return_values_become_content() -> None:
    import numpy as np
    import pandas as pd
    from PIL import Image

    from pi_notebook.tools import to_result

    png = io.BytesIO()
    Image.new("RGB", (4, 3), "red").save(png, format="PNG")
    assert to_result("hi").content[0].text == "hi"  # type: ignore[union-attr]
    assert to_result([1, {"a": None}]).content[0].text == '[1, {"a": null}]'  # type: ignore[union-attr]
    image = to_result(png.getvalue()).content[0]
    assert image.type == "image" and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == png.getvalue()
    pil = to_result(Image.new("L", (2, 2))).content[0]
    assert pil.type == "image" and base64.b64decode(pil.data).startswith(b"\x89PNG")
    frame = pd.DataFrame({"a": range(100_000), "b": np.ones(100_000)})
    text = to_result(frame, max_chars=1500).content[0].text  # type: ignore[union-attr]
    assert text.startswith("pandas.DataFrame: 100000 rows x 2 columns") and len(text) <= 1500
    passthrough = AgentToolResult(details={"x": 1})
    assert to_result(passthrough) is passthrough
    assert to_result(None).content[0].text == "(no return value)"  # type: ignore[union-attr]


def test_redefining_a_tool_replaces_it_in_an_agents_list() -> None:
    @tool
    def greet() -> str:
        """Old."""
        return "old"

    old = greet

    @tool  # the same cell run again
    def greet() -> str:  # type: ignore[no-redef]
        """New."""
        return "new"

    assert refresh_tools([old])[0] is greet
    assert greet.description == "New."


def test_bad_definitions_fail_at_decoration_time() -> None:
    def star(*values: int) -> int:
        return 0

    with pytest.raises(TypeError, match=r"\*args / \*\*kwargs"):
        tool(star)
    with pytest.raises(ValueError, match="not a valid tool name"):
        tool(name="has space")(lambda: 1)


@pytest.mark.kernel
async def test_a_matplotlib_figure_comes_back_as_a_png_image(faux: FauxProvider) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    @tool
    def plot(values: list[float]) -> Any:
        """Plot the values."""
        figure = Figure(figsize=(2, 1))
        figure.add_subplot().plot(values)
        return figure

    (result,) = await run_agent(faux, [plot], [("plot", {"values": [1, 3, 2]})])
    (image,) = result.content
    assert image.type == "image" and image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")


_CURRENT: contextvars.ContextVar[str] = contextvars.ContextVar("current", default="unset")


async def test_a_sync_tool_runs_off_the_loop_with_the_callers_context(faux: FauxProvider) -> None:
    seen: list[Any] = []

    @tool
    def where(on_update: Any = None) -> str:
        """Where it runs."""
        seen.append((threading.current_thread().name, _CURRENT.get()))
        on_update("half way")  # from the worker thread: handed to the loop
        return "done"

    _CURRENT.set("the caller's")
    updates: list[str] = []
    faux.set_responses([tool_turn(("where", {})), faux_assistant_message("done")])
    agent = Agent(model=faux.get_model(), tools=[where])
    agent.subscribe(
        lambda e: (
            updates.append(e.partial_result.content[0].text)
            if e.type == "tool_execution_update"
            else None
        )
    )
    await agent.prompt("go")
    assert seen == [("pi-tool-where", "the caller's")]
    assert updates == ["half way"]


@pytest.mark.parametrize("body", ["time.sleep(10**6)", "while True:\n        pass"])
async def test_abort_stops_a_blocking_sync_tool(faux: FauxProvider, body: str) -> None:
    started = threading.Event()
    namespace: dict[str, Any] = {"started": started, "time": time}
    exec(
        "def block() -> str:\n"
        "    '''Blocks.'''\n"
        "    started.set()\n"
        f"    {body}\n"
        "    return 'never'\n",
        namespace,
    )
    block = tool(namespace["block"])
    faux.set_responses([tool_turn(("block", {})), faux_assistant_message("not reached")])
    agent = Agent(model=faux.get_model(), tools=[block])
    run = asyncio.ensure_future(agent.prompt("go"))
    assert await asyncio.to_thread(started.wait, 10)  # the loop is free while the tool blocks
    agent.abort()
    await asyncio.wait_for(run, 10)
    (result,) = [m for m in agent.state.messages if m.role == "toolResult"]
    assert result.is_error and text_of(result).startswith("aborted after")
    for thread in [t for t in threading.enumerate() if t.name == "pi-tool-block"]:
        await asyncio.to_thread(thread.join, 10)
        assert not thread.is_alive()  # stopped, not left running


async def test_a_sync_tool_calling_sys_exit_fails_only_its_call(faux: FauxProvider) -> None:
    @tool
    def leave() -> str:
        """Leaves."""
        raise SystemExit(3)

    (result,) = await run_agent(faux, [leave], [("leave", {})])
    assert result.is_error and text_of(result) == "SystemExit: 3"
