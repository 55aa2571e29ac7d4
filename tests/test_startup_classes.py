"""The IR node classes, made by ``contractsim.records.record``, behave as the dataclass
decorator's would.

``record`` writes ``__setattr__``/``__delattr__`` and the pickling methods without compiling
them and compiles every ``__init__`` in one ``exec``, to make importing the IR cheaper. These
tests compare each class with the class ``@dataclass(frozen=True, slots=True, kw_only=True,
eq=False, repr=False)`` makes from the same fields.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from typing import Any

import pytest

from contractsim.diagnostics import NO_SPAN, Span
from contractsim.dsl import ir

NODE_CLASSES = sorted(
    (
        value
        for value in vars(ir).values()
        if isinstance(value, type) and issubclass(value, ir.Node) and value is not ir.Node
    ),
    key=lambda cls: cls.__name__,
)


def _reference(cls: type) -> type:
    """The class the dataclass decorator makes from the fields of ``cls``."""
    namespace: dict[str, Any] = {"__annotations__": {}}
    for f in dataclasses.fields(cls):
        namespace["__annotations__"][f.name] = f.type
        namespace[f.name] = dataclasses.field(
            default=f.default, default_factory=f.default_factory, compare=f.compare
        )
    made = type(cls.__name__, (), namespace)
    return dataclasses.dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)(made)


def _minimal(cls: type) -> dict[str, Any]:
    """Arguments for the fields without default (any value will do: nothing is validated)."""
    return {
        f.name: f"value of {f.name}"
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }


def test_there_are_node_classes() -> None:
    assert len(NODE_CLASSES) > 50


@pytest.mark.parametrize("cls", NODE_CLASSES, ids=lambda cls: cls.__name__)
def test_init_signature_is_the_dataclass_one(cls: type) -> None:
    ours = inspect.signature(cls)
    theirs = inspect.signature(_reference(cls))
    assert str(ours) == str(theirs)
    assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"


@pytest.mark.parametrize("cls", NODE_CLASSES, ids=lambda cls: cls.__name__)
def test_instances_behave_as_frozen_slotted_dataclasses(cls: type) -> None:
    kwargs = _minimal(cls)
    node = cls(**kwargs)
    reference = _reference(cls)(**kwargs)
    for f in dataclasses.fields(cls):
        assert getattr(node, f.name) == getattr(reference, f.name)
    assert not hasattr(node, "__dict__")
    name = dataclasses.fields(cls)[-1].name
    for target in (node, reference):
        with pytest.raises(dataclasses.FrozenInstanceError) as assigned:
            setattr(target, name, 1)
        assert str(assigned.value) == f"cannot assign to field {name!r}"
        with pytest.raises(dataclasses.FrozenInstanceError) as deleted:
            delattr(target, name)
        assert str(deleted.value) == f"cannot delete field {name!r}"
    assert copy.copy(node) == node
    assert copy.deepcopy(node) == node
    assert pickle.loads(pickle.dumps(node)) == node
    assert dataclasses.replace(node) == node
    if kwargs:
        missing = next(iter(kwargs))
        with pytest.raises(TypeError) as no_value:
            cls(**{k: v for k, v in kwargs.items() if k != missing})
        with pytest.raises(TypeError) as no_value_either:
            _reference(cls)(**{k: v for k, v in kwargs.items() if k != missing})
        assert (
            str(no_value.value).split("() ", 1)[1] == str(no_value_either.value).split("() ", 1)[1]
        )
    with pytest.raises(TypeError):
        cls("positional", **kwargs)


def test_span_and_pickled_nodes_keep_their_span() -> None:
    span = Span(line=3, col=4, end_line=3, end_col=9)
    name = ir.Name(name="x", span=span)
    again = pickle.loads(pickle.dumps(name))
    assert again.span.same_place(span)
    assert ir.Name(name="x").span is NO_SPAN


def test_validation_and_serialisation_still_work() -> None:
    node = ir.Binary(op="+", left=ir.Name(name="a"), right=ir.ScalarLit(value=1), span=NO_SPAN)
    assert ir.load(ir.Binary, ir.dump(node)) == node
