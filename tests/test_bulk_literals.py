"""Large literals read and lowered in bulk (sixth speed round, branch s6-literal) change no
result: the IR (spans included) and every diagnostic are those of lark's tree lowered node by
node, for valid literals and for literals with each kind of bad element."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from lark import Tree

from contractsim.api import check_text
from contractsim.diagnostics import ContractError
from contractsim.dsl import ir
from contractsim.dsl.lower import lower
from contractsim.grammar import literals
from contractsim.grammar.parse import _keywords, nesting_depth_problem, parse

H = 'contract demo version "1.0.0"\ntype Color = enum { red, green }\nconst K = 3\n'


def _state(decl: str) -> str:
    return H + f"state {{\n  {decl}\n  n: int = 0\n}}\ntool t() {{ effect n = n + 1 }}\n"


def _both_ways(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    """(IR dump and diagnostics) with the bulk path, and with lark and the node-by-node
    lowering; the bulk path must really have been taken."""
    results = []
    for minimum in (1, 10**9):
        monkeypatch.setattr(literals, "FAST_LITERAL_MIN", minimum)
        bulk = bool(literals.blank_literals(text, _keywords())[1])
        assert bulk == (minimum == 1), text
        try:
            contract, lowered = lower(parse(text, "t.contract"), "t.contract")
            dumped: object = ir.dump_json(contract)
        except Exception as exc:  # a ContractError from parse: compared by its diagnostics
            dumped, lowered = type(exc).__name__, list(getattr(exc, "diagnostics", []))
        diags = [d.dump() for d in check_text(text, "t.contract")]
        results.append((dumped, [d.dump() for d in lowered], diags))
    return results[0], results[1]


CASES = {
    "pairs on one line": 'e: set[tuple[str, str]] = {("a", "b"), ("c", "d"), ("e", "f")}',
    "pairs on lines with comments": (
        'e: set[tuple[str, int]] = {\n    ("a", 1),  # first\n    ("b", 2),\n\n'
        '    ("c",\n     3),\n  }'
    ),
    "a map": 'm: map[str, list[int]] = {"a": [1, 2], "b": [], "c": [3,\n 4]}',
    "a nested map": 'm: map[str, map[str, bool]] = {"a": {"x": true}, "b": {"y": false}}',
    "scalars of every kind": (
        "xs: list[any] = [1, -2, 2.5, -0.25e3, 1e3, true, false, null, Color.red, K, "
        '"", "tab\\t", "say \\"hi\\"", "\\u00e9", (1,), (1, 2,), [], {}, [[]]]'
    ),
    "an element of the wrong type": 'xs: list[int] = [1, 2, "three", 4]',
    "a tuple of the wrong arity": 'e: set[tuple[str, str]] = {("a", "b"), ("c", "d", "e")}',
    "mixed element types": "xs: list[int] = [1, 2.5, null, true]",
    "a duplicate key": 'm: map[str, int] = {"a": 1, "b": 2, "a": 3}',
    "an unknown name": "xs: list[int] = [1, nope, 3]",
    "a state variable as an element": "xs: list[int] = [1, n, 3]",
    "an unknown enum member": "cs: list[Color] = [Color.red, Color.blue]",
    "an unknown escape": 'xs: list[str] = ["a", "b\\q", "c"]',
    "a private-use brace": 'xs: list[str] = ["a", "\ue000", "c"]',
    "an integer too large": f"xs: list[int] = [1, {'9' * 90}, 3]",
    "a large integer": f"xs: list[int] = [1, {'9' * 30}, -{'9' * 20}]",
    "a float too large": "xs: list[float] = [1.0, 1e999]",
    "an empty set of the wrong type": "xs: set[int] = {{}, {1}}",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_literal_lowers_and_checks_the_same_in_bulk(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _state(CASES[case])
    bulk, slow = _both_ways(text, monkeypatch)
    assert bulk == slow


def test_an_element_error_keeps_its_text_and_place(monkeypatch: pytest.MonkeyPatch) -> None:
    body = ", ".join(f'("k{i}", "v{i}")' for i in range(300))
    text = H + f'state {{\n  e: set[tuple[str, str]] = {{\n    {body},\n    ("x", 7)\n  }}\n}}\n'
    assert literals.blank_literals(text, _keywords())[1]
    errors = [
        (d.code, d.message, d.span.line, d.span.col, d.span.end_line, d.span.end_col)
        for d in check_text(text, "t.contract")
        if d.severity == "error"
    ]
    assert errors == [
        (
            "E0301",
            "`e` is set[tuple[str, str]] but its initial value is "
            "set[tuple[str, str] | tuple[str, int]]",
            5,
            29,
            8,
            4,
        )
    ]
    bad = [
        d
        for d in check_text(text.replace('("x", 7)', '("x", "a\\q")'), "t.contract")
        if d.severity == "error"
    ]
    assert [(d.code, d.span.line, d.span.col, d.span.end_col) for d in bad] == [
        ("E0107", 7, 11, 16)
    ]


def _element(rng: random.Random, depth: int) -> str:
    kind = rng.randrange(9 if depth < 3 else 5)
    if kind == 0:
        return '"' + rng.choice(["a", "", "x y", "é", "{1}", "a\\nb"]) + '"'
    if kind == 1:
        return str(rng.randrange(-5, 100000))
    if kind == 2:
        return rng.choice(["1.5", "true", "false", "null", "Color.green", "K", "-0.5"])
    if kind in (3, 4):
        return '"' + "".join(rng.choice("abc ") for _ in range(rng.randrange(6))) + '"'
    sep = rng.choice([", ", ",", " ,\n    ", ", # note\n    "])
    items = [_element(rng, depth + 1) for _ in range(rng.randrange(1, 4))]
    if kind == 5:
        return "(" + sep.join(items) + ("," if len(items) == 1 else "") + ")"
    if kind == 6:
        return "[" + sep.join(items) + "]"
    if kind == 7:
        return "{" + sep.join(items) + "}"
    return "{" + sep.join(f"{i}: {x}" for i, x in enumerate(items)) + "}"


@pytest.mark.parametrize("seed", range(6))
def test_random_literals_lower_the_same_in_bulk(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    for _ in range(15):
        body = ",\n    ".join(_element(rng, 1) for _ in range(rng.randrange(1, 8)))
        text = _state(f"xs: list[any] = [\n    {body}\n  ]")
        bulk, slow = _both_ways(text, monkeypatch)
        assert bulk == slow, text


def _bulk_literals(tree: Tree[Any]) -> list[literals.BulkLiteral]:
    """The bulk literals in a tree, found without reading their children."""
    if isinstance(tree, literals.BulkLiteral):
        return [tree]
    return [b for c in tree.children if isinstance(c, Tree) for b in _bulk_literals(c)]


def test_the_tree_of_a_bulk_literal_is_built_only_when_read() -> None:
    pairs = ", ".join(f'("k{i}", "v{i}")' for i in range(2000))
    text = _state(f"p: set[tuple[str, str]] = {{{pairs}}}")
    tree = parse(text, "t.contract")
    (bulk,) = _bulk_literals(tree)
    assert nesting_depth_problem(tree, "t.contract") is None
    contract, diags = lower(tree, "t.contract")
    assert diags == [] and bulk._children is None  # lowered without lark's tree
    first = bulk.children[0]
    assert isinstance(first, Tree) and first.data == "tuple_lit"
    assert len(bulk.children) == 2000
    assert contract == lower(parse(text.replace("{(", "{ ("), "t.contract"), "t.contract")[0]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            'x: int = [(1, "a"), (2.5, "b"), (1, "c"), (true, null), (3, 4.5), (1, "d")]',
            "list[tuple[int, str] | tuple[float, str] | tuple[bool, null] | tuple[int, float]]",
        ),
        ('x: int = {(1, "a"): 1, (2, "b"): 2}', "map[tuple[int, str], int]"),
        (
            'x: int = [[(1, "a")], [(2, 3)], [(1, "a"), ("b", 2)]]',
            "list[list[tuple[int, str]] | list[tuple[int, int]] | "
            "list[tuple[int, str] | tuple[str, int]]]",
        ),
    ],
)
def test_tuples_of_scalars_are_typed_once_per_combination_as_before(
    body: str, expected: str
) -> None:
    """The checker types each combination of a tuple's scalar classes once; the joined type
    (options in order of first appearance) is the one the visitor gave element by element."""
    text = 'contract demo version "1.0.0"\nstate {\n  ' + body + "\n}\n"
    errors = [d for d in check_text(text, "t.contract") if d.severity == "error"]
    assert [(d.code, d.message, d.span.line, d.span.col) for d in errors] == [
        ("E0301", f"`x` is int but its initial value is {expected}", 3, 12)
    ]


@pytest.mark.parametrize(
    "decl",
    ['xs: list[str] = ["a", "]', 'xs: list[str] = ["]', 'e: set[tuple[str, str]] = {("a", ")}'],
)
def test_an_unterminated_string_is_left_to_lark(decl: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lone `"` is a token of its own (the tokeniser's catch-all), not a string: a literal
    holding one was read in bulk, so text lark refuses parsed without an error."""
    text = _state(decl)
    for minimum in (1, 10**9):
        monkeypatch.setattr(literals, "FAST_LITERAL_MIN", minimum)
        assert literals.blank_literals(text, _keywords())[1] == []
        with pytest.raises(ContractError):
            parse(text, "t.contract")


def test_candidates_on_one_long_line_cut_it_into_tokens_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each candidate's first chunk runs to the end of its line: on a long line of `= []`
    (hostile input; it is read before lark sees it) every candidate cut the rest of the line
    into tokens again, quadratic (14 KB took half a minute). The tokens are shared."""
    cut: list[int] = []

    class Counting:
        def findall(self, text: str, start: int, end: int) -> list[str]:
            cut.append(end - start)
            return list(pattern.findall(text, start, end))

    pattern = literals._TOKENS
    monkeypatch.setattr(literals, "_TOKENS", Counting())
    text = "x = [] " * 3000 + "\ny = [1]\n" + "z = {} " * 3000
    literals.blank_literals(text, _keywords())
    assert sum(cut) <= 2 * len(text)


@pytest.mark.parametrize("seed", range(3))
def test_a_literal_longer_than_the_first_chunk_reads_the_same(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tokens are cut from chunks of text ending with a line, larger while the literal
    goes on (the first as long as the threshold, 1 in _both_ways): tiny chunks growing slowly
    (many retries, cuts between every pair of lines) change nothing."""
    monkeypatch.setattr(literals, "_GROWTH", 2)
    rng = random.Random(100 + seed)
    for _ in range(10):
        body = ",\n    ".join(_element(rng, 1) for _ in range(rng.randrange(1, 12)))
        text = _state(f"xs: list[any] = [\n    {body}\n  ]") + "const L = [1,\n 2]\n"
        bulk, slow = _both_ways(text, monkeypatch)
        assert bulk == slow, text


ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(ROOT.glob("examples/*/*.contract")) + sorted(ROOT.glob("tests/golden/*.contract"))


@pytest.mark.slow
def test_every_example_and_golden_file_lowers_and_checks_the_same_in_bulk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every literal of the examples and golden files read in bulk (the threshold at one
    character): the same IR, spans included, and the same diagnostics."""
    used = 0
    for path in SOURCES:
        text = path.read_text("utf-8")
        monkeypatch.setattr(literals, "FAST_LITERAL_MIN", 1)
        if not literals.blank_literals(text, _keywords())[1]:
            continue
        used += 1
        bulk, slow = _both_ways(text, monkeypatch)
        assert bulk == slow, path
    assert used > 10


# ---------------------------------------------- round 2 (s6b-literal): columns of flat collections


def _pairs(n: int, make: Any, sep: str = ", ") -> str:
    return sep.join(make(i) for i in range(n))


COLUMN_CASES = {
    # (declaration, whether the column-wise builder takes it)
    "string pairs": (
        "e: set[tuple[str, str]] = {{{}}}".format(_pairs(40, lambda i: f'("n{i}", "m{i}")')),
        True,
    ),
    "int triples in a list": (
        "e: list[tuple[int, int, int]] = [{}]".format(_pairs(40, lambda i: f"({i}, {i * 7}, 0)")),
        True,
    ),
    "lists of varied length": (
        "e: list[list[str]] = [{}]".format(
            _pairs(50, lambda i: "[" + ", ".join(f'"x{j}"' for j in range(i % 4 + 1)) + "]")
        ),
        True,
    ),
    "sets of strings": (
        "e: list[set[str]] = [{}]".format(_pairs(33, lambda i: f'{{"a{i}", "b"}}')),
        True,
    ),
    "on a later line": (
        "e: set[tuple[str, str]] = {{  # the pairs\n    {}\n  }}".format(
            _pairs(40, lambda i: f'("n{i}", "")')
        ),
        True,
    ),
    "an empty set among them": (
        "e: list[set[int]] = [{}, {{}}]".format(_pairs(40, lambda i: f"{{{i}}}")),
        False,
    ),
    "an escape among them": (
        'e: list[tuple[str]] = [{}, ("a\\tb",)]'.format(_pairs(40, lambda i: f'("{i}",)')),
        False,
    ),
    "a private-use brace among them": (
        'e: list[tuple[str]] = [{}, ("\ue000",)]'.format(_pairs(40, lambda i: f'("{i}",)')),
        False,
    ),
    "strings and integers mixed": (
        "e: list[tuple[str, int]] = [{}]".format(_pairs(40, lambda i: f'("{i}", {i})')),
        False,
    ),
    "a long integer": (
        "e: list[tuple[int]] = [{}, ({},)]".format(_pairs(40, lambda i: f"({i},)"), "9" * 19),
        False,
    ),
    "a name among them": (
        "e: list[tuple[int]] = [{}, (K,)]".format(_pairs(40, lambda i: f"({i},)")),
        False,
    ),
    "over two lines": (
        "e: set[tuple[str, str]] = {{{},\n {}}}".format(
            _pairs(20, lambda i: f'("a{i}", "b")'), _pairs(20, lambda i: f'("c{i}", "d")')
        ),
        False,
    ),
    "wrong arity, checked the same": (
        'e: set[tuple[str, str]] = {{{}, ("x",)}}'.format(_pairs(40, lambda i: f'("n{i}", "m")')),
        True,
    ),
    "a duplicate, checked the same": (
        'e: list[tuple[str, str]] = [{}, ("n1", "m")]'.format(
            _pairs(40, lambda i: f'("n{i}", "m")')
        ),
        True,
    ),
}


@pytest.mark.parametrize("case", sorted(COLUMN_CASES))
def test_flat_collections_built_column_by_column_lower_the_same(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contractsim.dsl import bulk as bulk_module

    decl, by_columns = COLUMN_CASES[case]
    taken: list[bool] = []
    real = bulk_module._flat_columns

    def spy(*args: Any) -> Any:
        built = real(*args)
        taken.append(built is not None)
        return built

    monkeypatch.setattr(bulk_module, "_flat_columns", spy)
    bulk, slow = _both_ways(_state(decl), monkeypatch)
    assert bulk == slow
    assert any(taken) == by_columns


VALUE_CASES = {
    **{case: decl for case, (decl, _) in COLUMN_CASES.items()},
    "sets, empty sets and tuples": "e: list[any] = [{}]".format(
        ", ".join(("{}", f"{{{i}, 1}}", f"({i},)", "[]")[i % 4] for i in range(40))
    ),
    "lists of floats and constants": "e: list[list[any]] = [{}]".format(
        ", ".join(f"[{i}.5, true, null]" for i in range(40))
    ),
}


@pytest.mark.parametrize("case", sorted(VALUE_CASES))
def test_flat_collections_have_the_values_computed_one_by_one(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contractsim.compiler import interp

    contract, _ = lower(parse(_state(VALUE_CASES[case]), "t.contract"), "t.contract")
    init = contract.state[0].init
    assert init is not None
    values = []
    for minimum in (interp.FLAT_VALUES_FROM, 10**9):
        monkeypatch.setattr(interp, "FLAT_VALUES_FROM", minimum)
        env = interp.Env(contract, state={}, consts={"K": 3})
        values.append(interp.Interpreter(contract).eval(init, env))
    assert values[0] == values[1]
    assert [type(v) for v in values[0]] == [type(v) for v in values[1]]


def test_overlapping_candidates_cut_the_text_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Raw strings read one way by the scanner and another by the reader put every candidate
    off the previous cut's token boundaries, so each re-cut the rest of the long line: a
    24 KB line took 1.9 s, growing with the square of its length. The cuts now add up to a few
    times the text at most; the rest is lark's (linear)."""
    cut: list[int] = []
    tokenise = literals._Reader._tokenise

    def counting(self: Any, start: int, end: int) -> None:
        cut.append(end - start)
        tokenise(self, start, end)

    monkeypatch.setattr(literals._Reader, "_tokenise", counting)
    text = 'x = [] r"\\" ' * 20_000
    literals.blank_literals(text, _keywords())
    assert sum(cut) <= literals.CUT_BUDGET_FACTOR * len(text) + 65_536 + len(text)
    # a literal-heavy text is still read in bulk whole
    big = "s = [" + ", ".join(f'"k{i}"' for i in range(3_000)) + "]\n"
    blanked, found = literals.blank_literals(big, _keywords())
    assert len(found) == 1 and found[0].end == len(big) - 1
