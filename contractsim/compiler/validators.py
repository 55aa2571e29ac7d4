"""IR types → pydantic validators. Arguments, record values, state files and declared defaults are
all checked by the same pydantic schemas, so a constraint means one thing everywhere.

Patterns run on pydantic-core's Rust regex engine, which matches in linear time and refuses
backreferences and look-around.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, ForwardRef, Literal, Union

# ``import pydantic`` alone loads none of its model machinery (pydantic imports its parts on
# first use): the check path imports this module for its constant and format helpers and needs
# no pydantic models, so every use below is ``pydantic.NAME``, resolved when a validator is built
import pydantic
from pydantic_core import (
    InitErrorDetails,
    PydanticCustomError,
    SchemaError,
    ValidationError,
)

from ..dsl import ir
from ..dsl.types import type_label
from .constants import EMPTY as EMPTY
from .constants import Const as Const
from .constants import constant_value as constant_value
from .core_schemas import model_values as model_values
from .formats import FORMAT_CHECKS as FORMAT_CHECKS
from .formats import FORMAT_EXAMPLES as FORMAT_EXAMPLES
from .formats import is_date as is_date
from .formats import is_datetime as is_datetime
from .problems import ArgProblem as ArgProblem
from .problems import problems_from as problems_from
from .problems import value_problem
from .values import FMap, freeze

if TYPE_CHECKING:
    from pydantic import BaseModel, ConfigDict, RootModel, TypeAdapter


def _format_validator(name: str) -> Callable[[str], str]:
    check = FORMAT_CHECKS[name]

    def validate(value: str) -> str:
        if not check(value):
            raise PydanticCustomError(
                "format", "not a valid {format}", {"format": name, "example": FORMAT_EXAMPLES[name]}
            )
        return value

    return validate


# ------------------------------------------------------------------------------------ validators


_CONFIG: ConfigDict = {
    "extra": "forbid",
    "frozen": True,
    "strict": False,
    "arbitrary_types_allowed": True,
}
_OPEN_CONFIG: ConfigDict = {**_CONFIG, "extra": "allow"}


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
        try:
            adapter = self.adapter_for(t)
        except (SchemaError, TypeError, ValueError):
            return None
        return value_problem(adapter.validate_python, value)


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
