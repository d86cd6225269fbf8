"""Base class for every wire model, and the trusted constructor for the per-token path.

Every message, content block, usage record and event is a pydantic model whose Python
attributes are snake_case and whose JSON (``model_dump(by_alias=True, exclude_none=True)``)
is Pi's camelCase. Unknown fields from Pi's JSON are kept (``extra="allow"``), so a transcript
moves between Pi and pi_notebook unchanged.

Never validate on the per-token path: providers build events and blocks with :func:`trusted`,
which skips validation and costs about as much as a dataclass.
"""

from __future__ import annotations

from typing import Any, TypeVar

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
        extra = self.__pydantic_extra__
        if extra and info.exclude_none and isinstance(data, dict):
            for key, value in extra.items():
                if value is None:
                    data[key] = None
        return data

    def to_json_dict(self) -> dict[str, Any]:
        """Pi's JSON shape: camelCase keys, absent optionals left out."""
        data: dict[str, Any] = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        return data


M = TypeVar("M", bound=BaseModel)

_set_attr = object.__setattr__
_new_object = object.__new__
# BaseModel keeps its bookkeeping in slots; their descriptors' setters are the cheapest way in.
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_allows_extra: dict[type[BaseModel], bool] = {}


def trusted(cls: type[M], fields: dict[str, Any]) -> M:
    """Build ``cls`` from already-correct ``fields`` without validation.

    ``fields`` must name every field of ``cls`` that has no default; defaults are not filled
    in here (callers on the hot path pass them), which is what keeps this cheap.
    """
    obj = _new_object(cls)
    _set_attr(obj, "__dict__", fields)
    _set_fields_set(obj, set(fields))
    extra = _allows_extra.get(cls)
    if extra is None:
        extra = _allows_extra[cls] = cls.model_config.get("extra") == "allow"
    _set_extra(obj, {} if extra else None)
    _set_private(obj, None)
    return obj


def append_str(obj: BaseModel, name: str, delta: str) -> None:
    """``obj.<name> += delta`` in amortised O(len(delta)).

    A plain ``obj.text += delta`` copies the whole string on every token (quadratic over a
    long answer). Taking the string out of the instance dict first leaves the local name as
    its only reference, so CPython grows it in place.
    """
    fields = obj.__dict__
    text: str = fields.pop(name)
    text += delta
    fields[name] = text


def shallow_copy(obj: M) -> M:
    """A copy whose top-level fields are frozen and whose lists and blocks are shared.

    What the loop puts in ``message_update`` (Pi's ``{...partial}``): cheap enough for every token.
    """
    new = _new_object(type(obj))
    _set_attr(new, "__dict__", obj.__dict__.copy())
    _set_fields_set(new, obj.__pydantic_fields_set__)
    _set_extra(new, obj.__pydantic_extra__)
    _set_private(new, obj.__pydantic_private__)
    return new
