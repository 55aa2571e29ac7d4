"""`contractsim import openapi|mcp|openai`: real public documents (tests/data/specs/README.md)
imported, checked and exported again; the export must accept exactly the argument values the
source accepts (compared on generated instances, not as text), once the documented, reported
differences are applied to the source."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from contractsim.api import check_text, loads
from contractsim.cli import main
from contractsim.diagnostics import ContractError
from contractsim.export import export
from contractsim.importers import import_spec

SPECS = Path(__file__).parent / "data" / "specs"
OPENAPI = [
    "petstore.yaml",
    "petstore-expanded.yaml",
    "uspto.yaml",
    "link-example.yaml",
    "discriminators-3.0.json",
    "discriminators-3.1.json",
    "train-travel-3.1.json",
    "openai-vector-stores-3.1.json",
]
TOOLS = [
    ("mcp", "mcp-git-tools.json"),
    ("mcp", "mcp-time-tools.json"),
    ("openai", "openai-travel-booking-tools.json"),
]
ALL = [("openapi", f) for f in OPENAPI] + TOOLS
Validator = jsonschema.Draft202012Validator


# ---------------------------------------------------------------- normalising the source
def normalise(schema: Any, root: Any, openapi30: bool, seen: frozenset[str] = frozenset()) -> Any:
    """The source schema with every difference the importer reports or documents applied, in
    JSON Schema 2020-12 terms: OpenAPI 3.0 `nullable` and boolean `exclusiveMinimum`,
    discriminator semantics (each variant's tag is its mapped value), closed objects, optional
    properties that also accept null, non-asserted formats gone."""
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        ref = schema["$ref"]
        if ref in seen:
            return {"$ref": ref}  # recursion: compare through the source's own reference
        target: Any = root
        for token in ref[2:].split("/"):
            target = target[token.replace("~1", "/").replace("~0", "~")]
        return normalise(target, root, openapi30, seen | {ref})
    s = {k: v for k, v in schema.items() if k not in ("format", "discriminator", "nullable")}
    if schema.get("format") in ("uuid", "date-time", "date", "email", "ipv4", "ipv6", "uri"):
        s["format"] = schema["format"]
    if openapi30:
        for key, base in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(s.get(key), bool):
                flag = s.pop(key)
                if flag and base in s:
                    s[key] = s.pop(base)
    for key in ("oneOf", "anyOf"):
        if key in s:
            s[key] = [normalise(o, root, openapi30, seen) for o in s[key]]
            disc = schema.get("discriminator")
            # the importer makes a tagged union when every option is an object that has the
            # tag property and a tag value (otherwise it reports an untagged union)
            tag = disc.get("propertyName") if isinstance(disc, dict) else None
            by_target = {v: k for k, v in (disc.get("mapping") or {}).items()} if tag else {}
            values = [
                tag_value(o, n, tag, by_target) if tag in n.get("properties", {}) else None
                for o, n in zip(schema[key], s[key], strict=True)
            ]
            if tag and None not in values:
                for option, value in zip(s[key], values, strict=True):
                    option["properties"][tag] = {"const": value}
                    option["required"] = list(dict.fromkeys([*option.get("required", []), tag]))
            s["anyOf"] = s.pop(key)
            break
    if "allOf" in s:
        s["allOf"] = [normalise(o, root, openapi30, seen) for o in s["allOf"]]
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in [*s.pop("allOf"), s]:
            merged["properties"].update(part.get("properties", {}))
            merged["required"] += part.get("required", [])
        s = {**{k: v for k, v in s.items() if k not in ("properties", "required")}, **merged}
    if "items" in s:
        s["items"] = normalise(s["items"], root, openapi30, seen)
    if isinstance(s.get("additionalProperties"), dict):
        s["additionalProperties"] = normalise(s["additionalProperties"], root, openapi30, seen)
    if "properties" in s:
        required = set(s.get("required", []))
        s["properties"] = {
            k: normalise(v, root, openapi30, seen)
            if k in required or "default" in (v if isinstance(v, dict) else {})
            else {"anyOf": [normalise(v, root, openapi30, seen), {"type": "null"}]}
            for k, v in s["properties"].items()
        }
        s["additionalProperties"] = False
    if openapi30 and schema.get("nullable") is True:
        s = {"anyOf": [s, {"type": "null"}]}
    return s


def tag_value(original: Any, option: Any, tag: str, by_target: dict[str, str]) -> str | None:
    """A discriminated variant's tag value as the importer reads it: the mapping's, else the one
    value the variant's tag property allows (`enum: [auto]`), else the referenced schema's name."""
    ref = original.get("$ref") if isinstance(original, dict) else None
    if ref in by_target:
        return by_target[ref]
    prop = option["properties"][tag]
    if "anyOf" in prop:  # an optional property, normalised to also accept null
        prop = prop["anyOf"][0]
    if isinstance(prop.get("const"), str):
        return str(prop["const"])
    enum = prop.get("enum")
    if isinstance(enum, list) and len(enum) == 1 and isinstance(enum[0], str):
        return enum[0]
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


def apply_reported(doc: Any, warnings: list[Any]) -> None:
    """Apply to the source what each warning reports as dropped or replaced."""
    for w in warnings:
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in w.pointer.split("/")[1:]]
        parent: Any = doc
        try:
            for t in tokens[:-1]:
                parent = parent[int(t)] if isinstance(parent, list) else parent[t]
        except (KeyError, IndexError, ValueError):
            continue
        key = tokens[-1] if tokens else ""
        if isinstance(parent, dict) and "imported as an object" in w.message:
            parent["type"] = "object"
        if isinstance(parent, dict) and "imported as a list" in w.message:
            parent["type"] = "array"
        if not isinstance(parent, dict) or key not in parent:
            continue
        if "only the first part is kept" in w.message:
            first = parent.pop("allOf")[0]
            parent.update(first if isinstance(first, dict) else {})
        elif "dropped" in w.message:
            del parent[key]


# ---------------------------------------------------------------- instances
def instances(schema: Any, root: Any, rng: random.Random, depth: int = 0) -> Any:
    """A value shaped by ``schema``: mostly valid, sometimes just outside (a bound, a missing
    or extra key, a null, a value of another type)."""
    if rng.random() < 0.06 or depth > 6:
        return rng.choice([None, 0, -1, 2.5, "", "x", True, [], {}])
    if not isinstance(schema, dict):
        return rng.choice([None, 1, "s", {}])
    if "$ref" in schema:
        target: Any = root
        for token in schema["$ref"][2:].split("/"):
            target = target[token.replace("~1", "/").replace("~0", "~")]
        return instances(target, root, rng, depth + 1)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return instances(rng.choice(schema[key]), root, rng, depth + 1)
    if "allOf" in schema:
        out: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = instances(part, root, rng, depth + 1)
            if isinstance(value, dict):
                out.update(value)
        return out
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice([*schema["enum"], "not-a-member"])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice(kind)
    if kind is None:
        kind = "object" if "properties" in schema else rng.choice(["string", "integer", "null"])
    if kind == "string":
        lo, hi = schema.get("minLength", 0), schema.get("maxLength", 8)
        n = rng.choice([lo, hi, lo - 1, hi + 1, (lo + hi) // 2])
        # a bound of megabytes (OpenAI's 70 MB skill upload) is not probed at the bound: the
        # validators would spend a minute copying the string into their error messages
        return "a" * max(min(n, 10_000), 0)
    if kind in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", -5))
        hi = schema.get("maximum", schema.get("exclusiveMaximum", 5))
        value = rng.choice([lo, hi, lo - 1, hi + 1, 0, 1])
        return value + (0.5 if kind == "number" and rng.random() < 0.3 else 0)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        n = rng.choice([0, 1, 2, 3])
        items = [instances(schema.get("items", {}), root, rng, depth + 1) for _ in range(n)]
        if items and schema.get("uniqueItems") and rng.random() < 0.3:
            items.append(items[0])
        return items
    if kind == "object":
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        obj = {}
        for name, sub in props.items():
            if name in required and rng.random() < 0.95 or rng.random() < 0.5:
                obj[name] = instances(sub, root, rng, depth + 1)
        extra = schema.get("additionalProperties")
        if not props or rng.random() < 0.1:
            obj["extra_key"] = instances(
                extra if isinstance(extra, dict) else {}, root, rng, depth + 1
            )
        return obj
    return None


def compare(kind: str, file: str, seed: int = 0, samples: int = 200) -> tuple[int, int]:
    """Import, check, export; then every generated instance must be accepted by the export
    exactly when the normalised source accepts it. Returns (instances, accepted)."""
    path = SPECS / file
    result = import_spec(path, kind)
    diags = check_text(result.text, "imported.contract")
    assert not [d for d in diags if d.severity == "error"], [d.message for d in diags]
    contract = loads(result.text, "imported.contract")
    doc, schemas, returns = copy.deepcopy(
        (result.document, result.source_schemas, result.source_returns)
    )
    apply_reported(doc, result.warnings)
    rng = random.Random(seed)
    total = accepted = 0
    openapi30 = kind == "openapi" and str(doc.get("openapi", "")).startswith("3.0")
    tool_docs = _tool_roots(kind, doc)
    for tool in contract.ir.tools:
        exported = export(contract.ir, "jsonschema", tool.name)
        root = tool_docs.get(tool.name, doc)
        source = normalise(copy.deepcopy(schemas[tool.name]), root, openapi30)
        source["additionalProperties"] = False
        source_with_root = {
            **source,
            "components": root.get("components", {}),
            "$defs": root.get("$defs", {}),
        }
        src_v = Validator(source_with_root)
        exp_v = Validator(exported)
        raw = schemas[tool.name]
        for _ in range(samples):
            if rng.random() < 0.5:
                value = instances(raw, root, rng)
            else:
                value = instances(exported, exported, rng)
            if not isinstance(value, dict):
                continue
            src_ok = src_v.is_valid(value)
            exp_ok = exp_v.is_valid(value)
            assert src_ok == exp_ok, (
                f"{file}: tool {tool.name}: source says {src_ok}, export says {exp_ok} "
                f"for {json.dumps(value)[:400]}"
            )
            total += 1
            accepted += src_ok
        if tool.name in returns:
            t, a = _compare_returns(
                file, tool.name, returns[tool.name], exported, root, openapi30, rng, samples
            )
            total, accepted = total + t, accepted + a
    return total, accepted


def _compare_returns(
    file: str,
    name: str,
    raw: Any,
    exported: dict[str, Any],
    root: Any,
    openapi30: bool,
    rng: random.Random,
    samples: int,
) -> tuple[int, int]:
    """The tool's result schema: the export's `x-contract-returns` against the source's."""
    returns_root = root if isinstance(root, dict) else {}
    source = normalise(copy.deepcopy(raw), returns_root, openapi30)
    src_v = Validator({"anyOf": [source], "components": returns_root.get("components", {})})
    exp = {"anyOf": [exported["x-contract-returns"]], "$defs": exported.get("$defs", {})}
    exp_v = Validator(exp)
    total = accepted = 0
    for _ in range(samples):
        value = (
            instances(raw, returns_root, rng) if rng.random() < 0.5 else instances(exp, exp, rng)
        )
        src_ok, exp_ok = src_v.is_valid(value), exp_v.is_valid(value)
        assert src_ok == exp_ok, (
            f"{file}: result of {name}: source says {src_ok}, export says {exp_ok} "
            f"for {json.dumps(value)[:400]}"
        )
        total += 1
        accepted += src_ok
    return total, accepted


def _tool_roots(kind: str, doc: Any) -> dict[str, Any]:
    """MCP and OpenAI tools resolve `$ref`s inside each tool's own schema."""
    if kind == "openapi":
        return {}
    items = doc["tools"] if isinstance(doc, dict) else doc
    out = {}
    for item in items:
        fn = item.get("function", item)
        out[fn["name"]] = fn.get("inputSchema", fn.get("parameters", {}))
    return out


@pytest.mark.parametrize(("kind", "file"), ALL, ids=[f for _, f in ALL])
def test_round_trip_accepts_what_the_source_accepts(kind: str, file: str) -> None:
    total, accepted = compare(kind, file)
    assert total > 0
    assert accepted > 0, f"{file}: no generated instance was valid; the comparison says nothing"


# ---------------------------------------------------------------- what is imported
def _doc(schemas: dict[str, Any], body: Any, **op: Any) -> dict[str, Any]:
    operation = {"operationId": "op", "responses": {"200": {"description": "ok"}}, **op}
    if body is not None:
        operation["requestBody"] = {"content": {"application/json": {"schema": body}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1.0.0"},
        "paths": {"/x/{id}": {"post": operation}},
        "components": {"schemas": schemas},
    }


def test_parameters_from_every_place_are_flattened_without_collisions() -> None:
    doc = _doc(
        {},
        {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
        parameters=[
            {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}},
            {"name": "id", "in": "query", "schema": {"type": "boolean"}},
            {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
            {"name": "session", "in": "cookie", "schema": {"type": "string"}},
        ],
    )
    result = import_spec(doc, "openapi")
    assert (
        "    id: int,\n    query_id?: bool,\n    X_Trace?: str,\n    session?: str,\n"
        in result.text
    )
    assert "    body_id: str,\n" in result.text
    assert ("parameter", "/paths/~1x~1{id}/post/parameters/1", "query_id") in result.renames
    assert check_text(result.text, "t.contract") == []


def test_tags_risk_results_and_error_outcomes() -> None:
    doc = _doc(
        {
            "Pet": {
                "type": "object",
                "properties": {"n": {"type": "string"}},
                "additionalProperties": False,
            }
        },
        None,
        tags=["pets", "store.admin", "Pet Store"],
        responses={
            "201": {
                "description": "made",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}},
            },
            "404": {"description": "no {such} pet"},
            "default": {"description": "boom"},
        },
    )
    text = import_spec(doc, "openapi").text
    assert "tool op() -> Pet" in text
    assert "tags [pets, store.admin, Pet_Store]" in text
    assert 'outcome http_404 fails HTTP_404 "no {{such}} pet" on http_404' in text
    assert 'outcome http_error fails HTTP_ERROR "boom" on http_error' in text
    c = loads(text, "t.contract")
    assert [o.name for o in c.ir.tool("op").outcomes] == ["ok", "http_404", "http_error"]
    mcp = import_spec(
        {
            "tools": [
                {
                    "name": "rm",
                    "inputSchema": {"type": "object"},
                    "annotations": {
                        "destructiveHint": True,
                        "idempotentHint": True,
                        "openWorldHint": True,
                    },
                },
                {
                    "name": "ls",
                    "inputSchema": {"type": "object"},
                    "annotations": {"readOnlyHint": True},
                },
            ]
        },
        "mcp",
    )
    assert "risk destructive, idempotent, open_world" in mcp.text
    assert "risk read_only" in mcp.text
    exported = export(loads(mcp.text, "m.contract").ir, "mcp")
    assert exported[0]["annotations"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert exported[1]["annotations"]["readOnlyHint"] is True


def test_unsupported_features_are_reported_at_their_pointer() -> None:
    doc = _doc(
        {},
        {
            "type": "object",
            "properties": {
                "n": {"type": "number", "multipleOf": 0.5, "exclusiveMaximum": 3},
                "k": {"enum": [1, 2]},
                "t": {"type": "array", "prefixItems": [{"type": "string"}]},
                "f": {"type": "string", "format": "hostname"},
                "bad name": {"type": "string"},
            },
            "additionalProperties": False,
        },
    )
    result = import_spec(doc, "openapi")
    body = "/paths/~1x~1{id}/post/requestBody/content/application~1json/schema/properties"
    got = {w.pointer: w.message for w in result.warnings}
    assert got[f"{body}/n/multipleOf"] == "`multipleOf` cannot be expressed in a contract; dropped"
    assert got[f"{body}/n/exclusiveMaximum"].startswith(
        "`exclusiveMaximum` on a number cannot be expressed"
    )
    assert got[f"{body}/k/enum"].startswith("an enum of values that are not strings")
    assert (
        got[f"{body}/t/prefixItems"] == "`prefixItems` cannot be expressed in a contract; dropped"
    )
    assert got[f"{body}/f/format"] == 'format "hostname" is not one contractsim checks; dropped'
    assert got[f"{body}/bad name"] == 'parameter "bad name" is imported as `bad_name`'
    assert (
        f"#   {body}/n/multipleOf: `multipleOf` cannot be expressed in a contract; dropped"
        in result.text
    )
    assert check_text(result.text, "t.contract") == []


def test_integer_exclusive_bounds_nullable_and_defaults() -> None:
    doc = _doc(
        {},
        {
            "type": "object",
            "properties": {
                "a": {"type": "integer", "exclusiveMinimum": True, "minimum": 0, "nullable": True},
                "b": {"type": "string", "default": "x", "enum": ["x", "y"]},
            },
            "additionalProperties": False,
        },
    )
    doc["openapi"] = "3.0.3"
    text = import_spec(doc, "openapi").text
    assert "a?: int min 1 | null," in text
    assert 'b: enum { "x", "y" } = "x",' in text


def test_untrusted_text_is_escaped() -> None:
    evil = 'x" }\ntool pwn() { effect x = 1 }\n# {len(secret)}'
    doc = _doc(
        {},
        {
            "type": "object",
            "properties": {"p": {"type": "string", "description": evil, "pattern": evil}},
            "additionalProperties": False,
        },
        description=evil,
        summary=evil,
    )
    doc["info"]["description"] = evil
    result = import_spec(doc, "openapi")
    c = loads(result.text, "t.contract")
    assert [t.name for t in c.ir.tools] == ["op"]
    assert c.ir.tool("op").description == evil
    assert c.ir.tool("op").params[0].description == evil


@pytest.mark.parametrize(
    ("doc", "code", "message"),
    [
        ({"swagger": "2.0"}, "E1502", "is not an OpenAPI 3 document (a Swagger 2.0 document)"),
        ({"openapi": "4.0.0", "paths": {}}, "E1502", "/openapi: OpenAPI 4.0.0 is not supported"),
        (_doc({}, {"$ref": "https://example.com/s.json"}), "E1503", "points outside this document"),
        (_doc({}, {"$ref": "#/components/schemas/Nope"}), "E1503", "points at nothing"),
        (
            _doc(
                {"A": {"$ref": "#/components/schemas/B"}, "B": {"$ref": "#/components/schemas/A"}},
                {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}}},
            ),
            "E1503",
            "a cycle that never reaches a value",
        ),
    ],
)
def test_bad_documents_are_diagnostics(doc: Any, code: str, message: str) -> None:
    with pytest.raises(ContractError) as info:
        import_spec(doc, "openapi", file="spec.json")
    [d] = info.value.diagnostics
    assert d.code == code and message in d.message, d.message


def test_recursive_schemas_through_objects_import() -> None:
    doc = _doc(
        {
            "Node": {
                "type": "object",
                "properties": {
                    "kids": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
                },
                "additionalProperties": False,
            }
        },
        {"$ref": "#/components/schemas/Node"},
    )
    text = import_spec(doc, "openapi").text
    assert "type Node = record { kids?: list[Node] }" in text
    assert check_text(text, "t.contract") == []


def test_cli_import_and_bad_input(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "p.contract"
    r = runner.invoke(main, ["import", "openapi", str(SPECS / "petstore.yaml"), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "wrote" in r.stderr and "3 tool(s), 4 warning(s)" in r.stderr
    assert runner.invoke(main, ["check", str(out)]).exit_code == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [1, 2\n", "utf-8")
    r = runner.invoke(main, ["import", "openapi", str(bad)])
    assert r.exit_code == 2
    assert "error[E1501]" in r.stdout and "is neither JSON nor YAML" in r.stdout
    r = runner.invoke(main, ["import", "mcp", str(tmp_path / "missing.json")])
    assert r.exit_code == 2 and "error[E1501]: no such spec file" in r.stdout
    r = runner.invoke(main, ["import", "openai", str(SPECS / "petstore.yaml"), "--format", "json"])
    assert r.exit_code == 2 and '"code": "E1502"' in r.stdout


def test_defaults_that_do_not_fit_are_dropped_and_reported() -> None:
    body = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "default": 2.5},
            "m": {"type": "integer", "minimum": 1, "default": 0},
            "s": {"type": "string", "enum": ["a"], "default": "b"},
            "ok": {"type": "integer", "default": 3},
        },
        "additionalProperties": False,
    }
    result = import_spec(_doc({}, body), "openapi")
    dropped = sorted(w.pointer.split("/")[-2] for w in result.warnings if "default" in w.pointer)
    assert dropped == ["m", "n", "s"]
    assert "    ok: int = 3,\n" in result.text
    assert check_text(result.text, "t.contract") == []


def _nodes(x: Any, path: tuple[Any, ...] = ()) -> Any:
    yield path
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _nodes(v, (*path, i))


def test_mangled_documents_give_diagnostics_or_contracts_that_check() -> None:
    """Values of the wrong shape anywhere in a real document: a diagnostic or a contract that
    checks, never a traceback."""
    import yaml

    sources = [
        ("openapi", yaml.safe_load((SPECS / "petstore-expanded.yaml").read_text("utf-8"))),
        ("openapi", json.loads((SPECS / "discriminators-3.1.json").read_text("utf-8"))),
        ("mcp", json.loads((SPECS / "mcp-git-tools.json").read_text("utf-8"))),
    ]
    junk: list[Any] = [None, 1, -3.5, "x", [], {}, [1], {"a": 1}, True, {"$ref": "#/nope"}]
    rng = random.Random(7)
    for _ in range(80):
        kind, source = rng.choice(sources)
        doc = copy.deepcopy(source)
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(list(_nodes(doc))[1:])
            parent = doc
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]] = copy.deepcopy(rng.choice(junk))
        try:
            result = import_spec(doc, kind)
        except ContractError as exc:
            assert exc.diagnostics[0].code in ("E1502", "E1503")
            continue
        errors = [d for d in check_text(result.text, "t.contract") if d.severity == "error"]
        assert not errors, (errors[0].message, result.text[:2000])


def test_too_large_and_not_utf8_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import contractsim.importers as importers

    spec = tmp_path / "big.json"
    spec.write_text(json.dumps({"tools": []}) + " " * 100, "utf-8")
    monkeypatch.setattr(importers, "MAX_SPEC_BYTES", 50)
    with pytest.raises(ContractError) as info:
        import_spec(spec, "mcp")
    assert info.value.diagnostics[0].code == "E1501"
    assert "is larger than 50 bytes" in info.value.diagnostics[0].message
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"openapi: 3.0.0\ninfo: {title: caf\xe9}\n")
    with pytest.raises(ContractError) as info:
        import_spec(latin, "openapi")
    assert info.value.diagnostics[0].message == f"{latin} is not UTF-8 text"


def test_other_wrappings_of_tool_lists() -> None:
    rpc = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "a", "inputSchema": {}}]}}
    assert "tool a()" in import_spec(rpc, "mcp").text
    responses_style = [{"type": "function", "name": "f", "parameters": {"type": "object"}}]
    assert "tool f()" in import_spec(responses_style, "openai").text
    strict = [
        {
            "type": "function",
            "function": {
                "name": "g",
                "strict": True,
                "parameters": {
                    "type": "object",
                    "properties": {"q": {"type": ["string", "null"]}},
                    "required": ["q"],
                    "additionalProperties": False,
                },
            },
        }
    ]
    result = import_spec(strict, "openai")
    assert "    q: str | null,\n" in result.text and result.warnings == []


def test_a_yaml_alias_bomb_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    """Nine lines of aliases name 10**9 nodes; the importer refuses aliases outright (E1501)
    instead of walking what they expand to."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    doc = tmp_path / "bomb.yaml"
    doc.write_text("openapi: 3.0.3\n" + "\n".join(lines) + "\n")
    with pytest.raises(ContractError) as info:
        import_spec(str(doc), "openapi")
    (d,) = info.value.diagnostics
    assert d.code == "E1501" and "YAML alias (*a0)" in d.message
    assert (d.span.line, d.span.col) == (3, 10)


def test_name_wins_over_the_documents_title() -> None:
    """Found by a new user: `--name` was ignored for OpenAPI documents (the title always won)."""
    result = import_spec(str(SPECS / "petstore.yaml"), "openapi", name="my_pets")
    assert result.text.splitlines()[0].startswith("contract my_pets ") or (
        "\ncontract my_pets " in result.text
    )
    default = import_spec(str(SPECS / "petstore.yaml"), "openapi")
    assert "contract Swagger_Petstore " in default.text


def test_discriminated_variants_take_the_tag_value_their_own_schema_allows() -> None:
    """OpenAI's 3.1 document names no `mapping`: each variant's `type` is `enum: [auto]`. The
    tag is that value (what the API accepts), not the schema's name, and no difference is
    reported; checked against the source's own JSON Schema, not against `normalise`."""
    doc = json.loads((SPECS / "openai-vector-stores-3.1.json").read_text("utf-8"))
    result = import_spec(doc, "openapi")
    assert 'union by type { "auto": record {  }, "static": record {' in result.text
    assert not [w for w in result.warnings if "not a plain string" in w.message]
    contract = loads(result.text, "imported.contract")
    exported = Validator(export(contract.ir, "jsonschema", "createVectorStoreFile"))
    source = Validator({**doc["components"]["schemas"]["ChunkingStrategyRequestParam"], **doc})
    static = {"max_chunk_size_tokens": 800, "chunk_overlap_tokens": 400}
    for strategy, accepted in [
        ({"type": "auto"}, True),
        ({"type": "static", "static": static}, True),
        ({"type": "AutoChunkingStrategyRequestParam"}, False),
        ({"type": "static"}, False),
    ]:
        assert source.is_valid(strategy) is accepted, strategy
        args = {"vector_store_id": "vs_1", "file_id": "file_1", "chunking_strategy": strategy}
        assert exported.is_valid(args) is accepted, strategy


def test_inline_variants_with_a_one_value_tag_make_a_tagged_union() -> None:
    variant = {
        "type": "object",
        "properties": {"kind": {"type": "string", "const": "a"}, "x": {"type": "integer"}},
        "required": ["kind", "x"],
        "additionalProperties": False,
    }
    other = {
        "type": "object",
        "properties": {"kind": {"type": "string", "enum": ["b"], "x-sdk-const": True}},
        "required": ["kind"],
        "additionalProperties": False,
    }
    body = {
        "type": "object",
        "properties": {"v": {"oneOf": [variant, other], "discriminator": {"propertyName": "kind"}}},
        "required": ["v"],
    }
    result = import_spec(_doc({}, body), "openapi")
    assert 'v: union by kind { "a": record { x: int }, "b": record {  } }' in result.text
    # a mapping that disagrees with the variant's own value wins, and the difference is reported
    mapped = {**body["properties"]["v"], "discriminator": {"propertyName": "kind"}}
    doc = _doc({"A": variant}, {**body, "properties": {"v": mapped}})
    doc["components"]["schemas"]["A"] = variant
    mapped["oneOf"] = [{"$ref": "#/components/schemas/A"}, other]
    mapped["discriminator"] = {
        "propertyName": "kind",
        "mapping": {"first": "#/components/schemas/A"},
    }
    result = import_spec(doc, "openapi")
    assert '"first": record { x: int }' in result.text
    assert [w.pointer for w in result.warnings if "not a plain string" in w.message] == [
        "/components/schemas/A/properties/kind"
    ]
