"""The lowering and checking shortcuts of the sixth speed round (branch s6-lower) change no
result: each one is compared with the general code it stands in for."""

from __future__ import annotations

import dataclasses
import itertools
import pickle
from pathlib import Path

import pytest

from contractsim.api import check_text
from contractsim.compiler.checks import COMPILER_CHECKS
from contractsim.diagnostics import ContractError, Span, render, span_at
from contractsim.dsl import check as check_module
from contractsim.dsl import ir
from contractsim.dsl import lets as lets_module
from contractsim.dsl.check import obviously_conforms
from contractsim.dsl.lower import lower
from contractsim.dsl.typecheck import Checker
from contractsim.dsl.visitor import EXPR_KINDS, STMT_KINDS, child_exprs, iter_child_nodes
from contractsim.dsl.walk import all_exprs, expr_roots, replace_nodes, walk_stmts
from contractsim.grammar.parse import parse

H = 'contract demo version "1.0.0"\n'

_DECLS = """
type Item = record { name: str min_length 1, qty: int min 0 }
type Items = map[str, Item]
type Tags = list[str min_length 1]
type Few = list[int] min_items 1
type FewAlias = Few
type Labels = set[str]
type Maybe = Item | null
type MaybeAlias = Maybe
type Pair = tuple[int, str]
"""

_TYPES = [
    "list[int]",
    "list[Item]",
    "set[str]",
    "map[str, Item]",
    "map[str, list[Item]]",
    "Items",
    "Tags",
    "Few",
    "FewAlias",
    "Labels",
    "Maybe",
    "MaybeAlias",
    "Item | null",
    "str | null",
    "null | int",
    "Pair",
    "Item",
    "list[int] max_items 0",
    "list[int] min_items 1",
    "map[str, int] min_items 1",
    "str",
]
_VALUES = ["[]", "{}", "{:}", "null", "[1]", '{"a"}', '{"a": 1}', "()"]


def _contract(type_text: str, value_text: str) -> ir.Contract | None:
    text = H + _DECLS + f"const C: {type_text} = {value_text}\n"
    try:
        contract, _ = lower(parse(text, "t.contract"), "t.contract")
    except Exception:  # a value the grammar does not take (`{:}`): nothing to compare
        return None
    return contract


@pytest.mark.parametrize(("type_text", "value_text"), list(itertools.product(_TYPES, _VALUES)))
def test_obviously_conforms_only_where_the_validator_finds_no_problem(
    type_text: str, value_text: str
) -> None:
    contract = _contract(type_text, value_text)
    if contract is None:
        pytest.skip("not a contract")
    const = contract.consts[0]
    assert const.type is not None
    ck = Checker(contract)
    if obviously_conforms(const.value, const.type, ck.type_decls):
        assert COMPILER_CHECKS.conformance_problem(ck, const.value, const.type) is None


@pytest.mark.parametrize(
    ("type_text", "value_text", "expected"),
    [
        ("list[int]", "[]", True),
        ("map[str, Item]", "{}", True),
        ("Items", "{}", True),
        ("Labels", "{}", True),
        ("Maybe", "null", True),
        ("MaybeAlias", "null", True),
        ("Item | null", "null", True),
        ("Few", "[]", False),  # a constraint: the validator says why
        ("FewAlias", "[]", False),
        ("list[int] min_items 1", "[]", False),
        ("set[str]", "[]", False),  # a list for a set: the validator's verdict
        ("Item", "null", False),
        ("list[int]", "[1]", False),
        ("Pair", "[]", False),
    ],
)
def test_obviously_conforms_cases(type_text: str, value_text: str, expected: bool) -> None:
    contract = _contract(type_text, value_text)
    assert contract is not None
    const = contract.consts[0]
    assert const.type is not None
    assert obviously_conforms(const.value, const.type, Checker(contract).type_decls) is expected


@pytest.mark.parametrize(("type_text", "value_text"), list(itertools.product(_TYPES, _VALUES)))
def test_conformance_diagnostics_unchanged(
    type_text: str, value_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = H + _DECLS + f"const C: {type_text} = {value_text}\nstate {{ s: {type_text} = C }}\n"
    fast = [render(d) for d in check_text(text, "t.contract")]
    monkeypatch.setattr(check_module, "obviously_conforms", lambda *_: False)
    slow = [render(d) for d in check_text(text, "t.contract")]
    assert fast == slow


# ------------------------------------------------------------------ resolving after the check

_ROOT = Path(__file__).resolve().parent.parent
#: `{}` outside initial values (in bindings, conditions, effects) and bindings used in a tool
_EMPTIES_AND_LETS = """\
contract extra version "1.0.0"

state {
  groups: map[str, map[str, int]] = {}
  tags: set[str] = {}
  seen: list[int] = []
}

tool add(group: str, name: str, n: int) {
  let g = get(groups, group, {})
  let total = n + 1
  require g != {} or total > 0 else E_EMPTY "no group {group}"
  effect {
    groups[group] = get(groups, group, {})
    tags.add(name)
    seen.append(total)
  }
  ensure get(groups, group, {}) != {}
}
"""

_SOURCES = [
    (path.name, path.read_text(encoding="utf-8"))
    for path in sorted(_ROOT.glob("examples/*/*.contract"))
    + sorted((_ROOT / "tests" / "golden").glob("*.contract"))
] + [("empties_and_lets.contract", _EMPTIES_AND_LETS)]


def _lowered(name: str, text: str) -> ir.Contract | None:
    try:
        contract, _ = lower(parse(text, name), name)
    except ContractError:
        return None
    return contract


def _reference_resolve(ck: Checker) -> ir.Contract:
    """``resolve_empty`` then ``inline_tool_lets`` as they were: one walk of the whole contract
    for each."""
    table: dict[int, ir.Node] = {}
    for node, literal in ck.empty_literals.values():
        if literal.kind == "map":
            table[id(node)] = ir.MapLit(span=node.span, entries=())
        elif literal.kind in ("set", "list"):
            table[id(node)] = ir.Collection(span=node.span, type=literal.kind)
    contract = replace_nodes(ck.c, table) if table else ck.c
    table = {}
    for tool in contract.tools:
        if tool.lets:
            lets_module._collect_tool(tool, table)
    return replace_nodes(contract, table) if table else contract


@pytest.mark.parametrize(("name", "text"), _SOURCES, ids=[name for name, _ in _SOURCES])
def test_resolved_ir_unchanged(name: str, text: str) -> None:
    contract = _lowered(name, text)
    if contract is None:
        pytest.skip("a syntax error: nothing to resolve")
    ck = Checker(contract)
    ck.back_end = COMPILER_CHECKS
    for run in check_module.PASSES:
        run(ck)
    expected = ir.dump_json(_reference_resolve(ck))
    got = ir.dump_json(lets_module.inline_tool_lets(check_module.resolve_empty(ck)))
    assert got == expected


# ------------------------------------------------------------------ lowering


def test_span_at_makes_what_the_dataclass_makes() -> None:
    # span_at sets the five slots itself: a new field, a default factory or a __post_init__
    # on Span must be seen here first
    assert [f.name for f in dataclasses.fields(Span)] == [
        "file",
        "line",
        "col",
        "end_line",
        "end_col",
    ]
    assert not hasattr(Span, "__post_init__")
    made = span_at("f.contract", 3, 4, 5, 6)
    expected = Span(file="f.contract", line=3, col=4, end_line=5, end_col=6)
    assert type(made) is Span
    assert made.same_place(expected)
    assert repr(made) == repr(expected)
    assert pickle.loads(pickle.dumps(made)).same_place(expected)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.line = 1  # type: ignore[misc]


# ------------------------------------------------------------------ message templates

_TEMPLATE_CASES = [
    r"plain text",
    r"",
    r"{x}",
    r"a {x} b {y.z} c",
    r"{{literal}} and }} and {{",
    r"\{escaped\} {x}",
    r"\\{x}",
    r"{x",
    r"a } b",
    r"{len(items)} items, {{ {items[0]} }}",
    r'nested {f({"a": 1})} done',
    r"unicode \u00e9 {x} \n tab\t",
    r"{}",
    r"{ x }",
    r"{1 +}",
]

#: what lowering made of each message before the template reader skipped plain text in one
#: step (its parts: text, hole kind, hole position; and the diagnostics)
_TEMPLATE_EXPECTED = [
    "'plain text' 'plain text' [('plain text', None, None)] []",
    "'' '' [] []",
    "'{x}' '{x}' [(None, 'Name', (4, 28, 29))] []",
    "'a {x} b {y.z} c' 'a {x} b {y.z} c' [('a ', None, None), (None, 'Name', (4, 30, 31)), (' b ', None, None), (None, 'Attr', (4, 36, 39)), (' c', None, None)] []",  # noqa: E501
    "'{{literal}} and }} and {{' '{{literal}} and }} and {{' [('{literal} and } and {', None, None)] []",  # noqa: E501
    "'\\\\{escaped\\\\} {x}' '{escaped} {x}' [('{escaped} ', None, None), (None, 'Name', (4, 38, 39))] []",  # noqa: E501
    "'\\\\\\\\{x}' '\\\\{x}' [('\\\\', None, None), (None, 'Name', (4, 29, 30))] []",
    "'{x' '{x' [('{x', None, None)] [('E0108', '`{` in a message opens a value that is never closed')]",  # noqa: E501
    "'a } b' 'a } b' [('a } b', None, None)] []",
    "'{len(items)} items, {{ {items[0]} }}' '{len(items)} items, {{ {items[0]} }}' [(None, 'Call', (4, 28, 38)), (' items, { ', None, None), (None, 'Index', (4, 51, 59)), (' }', None, None)] []",  # noqa: E501
    "'nested {f({\"a\": 1})} done' 'nested {f({\"a\": 1})} done' [('nested ', None, None), (None, 'Call', (4, 35, 46)), (' done', None, None)] []",  # noqa: E501
    "'unicode \\\\u00e9 {x} \\\\n tab\\\\t' 'unicode é {x} \\n tab\\t' [('unicode é ', None, None), (None, 'Name', (4, 38, 39)), (' \\n tab\\t', None, None)] []",  # noqa: E501
    "'{}' '{}' [(None, 'ScalarLit', (4, 26, 30))] [('E0108', 'the value `{}` in this message is not an expression: unexpected end of file')]",  # noqa: E501
    "'{ x }' '{ x }' [(None, 'Name', (4, 29, 30))] []",
    "'{1 +}' '{1 +}' [(None, 'ScalarLit', (4, 26, 33))] [('E0108', 'the value `{1 +}` in this message is not an expression: unexpected end of file')]",  # noqa: E501
]


def _template_line(case: str) -> str:
    text = (
        'contract d version "1.0.0"\nstate { x: int = 0 }\ntool t(x: int) {\n'
        '  require x > 0 else E_X "' + case.replace('"', '\\"') + '"\n}\n'
    )
    contract, diags = lower(parse(text, "t"), "t")
    msg = contract.tools[0].conditions[0].message
    assert msg is not None
    parts = [
        (
            p.text,
            type(p.expr).__name__ if p.expr else None,
            (p.expr.span.line, p.expr.span.col, p.expr.span.end_col) if p.expr else None,
        )
        for p in msg.parts
    ]
    return f"{case!r} {msg.source!r} {parts} {[(d.code, d.message) for d in diags]}"


@pytest.mark.parametrize(
    ("case", "expected"), list(zip(_TEMPLATE_CASES, _TEMPLATE_EXPECTED, strict=True))
)
def test_template_parts_unchanged(case: str, expected: str) -> None:
    assert _template_line(case) == expected


@pytest.mark.parametrize(("name", "text"), _SOURCES, ids=[name for name, _ in _SOURCES])
def test_walks_unchanged(name: str, text: str) -> None:
    """``all_exprs`` and the unused-name lint's walk see the nodes the generator walk over
    ``iter_child_nodes`` saw, in the same order."""
    contract = _lowered(name, text)
    if contract is None:
        pytest.skip("a syntax error: nothing to walk")

    def reference_children(node: ir.Node) -> list[ir.Node]:
        out: list[ir.Node] = []
        for child in iter_child_nodes(node):
            if isinstance(child, EXPR_KINDS):
                out.append(child)
            elif not isinstance(child, STMT_KINDS):
                out.extend(reference_children(child))
        return out

    expected: list[int] = []
    for root in expr_roots(contract):
        stack: list[ir.Node] = [root]
        while stack:
            node = stack.pop()
            expected.append(id(node))
            stack.extend(reference_children(node))
    assert [id(e) for e in all_exprs(contract)] == expected
    stmts = [s for tool in contract.tools for s in walk_stmts(tool.effects)]
    for s in stmts:
        assert [id(c) for c in child_exprs(s)] == [id(c) for c in reference_children(s)]
