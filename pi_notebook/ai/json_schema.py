"""Validating tool arguments against the tool's JSON Schema with ``jsonschema``, compiled once.

:func:`compile_schema` prepares a schema once (cached by identity, so once per tool): a
normalised copy (below), the ``jsonschema`` validator of the draft the schema declares
(Draft 2020-12 when it declares none) and a resolver for its ``$ref``\\ s. Then
:meth:`CompiledSchema.errors` lists every problem as ``(path, message)``, in the wording Pi's
validator uses (``must be number``, ``must have required property 'x'``, ...); the few
keywords that wording does not cover keep jsonschema's own message, which names the value.

The normalised copy differs from the schema only where jsonschema would crash or differ:

* a ``pattern``, or a ``patternProperties`` key, that Python's ``re`` cannot compile (an
  ECMA-only ``\\p{L}``) is skipped with a :class:`SchemaWarning`; with an unusable
  ``patternProperties`` key, that object's ``additionalProperties`` and
  ``unevaluatedProperties`` go too (which properties the pattern covers is unknown);
* unknown ``type`` names are dropped with a warning (they constrain nothing);
* in a schema that declares no older draft, draft-04 forms (boolean ``exclusiveMinimum`` and
  ``exclusiveMaximum``, tuple ``items`` with ``additionalItems``) and draft-07
  ``dependencies`` get their 2020-12 spelling;
* keywords are put in the order problems are reported in (``type`` first, ``required`` before
  ``properties``, combinators last).

Numbers must be finite, and ``multipleOf`` allows float rounding (0.3 is a multiple of 0.1).

This module must never mutate the schema it is given, never raise on a bad schema (it warns
and checks what it can: a ``$ref`` that loops or leads nowhere, a keyword of the wrong type)
and never fetch a remote ``$ref``.
"""

from __future__ import annotations

import copy
import functools
import re
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import ValidationError, validators
from jsonschema.exceptions import SchemaError, UnknownType

from .coercion import is_json_type, js_number, json_equal

__all__ = ["CompiledSchema", "Path", "SchemaWarning", "compile_schema"]

Path = tuple[str | int, ...]
"""Where in the arguments a problem is: property names and array indices."""

CACHE_SIZE = 256
"""Compiled schemas kept (least recently used ones are dropped)."""


class SchemaWarning(UserWarning):
    """Part of a tool's parameter schema cannot be checked and is skipped."""


def _warn(text: str) -> None:
    warnings.warn(text, SchemaWarning, stacklevel=4)


# --------------------------------------------------------------------------------------------
# The validator classes

_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


def _finite_number(_checker: Any, value: Any) -> bool:
    return is_json_type("number", value)


def _multiple_of(
    validator: Any, multiple: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """``multipleOf`` with room for float rounding (jsonschema's own rejects 0.3 for 0.1)."""
    if not validator.is_type(instance, "number") or not is_json_type("number", multiple):
        return
    if multiple <= 0:
        return
    if isinstance(instance, int) and isinstance(multiple, int):
        failed = instance % multiple != 0
    else:
        quotient = instance / multiple
        failed = abs(quotient - round(quotient)) > 1e-9 * max(1.0, abs(quotient))
    if failed:
        yield ValidationError(f"{instance!r} is not a multiple of {multiple!r}")


@functools.cache
def _validator_class(base: Any) -> Any:
    """``base`` (a jsonschema draft validator) with finite numbers and a tolerant multipleOf."""
    checker = base.TYPE_CHECKER.redefine("number", _finite_number)
    extend: Any = validators.extend  # (untyped in the stubs)
    return extend(base, validators={"multipleOf": _multiple_of}, type_checker=checker)


_MODERN = (jsonschema.Draft202012Validator, jsonschema.Draft201909Validator)

_NO_REMOTE_REFS: referencing.Registry[Any] = referencing.Registry()
"""An empty registry: a ``$ref`` outside the schema is unresolvable, never fetched."""


# --------------------------------------------------------------------------------------------
# Normalising the schema

_ORDER = (
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$defs",
    "definitions",
    "$ref",
    "$dynamicRef",
    "type",
    "const",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "required",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependencies",
    "propertyNames",
    "properties",
    "patternProperties",
    "additionalProperties",
    "dependentSchemas",
    "minItems",
    "maxItems",
    "prefixItems",
    "items",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
)
_RANK = {keyword: rank for rank, keyword in enumerate(_ORDER)}

_ONE_SCHEMA = frozenset(
    {
        "additionalProperties",
        "additionalItems",
        "items",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contentSchema",
    }
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)


@functools.lru_cache(maxsize=512)
def _usable_pattern(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _normalize(node: Any, modern: bool) -> Any:
    """A copy of the schema ``node`` fit for jsonschema (see the module docstring)."""
    if not isinstance(node, Mapping):
        return copy.deepcopy(node)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_normalize(sub, modern) for sub in value]
        elif key in _ONE_SCHEMA:
            out[key] = _normalize(value, modern)
        elif key in _SCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {
                name: sub if isinstance(sub, list) else _normalize(sub, modern)
                for name, sub in value.items()
            }
        else:
            out[key] = copy.deepcopy(value)
    _skip_unusable_patterns(out)
    _drop_unknown_types(out)
    if modern:
        _modernize(out)
    return {key: out[key] for key in sorted(out, key=lambda k: _RANK.get(k, len(_RANK)))}


def _skip_unusable_patterns(schema: dict[str, Any]) -> None:
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and not _usable_pattern(pattern):
        del schema["pattern"]
        _warn(f"pattern {pattern!r} is not a Python regular expression; it is not checked")
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict):
        unusable = [key for key in patterns if not _usable_pattern(key)]
        if unusable:
            for key in unusable:
                del patterns[key]
            skipped = [k for k in ("additionalProperties", "unevaluatedProperties") if k in schema]
            for key in skipped:
                del schema[key]
            also = f", nor is {' or '.join(skipped)} there" if skipped else ""
            _warn(
                f"patternProperties {', '.join(map(repr, unusable))}: not Python regular "
                f"expressions; not checked{also}"
            )


def _drop_unknown_types(schema: dict[str, Any]) -> None:
    types = schema.get("type")
    names = [types] if isinstance(types, str) else types
    if not isinstance(names, list):
        return
    unknown = [name for name in names if not isinstance(name, str) or name not in _JSON_TYPES]
    if not unknown:
        return
    _warn(f"unknown JSON type {', '.join(map(repr, unknown))} in a schema; it is not checked")
    known = [name for name in names if name not in unknown]
    if not known or isinstance(types, str):
        del schema["type"]
    else:
        schema["type"] = known


def _modernize(schema: dict[str, Any]) -> None:
    """Draft-04/07 spellings as Draft 2020-12 has them."""
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        flag = schema.get(exclusive)
        if isinstance(flag, bool):
            del schema[exclusive]
            if flag and bound in schema:
                schema[exclusive] = schema.pop(bound)
    items = schema.get("items")
    if isinstance(items, list):
        schema["prefixItems"] = items
        del schema["items"]
        if "additionalItems" in schema:
            schema["items"] = schema.pop("additionalItems")
    dependencies = schema.pop("dependencies", None)
    if isinstance(dependencies, Mapping):
        for name, dependency in dependencies.items():
            target = "dependentRequired" if isinstance(dependency, list) else "dependentSchemas"
            schema.setdefault(target, {}).setdefault(name, dependency)


# --------------------------------------------------------------------------------------------
# Compiled schemas

_SCHEMA_TROUBLE = (
    RecursionError,
    referencing.exceptions.Unresolvable,
    UnknownType,
    re.error,
    TypeError,
    ValueError,
    AttributeError,
)
"""What jsonschema raises on a schema it cannot apply (a ``$ref`` loop, a wrong keyword type)."""


class CompiledSchema:
    """A tool's parameter schema, ready to validate arguments (see :func:`compile_schema`)."""

    def __init__(self, schema: Mapping[str, Any] | bool) -> None:
        base = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        self.schema: Any = _normalize(schema, modern=base in _MODERN)
        """The normalised copy that is validated against."""
        cls = _validator_class(base)
        try:
            cls.check_schema(self.schema)
        except SchemaError as exc:
            where = "/".join(str(part) for part in exc.path) or "the root"
            _warn(f"the parameter schema is not valid JSON Schema at {where}: {exc.message}")
        self._validator = cls(self.schema, registry=_NO_REMOTE_REFS)
        specification = referencing.jsonschema.specification_with(
            self.schema.get("$schema", "") if isinstance(self.schema, Mapping) else "",
            default=referencing.jsonschema.DRAFT202012,
        )
        resource = specification.create_resource(self.schema)
        self._resolver = _NO_REMOTE_REFS.resolver_with_root(resource)
        self._targets: dict[str, Any] = {}  # $ref -> the part of the schema it points to
        self._parts: dict[int, Any] = {}  # id(part of self.schema) -> a validator for it

    # -- for coercion -------------------------------------------------------------------------

    def resolve(self, ref: str) -> Any:
        """The part of the schema ``ref`` points to (a JSON pointer or an anchor), or ``None``."""
        if ref not in self._targets:
            try:
                self._targets[ref] = self._resolver.lookup(ref).contents
            except referencing.exceptions.Unresolvable:
                self._targets[ref] = None
        return self._targets[ref]

    def is_valid(self, schema: Any, value: Any) -> bool:
        """Whether ``value`` fits ``schema``, a part of this schema (whose ``$ref``\\ s resolve)."""
        validator = self._parts.get(id(schema))
        if validator is None:
            # Parts of self.schema live as long as it does, so their ids stay theirs.
            validator = self._parts[id(schema)] = self._validator.evolve(schema=schema)
        try:
            return bool(validator.is_valid(value))
        except _SCHEMA_TROUBLE:
            return False

    # -- validation ---------------------------------------------------------------------------

    def errors(self, value: Any) -> list[tuple[Path, str]]:
        """Every way ``value`` fails the schema, in schema order: ``(path, message)`` pairs."""
        found: list[ValidationError] = []
        try:
            found.extend(self._validator.iter_errors(value))
        except RecursionError:
            _warn("the parameter schema refers to itself without end; the rest is not checked")
        except _SCHEMA_TROUBLE as exc:
            _warn(f"the parameter schema cannot be applied ({exc}); the rest is not checked")
        out: list[tuple[Path, str]] = []
        done: set[tuple[int, str, Path]] = set()
        for error in found:
            self._describe(error, out, done)
        return out

    def _describe(
        self, error: ValidationError, out: list[tuple[Path, str]], done: set[tuple[int, str, Path]]
    ) -> None:
        path: Path = tuple(error.absolute_path)
        keyword = error.validator
        if keyword in _ONCE_PER_OBJECT:
            # jsonschema reports each missing property on its own; describe them all at once.
            key = (id(error.schema), str(keyword), path)
            if key in done:
                return
            done.add(key)
            out.extend(_ONCE_PER_OBJECT[str(keyword)](error, path))
            return
        if keyword in ("anyOf", "oneOf"):
            for sub in error.context or ():
                self._describe(sub, out, done)
        message = _message(error)
        if "propertyNames" in error.absolute_schema_path and isinstance(error.instance, str):
            message = f"property name '{error.instance}' {message}"
        out.append((path, message))


def _parts(error: ValidationError) -> tuple[Any, Any, Any]:
    """The error's keyword value, the schema holding the keyword and the value checked."""
    value: Any = error.validator_value
    schema: Any = error.schema
    instance: Any = error.instance
    return value, schema, instance


def _missing_required(error: ValidationError, path: Path) -> list[tuple[Path, str]]:
    required, _, instance = _parts(error)
    return [
        ((*path, name), f"must have required property '{name}'")
        for name in required
        if isinstance(name, str) and name not in instance
    ]


def _missing_dependencies(error: ValidationError, path: Path) -> list[tuple[Path, str]]:
    dependencies, _, instance = _parts(error)
    out = []
    for name, needs in dependencies.items():
        if name not in instance or not isinstance(needs, list):
            continue
        missing = [need for need in needs if need not in instance]
        if missing:
            noun = "property" if len(missing) == 1 else "properties"
            out.append(
                (path, f"must have {noun} {', '.join(missing)} when property {name} is present")
            )
    return out


def _additional(error: ValidationError, path: Path) -> list[tuple[Path, str]]:
    _, schema, instance = _parts(error)
    properties = schema.get("properties") or {}
    patterns = schema.get("patternProperties") or {}
    extra = [
        key
        for key in instance
        if key not in properties and not any(re.search(pattern, key) for pattern in patterns)
    ]
    return [(path, "must NOT have additional properties")] * max(1, len(extra))


_ONCE_PER_OBJECT: dict[str, Callable[[ValidationError, Path], list[tuple[Path, str]]]] = {
    "required": _missing_required,
    "dependentRequired": _missing_dependencies,
    "dependencies": _missing_dependencies,  # draft-07's array form
    "additionalProperties": _additional,  # only ``false`` reports here; a schema descends
}


def _message(error: ValidationError) -> str:
    """Pi's (AJV's) wording for ``error``; jsonschema's own for keywords it does not word."""
    keyword = error.validator
    value, schema, instance = _parts(error)
    if keyword is None:  # the schema ``false``
        return "boolean schema is false"
    if keyword == "type":
        names = [value] if isinstance(value, str) else list(value)
        return f"must be {','.join(str(name) for name in names)}"
    if keyword == "const":
        return "must be equal to constant"
    if keyword == "enum":
        return "must be equal to one of the allowed values"
    if keyword in ("minimum", "maximum"):
        # Draft-04: ``exclusiveMinimum: true`` reports through ``minimum``.
        exclusive = schema.get("exclusiveMinimum" if keyword == "minimum" else "exclusiveMaximum")
        sign = (">" if keyword == "minimum" else "<") + ("" if exclusive is True else "=")
        return f"must be {sign} {js_number(value)}"
    if keyword in _WORDED:
        return _WORDED[keyword].format(js_number(value) if is_json_type("number", value) else value)
    if keyword in ("items", "additionalItems") and value is False:
        prefix = schema.get("prefixItems") or schema.get("items")
        return f"must NOT have more than {len(prefix) if isinstance(prefix, list) else 0} items"
    if keyword == "uniqueItems":
        return _duplicates(instance)
    if keyword in ("contains", "minContains"):
        return f"must contain at least {js_number(schema.get('minContains', 1))} valid item(s)"
    if keyword == "anyOf":
        return "must match a schema in anyOf"
    if keyword == "oneOf":
        return "must match exactly one schema in oneOf"
    if keyword == "not":
        return "must NOT be valid"
    return str(error.message)


_WORDED = {
    "exclusiveMinimum": "must be > {}",
    "exclusiveMaximum": "must be < {}",
    "multipleOf": "must be multiple of {}",
    "minLength": "must NOT have fewer than {} characters",
    "maxLength": "must NOT have more than {} characters",
    "pattern": 'must match pattern "{}"',
    "format": 'must match format "{}"',
    "minItems": "must NOT have fewer than {} items",
    "maxItems": "must NOT have more than {} items",
    "minProperties": "must NOT have fewer than {} properties",
    "maxProperties": "must NOT have more than {} properties",
    "maxContains": "must contain at most {} valid item(s)",
}


def _duplicates(items: Any) -> str:
    for later in range(len(items)):
        for earlier in range(later):
            if json_equal(items[earlier], items[later]):
                return (
                    f"must NOT have duplicate items (items ## {earlier} and {later} are identical)"
                )
    return "must NOT have duplicate items"


_compiled: OrderedDict[int, tuple[Any, CompiledSchema]] = OrderedDict()


def compile_schema(schema: Mapping[str, Any] | bool) -> CompiledSchema:
    """The compiled form of ``schema``, built on its first use and kept while it is in use.

    Kept by identity: a tool's schema is compiled once. Change a tool's parameters by giving
    it a new schema, not by editing the old one in place.
    """
    key = id(schema)
    hit = _compiled.get(key)
    if hit is not None and hit[0] is schema:
        _compiled.move_to_end(key)
        return hit[1]
    compiled = CompiledSchema(schema)
    _compiled[key] = (schema, compiled)  # holding the schema keeps its id from being reused
    while len(_compiled) > CACHE_SIZE:
        _compiled.popitem(last=False)
    return compiled
