"""OpenAI tool definitions in strict mode (Structured Outputs).

Strict mode accepts a subset of JSON Schema (OpenAI, "Structured Outputs — supported schemas"):
every object lists all its properties in ``required`` and has ``additionalProperties: false``;
an optional value is a union with null; ``anyOf`` but no ``oneOf``/``allOf``/``not``/``if``;
strings support ``pattern`` and a few ``format``s, numbers ``minimum``/``maximum``, arrays
``minItems``/``maxItems``. Everything else a contract says is written into the descriptions.

Two shapes change, so :func:`from_openai_arguments` turns the model's arguments back into
contract arguments (and :func:`to_openai_arguments` the other way):

* an optional parameter or field, or one with a default, is required and nullable: ``null``
  means "absent" (the default applies);
* a ``map[K, V]`` is a list of ``{"key": K, "value": V}`` pairs (strict mode has no
  ``additionalProperties`` schemas).
"""

from __future__ import annotations

import json
from typing import Any

from ..dsl import ir
from .card import card_lines
from .schema import SchemaTranslator, nullable, type_label

# The keywords strict mode accepts (besides the structural ones handled below).
SUPPORTED_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "$ref",
        "$defs",
        "description",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
SUPPORTED_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)

_NOTES = {
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "uniqueItems": "items are distinct",
    "minProperties": "at least {} entries",
    "maxProperties": "at most {} entries",
    "x-contract-key-type": "keys are {}",
}


class _Strict:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.inlining: list[str] = []

    def convert(self, schema: dict[str, Any]) -> dict[str, Any]:
        s = dict(schema)
        ref = s.get("$ref")
        if ref is not None and len(s) > 1:
            name = str(ref).rsplit("/", 1)[-1]
            if name in self.inlining:
                # a recursive type: keep the reference, wrapped so that it stands alone
                del s["$ref"]
                return self.convert({**s, "anyOf": [{"$ref": ref}]})
            # strict mode does not allow keywords next to $ref: inline the definition
            self.inlining.append(name)
            try:
                return self._inline(s, name)
            finally:
                self.inlining.pop()
        return self._convert(s)

    def _inline(self, s: dict[str, Any], name: str) -> dict[str, Any]:
        target = dict(self.defs.get(name, {}))
        del s["$ref"]
        merged = {**target, **s}
        if "description" in target and "description" in s:
            merged["description"] = f"{s['description']} ({target['description']})"
        # constraints written where the type is used add to the type's own: keep both
        for low in ("minimum", "exclusiveMinimum", "minLength", "minItems"):
            if low in target and low in s:
                merged[low] = max(target[low], s[low])
        for high in ("maximum", "exclusiveMaximum", "maxLength", "maxItems"):
            if high in target and high in s:
                merged[high] = min(target[high], s[high])
        if "pattern" in target and "pattern" in s and target["pattern"] != s["pattern"]:
            merged["pattern"] = target["pattern"]
            merged.setdefault("allOf", []).append({"pattern": s["pattern"]})
        return self.convert(merged)

    def _convert(self, s: dict[str, Any]) -> dict[str, Any]:
        notes: list[str] = []
        if "oneOf" in s:
            s["anyOf"] = s.pop("oneOf")
        for extra in s.pop("allOf", []):
            if "pattern" in extra:
                notes.append(f"must also match the pattern {extra['pattern']}")
        if "prefixItems" in s:
            items = s.pop("prefixItems")
            s.pop("items", None)
            unique: list[Any] = []
            for item in items:
                if item not in unique:
                    unique.append(item)
            s["items"] = unique[0] if len(unique) == 1 else {"anyOf": unique}
            notes.append(
                f"exactly {len(items)} items in this order: " + ", ".join(_short(i) for i in items)
            )
        kinds = s.get("type")
        is_object = kinds == "object" or (isinstance(kinds, list) and "object" in kinds)
        if is_object and isinstance(s.get("additionalProperties"), dict):
            # a map: strict mode needs a closed object, so the map becomes a list of pairs
            key = s.pop("propertyNames", {"type": "string"})
            value = s.pop("additionalProperties")
            s["type"] = (
                ["array", "null"] if isinstance(kinds, list) and "null" in kinds else "array"
            )
            s["items"] = {
                "type": "object",
                "properties": {"key": key, "value": value},
                "required": ["key", "value"],
                "additionalProperties": False,
            }
            if "minProperties" in s:
                s["minItems"] = s.pop("minProperties")
            if "maxProperties" in s:
                s["maxItems"] = s.pop("maxProperties")
            notes.append("a map, given as a list of {key, value} pairs with distinct keys")
        if "format" in s and s["format"] not in SUPPORTED_FORMATS:
            notes.append(f"format {s.pop('format')}")
        if "default" in s:
            default = json.dumps(s.pop("default"), ensure_ascii=False)
            notes.append(f"default {default}; null means the default")
        for key, text in _NOTES.items():
            if key in s:
                value = s.pop(key)
                notes.append(text.format(value))
        for key in [k for k in s if k not in SUPPORTED_KEYWORDS]:
            value = s.pop(key)
            notes.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
        if "properties" in s:
            props = s["properties"]
            required = set(s.get("required", []))
            new_props = {}
            for name, sub in props.items():
                sub = self.convert(sub)
                if name not in required:
                    sub = _nullable(sub)
                new_props[name] = sub
            s["properties"] = new_props
            s["required"] = list(props)
            s["additionalProperties"] = False
        if isinstance(s.get("items"), dict):
            s["items"] = self.convert(s["items"])
        if "anyOf" in s:
            s["anyOf"] = [self.convert(o) for o in s["anyOf"]]
        if notes:
            described = s.get("description")
            text = "; ".join(notes)
            s["description"] = f"{described} ({text})" if described else text[:1].upper() + text[1:]
        return s


def _short(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    kind = schema.get("type")
    return str(kind) if kind else "value"


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """:func:`.schema.nullable`, for strict mode: an ``anyOf`` is extended rather than nested,
    and a description stays on the outside."""
    if "anyOf" in schema:
        if {"type": "null"} in schema["anyOf"]:
            return schema
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    out = nullable(schema)
    description = schema.get("description")
    if "anyOf" in out and description:
        inner = {k: v for k, v in schema.items() if k != "description"}
        out = {"anyOf": [inner, {"type": "null"}], "description": description}
    return out


def strict_parameters(contract: ir.Contract, tool: ir.Tool) -> dict[str, Any]:
    """The tool's arguments as a strict-mode JSON Schema."""
    tr = SchemaTranslator(contract)
    params = tr.params_schema(tool)
    defs = tr.definitions()
    conv = _Strict(defs)
    out = conv.convert(params)
    if defs:
        out["$defs"] = {name: conv.convert(schema) for name, schema in defs.items()}
    return out


def openai_tool(contract: ir.Contract, tool: ir.Tool) -> dict[str, Any]:
    """One OpenAI function tool definition with ``strict: true``; the description carries the
    tool's description and its contract (preconditions, effects, outcomes, errors and hints,
    protocol, cost, tags, risk) as text."""
    parts = [tool.description] if tool.description else []
    if tool.returns is not None:
        parts.append(f"Returns: {type_label(tool.returns)}")
    parts.append("Contract:\n" + "\n".join(card_lines(contract, tool, with_signature=False)))
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": "\n\n".join(parts),
            "parameters": strict_parameters(contract, tool),
            "strict": True,
        },
    }


# ------------------------------------------------------------------------------ argument shapes


class _Shape:
    def __init__(self, tr: SchemaTranslator, to_openai: bool) -> None:
        self.tr = tr
        self.to_openai = to_openai

    def value(self, t: ir.TypeExpr, v: Any) -> Any:
        r = self.tr.resolve(t)
        if v is None:
            return None
        if isinstance(r, ir.GenericType):
            if r.name == "map":
                if self.to_openai and isinstance(v, dict):
                    return [
                        {"key": self.value(r.args[0], k), "value": self.value(r.args[1], x)}
                        for k, x in v.items()
                    ]
                if not self.to_openai and isinstance(v, list):
                    pairs = [p for p in v if isinstance(p, dict) and set(p) == {"key", "value"}]
                    if len(pairs) == len(v):
                        return {
                            self.value(r.args[0], p["key"]): self.value(r.args[1], p["value"])
                            for p in pairs
                        }
                return v
            if isinstance(v, (list, tuple)):
                if r.name == "tuple":
                    return [self.value(a, x) for a, x in zip(r.args, v)] + list(v[len(r.args) :])
                return [self.value(r.args[0], x) for x in v]
            return v
        if isinstance(r, ir.RecordType) and isinstance(v, dict):
            return self.fields(r.fields, v)
        if isinstance(r, ir.TaggedUnionType) and isinstance(v, dict):
            for variant in r.variants:
                if v.get(r.tag_field) == variant.tag:
                    inner = self.tr.resolve(variant.type)
                    if isinstance(inner, ir.RecordType):
                        rest = {k: x for k, x in v.items() if k != r.tag_field}
                        return {r.tag_field: variant.tag, **self.fields(inner.fields, rest)}
            return v
        if isinstance(r, ir.UnionType):
            for option in r.options:
                o = self.tr.resolve(option)
                if isinstance(o, ir.GenericType) and o.name == "map":
                    if isinstance(v, dict) == self.to_openai:
                        return self.value(option, v)
                elif isinstance(o, (ir.RecordType, ir.TaggedUnionType)) and isinstance(v, dict):
                    return self.value(option, v)
                elif isinstance(o, ir.GenericType) and isinstance(v, list):
                    return self.value(option, v)
            return v
        return v

    def fields(self, fields: tuple[ir.RecordField, ...] | tuple[ir.Param, ...], v: Any) -> Any:
        if not isinstance(v, dict):
            return v
        out: dict[str, Any] = {}
        known = {f.name for f in fields}
        for f in fields:
            absent_ok = f.optional or f.default is not None
            if f.name in v:
                if v[f.name] is None and absent_ok and not self.to_openai:
                    continue
                out[f.name] = self.value(f.type, v[f.name])
            elif self.to_openai and absent_ok:
                out[f.name] = None
        out.update({k: x for k, x in v.items() if k not in known})
        return out


def from_openai_arguments(
    contract: ir.Contract, tool: ir.Tool, arguments: dict[str, Any]
) -> dict[str, Any]:
    """A strict-mode tool call's arguments as contract arguments: ``null`` for an optional or
    defaulted parameter or field means absent, ``[{key, value}, …]`` becomes a map."""
    out = _Shape(SchemaTranslator(contract), False).fields(tool.params, arguments)
    assert isinstance(out, dict)
    return out


def to_openai_arguments(
    contract: ir.Contract, tool: ir.Tool, arguments: dict[str, Any]
) -> dict[str, Any]:
    """Contract arguments in the strict-mode shape (the inverse of
    :func:`from_openai_arguments`)."""
    out = _Shape(SchemaTranslator(contract), True).fields(tool.params, arguments)
    assert isinstance(out, dict)
    return out
