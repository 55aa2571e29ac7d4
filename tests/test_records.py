"""``contractsim.records.record`` makes what ``dataclasses.dataclass`` makes.

Every class is made twice from the same body, once by each decorator, and the two are compared:
signature, docstring, repr, equality, hashing, frozenness, pickling, defaults and factories.
The classes contractsim makes with ``record`` are compared with the dataclass twin of their
fields too.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import field
from typing import Any

import pytest

from contractsim.dsl import types
from contractsim.records import compile_pending, record


def _both(body: dict[str, Any], bases: tuple[type, ...] = (), **options: Any) -> tuple[type, type]:
    """The class ``record(**options)`` makes from ``body`` and the one ``dataclass`` makes."""
    ours = record(**options)(type("Thing", bases[:1], dict(body)))
    theirs = dataclasses.dataclass(**options)(type("Thing", bases[1:], dict(body)))
    compile_pending()  # else inspect.signature sees the stand-in __init__
    return ours, theirs


BODIES: dict[str, dict[str, Any]] = {
    "plain": {"__annotations__": {"a": "int", "b": "str"}, "b": "x"},
    "factory": {
        "__annotations__": {"a": "int", "items": "list[int]"},
        "items": field(default_factory=list),
    },
    "hidden": {
        "__annotations__": {"a": "int", "note": "str"},
        "note": field(default="", compare=False, repr=False),
    },
    "empty": {"__annotations__": {}},
    "documented": {"__annotations__": {"a": "int"}, "__doc__": "Has a docstring."},
}
OPTIONS: list[dict[str, Any]] = [
    {},
    {"frozen": True},
    {"frozen": True, "slots": True},
    {"frozen": True, "slots": True, "kw_only": True},
    {"eq": False},
    {"repr": False, "frozen": True},
]


def _args(cls: type) -> dict[str, Any]:
    return {
        f.name: 1 if f.type == "int" else "v"
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }


def _hash_or_error(value: object) -> object:
    try:
        return hash(value)
    except TypeError as error:
        return str(error)


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("body", list(BODIES), ids=str)
def test_record_makes_what_dataclass_makes(body: str, options: dict[str, Any]) -> None:
    ours, theirs = _both(BODIES[body], **options)
    assert str(inspect.signature(ours)) == str(inspect.signature(theirs))
    assert ours.__doc__ == theirs.__doc__
    assert getattr(ours, "__match_args__", None) == getattr(theirs, "__match_args__", None)
    assert ("__slots__" in ours.__dict__) == ("__slots__" in theirs.__dict__)
    a, b = ours(**_args(ours)), theirs(**_args(theirs))
    if options.get("repr", True):
        assert repr(a) == repr(b)
    assert (a == ours(**_args(ours))) == (b == theirs(**_args(theirs)))
    assert (a.__eq__(object()) is NotImplemented) == (b.__eq__(object()) is NotImplemented)
    assert (ours.__hash__ is None) == (theirs.__hash__ is None)
    if theirs.__hash__ is not None and options.get("frozen"):
        assert _hash_or_error(a) == _hash_or_error(b)
    for f in dataclasses.fields(theirs):
        assert getattr(a, f.name) == getattr(b, f.name)
        if options.get("frozen"):
            for target in (a, b):
                with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign"):
                    setattr(target, f.name, 2)
                with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete"):
                    delattr(target, f.name)
    if body != "empty":
        assert copy.deepcopy(a) == a if options.get("eq", True) else True
    # pickling needs the class under its name in a module: compare the state instead
    if options.get("frozen") and options.get("slots"):
        assert a.__getstate__() == b.__getstate__()  # type: ignore[attr-defined]


def test_each_instance_gets_its_own_default_factory_value() -> None:
    ours, _ = _both(BODIES["factory"])
    one, two = ours(a=1), ours(a=2)
    one.items.append(3)
    assert two.items == []


def test_explicit_methods_are_kept() -> None:
    body = {
        "__annotations__": {"a": "int"},
        "__eq__": lambda self, other: True,
        "__hash__": lambda self: 7,
        "__repr__": lambda self: "mine",
    }
    ours, theirs = _both(body, frozen=True)
    assert (repr(ours(a=1)), hash(ours(a=1)), ours(a=1) == ours(a=2)) == ("mine", 7, True)
    assert (repr(theirs(a=1)), hash(theirs(a=1))) == ("mine", 7)


def test_missing_and_positional_arguments_fail_as_with_dataclass() -> None:
    ours, theirs = _both(BODIES["plain"], frozen=True, kw_only=True)
    for cls in (ours, theirs):
        with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'a'"):
            cls()
        with pytest.raises(TypeError, match="positional argument"):
            cls(1)


def test_unsupported_fields_are_refused() -> None:
    with pytest.raises(TypeError, match="does not support the field 'x'"):
        record(type("Bad", (), {"__annotations__": {"x": "int"}, "x": field(init=False)}))


def test_a_frozen_subclass_of_a_record_is_a_record() -> None:
    base = record(frozen=True)(type("Base", (), {"__annotations__": {"a": "int"}}))
    child = record(frozen=True)(type("Child", (base,), {"__annotations__": {"b": "int"}}))
    compile_pending()
    assert repr(child(1, 2)) == "Child(a=1, b=2)"
    assert child(1, 2) != base(1)


TYPE_CLASSES = [
    value
    for value in vars(types).values()
    if isinstance(value, type)
    and dataclasses.is_dataclass(value)
    and value.__module__ == types.__name__
]


@pytest.mark.parametrize("cls", TYPE_CLASSES, ids=lambda cls: cls.__name__)
def test_checker_types_are_the_dataclasses_they_were(cls: type) -> None:
    compile_pending()
    namespace: dict[str, Any] = {"__annotations__": {}}
    for f in dataclasses.fields(cls):
        namespace["__annotations__"][f.name] = f.type
        namespace[f.name] = dataclasses.field(
            default=f.default,
            default_factory=f.default_factory,
            compare=f.compare,
            hash=f.hash,
            repr=f.repr,
        )
    twin = dataclasses.dataclass(frozen=True)(type(cls.__name__, (), namespace))
    assert str(inspect.signature(cls)) == str(inspect.signature(twin))
    if "__doc__" not in namespace and cls.__doc__ and cls.__doc__.startswith(cls.__name__ + "("):
        assert cls.__doc__ == twin.__doc__


def test_checker_types_compare_hash_and_show_as_before() -> None:
    record_t = types.RecordT(name="R", fields=(("a", types.FieldT(types.INT, False, False)),))
    assert repr(types.INT) == "Prim(name='str')".replace("str", "int")
    assert types.ListT(types.INT) == types.ListT(types.INT) != types.SetT(types.INT)
    assert hash(types.ListT(types.INT)) == hash(types.ListT(types.INT))
    assert repr(record_t) == (
        "RecordT(name='R', fields=(('a', FieldT(type=Prim(name='int'), optional=False, "
        "has_default=False)),), open=False)"
    )
    assert types.EmptyT() == types.EmptyT(literal=types.EmptyLiteral())
    assert pickle.loads(pickle.dumps(record_t)) == record_t
    with pytest.raises(dataclasses.FrozenInstanceError):
        types.INT.name = "str"  # type: ignore[misc]


def test_params_are_recorded_and_records_mix_with_dataclasses() -> None:
    base = record(frozen=True)(type("Base", (), {"__annotations__": {"a": "int"}}))
    assert base.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert repr(base.__dataclass_params__) == repr(  # type: ignore[attr-defined]
        dataclasses.dataclass(frozen=True)(type("T", (), {})).__dataclass_params__  # type: ignore[attr-defined]
    )
    child = dataclasses.dataclass(frozen=True)(
        type("Child", (base,), {"__annotations__": {"b": "int"}})
    )
    assert repr(child(1, 2)) == "Child(a=1, b=2)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        child(1, 2).a = 3
    plain = dataclasses.dataclass(frozen=True)(type("Plain", (), {"__annotations__": {"a": "int"}}))
    grandchild = record(frozen=True)(type("G", (plain,), {"__annotations__": {"b": "int"}}))
    compile_pending()
    assert repr(grandchild(1, 2)) == "G(a=1, b=2)"
    mutable = dataclasses.dataclass(type("Mutable", (), {"__annotations__": {"a": "int"}}))
    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):
        record(frozen=True)(type("Bad", (mutable,), {"__annotations__": {"b": "int"}}))


def test_first_calls_from_many_threads_compile_once_and_agree() -> None:
    import threading

    classes = [
        record(frozen=True)(type(f"T{i}", (), {"__annotations__": {"a": "int"}})) for i in range(20)
    ]
    compile_pending("__init__")
    results: list[str] = []
    start = threading.Barrier(8)

    def show_all() -> None:
        start.wait()
        results.extend(repr(cls(1)) for cls in classes)

    threads = [threading.Thread(target=show_all) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == sorted([f"T{i}(a=1)" for i in range(20)] * 8)
