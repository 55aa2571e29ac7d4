"""The lowering and checking shortcuts of the sixth speed round (branch s6-lower) change no
result: each one is compared with the general code it stands in for."""

from __future__ import annotations

import itertools

import pytest

from contractsim.api import check_text
from contractsim.compiler.checks import COMPILER_CHECKS
from contractsim.diagnostics import render
from contractsim.dsl import check as check_module
from contractsim.dsl import ir
from contractsim.dsl.check import obviously_conforms
from contractsim.dsl.lower import lower
from contractsim.dsl.typecheck import Checker
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
