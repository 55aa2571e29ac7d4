"""Parser start-up and parse speed (issue 13, session 6, round 2): what is stored ahead of time
or skipped on the fast paths changes no tree, no position and no diagnostic."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import pytest
from lark import Lark

from contractsim.grammar import contract_builders, driver, tables
from contractsim.grammar import parse as parse_module
from contractsim.grammar.parse import grammar_text
from contractsim.grammar.treebuild import builder_source, is_chain_rule, specialised_builder

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def built() -> Lark:
    return tables.build(grammar_text())


def test_the_stored_builders_are_what_the_grammar_builds(built: Lark) -> None:
    """Fails when contract_builders.py is stale against contract.lark, lark or builder_source."""
    path = Path(tables.__file__).with_name(f"{tables.BUILDERS_MODULE}.py")
    expected = tables.builders_source(built, tables.grammar_key(grammar_text()))
    assert path.read_text("utf-8") == expected, (
        "contractsim/grammar/contract_builders.py does not belong to contract.lark (or to this "
        "lark version, or to treebuild.builder_source): run `python -m contractsim.grammar.tables`"
        " and commit the file"
    )


def test_every_rule_but_the_chain_rules_has_a_stored_builder() -> None:
    rules = parse_module.parser().rules
    expected = {i for i, rule in enumerate(rules) if not is_chain_rule(rule)}
    assert set(contract_builders.BUILDERS) == expected
    for i in sorted(expected)[::7]:  # the stored function is the one compiled per process
        stored = inspect.getsource(contract_builders.BUILDERS[i])
        assert stored == builder_source(rules[i], f"_r{i}")
        assert specialised_builder(rules[i]).__code__.co_code == (
            contract_builders.BUILDERS[i].__code__.co_code
        )


@pytest.mark.parametrize("bytecode_at_hand", [True, False])
def test_the_driver_uses_the_stored_builders_where_their_bytecode_is_at_hand(
    bytecode_at_hand: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables, "_bytecode_at_hand", lambda module: bytecode_at_hand)
    the_driver = driver.Driver(parse_module.parser())
    text = (ROOT / "examples/file_system/file_system.contract").read_text("utf-8")
    tree = the_driver.parse(text, "start")
    assert tree is not None and tree == parse_module.parser().parse(text, start="start")
    # the driver keeps them by action code: the rule's index after the states' codes
    used = {code - the_driver._n_states: b for code, b in the_driver._builders.items()}
    assert len(used) > 20
    for index, builder in used.items():
        assert (builder is contract_builders.BUILDERS[index]) is bytecode_at_hand


def test_builders_of_other_tables_are_not_used() -> None:
    assert tables.stored_builders(None) is None
    assert tables.stored_builders("another key") is None
    assert tables.stored_builders(contract_builders.KEY) is contract_builders.BUILDERS
    rules = parse_module.parser().rules
    fallback = driver._Builders(rules, None)
    index = min(contract_builders.BUILDERS)
    assert fallback[index] is not contract_builders.BUILDERS[index]
    assert fallback[index].__code__.co_code == contract_builders.BUILDERS[index].__code__.co_code


def test_small_literals_cost_only_a_small_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """blank_literals reads each candidate literal from a chunk of about the threshold's size,
    not 64K characters (the whole rest of an ordinary contract, once per `= [` or `= {`)."""
    from contractsim.grammar import literals
    from contractsim.grammar.parse import _keywords

    tokenised: list[int] = []
    real = literals._Reader._tokenise

    def counting(self: Any, start: int, end: int) -> None:
        tokenised.append(end - start)
        real(self, start, end)

    monkeypatch.setattr(literals._Reader, "_tokenise", counting)
    filler = "".join(f"  x{i}: set[str] = {{}}\n" for i in range(400))
    text = "state {\n" + filler + "}\n"
    assert len(text) > 4 * literals.FAST_LITERAL_MIN
    assert literals.blank_literals(text, _keywords()) == (text, [])
    assert 0 < len(tokenised) <= 400  # fewer: a candidate inside a chunk already cut reuses it
    longest_line = max(map(len, text.splitlines(keepends=True)))
    assert max(tokenised) <= literals.FAST_LITERAL_MIN + longest_line
    # a literal that is large after all is still read, whole, in a few larger chunks
    tokenised.clear()
    big = "{" + ",\n    ".join(f'"k{i}"' for i in range(3000)) + "}"
    text = f"state {{\n  x: set[str] = {big}\n  y: int = 1\n}}\n"
    blanked, found = literals.blank_literals(text, _keywords())
    assert len(found) == 1 and text[found[0].start : found[0].end] == big
    assert len(blanked) == len(text)
    assert 1 < len(tokenised) <= 5


def test_builders_are_not_imported_from_source_where_no_bytecode_can_be_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compiling the half-megabyte builders module costs ~0.3 s: a process that may not write
    bytecode and finds none compiles the builders it needs one by one instead."""
    from contractsim.grammar import tables

    (tmp_path / "cs_fake_builders.py").write_text("BUILDERS = {}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert not tables._bytecode_at_hand("cs_fake_builders")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert tables._bytecode_at_hand("cs_fake_builders")  # the import would write it
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    import py_compile

    py_compile.compile(str(tmp_path / "cs_fake_builders.py"))
    assert tables._bytecode_at_hand("cs_fake_builders")
