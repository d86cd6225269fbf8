"""The base class of every wire model: Pi's camelCase JSON over snake_case attributes.

Every message, content block, usage record and model is a pydantic model whose Python
attributes are snake_case and whose JSON (``model_dump(by_alias=True, exclude_none=True)``)
is Pi's camelCase. Unknown fields from Pi's JSON are kept (``extra="allow"``), so a transcript
moves between Pi and pi_notebook unchanged.

Wire models are validated where data enters (provider JSON, Pi JSON, user input) and built
normally, once per message or block. Per-token objects (the stream events) are not wire models
but slotted dataclasses (``events.py``). Nothing here touches pydantic's private attributes.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)


def camel(name: str) -> str:
    """``tool_call_id`` -> ``toolCallId``; ``cache_write_1h`` -> ``cacheWrite1h`` (as Pi spells)."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


class WireModel(BaseModel):
    """A model with Pi's camelCase aliases that also accepts snake_case names."""

    model_config = ConfigDict(
        alias_generator=camel,
        validate_by_name=True,
        validate_by_alias=True,
        extra="allow",
    )

    @model_serializer(mode="wrap")
    def _keep_null_extras(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        # ``exclude_none`` is meant for our optional fields; an unknown field that Pi's JSON
        # carried as ``null`` is data, and stays ``null`` in every dump, nested ones included.
        data = handler(self)
        extra = self.model_extra
        if extra and info.exclude_none and isinstance(data, dict):
            for key, value in extra.items():
                if value is None:
                    data[key] = None
        return data

    def to_json_dict(self) -> dict[str, Any]:
        """Pi's JSON shape: camelCase keys, absent optionals left out."""
        data: dict[str, Any] = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        return data
