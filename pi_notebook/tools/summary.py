"""Bounded, model-friendly text about Python values: one-line facts and longer summaries.

:func:`short_facts` gives the type, shape or length and an approximate size of a value (what
``list_variables`` shows); :func:`summarize` gives a longer summary (what ``inspect_variable``
shows) that never exceeds its character bound, whatever the value's size.

pandas and numpy are optional: they are only looked up in ``sys.modules`` (a DataFrame can only
exist if pandas was imported), never imported here. Work on huge values is bounded too: only a
head, a sample or an aggregate is rendered, never the whole value.
"""

from __future__ import annotations

import contextlib
import io
import reprlib
import sys
from collections.abc import Callable
from typing import Any

DEFAULT_MAX_CHARS = 4000
TRUNCATED = "... [truncated]"
_DESCRIBE_ROW_LIMIT = 1_000_000
"""Above this many rows, ``describe`` works on an evenly spaced sample (said in the output)."""


def bounded(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, keeping the head and a marked tail."""
    if len(text) <= limit:
        return text
    if limit <= len(TRUNCATED) + 20:
        return text[:limit]
    tail = min(200, limit // 4)
    head = limit - tail - len(TRUNCATED) - 2
    return f"{text[:head]}\n{TRUNCATED}\n{text[-tail:]}"


def _module(name: str) -> Any:
    return sys.modules.get(name)


def is_dataframe(value: Any) -> bool:
    pd = _module("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)


def is_series(value: Any) -> bool:
    pd = _module("pandas")
    return pd is not None and isinstance(value, pd.Series)


def is_ndarray(value: Any) -> bool:
    np = _module("numpy")
    return np is not None and isinstance(value, np.ndarray)


def human_bytes(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def approx_size(value: Any) -> int | None:
    """Approximate bytes held by ``value`` (shallow for containers); ``None`` if unknown."""
    try:
        if is_dataframe(value) or is_series(value):
            usage = value.memory_usage(deep=False, index=True)
            return int(usage.sum()) if is_dataframe(value) else int(usage)
        if is_ndarray(value):
            return int(value.nbytes)
        return sys.getsizeof(value)
    except Exception:
        return None


def type_name(value: Any) -> str:
    cls = type(value)
    module = cls.__module__
    if module in ("builtins", "__main__") or not module:
        return cls.__qualname__
    return f"{module.split('.')[0]}.{cls.__qualname__}"


def shape_of(value: Any) -> str | None:
    """``"(3, 4)"`` for array-likes, ``"len 5"`` for sized values, else ``None``."""
    try:
        if is_dataframe(value) or is_series(value) or is_ndarray(value):
            return str(tuple(value.shape))
        if isinstance(value, str | bytes | list | tuple | dict | set | frozenset):
            return f"len {len(value)}"
    except Exception:
        return None
    return None


def short_facts(value: Any) -> dict[str, Any]:
    """Type, shape or length, and approximate size, as data."""
    facts: dict[str, Any] = {"type": type_name(value)}
    shape = shape_of(value)
    if shape is not None:
        facts["shape"] = shape
    size = approx_size(value)
    if size is not None:
        facts["size"] = human_bytes(size)
    return facts


def short_repr(value: Any, limit: int = 80) -> str:
    """A one-line repr of at most ``limit`` characters (never the whole of a big value)."""
    r = reprlib.Repr()
    r.maxstring = limit
    r.maxother = limit
    r.maxlist = r.maxtuple = r.maxdict = r.maxset = 6
    try:
        text = r.repr(value)
    except Exception as exc:
        text = f"<repr failed: {type(exc).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- long summaries ------------------------------------------------------------------------------


def summarize(value: Any, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """A bounded summary of ``value`` (at most ``max_chars`` characters)."""
    for check, render in _RENDERERS:
        if check(value):
            try:
                return bounded(render(value, max_chars), max_chars)
            except Exception as exc:
                text = f"{type_name(value)} (summary failed: {type(exc).__name__}: {exc})\n"
                return bounded(text + short_repr(value, max_chars // 2), max_chars)
    return bounded(_generic(value, max_chars), max_chars)


def _pandas_options(width: int) -> contextlib.AbstractContextManager[Any]:
    pd = _module("pandas")
    if pd is None:
        return contextlib.nullcontext()
    return pd.option_context(  # type: ignore[no-any-return]
        "display.max_columns", 20, "display.width", width, "display.max_colwidth", 40
    )


def _dataframe(df: Any, max_chars: int) -> str:
    rows, cols = df.shape
    out = io.StringIO()
    out.write(f"pandas.DataFrame: {rows} rows x {cols} columns")
    size = approx_size(df)
    if size is not None:
        out.write(f", {human_bytes(size)}")
    out.write("\n")
    more = f" (+{cols - 50} more)" if cols > 50 else ""
    dtypes = ", ".join(f"{c}: {t}" for c, t in list(df.dtypes.items())[:50])
    out.write(f"dtypes: {dtypes}{more}\n")
    nulls = df.isna().sum()
    nonzero = nulls[nulls > 0]
    if len(nonzero):
        items = ", ".join(f"{c}: {int(n)}" for c, n in list(nonzero.items())[:50])
        out.write(f"null counts: {items}\n")
    else:
        out.write("null counts: none\n")
    with _pandas_options(120):
        out.write("head:\n")
        out.write(df.head(5).to_string(max_cols=20, max_colwidth=40))
        out.write("\n")
        numeric = df.select_dtypes(include="number")
        if numeric.shape[1]:
            sample = numeric
            note = ""
            if rows > _DESCRIBE_ROW_LIMIT:
                step = rows // _DESCRIBE_ROW_LIMIT + 1
                sample = numeric.iloc[::step]
                note = f" (on every {step}th row: {len(sample)} of {rows})"
            described = sample.iloc[:, :20].describe()
            out.write(f"describe{note}:\n{described.to_string()}\n")
    return out.getvalue()


def _series(series: Any, max_chars: int) -> str:
    out = io.StringIO()
    name = f" {series.name!r}" if series.name is not None else ""
    out.write(f"pandas.Series{name}: {len(series)} values, dtype {series.dtype}")
    out.write(f", {int(series.isna().sum())} null\n")
    with _pandas_options(120):
        out.write(f"head:\n{series.head(5).to_string()}\n")
        if series.dtype.kind in "iufb" and len(series):
            sample = series
            if len(series) > _DESCRIBE_ROW_LIMIT:
                sample = series.iloc[:: len(series) // _DESCRIBE_ROW_LIMIT + 1]
            out.write(f"describe:\n{sample.describe().to_string()}\n")
    return out.getvalue()


def _ndarray(array: Any, max_chars: int) -> str:
    np = _module("numpy")
    out = io.StringIO()
    out.write(f"numpy.ndarray: shape {tuple(array.shape)}, dtype {array.dtype}, ")
    out.write(f"{human_bytes(array.nbytes)}\n")
    if array.size and array.dtype.kind in "iufb":
        flat = array.reshape(-1)
        if flat.size > 10_000_000:
            flat = flat[:: flat.size // 10_000_000 + 1]
            out.write(f"statistics (on a sample of {flat.size}):\n")
        data = flat.astype("float64")
        finite = data[np.isfinite(data)]
        nan = int(np.isnan(data).sum())
        if finite.size:
            out.write(
                f"min {finite.min():.6g}, max {finite.max():.6g}, mean {finite.mean():.6g}, "
                f"std {finite.std():.6g}, nan {nan}\n"
            )
    with np.printoptions(threshold=50, edgeitems=3, linewidth=100):
        out.write(f"values:\n{array!r}\n")
    return out.getvalue()


def _mapping(value: dict[Any, Any], max_chars: int) -> str:
    out = io.StringIO()
    out.write(f"{type_name(value)} with {len(value)} keys\n")
    per_item = max(40, min(200, max_chars // 25))
    for i, (key, item) in enumerate(value.items()):
        if i == 20:
            out.write(f"... ({len(value) - 20} more keys)\n")
            break
        out.write(f"{short_repr(key, 60)}: {short_repr(item, per_item)}\n")
    return out.getvalue()


def _sequence(value: Any, max_chars: int) -> str:
    out = io.StringIO()
    items = list(value) if isinstance(value, set | frozenset) else value
    types = sorted({type_name(item) for item in items[:1000]})
    out.write(f"{type_name(value)} of {len(value)} items (types: {', '.join(types[:5])})\n")
    per_item = max(40, min(200, max_chars // 25))
    head = min(10, len(items))
    for i in range(head):
        out.write(f"[{i}] {short_repr(items[i], per_item)}\n")
    if len(items) > head:
        out.write(f"... ({len(items) - head} more)\n")
        tail = max(head, len(items) - 3)
        for i in range(tail, len(items)):
            out.write(f"[{i}] {short_repr(items[i], per_item)}\n")
    return out.getvalue()


def _text(value: str, max_chars: int) -> str:
    lines = value.count("\n") + 1
    header = f"str: {len(value)} characters, {lines} lines\n"
    return header + bounded(value, max(0, max_chars - len(header)))


def _generic(value: Any, max_chars: int) -> str:
    header = f"{type_name(value)}"
    for method in ("_repr_llm_", "_repr_markdown_"):
        render = getattr(value, method, None)
        if callable(render) and not isinstance(value, type):
            try:
                text = render()
            except Exception:
                continue
            if isinstance(text, str):
                return f"{header}\n{text}"
    try:
        text = repr(value)
    except Exception as exc:
        text = f"<repr failed: {type(exc).__name__}: {exc}>"
    return f"{header}\n{text}"


_RENDERERS: list[tuple[Callable[[Any], bool], Callable[[Any, int], str]]] = [
    (is_dataframe, _dataframe),
    (is_series, _series),
    (is_ndarray, _ndarray),
    (lambda v: isinstance(v, dict), _mapping),
    (lambda v: isinstance(v, list | tuple | set | frozenset), _sequence),
    (lambda v: isinstance(v, str), _text),
]

__all__ = [
    "DEFAULT_MAX_CHARS",
    "approx_size",
    "bounded",
    "human_bytes",
    "is_dataframe",
    "is_ndarray",
    "is_series",
    "short_facts",
    "short_repr",
    "summarize",
    "type_name",
]
