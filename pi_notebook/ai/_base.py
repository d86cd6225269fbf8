"""Base class for every wire model, and the trusted constructor for the per-token path.

Every message, content block, usage record and event is a pydantic model whose Python
attributes are snake_case and whose JSON (``model_dump(by_alias=True, exclude_none=True)``)
is Pi's camelCase. Unknown fields from Pi's JSON are kept (``extra="allow"``), so a transcript
moves between Pi and pi_notebook unchanged.

Never validate on the per-token path: providers build events and blocks with :func:`trusted`,
which skips validation and costs about as much as a dataclass.
"""

from __future__ import annotations

from collections.abc import Callable
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

_new_object = object.__new__
# BaseModel keeps its instance dict and bookkeeping in slots; calling their descriptors'
# setters directly is the cheapest way in.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_SLOTS = {
    name: BaseModel.__dict__[name]
    for name in ("__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
}
_set_fields_set = _SLOTS["__pydantic_fields_set__"].__set__
_set_extra = _SLOTS["__pydantic_extra__"].__set__
_set_private = _SLOTS["__pydantic_private__"].__set__


class _FilledOnFirstUse:
    """A pydantic bookkeeping slot that takes its default value the first time it is read.

    Stands in front of ``BaseModel``'s slot of the same name: reads and writes go to the
    slot; a read of a slot nobody filled (an instance built by :func:`trusted`) fills it
    with ``default(instance)`` first. Pydantic and pydantic-core reach these slots by
    attribute access, so validation, ``==``, dumps, copies and pickling see ordinary values.
    """

    def __init__(self, name: str, default: Callable[[BaseModel], Any]) -> None:
        self._slot = _SLOTS[name]
        self._default = default

    def __get__(self, obj: BaseModel | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            return self._slot.__get__(obj, owner)
        except AttributeError:
            value = self._default(obj)
            self._slot.__set__(obj, value)
            return value

    def __set__(self, obj: BaseModel, value: Any) -> None:
        self._slot.__set__(obj, value)


class EventModel(WireModel):
    """A wire model built by :func:`trusted` from its field dict alone (events, per token).

    Its fields-set (every field given), extra (``{}``) and private (``None``) are filled on
    first use instead of at construction, which makes a trusted event cost about what a plain
    object with a ``__dict__`` costs. Validated construction works as for any model.
    """

    __pydantic_fields_set__ = _FilledOnFirstUse(
        "__pydantic_fields_set__", lambda obj: set(obj.__dict__)
    )
    __pydantic_extra__ = _FilledOnFirstUse("__pydantic_extra__", lambda obj: {})
    __pydantic_private__ = _FilledOnFirstUse("__pydantic_private__", lambda obj: None)


# The two steps of trusted() for an EventModel, for the per-token path to inline, where the
# call itself would cost as much as both: ``event = bare_instance(cls); set_fields(event, d)``.
bare_instance = _new_object
set_fields = _set_dict

# Per class: None for an EventModel; otherwise its defaulted fields as (name, default, factory).
_Defaults = tuple[tuple[str, Any, Callable[[], Any] | None], ...]
_defaults_of: dict[type[BaseModel], _Defaults | None] = {}


def _defaults(cls: type[BaseModel]) -> _Defaults | None:
    if issubclass(cls, EventModel):
        return None
    return tuple(
        (name, info.default, info.default_factory)  # type: ignore[misc]
        for name, info in cls.model_fields.items()
        if not info.is_required()
    )


def trusted(cls: type[M], fields: dict[str, Any]) -> M:
    """Build ``cls`` from already-correct ``fields`` without validation.

    ``fields`` must name every field of ``cls`` that has no default, and becomes the
    instance's dict. An :class:`EventModel` (built per token) takes it as it is: its callers
    pass every field. Other models (content blocks, messages: built once each) get their
    missing defaults filled in and their bookkeeping now, so they equal, dump and read back
    exactly as validated ones do.
    """
    obj = _new_object(cls)
    _set_dict(obj, fields)
    try:
        defaults = _defaults_of[cls]
    except KeyError:
        defaults = _defaults_of[cls] = _defaults(cls)
    if defaults is not None:
        _set_fields_set(obj, set(fields))
        for name, default, factory in defaults:
            if name not in fields:
                fields[name] = default if factory is None else factory()
        _set_extra(obj, {} if cls.model_config.get("extra") == "allow" else None)
        _set_private(obj, None)
    return obj


def shallow_copy(obj: M) -> M:
    """A copy whose top-level fields are frozen and whose lists and blocks are shared.

    What the loop puts in ``message_update`` (Pi's ``{...partial}``): cheap enough for every token.
    """
    new = _new_object(type(obj))
    _set_dict(new, obj.__dict__.copy())
    _set_fields_set(new, obj.__pydantic_fields_set__)
    _set_extra(new, obj.__pydantic_extra__)
    _set_private(new, obj.__pydantic_private__)
    return new
