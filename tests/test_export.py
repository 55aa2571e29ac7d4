"""Exports: JSON Schema, OpenAPI 3.1, OpenAI strict tools, MCP tools and prompt cards.

Set CONTRACTSIM_UPDATE_GOLDEN=1 to rewrite tests/golden/cards/*.txt."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import REVIEW_CONTRACT, cli_exit
from pydantic import ValidationError

from contractsim.api import load, loads
from contractsim.compiler.validators import FORMAT_CHECKS
from contractsim.export import (
    TARGETS,
    ExportError,
    export,
    from_openai_arguments,
    to_openai_arguments,
)
from contractsim.export.openai import SUPPORTED_FORMATS, SUPPORTED_KEYWORDS
from contractsim.simulator.formats import load_plan, resolve_step

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*/*.contract"))
GOLDEN = ROOT / "tests" / "golden" / "cards"
UPDATE = os.environ.get("CONTRACTSIM_UPDATE_GOLDEN") == "1"

FORMATS = jsonschema.FormatChecker(formats=())
for _name, _check in FORMAT_CHECKS.items():
    FORMATS.checks(_name)(_check)


def _id(path: Path) -> str:
    return path.stem


def _plan_calls(contract_path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    c = load(contract_path)
    out = []
    for plan in sorted((contract_path.parent / "plans").glob("*.yaml")):
        for step in load_plan(plan).steps:
            tool, args = resolve_step(c.compiled, step)
            out.append((plan.name, tool, args))
    return out


# ------------------------------------------------------------------------------- JSON Schema


@pytest.mark.parametrize("path", EXAMPLES, ids=_id)
def test_json_schemas_are_valid_2020_12(path: Path) -> None:
    c = load(path)
    schemas = export(c.ir, "jsonschema")
    assert isinstance(schemas, dict) and list(schemas) == c.tools
    for schema in schemas.values():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["type"] == "object" and schema["additionalProperties"] is False


@pytest.mark.parametrize("path", EXAMPLES, ids=_id)
def test_schema_accepts_exactly_what_the_simulator_accepts(path: Path) -> None:
    """A differential test of the two validators on every call of every example plan."""
    c = load(path)
    schemas = export(c.ir, "jsonschema")
    assert isinstance(schemas, dict)
    checked = 0
    for plan, tool, args in _plan_calls(path):
        if tool not in c.compiled.tools:
            continue
        validator = jsonschema.Draft202012Validator(schemas[tool], format_checker=FORMATS)
        schema_ok = validator.is_valid(args)
        ctool = c.compiled.tools[tool]
        try:
            ctool.args_model.model_validate(args)
            sim_ok = True
        except ValidationError:
            sim_ok = False
        step = c.simulator().step(c.simulator().initial_state(), tool, args)
        codes = {v.code for b in step.branches for v in b.violations}
        assert sim_ok == ("INVALID_ARGUMENT" not in codes)
        # the schema is the declared interface: a value only `accepts` takes is off spec
        declared_ok = sim_ok
        if sim_ok and ctool.declared_model is not None:
            try:
                ctool.declared_model.model_validate(args)
            except ValidationError:
                declared_ok = False
        assert schema_ok == declared_ok, (plan, tool, args, list(validator.iter_errors(args)))
        checked += 1
    assert checked > 0


def test_schema_details() -> None:
    c = loads(
        'contract t version "1.0.0"\n'
        "type Tree = record { label: str, kids: list[Tree] = [] }\n"
        "type Shape = union by kind { circle: Circle, square: record { side: float min 0 } }\n"
        "type Circle = record { r: float }\n"
        "tool f(t: Tree, s: Shape, tags: set[str] min_items 1, m: map[str, int] max_items 3,\n"
        '       pair: tuple[int, str], id: str format "uuid4", opt?: int, u: int | str) {}\n'
    )
    s = export(c.ir, "jsonschema", "f")
    assert isinstance(s, dict)
    props = s["properties"]
    assert props["t"] == {"$ref": "#/$defs/Tree"}
    assert s["$defs"]["Tree"]["properties"]["kids"]["items"] == {"$ref": "#/$defs/Tree"}
    assert s["$defs"]["Tree"]["properties"]["kids"]["default"] == []
    variants = s["$defs"]["Shape"]["oneOf"]
    assert [v["properties"]["kind"] for v in variants] == [{"const": "circle"}, {"const": "square"}]
    assert props["tags"] == {
        "type": "array",
        "items": {"type": "string"},
        "uniqueItems": True,
        "minItems": 1,
    }
    assert props["m"]["additionalProperties"] == {"type": "integer"}
    assert props["m"]["maxProperties"] == 3
    assert props["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert props["id"]["format"] == "uuid" and "4" in props["id"]["pattern"]
    assert props["opt"] == {"type": ["integer", "null"]}
    assert props["u"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert s["required"] == ["t", "s", "tags", "m", "pair", "id", "u"]
    jsonschema.Draft202012Validator.check_schema(s)
    v = jsonschema.Draft202012Validator(s, format_checker=FORMATS)
    good = {
        "t": {"label": "a", "kids": [{"label": "b"}]},
        "s": {"kind": "square", "side": 2},
        "tags": ["x"],
        "m": {"a": 1},
        "pair": [1, "x"],
        "id": "9b2f3c1e-4a5d-4e6f-8a7b-1c2d3e4f5a6b",
        "u": 3,
    }
    assert v.is_valid(good)
    assert not v.is_valid({**good, "s": {"kind": "square", "side": -1}})
    assert not v.is_valid({**good, "id": "123e4567-e89b-12d3-a456-426614174000"})  # version 1
    assert not v.is_valid({**good, "t": {"label": "a", "kids": [{"label": 1}]}})


# ---------------------------------------------------------------------------------- OpenAPI


@pytest.mark.parametrize("path", EXAMPLES, ids=_id)
def test_openapi_documents_are_valid(path: Path) -> None:
    from openapi_spec_validator import validate

    c = load(path)
    doc = export(c.ir, "openapi")
    assert isinstance(doc, dict)
    validate(doc)
    assert sorted(doc["paths"]) == sorted(f"/tools/{t}" for t in c.tools)
    for tool in c.ir.tools:
        op = doc["paths"][f"/tools/{tool.name}"]["post"]
        assert op["operationId"] == tool.name
        text = json.dumps(op["responses"])
        declared = [
            x.code or "PRECONDITION_FAILED" for x in tool.conditions if x.strength == "require"
        ]
        declared += [o.code for o in tool.outcomes if o.outcome == "fails" and o.code]
        for code in ["INVALID_ARGUMENT", *declared]:
            assert f'"const": "{code}"' in text, (tool.name, code)


# ----------------------------------------------------------------------------------- OpenAI


def strict_problems(schema: Any, where: str = "$") -> list[str]:
    """Why a schema is not acceptable to OpenAI's strict mode (empty when it is)."""
    problems: list[str] = []
    if isinstance(schema, dict):
        for key in schema:
            if key not in SUPPORTED_KEYWORDS:
                problems.append(f"{where}: unsupported keyword {key}")
        if "$ref" in schema and len(schema) > 1:
            problems.append(f"{where}: keywords next to $ref")
        if "format" in schema and schema["format"] not in SUPPORTED_FORMATS:
            problems.append(f"{where}: unsupported format {schema['format']}")
        kind = schema.get("type")
        is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
        if is_object or "properties" in schema:
            if schema.get("additionalProperties") is not False:
                problems.append(f"{where}: additionalProperties is not false")
            if set(schema.get("required", [])) != set(schema.get("properties", {})):
                problems.append(f"{where}: not every property is required")
        for key in ("properties", "$defs"):
            for name, sub in schema.get(key, {}).items():
                problems += strict_problems(sub, f"{where}.{key}.{name}")
        if isinstance(schema.get("items"), dict):
            problems += strict_problems(schema["items"], f"{where}.items")
        for i, sub in enumerate(schema.get("anyOf", [])):
            problems += strict_problems(sub, f"{where}.anyOf[{i}]")
    return problems


@pytest.mark.parametrize("path", EXAMPLES, ids=_id)
def test_openai_tools_obey_strict_mode(path: Path) -> None:
    c = load(path)
    tools = export(c.ir, "openai")
    assert isinstance(tools, list) and len(tools) == len(c.tools)
    for t in tools:
        assert t["type"] == "function" and t["function"]["strict"] is True
        params = t["function"]["parameters"]
        assert params["type"] == "object" and "anyOf" not in params
        jsonschema.Draft202012Validator.check_schema(params)
        assert strict_problems(params) == [], t["function"]["name"]


@pytest.mark.parametrize("path", EXAMPLES, ids=_id)
def test_openai_argument_shapes_round_trip(path: Path) -> None:
    """Arguments the simulator accepts, in the strict shape, fit the strict schema and come
    back as arguments the simulator accepts."""
    c = load(path)
    for _plan, tool, args in _plan_calls(path):
        ctool = c.compiled.tools.get(tool)
        if ctool is None:
            continue
        try:
            # the schema is the declared interface (an off-spec value `accepts` takes is not)
            (ctool.declared_model or ctool.args_model).model_validate(args)
        except ValidationError:
            continue
        definition = export(c.ir, "openai", tool)
        assert isinstance(definition, dict)
        shaped = to_openai_arguments(c.ir, ctool.ir, args)
        jsonschema.validate(shaped, definition["function"]["parameters"])
        back = from_openai_arguments(c.ir, ctool.ir, shaped)
        ctool.args_model.model_validate(back)


def test_openai_maps_become_pairs() -> None:
    c = loads('contract t version "1.0.0"\ntool f(m: map[str, int], n?: int) {}\n')
    tool = c.ir.tools[0]
    params = export(c.ir, "openai", "f")["function"]["parameters"]  # type: ignore[index]
    assert params["properties"]["m"]["type"] == "array"
    assert params["required"] == ["m", "n"]
    shaped = to_openai_arguments(c.ir, tool, {"m": {"a": 1}})
    assert shaped == {"m": [{"key": "a", "value": 1}], "n": None}
    jsonschema.validate(shaped, params)
    assert from_openai_arguments(c.ir, tool, shaped) == {"m": {"a": 1}}


# -------------------------------------------------------------------------------------- MCP


@pytest.mark.parametrize("path", EXAMPLES, ids=_id)
def test_mcp_tools_validate(path: Path) -> None:
    import mcp.types

    c = load(path)
    tools = export(c.ir, "mcp")
    assert isinstance(tools, list)
    for d, tool in zip(tools, c.ir.tools):
        model = mcp.types.Tool.model_validate(d)
        assert model.name == tool.name
        assert d["inputSchema"]["type"] == "object"
        jsonschema.Draft202012Validator.check_schema(d["inputSchema"])
        if tool.returns is not None:
            assert d["outputSchema"]["type"] == "object"
            jsonschema.Draft202012Validator.check_schema(d["outputSchema"])
        hints = d["annotations"]
        assert hints["readOnlyHint"] == tool.has_risk("read_only")
        assert hints["idempotentHint"] == tool.has_risk("idempotent")
        assert hints.get("destructiveHint") == (
            True if tool.has_risk("destructive") else False if tool.has_risk("read_only") else None
        )
        assert hints.get("openWorldHint") == (True if tool.has_risk("open_world") else None)


def test_mcp_wraps_a_non_record_result() -> None:
    c = loads('contract t version "1.0.0"\ntool f() -> list[int] {}\n')
    d = export(c.ir, "mcp", "f")
    assert isinstance(d, dict)
    assert d["outputSchema"]["properties"]["result"] == {
        "type": "array",
        "items": {"type": "integer"},
    }
    assert d["_meta"]["x-contract-output-wrapped"] == "result"


# ------------------------------------------------------------------------------------ cards


@pytest.mark.parametrize(
    "example, tool", [("file_system", "delete_file"), ("email", "flush_outbox")]
)
def test_card_golden(example: str, tool: str) -> None:
    c = load(ROOT / "examples" / example / f"{example}.contract")
    text = c.card(tool)
    assert text == c.export("card", tool)
    golden = GOLDEN / f"{example}.{tool}.txt"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, "utf-8")
    assert golden.exists(), f"{golden} is missing; run with CONTRACTSIM_UPDATE_GOLDEN=1"
    assert text == golden.read_text("utf-8")


def test_card_unknown_tool() -> None:
    c = load(EXAMPLES[0])
    with pytest.raises(ExportError) as info:
        c.card("nope")
    assert "nope" in info.value.message
    with pytest.raises(ExportError):
        c.export("yaml")


# ------------------------------------------------------------------------ nothing is dropped

EVERYTHING = """contract everything version "1.0.0"
event blip "a blip"
state { n: int = 0  log: list[str] = [] }
machine m { states a, b  initial a  a -> b on go  b -> a on back }
tool go(x: int min 0) -> record { ok: bool }
    "Goes."
    cost 7
    tags [zz.tag_marker]
    risk destructive, needs_confirmation
{
  require n < 99 else PRE_MARKER "too many" hint "HINT_MARKER"
  should x > 1 else SOFT_MARKER "small"
  effect n += 1
  ensure n > 0 else POST_MARKER
  outcome done success
  outcome lost fails OUTCOME_MARKER "lost" on blip probability 0.25 { log.append("lost") }
}
tool back() { }
"""
MARKERS = [
    "PRE_MARKER",
    "HINT_MARKER",
    "SOFT_MARKER",
    "POST_MARKER",
    "OUTCOME_MARKER",
    "0.25",
    "blip",
    "n += 1",
    "7",
    "zz.tag_marker",
    "destructive",
    "needs_confirmation",
    "PROTOCOL_VIOLATION",
]


@pytest.mark.parametrize("target", TARGETS)
def test_nothing_is_silently_dropped(target: str) -> None:
    c = loads(EVERYTHING)
    out = c.export(target, "go")
    text = out if isinstance(out, str) else json.dumps(out)
    for marker in MARKERS:
        assert marker in text, (target, marker)
    if target != "card":
        ext = text if target == "openai" else json.dumps(out)
        if target != "openai":
            for key in ("preconditions", "effects", "outcomes", "protocol", "cost", "tags", "risk"):
                assert f'"x-contract-{key}"' in ext, (target, key)


def test_exports_are_deterministic() -> None:
    for path in EXAMPLES:
        for target in TARGETS:
            a = export(load(path).ir, target)
            b = export(load(path).ir, target)
            assert json.dumps(a) == json.dumps(b)


# -------------------------------------------------------------------------------------- CLI


def run(*args: str) -> tuple[int, str]:
    return cli_exit("export", *args)


@pytest.mark.parametrize("target", TARGETS)
def test_cli_export_every_target(target: str) -> None:
    path = str(ROOT / "examples" / "email" / "email.contract")
    code, out = run(path, "--to", target)
    assert code == 0
    if target != "card":
        data = json.loads(out)
        c = load(path)
        assert data == export(c.ir, target)
        assert out == json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        assert "flush_outbox()" in out


def test_cli_export_one_tool_to_file(tmp_path: Path) -> None:
    path = str(ROOT / "examples" / "file_system" / "file_system.contract")
    target = tmp_path / "tool.json"
    code, out = run(path, "--to", "openai", "--tool", "delete_file", "-o", str(target))
    assert code == 0 and out == ""
    data = json.loads(target.read_text("utf-8"))
    assert data["function"]["name"] == "delete_file"


def test_cli_export_unknown_tool_suggests() -> None:
    path = str(ROOT / "examples" / "file_system" / "file_system.contract")
    code, out = run(path, "--to", "mcp", "--tool", "delete_fil")
    assert code == 2
    assert "E0706" in out and "did you mean `delete_file`?" in out


def test_cli_export_bad_inputs(tmp_path: Path) -> None:
    code, out = run(str(tmp_path / "missing.contract"), "--to", "card")
    assert code == 2 and "E0100" in out
    path = str(ROOT / "examples" / "email" / "email.contract")
    code, _ = run(path, "--to", "yaml")
    assert code == 2
    code, _ = run(path, "--to", "card", "-o", str(tmp_path / "no" / "such" / "dir.txt"))
    assert code == 2


@pytest.mark.parametrize("target", ["openai", "mcp"])
def test_function_names_past_64_characters_are_refused(tmp_path: Path, target: str) -> None:
    """OpenAI function names match ^[a-zA-Z0-9_-]{1,64}$: a longer tool name is E0706, never
    written into a definition the API rejects."""
    long, ok = "t" * 65, "u" * 64
    text = f'contract c version "1.0.0"\ntool {ok}() {{ }}\ntool {long}() {{ }}\n'
    contract = loads(text, "c.contract")
    assert contract.export(target, ok)["name" if target == "mcp" else "function"]
    with pytest.raises(ExportError) as info:
        contract.export(target)
    assert info.value.message == (
        f"tool `{long}` cannot be exported to {target}: its name has 65 characters, and a "
        "function name has at most 64 (letters, digits, `_` and `-`)"
    )
    path = tmp_path / "c.contract"
    path.write_text(text)
    code, out = run(str(path), "--to", target)
    assert code == 2 and "error[E0706]: tool `ttttt" in out
    assert contract.export("jsonschema")  # other targets have no such rule


# ----------------------------------------------- found in review: OpenAI, card, OpenAPI


def _openai_props() -> dict[str, dict[str, object]]:
    tools = loads(REVIEW_CONTRACT).export("openai")
    assert isinstance(tools, list)
    g = next(t for t in tools if t["function"]["name"] == "g")
    return g["function"]["parameters"]["properties"]  # type: ignore[no-any-return]


def test_openai_optional_map_becomes_a_nullable_list_of_pairs() -> None:
    a = _openai_props()["a"]
    assert a["type"] == ["array", "null"]
    assert a["items"]["additionalProperties"] is False  # type: ignore[index]


def test_openai_use_site_constraints_add_to_the_type_s_own() -> None:
    props = _openai_props()
    assert props["b"]["pattern"] == "^[a-z]+$"
    assert "^a" in str(props["b"]["description"])
    assert (props["c"]["minimum"], props["c"]["maximum"]) == (0, 100)


def test_card_names_protocol_guards_and_escapes_strings() -> None:
    c = loads(REVIEW_CONTRACT)
    card = c.card("start")
    assert "idle (when count < 3)" in card
    assert "idle -> busy when count < 3" in card
    g_card = c.card("g")
    assert '"x\\"y"' in g_card and '"new\\nline"' in g_card


def test_openapi_machines_keep_their_guards() -> None:
    doc = loads(REVIEW_CONTRACT).export("openapi")
    assert isinstance(doc, dict)
    (machine,) = doc["x-contract-machines"]
    start = next(t for t in machine["transitions"] if t["on"] == "start")
    assert start["when"] == "count < 3"
