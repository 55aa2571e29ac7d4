"""Regression tests for problems found in review of the exports and diagrams."""

from __future__ import annotations

import contractsim
from contractsim.render.mermaid import node_id

TYPES = """contract t version "1.0.0"
type Lower = str pattern r"^[a-z]+$"
type Percent = float min 0 max 100
type Odd = enum { plain, "x\\"y", "new\\nline" }
state { count: int = 0 }
tool g(a?: map[str, int], b: Lower pattern r"^a", c: Percent max 200, o: Odd = "plain") { }
tool start() { }
tool stop() { }
machine life {
  states idle, busy
  initial idle
  final idle
  idle -> busy on start when count < 3
  busy -> busy on g
  busy -> idle on stop
}
"""


def _openai_props() -> dict[str, dict[str, object]]:
    tools = contractsim.loads(TYPES).export("openai")
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
    c = contractsim.loads(TYPES)
    card = c.card("start")
    assert "idle (when count < 3)" in card
    assert "idle -> busy when count < 3" in card
    g_card = c.card("g")
    assert '"x\\"y"' in g_card and '"new\\nline"' in g_card


def test_openapi_machines_keep_their_guards() -> None:
    doc = contractsim.loads(TYPES).export("openapi")
    assert isinstance(doc, dict)
    (machine,) = doc["x-contract-machines"]
    start = next(t for t in machine["transitions"] if t["on"] == "start")
    assert start["when"] == "count < 3"


def test_mermaid_ids_are_sanitised_and_stay_distinct() -> None:
    assert node_id("plan_tool_end x") == "plan_tool_end_x20_x"
    assert node_id('foo-bar"baz') != node_id("foo_bar_baz")
    assert all(ch.isalnum() or ch == "_" for ch in node_id('a.b|c"d<e>'))


def test_a_protocol_self_loop_enables_nothing() -> None:
    from contractsim.render.deps import dependencies

    deps = dependencies(contractsim.loads(TYPES).ir)
    assert not any(d.source == "g" and "machine life" in d.reasons for d in deps)


def test_uuid_format_needs_the_standard_hyphens() -> None:
    sim = contractsim.loads(
        'contract u version "1.0.0"\ntool f(id: str format "uuid4") { }\n'
    ).simulator(now="2024-01-01T00:00:00Z")
    bad = sim.step(sim.initial_state(), "f", {"id": "9b2f3c1e4a5d-4e6f-8a7b-1c2d3e4f5a6b-"})
    good = sim.step(sim.initial_state(), "f", {"id": "9b2f3c1e-4a5d-4e6f-8a7b-1c2d3e4f5a6b"})
    assert (bad.verdict, good.verdict) == ("fails", "ok")
