"""Tool-argument validation: µs per call, jsonschema compiled once vs the alternatives.

    python bench/bench_validation.py [--calls 2000] [--repeat 5]

Three workloads: a ``run_python``-like schema (``code``, ``timeout``) with valid arguments, a
pydantic-generated schema (``$defs``, ``$ref``, ``anyOf``, enums) with 20 nested objects, and
the same with four mistakes (every problem listed). Peers, in one run:

* ours      - ``validate_tool_arguments``: Pi's coercion, then ``jsonschema`` with the schema
              compiled once (normalised copy, validator class, resolver);
* uncached  - the same work with the schema compiled on every call (what caching saves);
* jsonschema - ``Draft202012Validator(schema)`` made once, ``iter_errors`` only: no coercion, no
              Pi wording (the library's own floor);
* fastjsonschema - ``fastjsonschema.compile(schema)`` once, then validation. For information:
              it stops at the first problem and knows drafts 04-07 only (no ``prefixItems``,
              ``dependentRequired``, ``unevaluatedProperties``, ``$anchor``), so it cannot be
              the validator.

Figures are the best of ``--repeat`` runs of ``--calls`` calls, in µs per call.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import fastjsonschema  # noqa: E402
import jsonschema  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

from pi_notebook.ai import json_schema  # noqa: E402
from pi_notebook.ai.coercion import coerce  # noqa: E402
from pi_notebook.ai.validation import ToolArgumentsError, validate_tool_arguments  # noqa: E402


class Point(BaseModel):
    x: int
    y: int = 0
    label: str | None = None


class PlotArgs(BaseModel):
    path: str
    kind: Literal["line", "bar", "scatter"] = "line"
    limit: int | None = None
    scale: float = 1.0
    points: list[Point] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)


RUN_PYTHON = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "Python source to run"},
        "timeout": {"type": "integer", "minimum": 1, "maximum": 600},
    },
    "required": ["code"],
    "additionalProperties": False,
}
PLOT = PlotArgs.model_json_schema()
GOOD_PLOT = {
    "path": "sales.csv",
    "kind": "bar",
    "limit": 10,
    "scale": 2.5,
    "points": [{"x": i, "y": 2 * i, "label": f"p{i}"} for i in range(20)],
    "tags": ["q1", "q2"],
}
BAD_PLOT = {**GOOD_PLOT, "kind": "pie", "limit": "many", "points": [{"y": 1}, {"x": "a"}]}

WORKLOADS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "run_python, valid": (RUN_PYTHON, {"code": "print('hello')\n" * 40, "timeout": 30}),
    "plot (20 points), valid": (PLOT, GOOD_PLOT),
    "plot, 4 mistakes": (PLOT, BAD_PLOT),
}


class _Tool:
    def __init__(self, parameters: Any) -> None:
        self.name = "bench"
        self.parameters = parameters


class _Call:
    def __init__(self, arguments: Any) -> None:
        self.name = "bench"
        self.arguments = arguments


def ours(schema: dict[str, Any]) -> Callable[[Any], Any]:
    tool = _Tool(schema)

    def run(arguments: Any) -> Any:
        try:
            return validate_tool_arguments(tool, _Call(arguments))
        except ToolArgumentsError as exc:
            return exc.errors

    return run


def uncached(schema: dict[str, Any]) -> Callable[[Any], Any]:
    def run(arguments: Any) -> Any:
        compiled = json_schema.CompiledSchema(schema)
        return compiled.errors(coerce(compiled.schema, arguments, compiled))

    return run


def plain_jsonschema(schema: dict[str, Any]) -> Callable[[Any], Any]:
    validator = jsonschema.Draft202012Validator(schema)
    return lambda arguments: list(validator.iter_errors(arguments))


def fast(schema: dict[str, Any]) -> Callable[[Any], Any]:
    check = fastjsonschema.compile(schema)

    def run(arguments: Any) -> Any:
        try:
            return check(arguments)
        except fastjsonschema.JsonSchemaException as exc:
            return exc.message

    return run


PEERS: dict[str, Callable[[dict[str, Any]], Callable[[Any], Any]]] = {
    "ours": ours,
    "uncached": uncached,
    "jsonschema": plain_jsonschema,
    "fastjsonschema": fast,
}


def best_us(run: Callable[[Any], Any], arguments: Any, calls: int, repeat: int) -> float:
    run(arguments)  # warm-up (and the one compilation of the cached peers)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            run(arguments)
        best = min(best, time.perf_counter() - start)
    return best / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"µs per call, best of {args.repeat} runs of {args.calls:,} calls:")
    print(f"  {'workload':26}" + "".join(f"{name:>16}" for name in PEERS))
    for workload, (schema, arguments) in WORKLOADS.items():
        figures = [
            best_us(make(schema), arguments, args.calls, args.repeat) for make in PEERS.values()
        ]
        print(f"  {workload:26}" + "".join(f"{figure:16.1f}" for figure in figures))
    plot_errors = ours(PLOT)(BAD_PLOT)
    print(f"  (ours lists {len(plot_errors)} problems for the 4 mistakes: {plot_errors})")


if __name__ == "__main__":
    main()
