"""Bounded summaries of values: DataFrames, Series, arrays, containers, text, custom objects."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from pi_notebook.tools.summary import bounded, short_facts, summarize


def test_dataframe_summary_has_shape_dtypes_nulls_head_and_describe() -> None:
    df = pd.DataFrame({"city": ["Oslo", "Lima", None, "Pune"], "temp": [3.5, 19.0, 25.1, None]})
    text = summarize(df)
    assert text.startswith("pandas.DataFrame: 4 rows x 2 columns")
    assert "dtypes: city: " in text and "temp: float64" in text
    assert "null counts: city: 1, temp: 1" in text
    assert "Oslo" in text and "Lima" in text
    assert "describe:" in text and "mean" in text and "15.866667" in text


@pytest.mark.parametrize("limit", [300, 1000, 4000])
def test_every_summary_respects_its_bound(limit: int) -> None:
    wide = pd.DataFrame(np.arange(200 * 80).reshape(200, 80), columns=[f"c{i}" for i in range(80)])
    values = [
        wide,
        wide["c3"],
        np.arange(1_000_000).reshape(1000, 1000),
        {f"key{i}": list(range(i)) for i in range(500)},
        [str(i) * 50 for i in range(10_000)],
        "x" * 1_000_000,
        object(),
    ]
    for value in values:
        assert len(summarize(value, limit)) <= limit


def test_numpy_array_gives_shape_dtype_and_statistics() -> None:
    array = np.array([[1.0, 2.0], [np.nan, 4.0]])
    text = summarize(array)
    assert text.startswith("numpy.ndarray: shape (2, 2), dtype float64")
    assert "min 1, max 4, mean 2.33333" in text and "nan 1" in text


def test_containers_give_length_and_a_sample() -> None:
    text = summarize(list(range(1000)))
    assert text.startswith("list of 1000 items (types: int)")
    assert "[0] 0" in text and "[999] 999" in text and "... (990 more)" in text
    mapping = summarize({"a": 1, "b": [1, 2, 3]})
    assert mapping.startswith("dict with 2 keys") and "'b': [1, 2, 3]" in mapping


def test_long_text_is_truncated_with_a_marker() -> None:
    text = summarize("line\n" * 10_000, 500)
    assert text.startswith("str: 50000 characters, 10001 lines")
    assert "[truncated]" in text and len(text) <= 500


def test_repr_llm_then_markdown_then_repr() -> None:
    class Both:
        def _repr_llm_(self) -> str:
            return "for the model"

        def _repr_markdown_(self) -> str:
            return "**markdown**"

    class Markdown:
        def _repr_markdown_(self) -> str:
            return "**markdown**"

    assert summarize(Both()).endswith("\nfor the model")
    assert summarize(Markdown()).endswith("\n**markdown**")
    assert summarize(3 + 4j).endswith("\n(3+4j)")


def test_short_facts() -> None:
    facts = short_facts(np.zeros((3, 4)))
    assert facts == {"type": "numpy.ndarray", "shape": "(3, 4)", "size": "96 B"}
    assert short_facts([1, 2])["shape"] == "len 2"


def test_bounded_keeps_head_and_tail() -> None:
    text = bounded("a" * 500 + "b" * 500, 300)
    assert len(text) <= 300 and text.startswith("a") and text.endswith("b")


@pytest.mark.kernel
def test_pandas_and_numpy_are_never_imported() -> None:
    code = (
        "import sys\n"
        "from pi_notebook.tools import notebook_tools, summarize, to_result\n"
        "from pi_notebook.tools.journal import deep_size, same_value\n"
        "summarize({'a': [1, 2]}); summarize('x' * 10000); to_result({'a': 1})\n"
        "same_value([1], [1]); deep_size({'a': [1]})\n"
        "assert 'pandas' not in sys.modules and 'numpy' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
