"""JSON of stream chunks: pydantic-core's parser (jiter), with the standard library's results.

It must never accept what ``json.loads`` refuses, nor return anything ``json.loads`` would not.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import from_json


def loads(data: bytes) -> Any:
    """``json.loads`` for stream chunks, through pydantic-core's parser (jiter), which is faster.

    Anything jiter refuses goes through ``json.loads`` (after a UTF-8 decode that replaces
    invalid bytes), so results and the ValueError on bad input are the standard library's.
    """
    try:
        return from_json(data)
    except ValueError:
        return json.loads(data.decode("utf-8", "replace"))
