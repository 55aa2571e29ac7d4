"""IR types → pydantic validators. Arguments, record values, state files and declared defaults are
all checked by the same pydantic schemas, so a constraint means one thing everywhere.

Patterns run on pydantic-core's Rust regex engine, which matches in linear time and refuses
backreferences and look-around.
"""

from __future__ import annotations

import ipaddress
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Annotated, Any, ForwardRef, Literal, Union, cast

# ``import pydantic`` alone loads none of its model machinery (pydantic imports its parts on
# first use): the check path imports this module for its constant and format helpers and needs
# no pydantic models, so every use below is ``pydantic.NAME``, resolved when a validator is built
import pydantic
from pydantic_core import (
    CoreSchema,
    InitErrorDetails,
    PydanticCustomError,
    SchemaError,
    SchemaValidator,
    ValidationError,
    core_schema,
)

from ..dsl import ir
from ..dsl.types import type_label
from .values import FMap, freeze, show

if TYPE_CHECKING:
    from pydantic import BaseModel, ConfigDict, RootModel, TypeAdapter

# ----------------------------------------------------------------------------------------- formats

_EMAIL = re.compile(
    r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$"
)
_DATETIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$"
)
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$")


_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _is_uuid(text: str, version: int | None = None) -> bool:
    if not _UUID.match(text):
        return False
    try:
        parsed = uuid.UUID(text)
    except ValueError:
        return False
    return version is None or parsed.version == version


def is_datetime(text: str) -> bool:
    if not _DATETIME.match(text):
        return False
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return True


def is_date(text: str) -> bool:
    if len(text) != 10:
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_ip(text: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(text).version == version
    except ValueError:
        return False


FORMAT_CHECKS: dict[str, Callable[[str], bool]] = {
    "uuid": _is_uuid,
    "uuid4": lambda s: _is_uuid(s, 4),
    "date-time": is_datetime,
    "date": is_date,
    "email": lambda s: len(s) <= 254 and bool(_EMAIL.match(s)),
    "ipv4": lambda s: _is_ip(s, 4),
    "ipv6": lambda s: _is_ip(s, 6),
    "uri": lambda s: bool(_URI.match(s)),
}

FORMAT_EXAMPLES = {
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "uuid4": "9b2f3c1e-4a5d-4e6f-8a7b-1c2d3e4f5a6b",
    "date-time": "2024-05-20T14:30:00.123Z",
    "date": "2024-05-20",
    "email": "ada@example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/path",
}


def _format_validator(name: str) -> Callable[[str], str]:
    check = FORMAT_CHECKS[name]

    def validate(value: str) -> str:
        if not check(value):
            raise PydanticCustomError(
                "format", "not a valid {format}", {"format": name, "example": FORMAT_EXAMPLES[name]}
            )
        return value

    return validate


# ------------------------------------------------------------------------------------- constants


@dataclass(frozen=True)
class Const:
    value: Any


class _Empty:
    """``{}`` before its context says whether it is a set or a map."""

    def __repr__(self) -> str:
        return "{}"


EMPTY = _Empty()


def constant_value(e: ir.Expr, contract: ir.Contract, depth: int = 0) -> Const | None:
    """The plain (JSON-like) value of a constant expression, or None when it is not constant."""
    if depth > 32:
        return None
    if isinstance(e, ir.ScalarLit):
        return Const(e.value)
    if isinstance(e, ir.Unary) and e.op == "-":
        inner = constant_value(e.operand, contract, depth + 1)
        if inner is not None and isinstance(inner.value, (int, float)):
            return Const(-inner.value)
        return None
    if isinstance(e, ir.Collection):
        items = [constant_value(i, contract, depth + 1) for i in e.items]
        if any(i is None for i in items):
            return None
        values = [i.value for i in items if i is not None]
        if e.type == "empty":
            return Const(EMPTY)
        return Const(values)
    if isinstance(e, ir.MapLit):
        out: dict[Any, Any] = {}
        for entry in e.entries:
            k = constant_value(entry.key, contract, depth + 1)
            v = constant_value(entry.value, contract, depth + 1)
            if k is None or v is None:
                return None
            try:
                out[k.value] = v.value
            except TypeError:
                return None
        return Const(out)
    if isinstance(e, ir.Name) and not e.state:
        for c in contract.consts:
            if c.name == e.name:
                return constant_value(c.value, contract, depth + 1)
        return None
    if isinstance(e, ir.Attr) and isinstance(e.obj, ir.Name):
        for t in contract.types:
            if t.name == e.obj.name and isinstance(t.type, ir.EnumType):
                if any(m.value == e.name for m in t.type.members):
                    return Const(e.name)
        return None
    if isinstance(e, ir.Call) and not e.args:
        for t in contract.types:
            if t.name == e.func and isinstance(t.type, ir.RecordType):
                fields: dict[str, Any] = {}
                for kw in e.kwargs:
                    v = constant_value(kw.value, contract, depth + 1)
                    if v is None:
                        return None
                    fields[kw.name] = v.value
                return Const(fields)
    return None


# ------------------------------------------------------------------------------------ validators


@dataclass(frozen=True)
class ArgProblem:
    """One argument that failed validation: where, which rule, what was given, what to do."""

    path: str
    rule: str
    message: str
    value: Any
    hint: str

    def text(self) -> str:
        return f"`{self.path}`: {self.message}"


_CONFIG: ConfigDict = {
    "extra": "forbid",
    "frozen": True,
    "strict": False,
    "arbitrary_types_allowed": True,
}
_OPEN_CONFIG: ConfigDict = {**_CONFIG, "extra": "allow"}


def model_values(model: BaseModel) -> dict[str, Any]:
    """A validated model's values under the contract's names (fields are stored under internal
    names and validated by alias, so that any contract name — ``_id``, ``model_config`` — works)."""
    return {
        field.alias or name: getattr(model, name)
        for name, field in type(model).model_fields.items()
    }


def _root_value(model: RootModel[Any]) -> Any:
    return model.root


def _record_to_map(model: BaseModel) -> FMap:
    values = model_values(model)
    extra = model.__pydantic_extra__
    if extra:  # an open record keeps the fields it does not declare
        values.update((k, freeze(v)) for k, v in extra.items() if k not in values)
    return FMap(values)


def _one_of(label: str, tagged: bool) -> Callable[[Any, Any], Any]:
    """An untagged union's failure as one problem: "must be one of str | int | null", not one
    line per option (and none for ``null``). Problems of an option the value has the shape of
    (a field of a record, an item of a list, a bound of a number) are kept instead: they say
    what to fix. ``tagged``: pydantic puts the option first in an error's location."""

    def validate(value: Any, handler: Any) -> Any:
        try:
            return handler(value)
        except ValidationError as exc:
            kept: list[InitErrorDetails] = []
            for e in exc.errors(include_url=False):
                loc = e["loc"][1:] if tagged else e["loc"]
                if not loc and _mismatch(e["type"]):
                    continue
                ctx = {**(e.get("ctx") or {}), "message": e["msg"]}
                kept.append(
                    {
                        "type": PydanticCustomError(e["type"], "{message}", ctx),
                        "loc": loc,
                        "input": e["input"],
                    }
                )
            if kept:
                raise ValidationError.from_exception_data(exc.title, kept) from None
            raise PydanticCustomError(
                "union_mismatch", "must be one of {options}", {"options": label}
            ) from None

    return validate


def _mismatch(kind: str) -> bool:
    """Whether an error says the value is of another type (rather than how it falls short)."""
    return kind.endswith("_type") or kind in (
        "literal_error",
        "none_required",
        "union_mismatch",
        "union_tag_invalid",
        "union_tag_not_found",
        "is_instance_of",
    )


def _aliased_model(
    model_name: str,
    fields: list[tuple[str, Any, Any]],
    tag: str | None = None,
    is_open: bool = False,
) -> type[BaseModel]:
    """A model whose fields are ``(contract name, annotation, default or ...)``; an open one
    (``record { …, ... }``) keeps the fields it does not declare."""
    spec: dict[str, Any] = {}
    for i, (name, annotation, default) in enumerate(fields):
        if i == 0 and tag is not None:
            # pydantic finds a discriminator by field name, so the tag keeps its own
            spec[name] = (annotation, default)
        else:
            spec[f"f{i}"] = (annotation, pydantic.Field(default, alias=name))
    config = _OPEN_CONFIG if is_open else _CONFIG
    return pydantic.create_model(_model_name(model_name), __config__=config, **spec)


class ValidatorBuilder:
    """Builds (and caches) pydantic validators for the types of one contract."""

    def __init__(self, contract: ir.Contract) -> None:
        self.contract = contract
        self.decls = {t.name: t for t in contract.types}
        self.namespace: dict[str, Any] = {}
        self._building: set[str] = set()
        self._recursive: set[str] = set()
        self._in_model = 0  # how many record models are being built around the current type
        self._models: list[type[BaseModel]] = []
        self._counter = 0
        self._adapters: dict[ir.TypeExpr, TypeAdapter[Any]] = {}

    # ---- annotation for a type expression
    def annotation(self, t: ir.TypeExpr, name: str | None = None) -> Any:
        base = self._base(t, name)
        return self._constrained(base, t)

    def _base(self, t: ir.TypeExpr, name: str | None) -> Any:
        if isinstance(t, ir.NamedType):
            simple = {
                "bool": pydantic.StrictBool,
                "int": Annotated[int, pydantic.Strict()],
                "float": Annotated[float, pydantic.Strict()],
                "str": Annotated[str, pydantic.Strict()],
                "null": type(None),
                # lang-types: `number` is int | float (not bool), `any` every JSON value
                "number": Annotated[Any, pydantic.AfterValidator(number_value)],
                "any": Annotated[Any, pydantic.AfterValidator(json_value)],
            }.get(t.name)
            if simple is not None:
                return simple
            return self.named(t.name)
        if isinstance(t, ir.NullType):
            return type(None)
        if isinstance(t, ir.GenericType):
            args = [self.annotation(a) for a in t.args]
            if t.name == "list":
                return tuple[args[0], ...]  # type: ignore[valid-type]
            if t.name == "set":
                return frozenset[args[0]]  # type: ignore[valid-type]
            if t.name == "map":
                return Annotated[dict[args[0], args[1]], pydantic.AfterValidator(FMap)]  # type: ignore[valid-type]
            return tuple[tuple(args)]  # type: ignore[misc]
        if isinstance(t, ir.EnumType):
            return Literal[tuple(m.value for m in t.members)]
        if isinstance(t, ir.RecordType):
            return Annotated[self.record_model(t, name), pydantic.AfterValidator(_record_to_map)]
        if isinstance(t, ir.TaggedUnionType):
            variants = []
            for v in t.variants:
                inner = v.type
                while isinstance(inner, ir.NamedType) and inner.name in self.decls:
                    inner = self.decls[inner.name].type
                if not isinstance(inner, ir.RecordType):
                    continue
                model = self.record_model(
                    inner, f"{name or 'Union'}_{v.tag}", tag=(t.tag_field, v.tag)
                )
                variants.append(Annotated[model, pydantic.AfterValidator(_record_to_map), v.tag])
            if not variants:
                return Any
            union = Union[tuple(variants)]  # type: ignore[valid-type]
            return Annotated[union, pydantic.Field(discriminator=t.tag_field)]
        options = tuple(self.annotation(o) for o in t.options)
        label = " | ".join(type_label(o) for o in t.options)
        tagged = sum(o is not type(None) for o in options) > 1
        return Annotated[Union[options], pydantic.WrapValidator(_one_of(label, tagged))]

    def _constrained(self, base: Any, t: ir.TypeExpr) -> Any:
        if not t.constraints:
            return base
        kwargs: dict[str, Any] = {}
        extra: list[Any] = []
        for c in t.constraints:
            if c.key == "pattern":
                extra.append(pydantic.StringConstraints(pattern=str(c.value)))
            elif c.key == "format" and c.value in FORMAT_CHECKS:
                extra.append(pydantic.AfterValidator(_format_validator(str(c.value))))
            elif c.key == "min":
                kwargs["ge"] = c.value
            elif c.key == "max":
                kwargs["le"] = c.value
            elif c.key in ("min_length", "min_items"):
                kwargs["min_length"] = c.value
            elif c.key in ("max_length", "max_items"):
                kwargs["max_length"] = c.value
        if kwargs:
            extra.insert(0, pydantic.Field(**kwargs))
        annotated = base
        for meta in extra:
            annotated = Annotated[annotated, meta]
        return annotated

    def named(self, name: str) -> Any:
        if name in self.namespace:
            return self.namespace[name]
        decl = self.decls.get(name)
        if decl is None:
            return Any
        self._build_alias_chain(name)
        if name in self.namespace:
            return self.namespace[name]
        if name in self._building:
            self._recursive.add(name)
            return ForwardRef(name)
        self._building.add(name)
        ann = self.annotation(decl.type, name)
        self._building.discard(name)
        if name in self._recursive and not isinstance(
            decl.type, (ir.RecordType, ir.TaggedUnionType)
        ):
            # pydantic resolves a recursive type through a model only: a recursive alias that is
            # not a record itself (type Json = str | null | list[Json]) gets a root model
            root = pydantic.create_model(_model_name(name), __base__=pydantic.RootModel[ann])  # type: ignore[valid-type]
            self._models.append(root)
            ann = Annotated[root, pydantic.AfterValidator(_root_value)]
        self.namespace[name] = ann
        if name in self._recursive:
            for model in self._models:
                if not model.__pydantic_complete__:
                    model.model_rebuild(_types_namespace=self.namespace, raise_errors=False)
        return ann

    def _build_alias_chain(self, name: str) -> None:
        """``type A0 = A1``, ``type A1 = A2`` …: build the links from the far end, so that a
        chain of a thousand aliases is never a thousand calls deep."""
        chain: list[str] = []
        current = name
        while (
            current not in self.namespace
            and current not in self._building
            and current not in chain
            and current in self.decls
            and isinstance(self.decls[current].type, ir.NamedType)
        ):
            chain.append(current)
            current = self.decls[current].type.name  # type: ignore[union-attr]
        for link in reversed(chain[1:]):
            self.named(link)

    def record_model(
        self, t: ir.RecordType, name: str | None, tag: tuple[str, str] | None = None
    ) -> type[BaseModel]:
        self._counter += 1
        fields: list[tuple[str, Any, Any]] = []
        if tag is not None:
            fields.append((tag[0], Literal[tag[1]], ...))
        self._in_model += 1
        try:
            for f in t.fields:
                fields.append(self._field(f.name, f.type, f.default, f.optional))
        finally:
            self._in_model -= 1
        model = _aliased_model(
            name or f"Record{self._counter}", fields, None if tag is None else tag[0], t.open
        )
        self._models.append(model)
        return model

    def _field(
        self, name: str, t: ir.TypeExpr, default: ir.Expr | None, optional: bool
    ) -> tuple[str, Any, Any]:
        ann = self.annotation(t)
        if default is not None:
            const = constant_value(default, self.contract)
            return (name, ann, freeze(const.value) if const else None)
        if optional:
            return (name, Union[ann, None], None)
        return (name, ann, ...)

    def adapter_for(self, t: ir.TypeExpr) -> TypeAdapter[Any]:
        """A validator for a type expression, built once per builder."""
        adapter = self._adapters.get(t)
        if adapter is None:
            adapter = self._adapters[t] = pydantic.TypeAdapter(self.annotation(t))
        return adapter

    def args_model(self, tool: ir.Tool, declared: bool = False) -> type[BaseModel]:
        """The pydantic model of a tool's arguments (unknown names forbidden): of the types the
        tool accepts, or (``declared``) of the types it declares to agents."""
        fields = [
            self._field(p.name, p.type if declared else p.accepted_type, p.default, p.optional)
            for p in tool.params
        ]
        return _aliased_model(f"{tool.name}_{'declared' if declared else 'args'}", fields)

    def conformance_problem(self, value: Any, t: ir.TypeExpr) -> str | None:
        """Why a plain value does not satisfy a type (with its constraints), or None."""
        if value is EMPTY:
            if self.conformance_problem({}, t) is None:
                return None
            value = []
        try:
            plain = self.plain_schema(t)
            if plain is not None:  # no pydantic model machinery needed (a cold `check`)
                SchemaValidator(plain).validate_python(value)
            else:
                self.adapter_for(t).validate_python(value)
        except ValidationError as exc:
            problems = problems_from(exc, "value")
            return problems[0].message if problems else str(exc)
        except (SchemaError, TypeError, ValueError):
            return None
        return None

    # ---- pydantic-core schemas of plain types, without pydantic (what a cold `check` needs)

    def plain_schema(self, t: ir.TypeExpr, depth: int = 0) -> CoreSchema | None:
        """The pydantic-core schema that pydantic builds for ``t`` (``adapter_for(t)``), built
        here directly when ``t`` is made only of ``bool``, ``int``, ``float``, ``str``,
        ``null``, enums, lists, sets, tuples and maps, with their simple constraints; None for
        anything else (records, unions, formats, ``number``, ``any``, recursion …), which takes
        the pydantic path. ``tests/test_speed.py`` checks that both schemas are equal.
        Validating a constant with it needs no pydantic model machinery."""
        if depth > 20:
            return None
        keys = [c.key for c in t.constraints]
        if len(set(keys)) != len(keys):
            return None
        limits = {_PLAIN_LIMITS[c.key]: c.value for c in t.constraints if c.key in _PLAIN_LIMITS}
        if isinstance(t, ir.NamedType):
            if t.name in _PLAIN_SCALARS:
                allowed = _PLAIN_SCALARS[t.name]
                if not set(keys) <= allowed:
                    return None
                schema: dict[str, Any] = {"type": t.name, "strict": True}
                if t.name == "null":
                    schema = {"type": "none"}
                schema.update(limits)
                if "pattern" in keys:
                    schema["pattern"] = str(
                        next(c.value for c in t.constraints if c.key == "pattern")
                    )
                return cast(CoreSchema, schema)
            decl = self.decls.get(t.name)
            if decl is None or t.constraints or t.name in _PRIMITIVE_NAMES:
                return None
            return self.plain_schema(decl.type, depth + 1)
        if isinstance(t, ir.NullType):
            return None if t.constraints else core_schema.none_schema()
        if isinstance(t, ir.EnumType):
            if t.constraints:
                return None
            return core_schema.literal_schema(list(dict.fromkeys(m.value for m in t.members)))
        if isinstance(t, ir.GenericType):
            args = [self.plain_schema(a, depth + 1) for a in t.args]
            if any(a is None for a in args):
                return None
            items = cast(list[CoreSchema], args)
            if t.name in ("list", "set") and len(items) == 1:
                if not set(keys) <= {"min_items", "max_items", "min_length", "max_length"}:
                    return None
                if t.name == "list":
                    out: dict[str, Any] = {
                        "type": "tuple",
                        "items_schema": items,
                        "variadic_item_index": 0,
                    }
                else:
                    out = {"type": "frozenset", "items_schema": items[0]}
                out.update(limits)
                return cast(CoreSchema, out)
            if t.constraints:
                return None
            if t.name == "tuple" and items:
                return core_schema.tuple_schema(items)
            if t.name == "map" and len(items) == 2:
                return core_schema.no_info_after_validator_function(
                    FMap, core_schema.dict_schema(items[0], items[1])
                )
        return None


_PLAIN_SCALARS: dict[str, set[str]] = {
    "bool": set(),
    "null": set(),
    "int": {"min", "max"},
    "float": {"min", "max"},
    "str": {"pattern", "min_length", "max_length"},
}
_PRIMITIVE_NAMES = frozenset({"bool", "int", "float", "str", "null", "number", "any"})
_PLAIN_LIMITS = {
    "min": "ge",
    "max": "le",
    "min_length": "min_length",
    "max_length": "max_length",
    "min_items": "min_length",
    "max_items": "max_length",
}


def number_value(value: Any) -> Any:
    """A value of type ``number``: an int or a float, as it is (not a bool, not text)."""
    if type(value) is int or type(value) is float:
        return value
    raise PydanticCustomError("float_type", "Input should be a number")


def json_value(value: Any) -> Any:
    """A value of type ``any``: JSON data (null, bool, numbers, strings, lists, maps with string
    keys), frozen into runtime values; anything else is refused."""
    stack = [value]
    seen = 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > 1_000_000:
            raise PydanticCustomError("json", "a JSON value of more than 1,000,000 items")
        if v is None or isinstance(v, (bool, int, float, str)):
            continue
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            for k, item in v.items():
                if not isinstance(k, str):
                    raise PydanticCustomError(
                        "json", "a map in a JSON value has string keys, got {key}", {"key": repr(k)}
                    )
                stack.append(item)
        else:
            raise PydanticCustomError(
                "json", "not a JSON value: {kind}", {"kind": type(v).__name__}
            )
    try:
        return freeze(value)
    except ValueError as exc:
        raise PydanticCustomError("json", "{problem}", {"problem": str(exc)}) from None


def _model_name(name: str) -> str:
    """A model's class name. It ends in `` model``, which no contract name can: pydantic resolves
    a forward reference to the model's own name first, so a model named ``Q`` would take the
    reference to the type ``Q`` (and skip what turns a record into a map)."""
    return re.sub(r"\W", "_", name) + " model"


# --------------------------------------------------------------------------- validation errors


def problems_from(exc: ValidationError, root: str = "") -> list[ArgProblem]:
    """Pydantic's errors as contract-level problems naming the field path, rule, value and fix."""
    out: list[ArgProblem] = []
    for err in exc.errors(include_url=False):
        loc = [str(part) for part in err["loc"] if not _is_internal_loc(part)]
        path = ".".join([root, *loc]) if root else ".".join(loc) or "value"
        kind = err["type"]
        ctx = err.get("ctx") or {}
        given = None if kind == "missing" else err.get("input")
        message, hint = _explain(kind, ctx, given, err["msg"], loc[-1] if loc else root)
        if kind == "extra_forbidden" and not (root == "args" and len(loc) == 1):
            message, hint = "is not a declared field", "remove it, or check the field names"
        out.append(ArgProblem(path=path, rule=kind, message=message, value=given, hint=hint))
    return out


def _is_internal_loc(part: Any) -> bool:
    text = str(part)
    return (
        text.startswith(("function-after[", "tagged-union[", "lax-or-strict["))
        or text
        in (
            "str",
            "int",
            "float",
            "bool",
            "none",
            "tuple[str, ...]",
        )
        or "[" in text
        and "]" in text
        and not text.isdigit()
        and "," in text
    )


def _explain(
    kind: str, ctx: dict[str, Any], given: Any, default: str, field: str
) -> tuple[str, str]:
    got = f" (got {show(freeze(given))})" if kind != "missing" else ""
    if kind == "missing":
        return "is required but missing", f"add `{field}` to the arguments"
    if kind == "extra_forbidden":
        return (
            "is not a parameter",
            "remove it, or check the spelling against the tool's parameters",
        )
    if kind == "string_pattern_mismatch":
        pattern = ctx.get("pattern", "")
        return (
            f'does not match the pattern r"{pattern}"{got}',
            f'give a value matching r"{pattern}"',
        )
    if kind == "format":
        fmt = ctx.get("format", "")
        return (f"is not a valid {fmt}{got}", f"for example {FORMAT_EXAMPLES.get(str(fmt), '')}")
    if kind in ("string_too_long", "too_long"):
        limit = ctx.get("max_length")
        unit = "characters" if kind.startswith("string") else "items"
        return (
            f"is too long: at most {limit} {unit}{got}",
            f"shorten it to at most {limit} {unit}",
        )
    if kind in ("string_too_short", "too_short"):
        limit = ctx.get("min_length")
        unit = "characters" if kind.startswith("string") else "items"
        return (f"is too short: at least {limit} {unit}{got}", f"give at least {limit} {unit}")
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bound = ctx.get("ge", ctx.get("le", ctx.get("gt", ctx.get("lt"))))
        word = {
            "greater_than_equal": "at least",
            "less_than_equal": "at most",
            "greater_than": "more than",
            "less_than": "less than",
        }[kind]
        return (f"must be {word} {bound}{got}", f"give a value {word} {bound}")
    if kind == "union_mismatch":
        options = ctx.get("options", "")
        return (f"must be one of {options}{got}", f"give a value of one of the types {options}")
    if kind == "literal_error":
        expected = ctx.get("expected", "")
        return (f"must be one of {expected}{got}", f"use one of {expected}")
    if kind == "union_tag_invalid":
        return (
            f"has an unknown tag{got}",
            f"the tag `{ctx.get('discriminator', '')}` must be one of "
            f"{ctx.get('expected_tags', '')}",
        )
    if kind == "union_tag_not_found":
        return ("has no tag field", f"add the field {ctx.get('discriminator', '')}")
    noun = kind.replace("_type", "").replace("_parsing", "").replace("_", " ")
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return (f"must be {_article(noun)}{got}", f"give {_article(noun)}")
    return (default[0].lower() + default[1:] + got, "fix the value to fit the parameter's type")


def _article(noun: str) -> str:
    nouns = {
        "string": "a string",
        "int": "an integer",
        "float": "a number",
        "bool": "true or false",
        "dict": "an object",
        "list": "a list",
        "tuple": "a list",
        "set": "a list of distinct items",
        "frozen set": "a list of distinct items",
        "model": "an object",
        "none required": "null",
    }
    return nouns.get(noun, noun)
