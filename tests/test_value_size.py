"""``lib.value_size`` measures flat children in bulk (a chunk of tuples and sets at a time):
the sizes and heights it finds are those of the child-by-child measurement it replaced, which
is kept here as the reference, on hand-picked and on random values (issue 13, s6b-literal)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from contractsim.compiler import lib
from contractsim.compiler.values import FMap, OpenRecord

_COLLECTIONS = {tuple, frozenset, FMap, OpenRecord}


def reference_size(v: Any, depth: int, limit: int) -> tuple[int, int]:
    """The measurement before the bulk path: every child collection on its own (no cache)."""
    kind = type(v)
    if kind is str:
        return len(v) + 1, 0
    if kind not in _COLLECTIONS:
        return 1, 0
    if depth >= lib.MAX_VALUE_DEPTH:
        return limit + 1, 0
    total = 1 + len(v)
    height = 1
    for part in (v.keys(), v.values()) if kind in (FMap, OpenRecord) else (v,):
        for x in part:
            if type(x) is str:
                total += len(x)
        for x in part:
            if type(x) not in _COLLECTIONS:
                continue
            size, inner = reference_size(x, depth + 1, limit - total)
            if size > limit - total:
                return total + size, height
            total += size
            height = max(height, inner + 1)
            if total > limit:
                return total, height
    return total, height


def assert_same_size(value: Any, limit: int = lib.MAX_VALUE_SIZE) -> None:
    expected = reference_size(value, 0, limit)
    lib._SIZES.clear()
    found = lib._size(value, 0, limit)
    if expected[0] <= limit:
        assert found == expected
    else:  # past the limit the count stops early, in both
        assert found[0] > limit
    assert (lib.value_size(value, limit) > limit) == (expected[0] > limit)


def nested(depth: int, leaf: Any = ()) -> Any:
    value = leaf
    for _ in range(depth):
        value = (value,)
    return value


def test_flat_children_in_bulk_have_their_sizes() -> None:
    pairs = frozenset((f"node{i}", f"node{i * 7 % 10_000}") for i in range(10_000))
    assert_same_size(pairs)
    assert lib.value_size(pairs) == 1 + 10_000 + sum(1 + 2 + len(a) + len(b) for a, b in pairs)
    assert_same_size(tuple(pairs) + ("text", 3, None, 2.5))  # children among scalars
    assert_same_size((("a", 1), (), frozenset({"x", ("y",)}), (1.5, True)))  # mixed items
    assert_same_size(tuple((i,) * (i % 3) for i in range(20_000)))  # many chunks, empty children


def test_deeper_values_in_a_chunk_are_measured_child_by_child() -> None:
    assert_same_size(tuple(("a", ("b", "c")) if i == 5_000 else ("a", "b") for i in range(9_000)))
    assert_same_size((FMap({"k": ("v", "w")}), ("x",), FMap({("t",): FMap({"a": "b"})})))
    assert_same_size(FMap({"a": frozenset({("p", "q")}), "b": (("r",),)}))


def test_simulated_open_records_among_children_count_their_values() -> None:
    # a list of open records (a call's results appended to a state variable) is not flat: the
    # bulk path read each record's keys only, so 50,000 records of 1,000 characters counted
    # 200,001 and passed the size limit
    records = tuple(OpenRecord({"k": "y" * 1_000}) for _ in range(50_000))
    assert lib.value_size(records) > lib.MAX_VALUE_SIZE
    assert_same_size((OpenRecord({"a": "x" * 100}), ("b",)))
    assert lib.value_size((OpenRecord({"a": "x" * 100}),)) == 105


def test_depth_limit_and_size_limit_still_hold() -> None:
    for depth in (lib.MAX_VALUE_DEPTH - 1, lib.MAX_VALUE_DEPTH, lib.MAX_VALUE_DEPTH + 1):
        assert_same_size(nested(depth))
        assert_same_size(nested(depth, ("a", "b")))
    assert lib.value_size(nested(lib.MAX_VALUE_DEPTH - 1)) == 2 * lib.MAX_VALUE_DEPTH - 1
    assert lib.value_size(nested(lib.MAX_VALUE_DEPTH)) > lib.MAX_VALUE_SIZE
    wide = tuple(("x" * 100, "y") for _ in range(10_000))
    for limit in (0, 50, 5_000, 1_000_000, 1_040_000, 1_050_000):
        assert_same_size(wide, limit)


_scalars = st.one_of(st.text(max_size=5), st.integers(), st.none(), st.booleans())
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6).map(tuple),
        st.frozensets(_scalars, max_size=4),
        st.frozensets(st.tuples(_scalars, _scalars), max_size=4),
        st.dictionaries(st.text(max_size=3), inner, max_size=4).map(FMap),
        st.dictionaries(st.text(max_size=3), inner, max_size=4).map(OpenRecord),
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(_values, st.integers(min_value=0, max_value=200))
def test_random_values_have_the_reference_size(value: Any, limit: int) -> None:
    assert_same_size(value)
    assert_same_size(value, limit)
