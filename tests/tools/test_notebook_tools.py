"""The built-in notebook tools on an injected namespace, driven by a faux model in an Agent."""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pi_notebook.agent import Agent
from pi_notebook.ai import FauxProvider, faux_assistant_message, faux_tool_call
from pi_notebook.tools import Workspace, notebook_tools, protect, tool, undo, workspace

from .conftest import run_agent, text_of


def fresh_namespace(**values: Any) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "__main__", "np": np, "pd": pd, **values}
    workspace(ns).begin_run()
    return ns


async def test_list_variables_skips_modules_private_ipython_and_agent_objects(
    faux: FauxProvider,
) -> None:
    ns = fresh_namespace(
        df=pd.DataFrame({"a": range(5)}),
        words=["a", "b"],
        n=3,
        _private=1,
        In=[""],
        Out={},
        _i3="x",
        helper=Agent(),
    )
    (result,) = await run_agent(faux, notebook_tools(ns), [("list_variables", {})])
    assert text_of(result).splitlines() == [
        "df: pandas.DataFrame (5, 1) [172 B]",
        "n: int [28 B]",
        "words: list len 2 [72 B]",
    ]
    assert [row["name"] for row in result.details["variables"]] == ["df", "n", "words"]


async def test_inspect_variable_and_attribute_paths(faux: FauxProvider) -> None:
    ns = fresh_namespace(df=pd.DataFrame({"price": [1.5, 2.5, None]}))
    results = await run_agent(
        faux,
        notebook_tools(ns),
        [
            ("inspect_variable", {"name": "df"}),
            ("inspect_variable", {"name": "df.columns"}),
            ("inspect_variable", {"name": "nope"}),
        ],
    )
    assert text_of(results[0]).startswith("df: pandas.DataFrame: 3 rows x 1 columns")
    assert "null counts: price: 1" in text_of(results[0])
    assert "Index(['price']" in text_of(results[1])
    assert results[2].is_error
    assert text_of(results[2]) == "no variable named 'nope'; list_variables shows what exists"


async def test_inspect_bound_is_configurable(faux: FauxProvider) -> None:
    ns = fresh_namespace(big=pd.DataFrame(np.zeros((100_000, 60))))
    tools = notebook_tools(ns, max_chars=1200)
    results = await run_agent(
        faux,
        tools,
        [
            ("inspect_variable", {"name": "big"}),
            ("inspect_variable", {"name": "big", "max_chars": 500}),
        ],
    )
    assert len(text_of(results[0])) <= 1200 + len("big: ")
    assert len(text_of(results[1])) <= 500 + len("big: ")


async def test_run_python_creates_changes_and_deletes_with_a_diff(faux: FauxProvider) -> None:
    ns = fresh_namespace(df=pd.DataFrame({"a": [1, 2]}), items=[1], old="x", same=[5])
    code = (
        "df['b'] = df.a * 10\nitems.append(2)\ndel old\ntotal = int(df.b.sum())\n"
        "print(total)\nsame[0]\ntotal * 2"
    )
    (result,) = await run_agent(faux, notebook_tools(ns), [("run_python", {"code": code})])
    assert not result.is_error
    assert result.details["namespace_diff"] == {
        "created": ["total"],
        "changed": ["df", "items"],
        "deleted": ["old"],
    }
    text = text_of(result)
    assert text.startswith("stdout:\n30\nvalue: 60\n")
    assert "namespace: created total; changed df, items; deleted old" in text
    assert ns["total"] == 30 and ns["items"] == [1, 2] and "old" not in ns


async def test_set_variable(faux: FauxProvider) -> None:
    ns = fresh_namespace(x=2)
    results = await run_agent(
        faux,
        notebook_tools(ns),
        [("set_variable", {"name": "y", "expression": "[x] * 3  # a comment"})],
        [("set_variable", {"name": "y", "expression": "x +"})],
        [("set_variable", {"name": "2y", "expression": "1"})],
    )
    assert text_of(results[0]).startswith("y = [2, 2, 2] (list, len 3")
    assert results[0].details["namespace_diff"]["created"] == ["y"]
    assert results[1].is_error and text_of(results[1]).startswith("not a Python expression")
    assert results[2].is_error and text_of(results[2]) == "'2y' is not a valid Python variable name"
    assert ns["y"] == [2, 2, 2]


async def test_exception_is_an_error_result_with_short_traceback_and_changes_so_far(
    faux: FauxProvider,
) -> None:
    ns = fresh_namespace()
    (result,) = await run_agent(
        faux, notebook_tools(ns), [("run_python", {"code": "a = 1\nprint('hi')\n{}['k']"})]
    )
    assert result.is_error
    text = text_of(result)
    assert text.startswith("stdout:\nhi\nTraceback (most recent call last):")
    assert "KeyError: 'k'" in text and "namespace: created a" in text
    # The error result keeps the diff in its details, so the panel shows what was written.
    assert result.details["namespace_diff"] == {"created": ["a"], "changed": [], "deleted": []}


@pytest.mark.parametrize(
    ("code", "name", "why"),
    [
        ("np = 1", "np", "a module"),
        ("def pd(): pass", "pd", "a module"),
        ("In = []", "In", "one of IPython's own names"),
        ("_ = 5", "_", "one of IPython's own names"),
        ("for helper in range(3): pass", "helper", "one of the agent's objects"),
        ("secret += 1", "secret", "marked protected by the user"),
        ("del secret", "secret", "marked protected by the user"),
        ("def f():\n    global secret\n    secret = 0\nf()", "secret", "marked protected"),
    ],
)
async def test_writing_protected_names_is_refused_before_running(
    faux: FauxProvider, code: str, name: str, why: str
) -> None:
    ns = fresh_namespace(helper=Agent(), secret=41, In=[])
    protect("secret", namespace=ns)
    (result,) = await run_agent(faux, notebook_tools(ns), [("run_python", {"code": code})])
    assert result.is_error
    assert text_of(result).startswith(
        f"refused: writing protected names is not allowed ('{name}' is {why}"
    )
    assert ns["secret"] == 41 and ns["np"] is np and isinstance(ns["helper"], Agent)


async def test_dynamic_rebinding_of_a_protected_name_is_put_back(faux: FauxProvider) -> None:
    ns = fresh_namespace()
    code = "import numpy as np\nimport json\nglobals()['np'] = 'oops'\nok = 1"
    (result,) = await run_agent(faux, notebook_tools(ns), [("run_python", {"code": code})])
    assert result.is_error
    assert "'np' is a module); put back as they were" in text_of(result)
    assert ns["np"] is np and ns["ok"] == 1 and isinstance(ns["json"], types.ModuleType)


async def test_undo_restores_the_namespace_before_the_last_run(faux: FauxProvider) -> None:
    ns = fresh_namespace(df=pd.DataFrame({"a": [1, 2]}), items=[1], gone="bye", kept=7)
    df_before, items_before = ns["df"], ns["items"]
    await run_agent(
        faux,
        notebook_tools(ns),
        [("run_python", {"code": "df.loc[0, 'a'] = 100\nitems.append(2)\ndel gone\nnew = 1"})],
        [("set_variable", {"name": "kept", "expression": "8"})],
        [("run_python", {"code": "items.append(3)\nnew = 2"})],
    )
    assert ns["items"] == [1, 2, 3] and ns["kept"] == 8
    report = undo(ns)
    assert report.restored == ["df", "gone", "items", "kept"]
    assert report.removed == ["new"] and report.not_restored == {}
    assert ns["df"]["a"].tolist() == [1, 2] and ns["items"] == [1] and ns["gone"] == "bye"
    assert ns["kept"] == 7 and "new" not in ns
    assert ns["df"] is not df_before and items_before == [1, 2, 3]  # restored from copies
    assert undo(ns).text() == "nothing left to undo: the last run's changes were already undone"


async def test_only_the_last_run_is_undone(faux: FauxProvider) -> None:
    ns = fresh_namespace(x=1)
    tools = notebook_tools(ns)
    await run_agent(faux, tools, [("set_variable", {"name": "x", "expression": "2"})])
    workspace(ns).begin_run()
    await run_agent(faux, tools, [("set_variable", {"name": "x", "expression": "3"})])
    assert undo(ns).restored == ["x"] and ns["x"] == 2


async def test_undo_says_what_it_could_not_keep(faux: FauxProvider) -> None:
    ns = fresh_namespace(big=np.zeros(1_000_000), small=[1])
    ws = workspace(ns)
    ws.journal.limit_bytes = 1_000_000  # 1 MB: big (8 MB) cannot be copied
    (result,) = await run_agent(
        faux, notebook_tools(ns), [("run_python", {"code": "big[0] = 1\nsmall.append(2)"})]
    )
    assert "not checked for in-place changes (no copy kept): big (too large to keep" in text_of(
        result
    )
    report = ws.undo()
    assert report.restored == ["small"] and ns["small"] == [1]
    assert report.not_restored["big"].startswith("it may have been changed in place; too large")
    assert "could not restore big: it may have been changed in place" in report.text()


async def test_rebinding_a_huge_value_is_undone_by_reference(faux: FauxProvider) -> None:
    big = np.zeros(2_000_000)
    ns = fresh_namespace(big=big)
    workspace(ns).journal.limit_bytes = 1000
    await run_agent(faux, notebook_tools(ns), [("run_python", {"code": "big = big[:10]"})])
    assert undo(ns).restored == ["big"] and ns["big"] is big


def test_namespace_defaults_to_the_ipython_shell() -> None:
    with pytest.raises(Exception, match="not running in IPython"):
        workspace()


def test_workspaces_are_per_namespace() -> None:
    a: dict[str, Any] = {}
    b: dict[str, Any] = {}
    assert workspace(a) is workspace(a) and workspace(a) is not workspace(b)
    assert isinstance(workspace(a), Workspace)


async def test_function_tools_and_notebook_tools_together(faux: FauxProvider) -> None:
    ns = fresh_namespace(values=[3, 1, 2])

    @tool
    def sort_values(name: str) -> str:
        """Sort a list variable in place."""
        ns[name].sort()
        return f"sorted {name}"

    results = await run_agent(
        faux,
        [*notebook_tools(ns), sort_values],
        [("sort_values", {"name": "values"})],
        [("run_python", {"code": "values"})],
    )
    assert text_of(results[0]) == "sorted values"
    assert text_of(results[1]).startswith("value: [1, 2, 3]\n")


async def test_in_place_changes_inside_containers_of_dataframes_are_seen(
    faux: FauxProvider,
) -> None:
    ns = fresh_namespace(frames={"a": pd.DataFrame({"v": [1, 2]})}, same={"b": pd.DataFrame()})
    (result,) = await run_agent(
        faux,
        notebook_tools(ns),
        [("run_python", {"code": "frames['a'].loc[0, 'v'] = 9\nlen(same)"})],
    )
    assert result.details["namespace_diff"]["changed"] == ["frames"]
    assert undo(ns).restored == ["frames"] and ns["frames"]["a"]["v"].tolist() == [1, 2]


def _without_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_titles(v) for k, v in schema.items() if k != "title"}
    return schema


def test_the_builtin_tools_are_function_tools_with_their_schemas() -> None:
    """Written with ``@tool`` (issue 17), the schemas the model sees keep their content."""
    from pi_notebook.tools import is_function_tool, refresh_tools

    tools = notebook_tools({}, max_chars=1500)
    assert all(is_function_tool(t) for t in tools)
    assert [(t.name, t.label, t.writes_namespace, t.execution_mode) for t in tools] == [
        ("list_variables", "list variables", False, None),
        ("inspect_variable", "inspect variable", False, None),
        ("run_python", "run python", True, "sequential"),
        ("set_variable", "set variable", True, "sequential"),
        ("notebook_cells", "notebook cells", False, None),
        ("last_error", "last error", False, None),
    ]
    string = {"type": "string"}
    assert [_without_titles(t.json_schema()) for t in tools[4:]] == [
        {
            "type": "object",
            "properties": {
                "last": {
                    "type": "integer",
                    "default": 10,
                    "description": "how many cells, newest last (at most 50)",
                }
            },
        },
        {"type": "object", "properties": {}},
    ]
    assert [_without_titles(t.json_schema()) for t in tools[:4]] == [
        {"type": "object", "properties": {}},
        {
            "type": "object",
            "properties": {
                "name": {**string, "description": "variable name or attribute path"},
                "max_chars": {
                    "type": "integer",
                    "default": 1500,
                    "description": "summary size limit (at most 1500)",
                },
            },
            "required": ["name"],
        },
        {
            "type": "object",
            "properties": {"code": {**string, "description": "Python source to run"}},
            "required": ["code"],
        },
        {
            "type": "object",
            "properties": {
                "name": {**string, "description": "variable name"},
                "expression": {**string, "description": "Python expression"},
            },
            "required": ["name", "expression"],
        },
    ]
    assert tools[2].description.startswith("Run Python code in the notebook's namespace")

    @tool
    def run_python(code: str) -> str:
        """A user's own tool of the same name."""
        return code

    # Re-running a defining cell replaces the user's tools, never the built-in ones.
    assert refresh_tools(tools) == tools


async def test_run_python_streams_its_output_as_batched_progress(faux: FauxProvider) -> None:
    """While the code runs, the output so far reaches the tool card; never one update per write."""
    import asyncio
    import threading

    first_seen, many_seen = threading.Event(), threading.Event()
    ns = fresh_namespace(first_seen=first_seen, many_seen=many_seen)
    code = (
        "print('first')\n"
        "assert first_seen.wait(10)\n"
        "for i in range(20_000):\n"
        "    print(i)\n"
        "assert many_seen.wait(10)\n"
        "print('end')"
    )
    updates: list[str] = []

    def on_event(event: Any) -> None:
        if event.type != "tool_execution_update":
            return
        text = event.partial_result.content[0].text
        updates.append(text)
        if text == "stdout:\nfirst":
            first_seen.set()
        if text.endswith("\n19999"):
            many_seen.set()

    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("run_python", {"code": code}, id="c1")], stop_reason="toolUse"
            ),
            faux_assistant_message("done"),
        ]
    )
    agent = Agent(model=faux.get_model(), tools=notebook_tools(ns, output_chars=400))
    agent.subscribe(on_event)
    await asyncio.wait_for(agent.prompt("go"), 30)
    assert updates[0] == "stdout:\nfirst"
    assert first_seen.is_set() and many_seen.is_set()  # both seen while the code still ran
    assert len(updates) <= 100  # batched: 20,002 writes, a handful of updates
    assert all(len(text) < 600 for text in updates)  # bounded like the result
    result = next(m for m in agent.state.messages if m.role == "toolResult")
    assert text_of(result).startswith("stdout:\nfirst\n0\n") and "\nend\n" in text_of(result)
    print(f"{len(updates)} progress updates for 20,002 writes")
