"""JSON Schema (OpenAPI 3.0 / 3.1 Schema Objects, MCP and OpenAI parameter schemas) → contract
type text: the reverse of :mod:`contractsim.export.schema`.

Every keyword that the contract language cannot say is reported as a warning at its JSON
pointer; nothing is dropped silently. The translator keeps, beside the text, the schema it
stands for in export terms (``accepted``) so that tests can compare the round trip.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import ContractError, Span, error
from ..dsl.patterns import pattern_problem
from .names import TYPE_WORDS, identifier, is_identifier, pattern_text, string_text

# Formats the contract language knows (docs/language.md, Constraints).
FORMATS = frozenset({"uuid", "date-time", "date", "email", "ipv4", "ipv6", "uri"})
# Keywords that only annotate (no effect on which values are accepted), never reported.
ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "example",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "xml",
        "externalDocs",
        "$comment",
        "$schema",
        "$id",
        "$anchor",
        "contentMediaType",
        "contentEncoding",
        "default",
        "discriminator",
        "nullable",
        "$defs",
        "definitions",
        "strict",
    }
)
HANDLED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "$ref",
        "allOf",
        "oneOf",
        "anyOf",
        "format",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "propertyNames",
    }
)
JSON_TYPE = "Json"
JSON_DECL = "bool | int | float | str | null | list[Json] | map[str, Json]"
MAX_DEPTH = 64
MAX_SCHEMAS = 200_000
"""Schemas translated per document at most: YAML aliases can make a small file expand into
billions of nested schemas (a "billion laughs"); this bounds the work."""


def pointer_escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def ptr(base: str, *tokens: str | int) -> str:
    return base + "".join("/" + pointer_escape(str(t)) for t in tokens)


@dataclass
class StepWarning:
    """One thing the import could not carry over exactly, at a JSON pointer of the source."""

    pointer: str
    message: str

    def text(self) -> str:
        return f"{self.pointer or '/'}: {self.message}"


@dataclass
class SchemaImporter:
    """Translates the schemas of one document. ``named`` maps the JSON pointer of a reusable
    schema (``#/components/schemas/X``, ``#/$defs/X``) to the type name it is declared as."""

    doc: Any
    file: str
    named_prefixes: tuple[str, ...]
    openapi30: bool = False
    scope: str = ""
    visited: int = 0
    warnings: list[StepWarning] = field(default_factory=list)
    renames: list[tuple[str, str, str]] = field(default_factory=list)
    decls: dict[str, str] = field(default_factory=dict)
    decl_descriptions: dict[str, str] = field(default_factory=dict)
    type_names: dict[str, str] = field(default_factory=dict)
    needs_json: bool = False
    _declaring: set[str] = field(default_factory=set)
    _alias_chain: list[str] = field(default_factory=list)

    # ------------------------------------------------------------ references
    def fail(self, code: str, pointer: str, message: str, hint: str | None = None) -> ContractError:
        return ContractError(
            [error(code, f"{pointer or '/'}: {message}", Span(file=self.file), hint)]
        )

    def props_of(self, schema: dict[str, Any], pointer: str) -> dict[str, Any]:
        """``properties`` (an object of schemas) and ``required`` (a list of names), checked."""
        props = schema.get("properties") or {}
        if not isinstance(props, dict):
            raise self.fail("E1502", ptr(pointer, "properties"), "`properties` must be an object")
        required = schema.get("required") or []
        if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
            raise self.fail("E1502", ptr(pointer, "required"), "`required` must be a list of names")
        return props

    def warn(self, pointer: str, message: str) -> None:
        w = StepWarning(pointer, message)
        if w not in self.warnings:
            self.warnings.append(w)

    def resolve_ref(self, ref: Any, pointer: str) -> tuple[Any, str]:
        """The schema a local ``$ref`` points at, and its pointer. Remote references are refused
        (the importer never fetches anything)."""
        if not isinstance(ref, str):
            raise self.fail(
                "E1502", pointer, f"`$ref` must be a string (got {json.dumps(ref)[:60]})"
            )
        if not ref.startswith("#"):
            raise self.fail(
                "E1503",
                pointer,
                f"`$ref` {string_text(ref[:200])} points outside this document",
                "the importer never fetches remote references: bundle the document into one "
                "file first (e.g. `redocly bundle`)",
            )
        target: Any = self.doc
        for raw in ref[1:].split("/")[1:] if ref != "#" else []:
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and token in target:
                target = target[token]
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
            else:
                raise self.fail(
                    "E1503", pointer, f"`$ref` {string_text(ref[:200])} points at nothing"
                )
        return target, ref[1:]

    def type_name_for(self, ref_pointer: str) -> str | None:
        for prefix in self.named_prefixes:
            if ref_pointer.startswith(prefix) and "/" not in ref_pointer[len(prefix) :]:
                key = self.scope + ref_pointer
                if key not in self.type_names:
                    raw = ref_pointer[len(prefix) :].replace("~1", "/").replace("~0", "~")
                    name = identifier(
                        raw, set(self.type_names.values()) | {JSON_TYPE}, avoid=TYPE_WORDS
                    )
                    if name != raw:
                        self.renames.append(("type", raw, name))
                    self.type_names[key] = name
                return self.type_names[key]
        return None

    def named(self, ref_pointer: str, schema: Any, at: str) -> str:
        """Declare (once) the named type for a reusable schema and return its name."""
        name = self.type_name_for(ref_pointer)
        assert name is not None
        if ref_pointer in self._alias_chain:
            raise self.fail(
                "E1503",
                at,
                f"the reference to {ref_pointer} is a cycle that never reaches a value: "
                + " -> ".join([*self._alias_chain, ref_pointer]),
                "a recursive schema must recurse through an object or an array",
            )
        if name in self.decls or name in self._declaring:
            return name
        self._declaring.add(name)
        self._alias_chain.append(ref_pointer)
        try:
            text = self.type_text(schema, ref_pointer, alias=True)
        finally:
            self._alias_chain.pop()
        self.decls[name] = text
        if isinstance(schema, dict) and isinstance(schema.get("description"), str):
            self.decl_descriptions[name] = schema["description"]
        self._declaring.discard(name)
        return name

    def deref(self, schema: Any, pointer: str, depth: int = 0) -> tuple[Any, str]:
        """Follow ``$ref`` chains to a schema (for looking inside objects)."""
        seen: list[str] = []
        while isinstance(schema, dict) and "$ref" in schema:
            schema, pointer = self.resolve_ref(schema["$ref"], pointer)
            if pointer in seen:
                raise self.fail("E1503", pointer, "cyclic `$ref`: " + " -> ".join(seen))
            seen.append(pointer)
        return schema, pointer

    # ------------------------------------------------------------ types
    def type_text(self, schema: Any, pointer: str, alias: bool = False, depth: int = 0) -> str:
        """The contract type for ``schema`` at ``pointer``."""
        if depth > MAX_DEPTH:
            raise self.fail("E1502", pointer, f"the schema is nested more than {MAX_DEPTH} levels")
        self.visited += 1
        if self.visited > MAX_SCHEMAS:
            raise self.fail(
                "E1502",
                pointer,
                f"the document expands to more than {MAX_SCHEMAS:,} schemas",
                "YAML aliases repeat a schema wherever they are used: write the document with "
                "`$ref`s instead",
            )
        if schema is True or schema == {}:
            return self.json_type()
        if schema is False:
            self.warn(
                pointer,
                "`false` (no value allowed) cannot be expressed; imported as any JSON value",
            )
            return self.json_type()
        if not isinstance(schema, dict):
            raise self.fail(
                "E1502", pointer, f"a schema must be an object (got {type(schema).__name__})"
            )
        nullable = schema.get("nullable") is True and self.openapi30
        if "nullable" in schema and not self.openapi30:
            self.warn(
                ptr(pointer, "nullable"),
                "`nullable` is not a JSON Schema 2020-12 keyword (OpenAPI 3.1); ignored",
            )
        text = self._base(schema, pointer, depth)
        if nullable and not text.endswith("| null") and text != "null":
            text = f"{text} | null"
        return text

    def nested(self, schema: Any, pointer: str, depth: int) -> str:
        """The type of a value inside a list, map or record: a reference from there may
        recurse (the alias chain starts afresh)."""
        chain, self._alias_chain = self._alias_chain, []
        try:
            return self.type_text(schema, pointer, depth=depth + 1)
        finally:
            self._alias_chain = chain

    def json_type(self) -> str:
        self.needs_json = True
        return JSON_TYPE

    def _unknown_keywords(self, schema: dict[str, Any], pointer: str) -> None:
        for key in schema:
            if key in HANDLED or key in ANNOTATIONS or key.startswith("x-"):
                continue
            self.warn(ptr(pointer, key), f"`{key}` cannot be expressed in a contract; dropped")

    def _base(self, schema: dict[str, Any], pointer: str, depth: int) -> str:
        self._unknown_keywords(schema, pointer)
        if "$ref" in schema:
            others = [
                k for k in schema if k not in ANNOTATIONS and k != "$ref" and not k.startswith("x-")
            ]
            for k in others:
                self.warn(ptr(pointer, k), f"`{k}` beside `$ref` cannot be expressed; dropped")
            target, target_ptr = self.resolve_ref(schema["$ref"], ptr(pointer, "$ref"))
            if self.type_name_for(target_ptr) is not None:
                return self.named(target_ptr, target, pointer)
            if target_ptr in self._alias_chain:
                raise self.fail("E1503", pointer, "cyclic `$ref` through an unnamed schema")
            self._alias_chain.append(target_ptr)
            try:
                return self.type_text(target, target_ptr, depth=depth + 1)
            finally:
                self._alias_chain.pop()
        if "allOf" in schema:
            return self._all_of(schema, pointer, depth)
        for key in ("oneOf", "anyOf"):
            if key in schema:
                return self._union(schema, key, pointer, depth)
        if "const" in schema:
            return self._enum([schema["const"]], schema, ptr(pointer, "const"))
        if "enum" in schema:
            if not isinstance(schema["enum"], list) or not schema["enum"]:
                raise self.fail("E1502", ptr(pointer, "enum"), "`enum` must be a non-empty list")
            return self._enum(schema["enum"], schema, ptr(pointer, "enum"))
        kind = schema.get("type")
        if isinstance(kind, list):
            parts = [self._typed(schema, k, pointer, depth) for k in kind if k != "null"]
            if "null" in kind:
                parts.append("null")
            return " | ".join(parts) if parts else self.json_type()
        if kind is None:
            if "properties" in schema or "additionalProperties" in schema:
                kind = "object"
                self.warn(
                    ptr(pointer, "type"),
                    "no `type`: the source also allows values that are not objects; imported "
                    "as an object",
                )
            elif "items" in schema:
                kind = "array"
                self.warn(
                    ptr(pointer, "type"),
                    "no `type`: the source also allows values that are not arrays; imported as "
                    "a list",
                )
            else:
                constrained = [k for k in schema if k in HANDLED]
                for k in constrained:
                    self.warn(
                        ptr(pointer, k), f"`{k}` without a `type` cannot be expressed; dropped"
                    )
                return self.json_type()
        return self._typed(schema, kind, pointer, depth)

    def _typed(self, schema: dict[str, Any], kind: Any, pointer: str, depth: int) -> str:
        if kind == "string":
            return "str" + self._string_constraints(schema, pointer)
        if kind in ("integer", "number"):
            return self._number(schema, kind, pointer)
        if kind == "boolean":
            return "bool"
        if kind == "null":
            return "null"
        if kind == "array":
            return self._array(schema, pointer, depth)
        if kind == "object":
            return self._object(schema, pointer, depth)
        raise self.fail("E1502", ptr(pointer, "type"), f"unknown type {json.dumps(kind)[:60]}")

    def _string_constraints(self, schema: dict[str, Any], pointer: str) -> str:
        out = ""
        if isinstance(schema.get("format"), str):
            fmt = schema["format"]
            if fmt in FORMATS:
                out += f" format {string_text(fmt)}"
            else:
                self.warn(
                    ptr(pointer, "format"),
                    f"format {string_text(fmt)} is not one contractsim checks; dropped",
                )
        if isinstance(schema.get("pattern"), str):
            problem = pattern_problem(schema["pattern"])
            if problem is None:
                out += f" pattern {pattern_text(schema['pattern'])}"
            else:
                self.warn(ptr(pointer, "pattern"), f"{problem[1]} ({problem[0]}); dropped")
        for key, word in (("minLength", "min_length"), ("maxLength", "max_length")):
            value = schema.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                out += f" {word} {value}"
        return out

    def _number(self, schema: dict[str, Any], kind: str, pointer: str) -> str:
        integer = kind == "integer"
        out = "int" if integer else "float"
        low, high = schema.get("minimum"), schema.get("maximum")
        for key, bound in (("exclusiveMinimum", "low"), ("exclusiveMaximum", "high")):
            value = schema.get(key)
            if isinstance(value, bool):  # OpenAPI 3.0: a flag on minimum/maximum
                base = low if bound == "low" else high
                if not value or base is None:
                    continue
                value = base
            if value is None:
                continue
            if integer and isinstance(value, (int, float)) and float(value).is_integer():
                # for integers, x > n is x >= n + 1 exactly
                if bound == "low":
                    low = int(value) + 1 if low is None else max(low, int(value) + 1)
                else:
                    high = int(value) - 1 if high is None else min(high, int(value) - 1)
            else:
                self.warn(
                    ptr(pointer, key),
                    f"`{key}` on a number cannot be expressed (contract bounds are inclusive); "
                    "dropped",
                )
        for value, word in ((low, "min"), (high, "max")):
            if (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and math.isfinite(value)
            ):
                if integer and isinstance(value, float) and not value.is_integer():
                    value = math.ceil(value) if word == "min" else math.floor(value)
                if integer:
                    value = int(value)
                out += f" {word} {value!r}"
        if "multipleOf" in schema:
            pass  # reported as an unknown keyword
        if schema.get("format") is not None:
            self.warn(
                ptr(pointer, "format"),
                f"format {string_text(str(schema['format']))} on a number is not checked; dropped",
            )
        return out

    def _array(self, schema: dict[str, Any], pointer: str, depth: int) -> str:
        items = schema.get("items", True)
        if isinstance(items, list):
            self.warn(
                ptr(pointer, "items"),
                "a list of `items` (tuple) cannot be expressed; imported as a list of any value",
            )
            items = True
        inner = self.nested(items, ptr(pointer, "items"), depth)
        generic = "set" if schema.get("uniqueItems") is True else "list"
        out = f"{generic}[{inner}]"
        for key, word in (("minItems", "min_items"), ("maxItems", "max_items")):
            value = schema.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                out += f" {word} {value}"
        return out

    def object_fields(
        self, schema: dict[str, Any], pointer: str, depth: int, skip: str | None = None
    ) -> list[str]:
        """The record fields of an object schema (``name: T``, ``name?: T``, defaults)."""
        props = self.props_of(schema, pointer)
        required = schema.get("required") or []
        fields = []
        taken: set[str] = set()
        for name, sub in props.items():
            if name == skip:
                continue
            at = ptr(pointer, "properties", name)
            ident = identifier(name, taken)
            taken.add(ident)
            if ident != name:
                self.renames.append(("field", at, ident))
                self.warn(
                    at,
                    f"property {string_text(name)} is not a contract name; imported as `{ident}`",
                )
            fields.append(self.member_text(ident, sub, at, name in required, depth))
        return fields

    def default_fits(self, schema: Any, value: Any, pointer: str) -> bool:
        """Whether a default plainly fits its schema (type, enum, bounds, lengths): a default
        that does not would make the imported contract fail `check` (E0301, E0404)."""
        schema, _ = self.deref(schema, pointer)
        if not isinstance(schema, dict) or any(k in schema for k in ("allOf", "oneOf", "anyOf")):
            return False
        if value is None:
            kind = schema.get("type")
            return (self.openapi30 and schema.get("nullable") is True) or (
                isinstance(kind, list) and "null" in kind
            )
        if "enum" in schema and value not in schema["enum"]:
            return False
        kinds = schema.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        checks = {
            "string": isinstance(value, str),
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
            "boolean": isinstance(value, bool),
            "array": isinstance(value, list)
            and all(not isinstance(v, (list, dict)) for v in value)
            and "items" not in schema,
        }
        if not any(checks.get(k, False) for k in kinds):
            return False
        if isinstance(value, str):
            if len(value) < schema.get("minLength", 0) or "pattern" in schema:
                return False
            if isinstance(schema.get("maxLength"), int) and len(value) > schema["maxLength"]:
                return False
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            low, high = schema.get("minimum"), schema.get("maximum")
            if isinstance(low, (int, float)) and value < low:
                return False
            if isinstance(high, (int, float)) and value > high:
                return False
        return True

    def member_text(
        self, ident: str, sub: Any, at: str, required: bool, depth: int, description: Any = None
    ) -> str:
        """``name: T``, ``name?: T`` or ``name: T = default`` with its description."""
        type_text = self.nested(sub, at, depth)
        default = sub.get("default") if isinstance(sub, dict) else None
        default_text = None
        if isinstance(sub, dict) and "default" in sub:
            default_text = value_text(default) if self.default_fits(sub, default, at) else None
            if default_text is None:
                self.warn(
                    ptr(at, "default"),
                    "this default does not plainly fit its schema (or has no contract literal); "
                    "dropped",
                )
        out = ident
        if required:
            out += f": {type_text}"
        elif default_text is not None:
            out += f": {type_text} = {default_text}"
        else:
            out += f"?: {type_text}"
        if isinstance(sub, dict) and isinstance(sub.get("description"), str):
            description = sub["description"]
        if isinstance(description, str) and description:
            out += " " + string_text(description)
        return out

    def _object(self, schema: dict[str, Any], pointer: str, depth: int) -> str:
        extra = schema.get("additionalProperties", True)
        has_props = bool(schema.get("properties"))
        if not has_props and extra is not False:
            value = self.nested(extra, ptr(pointer, "additionalProperties"), depth)
            key = "str"
            if "propertyNames" in schema:
                key = self.type_text(
                    schema["propertyNames"], ptr(pointer, "propertyNames"), depth=depth + 1
                )
            out = f"map[{key}, {value}]"
            for k, word in (("minProperties", "min_items"), ("maxProperties", "max_items")):
                v = schema.get(k)
                if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                    out += f" {word} {v}"
            return out
        if extra is not False:
            self.warn(
                ptr(pointer, "additionalProperties"),
                "properties beyond those listed are allowed here; a contract record is closed, "
                "so they are refused",
            )
        for k in ("minProperties", "maxProperties", "propertyNames"):
            if k in schema:
                self.warn(
                    ptr(pointer, k),
                    f"`{k}` on an object with listed properties cannot be expressed; dropped",
                )
        fields = self.object_fields(schema, pointer, depth)
        for name in schema.get("required") or []:  # checked by object_fields
            if name not in (schema.get("properties") or {}):
                self.warn(
                    ptr(pointer, "required"),
                    f"required property {string_text(str(name))} is not listed in `properties`; "
                    "dropped",
                )
        return "record { " + ", ".join(fields) + " }" if fields else "record {}"

    def _enum(self, values: list[Any], schema: dict[str, Any], pointer: str) -> str:
        strings = [v for v in values if isinstance(v, str)]
        has_null = None in values
        others = [v for v in values if v is not None and not isinstance(v, str)]
        if others or not strings:
            self.warn(
                pointer,
                "an enum of values that are not strings cannot be expressed; imported as their "
                "type",
            )
            kinds = {type(v).__name__ for v in others}
            base = (
                "int"
                if kinds == {"int"}
                else "float"
                if kinds <= {"int", "float"}
                else ("bool" if kinds == {"bool"} else self.json_type())
            )
            if strings:
                base = self.json_type()
            return base + (" | null" if has_null else "")
        out = "enum { " + ", ".join(string_text(s) for s in dict.fromkeys(strings)) + " }"
        return out + (" | null" if has_null else "")

    # ------------------------------------------------------------ composition
    def merged_object(
        self, schema: Any, pointer: str, depth: int = 0
    ) -> tuple[dict[str, Any], str] | None:
        """An ``allOf`` (or a plain object) flattened into one object schema, or None when a
        part is not an object."""
        schema, pointer = self.deref(schema, pointer)
        if not isinstance(schema, dict):
            return None
        if depth > MAX_DEPTH:
            raise self.fail("E1502", pointer, f"`allOf` nested more than {MAX_DEPTH} levels")
        if "allOf" in schema:
            props: dict[str, Any] = {}
            required: list[str] = []
            closed = False
            for i, part in enumerate(schema["allOf"] if isinstance(schema["allOf"], list) else []):
                merged = self.merged_object(part, ptr(pointer, "allOf", i), depth + 1)
                if merged is None:
                    return None
                sub, sub_ptr = merged
                for name, value in self.props_of(sub, sub_ptr).items():
                    if name in props and props[name] != value:
                        props[name] = self._intersect(props[name], value, pointer)
                    else:
                        props[name] = value
                required += [r for r in sub.get("required") or [] if r not in required]
                closed = closed or sub.get("additionalProperties") is False
            rest = {k: v for k, v in schema.items() if k not in ("allOf", "discriminator")}
            if rest.get("properties"):
                props.update(rest["properties"])
            required += [r for r in rest.get("required") or [] if r not in required]
            out: dict[str, Any] = {"type": "object", "properties": props}
            if required:
                out["required"] = required
            if closed or rest.get("additionalProperties") is False:
                out["additionalProperties"] = False
            for k in ("description",):
                if k in schema:
                    out[k] = schema[k]
            return out, pointer
        if schema.get("type") == "object" or "properties" in schema:
            return schema, pointer
        return None

    def _intersect(self, a: Any, b: Any, pointer: str) -> dict[str, Any]:
        """Two definitions of one property in an ``allOf``: two arrays are an array of items
        that fit both (a wrapper's ``array of object`` refined to ``array of Station``)."""
        da, _ = self.deref(a, pointer)
        db, _ = self.deref(b, pointer)
        if (
            isinstance(da, dict)
            and isinstance(db, dict)
            and da.get("type") == "array" == db.get("type")
            and set(da) | set(db) <= {"type", "items"} | ANNOTATIONS
        ):
            items = [x for x in (da.get("items"), db.get("items")) if x is not None]
            return {"type": "array", "items": {"allOf": items}} if items else {"type": "array"}
        return {"allOf": [a, b]}

    def _all_of(self, schema: dict[str, Any], pointer: str, depth: int) -> str:
        parts = schema["allOf"]
        if not isinstance(parts, list) or not parts:
            raise self.fail("E1502", ptr(pointer, "allOf"), "`allOf` must be a non-empty list")
        if len(parts) == 1 and set(schema) <= {"allOf"} | ANNOTATIONS:
            return self.type_text(parts[0], ptr(pointer, "allOf", 0), depth=depth + 1)
        merged = self.merged_object(schema, pointer)
        if merged is None:
            self.warn(
                ptr(pointer, "allOf"),
                "`allOf` of schemas that are not all objects cannot be expressed; only the "
                "first part is kept",
            )
            return self.type_text(parts[0], ptr(pointer, "allOf", 0), depth=depth + 1)
        return self._object(merged[0], pointer, depth)

    def _union(self, schema: dict[str, Any], key: str, pointer: str, depth: int) -> str:
        options = schema[key]
        if not isinstance(options, list) or not options:
            raise self.fail("E1502", ptr(pointer, key), f"`{key}` must be a non-empty list")
        disc = schema.get("discriminator")
        if isinstance(disc, dict) and isinstance(disc.get("propertyName"), str):
            tagged = self._tagged(options, disc, key, pointer, depth)
            if tagged is not None:
                return tagged
        nulls = [
            o for o in options if isinstance(o, dict) and o.get("type") == "null" and len(o) == 1
        ]
        parts = [
            self.type_text(o, ptr(pointer, key, i), depth=depth + 1)
            for i, o in enumerate(options)
            if not (isinstance(o, dict) and o.get("type") == "null" and len(o) == 1)
        ]
        if key == "oneOf" and len(parts) > 1:
            self.warn(
                ptr(pointer, key),
                "`oneOf` (exactly one option) is imported as an untagged union, where a value "
                "may match several options",
            )
        if nulls:
            parts.append("null")
        return " | ".join(f"({p})" if " | " in p else p for p in parts)

    def _tagged(
        self, options: list[Any], disc: dict[str, Any], key: str, pointer: str, depth: int
    ) -> str | None:
        tag = disc["propertyName"]
        if not is_identifier(tag):
            self.warn(
                ptr(pointer, "discriminator"),
                f"discriminator {string_text(tag)} is not a contract name; imported as an "
                "untagged union, the discriminator dropped",
            )
            return None
        mapping = disc.get("mapping") or {}
        by_target = {v.lstrip("#"): k for k, v in mapping.items() if isinstance(v, str)}
        variants = []
        for i, option in enumerate(options):
            at = ptr(pointer, key, i)
            target_ptr = None
            if isinstance(option, dict) and isinstance(option.get("$ref"), str):
                _, target_ptr = self.resolve_ref(option["$ref"], at)
            merged = self.merged_object(option, at)
            if merged is None or tag not in (merged[0].get("properties") or {}):
                self.warn(
                    ptr(pointer, "discriminator"),
                    f"variant {i} has no object property {string_text(tag)}; imported as an "
                    "untagged union, the discriminator dropped",
                )
                return None
            obj, obj_ptr = merged
            tag_schema, _ = self.deref(obj["properties"][tag], obj_ptr)
            own = _single_tag_value(tag_schema)
            # the tag value: the mapping's, else the one value the variant's property allows
            # (as real documents write it: `enum: [auto]` and no mapping), else the schema's name
            if target_ptr is not None and target_ptr in by_target:
                value = by_target[target_ptr]
            elif own is not None:
                value = own
            elif target_ptr is not None:
                value = target_ptr.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
            else:
                self.warn(
                    ptr(pointer, "discriminator"),
                    f"variant {i} is inline and has no tag value; imported as an untagged "
                    "union, the discriminator dropped",
                )
                return None
            if tag not in (obj.get("required") or []):
                self.warn(
                    ptr(obj_ptr, "required"),
                    f"the discriminator {string_text(tag)} is not required here; the contract's "
                    "tagged union requires it",
                )
            constraints = (
                {k for k in tag_schema if k not in ANNOTATIONS and not k.startswith("x-")}
                if isinstance(tag_schema, dict)
                else set()
            )
            if isinstance(tag_schema, dict) and tag_schema.get("default") == value:
                constraints.discard("default")  # a default that is the tag value says nothing
            if (
                not isinstance(tag_schema, dict)
                or tag_schema.get("type") != "string"
                or not constraints <= {"type", "enum", "const"}
                or (own is not None and own != value)
            ):
                self.warn(
                    ptr(obj_ptr, "properties", tag),
                    "the discriminator property is not a plain string; its own constraints are "
                    "replaced by the tag value",
                )
            fields = self.object_fields(obj, obj_ptr, depth + 1, skip=tag)
            if obj.get("additionalProperties", True) is not False:
                self.warn(
                    ptr(obj_ptr, "additionalProperties"),
                    "properties beyond those listed are allowed here; a contract record is "
                    "closed, so they are refused",
                )
            variants.append(f"{string_text(value)}: record {{ {', '.join(fields)} }}")
        return f"union by {tag} {{ " + ", ".join(variants) + " }"


def _single_tag_value(schema: Any) -> str | None:
    """The one string a discriminator property allows (``const: x`` or ``enum: [x]``), if so."""
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("const"), str):
        return str(schema["const"])
    enum = schema.get("enum")
    if isinstance(enum, list) and len(enum) == 1 and isinstance(enum[0], str):
        return enum[0]
    return None


def value_text(value: Any) -> str | None:
    """A JSON value as a contract literal, or None when it has no literal form."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, str):
        return string_text(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, list):
        items = [value_text(v) for v in value]
        return None if any(i is None for i in items) else "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    return None
