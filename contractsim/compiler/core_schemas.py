"""pydantic-core schemas of plain types, built without pydantic's model machinery.

For the types this module knows — ``bool``, ``int``, ``float``, ``str``, ``null``, enums, and
lists, sets, tuples and maps of them, with the constraints that apply to them (``pattern``,
``min``, ``max``, ``min_length``/``max_length``, ``min_items``/``max_items``), through aliases —
it builds the very schema that :class:`~.validators.ValidatorBuilder` makes pydantic generate,
so a value gets the same errors either way (``tests/test_simstart.py`` compares the two schemas
for every type of the examples and golden files). Anything else (records, unions, ``number``,
``any``, formats, recursive aliases) is None: the caller falls back to the validators.

Importing pydantic's model machinery and generating a schema costs a process about a tenth of a
second; the checker needs a validator only to test a constant against a constrained type
(E0404), which for the types above pydantic-core does alone. Patterns run on pydantic-core's Rust
regex engine either way (linear time).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, cast

from pydantic_core import CoreSchema, SchemaValidator

from ..dsl import ir
from .constants import constant_value
from .values import FMap, freeze

_SCALARS = {"bool", "int", "float", "str"}
_NUMBER_KEYS = {"min": "ge", "max": "le"}
_LENGTH_KEYS = {
    "min_length": "min_length",
    "max_length": "max_length",
    "min_items": "min_length",
    "max_items": "max_length",
}
_MAX_DEPTH = 16


def plain_schema(t: ir.TypeExpr, decls: Mapping[str, ir.TypeDecl]) -> CoreSchema | None:
    """The pydantic-core schema of ``t`` when it is a plain type (see the module), else None."""
    return cast("CoreSchema | None", _schema(t, decls, 0))


def plain_validator(t: ir.TypeExpr, decls: Mapping[str, ir.TypeDecl]) -> SchemaValidator | None:
    """A validator of ``t`` built by pydantic-core alone, or None (see :func:`plain_schema`)."""
    schema = plain_schema(t, decls)
    return None if schema is None else SchemaValidator(schema)


def _schema(t: ir.TypeExpr, decls: Mapping[str, ir.TypeDecl], depth: int) -> dict[str, Any] | None:
    if depth > _MAX_DEPTH:
        return None  # deep (or recursive) aliases: left to the validators
    base: dict[str, Any] | None
    if isinstance(t, ir.NamedType):
        if t.name in _SCALARS:
            base = {"type": t.name, "strict": True}
        elif t.name == "null":
            base = {"type": "none"}
        elif t.name in decls:
            inner = _schema(decls[t.name].type, decls, depth + 1)
            if inner is None:
                return None
            if not t.constraints:
                return inner
            base = dict(inner)
            if "metadata" in base or base["type"] in ("literal", "none", "bool"):
                return None  # constraints on a constrained alias: pydantic nests them
        else:
            return None
    elif isinstance(t, ir.NullType):
        base = {"type": "none"}
    elif isinstance(t, ir.EnumType):
        base = {"type": "literal", "expected": [m.value for m in t.members]}
    elif isinstance(t, ir.GenericType):
        args = [_schema(a, decls, depth + 1) for a in t.args]
        if any(a is None for a in args):
            return None
        if t.name == "list" and len(args) == 1:
            base = {"type": "tuple", "items_schema": args, "variadic_item_index": 0}
        elif t.name == "set" and len(args) == 1:
            base = {"type": "frozenset", "items_schema": args[0]}
        elif t.name == "tuple" and args:
            base = {"type": "tuple", "items_schema": args}
        elif t.name == "map" and len(args) == 2 and not t.constraints:
            dict_schema: dict[str, Any] = {
                "type": "dict",
                "keys_schema": args[0],
                "values_schema": args[1],
            }
            return {
                "type": "function-after",
                "function": {"type": "no-info", "function": FMap},
                "schema": dict_schema,
            }
        else:
            return None
    else:
        return None
    return _constrained(base, t.constraints)


def _constrained(
    base: dict[str, Any], constraints: tuple[ir.Constraint, ...]
) -> dict[str, Any] | None:
    """``base`` with ``constraints`` applied where pydantic applies them (in the schema itself),
    or None for a combination this module does not build."""
    if not constraints:
        return base
    kind = base["type"]
    out = dict(base)
    pattern: str | None = None
    for c in constraints:
        value = c.value
        if c.key == "pattern" and kind == "str" and isinstance(value, str) and pattern is None:
            pattern = value
        elif c.key in _NUMBER_KEYS and kind in ("int", "float") and _number(value):
            out[_NUMBER_KEYS[c.key]] = value
        elif (
            c.key in _LENGTH_KEYS
            and kind in ("str", "tuple", "frozenset")
            and type(value) is int
            and (kind != "tuple" or "variadic_item_index" in base)
        ):
            out[_LENGTH_KEYS[c.key]] = value
        else:
            return None  # a format, a description, a constraint of another kind of type
    if len(out) > len(base):
        out["metadata"] = {}  # what pydantic's Field(ge=…, max_length=…) leaves
    if pattern is not None:
        out["pattern"] = pattern
    return out


def _number(value: Any) -> bool:
    return type(value) is int or type(value) is float


# ------------------------------------------------------------------------------ argument models


class PlainField:
    """What the simulator reads of a pydantic ``FieldInfo``: the contract's name and default."""

    __slots__ = ("alias", "default")

    def __init__(self, alias: str, default: Any) -> None:
        self.alias = alias
        self.default = default

    def get_default(self, call_default_factory: bool = False) -> Any:
        return self.default


class PlainArgsModel:
    """The arguments of a tool whose parameters are all of plain types, validated by
    pydantic-core alone against the schema pydantic would generate for the tool's argument model
    (:meth:`~.validators.ValidatorBuilder.args_model`): same fields (``f0``, ``f1`` … validated by
    the contract's names), same errors. A subclass per tool; its instances are the validated
    arguments, read with :func:`model_values`."""

    model_fields: ClassVar[dict[str, PlainField]] = {}
    core_schema: ClassVar[dict[str, Any]]
    validator: ClassVar[SchemaValidator]
    values_validator: ClassVar[SchemaValidator]
    """The same fields validated straight into a dict under the contract's names (a typed-dict
    schema of the very field schemas): what :func:`model_values` reads of :attr:`validator`'s
    model, without the model, for replay's hot path (:meth:`validate_values`)."""

    @classmethod
    def model_validate(cls, obj: Any) -> PlainArgsModel:
        """The validated arguments; raises ``ValidationError`` as the pydantic model does."""
        model: PlainArgsModel = cls.validator.validate_python(obj)
        return model

    @classmethod
    def validate_values(cls, obj: Any) -> dict[str, Any]:
        """``model_values(cls.model_validate(obj))``, about four times faster; raises
        ``ValidationError`` for the same inputs (``tests/test_replay_lean.py`` compares them)."""
        values: dict[str, Any] = cls.values_validator.validate_python(obj)
        return values


def plain_args_model(
    tool: ir.Tool, contract: ir.Contract, declared: bool = False
) -> type[PlainArgsModel] | None:
    """The argument model of ``tool`` (of the types it accepts, or ``declared``) built by
    pydantic-core alone, or None when some parameter's type is not plain."""
    decls = {t.name: t for t in contract.types}
    title = re.sub(r"\W", "_", f"{tool.name}_{'declared' if declared else 'args'}") + " model"
    fields: dict[str, Any] = {}
    infos: dict[str, PlainField] = {}
    dict_fields: dict[str, Any] = {}
    for i, p in enumerate(tool.params):
        schema = _schema(p.type if declared else p.accepted_type, decls, 0)
        if schema is None:
            return None
        if p.default is not None or not p.optional:
            schema.pop("metadata", None)  # as pydantic leaves a field's schema (inert anyway)
        default: Any = _REQUIRED
        if p.default is not None:
            const = constant_value(p.default, contract)
            default = freeze(const.value) if const else None
        elif p.optional:
            schema, default = {"type": "nullable", "schema": schema}, None
        if default is not _REQUIRED:
            schema = {"type": "default", "schema": schema, "default": default}
        fields[f"f{i}"] = {
            "type": "model-field",
            "schema": schema,
            "validation_alias": p.name,
            "serialization_alias": p.name,
            "metadata": {},
        }
        infos[f"f{i}"] = PlainField(p.name, None if default is _REQUIRED else default)
        dict_fields[p.name] = {
            "type": "typed-dict-field",
            "schema": schema,
            "required": default is _REQUIRED,
        }
    model = cast("type[PlainArgsModel]", type(title, (PlainArgsModel,), {"model_fields": infos}))
    body = model_schema_body(title, fields)
    model.core_schema = {"type": "model", "cls": model, **body}
    model.validator = SchemaValidator(cast("CoreSchema", model.core_schema))
    values_schema = {"type": "typed-dict", "fields": dict_fields, "extra_behavior": "forbid"}
    model.values_validator = SchemaValidator(
        cast("CoreSchema", values_schema), cast("Any", body["config"])
    )
    return model


_REQUIRED = object()


def model_schema_body(title: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The parts of an argument model's schema besides its class (compared with pydantic's)."""
    return {
        "schema": {
            "type": "model-fields",
            "fields": fields,
            "model_name": title,
            "computed_fields": [],
        },
        "config": {"extra_fields_behavior": "forbid", "strict": False, "title": title},
        "custom_init": False,
        "root_model": False,
    }


def model_values(model: Any) -> dict[str, Any]:
    """A validated model's values under the contract's names (fields are stored under internal
    names and validated by alias, so that any contract name — ``_id``, ``model_config`` — works).
    For pydantic models and :class:`PlainArgsModel` alike."""
    return {
        field.alias or name: getattr(model, name)
        for name, field in type(model).model_fields.items()
    }
