"""The specialised LALR driver (issue 13, session 6): for every text lark's own loop parses
without an error, the driver builds the same tree — rule names, children, ``None`` placeholders,
tokens with their types, values and positions, and every attribute of every node's ``meta``
(the container positions too); for every other text it gives up, and ``parse()`` reports the
error exactly as lark's loop alone did."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput
from lark.tree import Meta
from test_parser_tables import CORPUS, _mutants

from contractsim.diagnostics import ContractError
from contractsim.grammar import driver
from contractsim.grammar import parse as parse_module
from contractsim.grammar.parse import grammar_text
from contractsim.grammar.tables import build
from contractsim.grammar.treebuild import _place, specialised_builder, tree_builder

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def built() -> Lark:
    return build(grammar_text())


def _full_shape(tree: Tree[Token] | Token | None) -> object:
    """Everything lark's tree holds: each token's attributes, each node's whole ``meta``."""
    if isinstance(tree, Token):
        return (
            tree.type,
            str(tree),
            tree.start_pos,
            tree.line,
            tree.column,
            tree.end_line,
            tree.end_column,
            tree.end_pos,
        )
    if tree is None:
        return None
    assert type(tree) is Tree
    return (tree.data, sorted(vars(tree.meta).items()), [_full_shape(c) for c in tree.children])


def _lark_result(p: Lark, text: str, start: str = "start") -> object:
    try:
        return _full_shape(p.parse(text, start=start))
    except UnexpectedInput:
        return None


def _driver_result(text: str, start: str = "start") -> object:
    tree = driver.parse_valid(parse_module.parser(), text, start)
    return None if tree is None else _full_shape(tree)


def test_the_driver_runs_on_the_stored_tables() -> None:
    assert driver.driver_for(parse_module.parser()) is not None
    assert driver.driver_for(build(grammar_text())) is None  # built from the grammar
    for path in sorted(ROOT.glob("examples/*/*.contract")):
        assert driver.parse_valid(parse_module.parser(), path.read_text("utf-8")) is not None, path


@pytest.mark.parametrize("name,text", CORPUS, ids=[name for name, _ in CORPUS])
def test_every_known_contract_gets_lark_s_tree(built: Lark, name: str, text: str) -> None:
    assert _driver_result(text) == _lark_result(built, text)


@pytest.mark.parametrize("seed", range(4))
def test_mutilated_contracts_get_lark_s_tree_or_none(built: Lark, seed: int) -> None:
    rng = random.Random(100 + seed)
    parsed = refused = 0
    for _name, text in rng.sample(CORPUS, 40):
        for mutant in _mutants(text, rng, 15):
            expected = _lark_result(built, mutant)
            assert _driver_result(mutant) == expected, mutant
            parsed += expected is not None
            refused += expected is None
    assert parsed and refused


def test_expressions_get_lark_s_tree(built: Lark) -> None:
    for expr in (
        'a + b * c in {"x"}',
        "all(p in files for p in keys(dirs)) or not x.y[1]",
        "-x - -1 if a is not int else min(a, b)",
        "state.type - max",
        "(a)",
        "[]",
        "{}",
        'f(x)[1].y - {"a": [1, 2.5, r"z"]}',
        'r"a" + r"',
        "a +",
        "",
    ):
        assert _driver_result(expr, "expr") == _lark_result(built, expr, "expr"), expr


def test_diagnostics_are_the_same_without_the_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    """Errors (and keywords re-read as names) go through lark's loop as before."""

    def outcome(text: str) -> object:
        try:
            return _full_shape(parse_module.parse(text, "t.contract"))
        except ContractError as exc:
            return [d.dump() for d in exc.diagnostics]

    rng = random.Random(11)
    texts = [text for _, text in CORPUS]
    texts += [m for _, text in rng.sample(CORPUS, 20) for m in _mutants(text, rng, 8)]
    texts += [
        'contract c version "1"\nstate {\n  report: int\n}\n',
        'contract c version "1"\ntype T = {\n  tags: str\n  cost: int\n}\n',
    ]
    with_driver = [outcome(text) for text in texts]
    monkeypatch.setattr(driver, "parse_valid", lambda lark_parser, text, start="start": None)
    without = [outcome(text) for text in texts]
    assert with_driver == without


def _children(rule: Any, variant: int, rng: random.Random) -> list[Any]:
    """Reduction children for ``rule`` as the driver's stack holds them: a token for each
    terminal; for each rule a tree with a position, a tree without one, a token (handed up by
    a chain rule) or ``None`` (an absent ``[…]`` handed up), by ``variant``."""
    out: list[Any] = []
    pos = 0
    for i, sym in enumerate(rule.expansion):
        pos += rng.randrange(1, 9)
        token = Token(
            sym.name if sym.is_term else "NAME", "x", pos, i + 1, pos, i + 1, pos + 1, pos + 1
        )
        # an inlined `_rule` is always a tree (lark splices its children in)
        kind = 0 if sym.is_term else (variant + i) % (2 if sym.name.startswith("_") else 4)
        if sym.is_term or kind == 2:
            out.append(token)
        elif kind == 3:
            out.append(None)
        elif kind == 1:
            out.append(Tree(sym.name, [], Meta()))
        else:
            meta = Meta()
            _place(meta, [token], True)
            out.append(Tree(sym.name, [token], meta))
    return out


def test_every_rule_s_builder_builds_what_lark_s_builds() -> None:
    """All 489 rules, also those no known contract reduces; each child kind in each place."""
    rules = parse_module.parser().rules
    assert len(rules) > 400
    rng = random.Random(5)
    for rule in rules:
        for variant in range(4):
            seed = rng.random()
            ours = specialised_builder(rule)(_children(rule, variant, random.Random(seed)))
            theirs = tree_builder(rule)(_children(rule, variant, random.Random(seed)))
            assert _full_shape(ours) == _full_shape(theirs), (rule, variant)


def test_characters_outside_ascii_are_not_kept_per_state(built: Lark) -> None:
    """Each state's table by first character kept every character a token started with: a
    process parsing strangers' text (one character outside ASCII per file, say) grew it by an
    entry per character and state, for as long as it ran. Those go to the lexer unstored."""
    parser = parse_module.parser()
    for code in range(0x4E00, 0x4E00 + 200):
        for expr in (f"a + {chr(code)}", f"x.{chr(code)}y", chr(code)):
            assert _driver_result(expr, "expr") == _lark_result(built, expr, "expr"), expr
    tables = driver.driver_for(parser)._char_tables  # type: ignore[union-attr]
    assert all(char.isascii() for table in tables.values() for char in table)
