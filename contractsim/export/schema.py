"""IR types → JSON Schema 2020-12: the one translation every export target starts from.

The schema accepts exactly what the simulator's argument validator accepts, with these documented
differences (see docs/export.md): ``set[T]`` adds ``uniqueItems`` (the validator silently drops
duplicates), map keys are JSON object keys (strings), and ``format`` means contractsim's own
format checks.

Untagged unions ``A | B`` become ``anyOf``: the validator accepts a value that matches any option
(for the usual disjoint options, ``anyOf`` and ``oneOf`` accept the same values). Tagged unions
become ``oneOf`` of the variant records, each with its tag as a ``const`` property.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..compiler.constants import EMPTY, constant_value
from ..dsl import ir
from ..dsl.pretty import literal_text

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_PRIMITIVES: dict[str, dict[str, Any]] = {
    "bool": {"type": "boolean"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "str": {"type": "string"},
    "null": {"type": "null"},
    "number": {"type": "number"},  # int | float (JSON Schema's number: every int is one)
    "any": {},  # every JSON value
}

# A version-4 UUID in its canonical hyphenated form (JSON Schema has no "uuid4" format).
UUID4_PATTERN = (
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$"
)


def jsonable(value: Any) -> Any:
    """A constant value as plain JSON data (tuples and sets as lists, map keys as strings)."""
    if value is EMPTY:
        return {}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [jsonable(v) for v in value]
        if isinstance(value, (set, frozenset)):
            items.sort(key=repr)
        return items
    return value


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or null: ``"type": [T, "null"]`` for a plain typed schema, else ``anyOf``."""
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return schema
    if isinstance(kind, str) and "$ref" not in schema and "anyOf" not in schema:
        out = dict(schema)
        out["type"] = [kind, "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        if "const" in out:
            out["enum"] = [out.pop("const"), None]
        return out
    return {"anyOf": [schema, {"type": "null"}]}


class SchemaTranslator:
    """Translates the type expressions of one contract to JSON Schema.

    Named types become ``{"$ref": ref_prefix + NAME}``; :meth:`definitions` then holds the schema
    of every named type referenced so far (transitively), for ``$defs`` or
    ``components/schemas``. Recursive types need nothing more than the ``$ref``.
    """

    def __init__(self, contract: ir.Contract, ref_prefix: str = "#/$defs/") -> None:
        self.contract = contract
        self.decls = {t.name: t for t in contract.types}
        self.ref_prefix = ref_prefix
        self.used: set[str] = set()

    # ---------------------------------------------------------------- helpers
    def resolve(self, t: ir.TypeExpr) -> ir.TypeExpr:
        """Follow declared names to the type they stand for (primitives stay named)."""
        seen: set[str] = set()
        while isinstance(t, ir.NamedType) and t.name in self.decls and t.name not in seen:
            seen.add(t.name)
            t = self.decls[t.name].type
        return t

    def default_value(self, default: ir.Expr, t: ir.TypeExpr) -> tuple[bool, Any]:
        """The JSON value of a declared default, as (known, value)."""
        const = constant_value(default, self.contract)
        if const is None:
            return False, None
        if const.value is EMPTY:
            resolved = self.resolve(t)
            is_map = isinstance(resolved, ir.GenericType) and resolved.name == "map"
            return True, {} if is_map else []
        return True, jsonable(const.value)

    # ---------------------------------------------------------------- types
    def schema(self, t: ir.TypeExpr) -> dict[str, Any]:
        """The JSON Schema of a type expression, with its constraints."""
        out = self._base(t)
        self._constrain(out, t)
        return out

    def _base(self, t: ir.TypeExpr) -> dict[str, Any]:
        if isinstance(t, ir.NamedType):
            if t.name in _PRIMITIVES:
                return dict(_PRIMITIVES[t.name])
            if t.name in self.decls:
                self.used.add(t.name)
                return {"$ref": self.ref_prefix + t.name}
            return {}
        if isinstance(t, ir.NullType):
            return {"type": "null"}
        if isinstance(t, ir.EnumType):
            return {"type": "string", "enum": [m.value for m in t.members]}
        if isinstance(t, ir.GenericType):
            return self._generic(t)
        if isinstance(t, ir.RecordType):
            return self.record(t)
        if isinstance(t, ir.TaggedUnionType):
            variants = []
            for v in t.variants:
                inner = self.resolve(v.type)
                if isinstance(inner, ir.RecordType):
                    variants.append(self.record(inner, tag=(t.tag_field, v.tag)))
            return {"oneOf": variants}
        return {"anyOf": [self.schema(o) for o in t.options]}

    def _generic(self, t: ir.GenericType) -> dict[str, Any]:
        args = [self.schema(a) for a in t.args]
        if t.name == "list":
            return {"type": "array", "items": args[0]}
        if t.name == "set":
            return {"type": "array", "items": args[0], "uniqueItems": True}
        if t.name == "map":
            out: dict[str, Any] = {"type": "object"}
            key = self.resolve(t.args[0])
            stringy = isinstance(key, ir.EnumType) or (
                isinstance(key, ir.NamedType) and key.name == "str"
            )
            if stringy:
                if args[0] != {"type": "string"}:
                    out["propertyNames"] = args[0]
            else:
                out["x-contract-key-type"] = type_label(t.args[0])
            out["additionalProperties"] = args[1]
            return out
        n = len(args)
        return {"type": "array", "prefixItems": args, "items": False, "minItems": n, "maxItems": n}

    def record(self, t: ir.RecordType, tag: tuple[str, str] | None = None) -> dict[str, Any]:
        """A record as a closed object (an open record, ``record { …, ... }``, with
        ``additionalProperties: true``): required fields, optional fields (absent or null) and
        fields with defaults; with ``tag``, a tagged-union variant whose tag is a ``const``."""
        props: dict[str, Any] = {}
        required: list[str] = []
        if tag is not None:
            props[tag[0]] = {"const": tag[1]}
            required.append(tag[0])
        out = self._closed_object(t.fields, props, required)
        if t.open:
            out["additionalProperties"] = True
        return out

    def member(
        self, t: ir.TypeExpr, optional: bool, default: ir.Expr | None, description: str | None
    ) -> dict[str, Any]:
        """The schema of a record field or a parameter (optional ones also accept null)."""
        schema = self.schema(t)
        if optional and default is None:
            schema = nullable(schema)
        if description:
            schema = {**schema, "description": description}
        if default is not None:
            known, value = self.default_value(default, t)
            if known:
                schema = {**schema, "default": value}
        return schema

    def _constrain(self, out: dict[str, Any], t: ir.TypeExpr) -> None:
        resolved = self.resolve(t)
        is_map = isinstance(resolved, ir.GenericType) and resolved.name == "map"
        patterns: list[str] = []
        for c in t.constraints:
            if c.key == "pattern":
                patterns.append(str(c.value))
            elif c.key == "format":
                if c.value == "uuid4":
                    out["format"] = "uuid"
                    patterns.append(UUID4_PATTERN)
                else:
                    out["format"] = c.value
            elif c.key == "min":
                out["minimum"] = c.value
            elif c.key == "max":
                out["maximum"] = c.value
            elif c.key == "min_length":
                out["minLength"] = c.value
            elif c.key == "max_length":
                out["maxLength"] = c.value
            elif c.key == "min_items":
                out["minProperties" if is_map else "minItems"] = c.value
            elif c.key == "max_items":
                out["maxProperties" if is_map else "maxItems"] = c.value
        if patterns:
            out["pattern"] = patterns[0]
            if len(patterns) > 1:
                out["allOf"] = [{"pattern": p} for p in patterns[1:]]

    # ---------------------------------------------------------------- declarations
    def definitions(self) -> dict[str, dict[str, Any]]:
        """The schemas of every named type referenced so far (and those they reference), by
        name, sorted."""
        defs: dict[str, dict[str, Any]] = {}
        while True:
            todo = sorted(self.used - set(defs))
            if not todo:
                break
            for name in todo:
                decl = self.decls[name]
                schema = self.schema(decl.type)
                if decl.description:
                    schema = {**schema, "description": decl.description}
                defs[name] = schema
        return dict(sorted(defs.items()))

    def params_schema(self, tool: ir.Tool) -> dict[str, Any]:
        """A tool's arguments as a closed object (without ``$defs``)."""
        return self._closed_object(tool.params, {}, [])

    def _closed_object(
        self,
        members: Iterable[ir.Param | ir.RecordField],
        props: dict[str, Any],
        required: list[str],
    ) -> dict[str, Any]:
        """An object with one property per parameter or field; unknown keys are refused."""
        for m in members:
            props[m.name] = self.member(m.type, m.optional, m.default, m.description)
            if not m.optional and m.default is None:
                required.append(m.name)
        out: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            out["required"] = required
        out["additionalProperties"] = False
        return out

    def returns_schema(self, tool: ir.Tool) -> dict[str, Any] | None:
        """The schema of a tool's return value, or None when it declares none."""
        return None if tool.returns is None else self.schema(tool.returns)

    def object_schema(self, t: ir.TypeExpr) -> tuple[dict[str, Any], bool]:
        """An object schema for a value of type ``t``: the record itself when ``t`` is (or
        names) a record, else ``{"result": t}``. Returns (schema, wrapped)."""
        resolved = self.resolve(t)
        if isinstance(resolved, ir.RecordType) and not t.constraints:
            schema = self.record(resolved)
            if isinstance(t, ir.NamedType) and t.name in self.decls:
                description = self.decls[t.name].description
                if description:
                    schema["description"] = description
            return schema, False
        wrapped = {
            "type": "object",
            "properties": {"result": self.schema(t)},
            "required": ["result"],
            "additionalProperties": False,
        }
        return wrapped, True


def type_label(t: ir.TypeExpr) -> str:
    """A type expression in contract syntax, with its constraints (records spelled out)."""
    if isinstance(t, ir.NamedType):
        text = t.name
    elif isinstance(t, ir.NullType):
        text = "null"
    elif isinstance(t, ir.GenericType):
        text = f"{t.name}[" + ", ".join(type_label(a) for a in t.args) + "]"
    elif isinstance(t, ir.EnumType):
        text = "enum { " + ", ".join(_member_text(m.value) for m in t.members) + " }"
    elif isinstance(t, ir.RecordType):
        fields = []
        for f in t.fields:
            field = f"{_member_text(f.name)}{'?' if f.optional else ''}: {type_label(f.type)}"
            if f.default is not None:
                from ..dsl.pretty import expr_text

                field += f" = {expr_text(f.default)}"
            fields.append(field)
        if t.open:
            fields.append("...")
        text = "record { " + ", ".join(fields) + " }"
    elif isinstance(t, ir.TaggedUnionType):
        variants = ", ".join(f"{v.tag}: {type_label(v.type)}" for v in t.variants)
        text = f"union by {t.tag_field} {{ {variants} }}"
    else:
        text = " | ".join(type_label(o) for o in t.options)
    for c in t.constraints:
        text += " " + constraint_text(c)
    return text


def constraint_text(c: ir.Constraint) -> str:
    """One constraint in contract syntax: ``max_length 4096``, ``pattern r"^/"``."""
    if c.key == "pattern":
        return f'pattern r"{c.value}"'
    if c.key == "format":
        return f'format "{c.value}"'
    return f"{c.key} {c.value}"


def _member_text(value: str) -> str:
    return value if value.isidentifier() else literal_text(value)
