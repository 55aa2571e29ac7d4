"""The stored code of ``record`` methods (``contractsim/_record_methods.py``) changes nothing.

A method whose source text is in the store takes the stored code object instead of compiling
its source: every stored code object must be the one Python compiles from its key, the store
must hold every method of the package's classes, and a cold ``check`` or ``simulate`` must
compile none.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import os
import pickle
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from contractsim import _record_methods, records
from contractsim.diagnostics import Diagnostic, Span
from contractsim.record_store import store_text
from contractsim.records import compile_pending, record
from contractsim.simulator.fast import BoundCall

REPO = Path(__file__).resolve().parent.parent


def _compiled_alone(source: str) -> types.CodeType:
    module = compile(source.replace("def ?(", "def _fn(", 1), "<test>", "exec", dont_inherit=True)
    (code,) = [c for c in module.co_consts if isinstance(c, types.CodeType)]
    return code


def _essence(code: types.CodeType) -> tuple[object, ...]:
    """What a code object does (not where its text was: file, lines, name)."""
    return (
        code.co_code,
        code.co_consts,
        code.co_names,
        code.co_varnames,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        code.co_stacksize,
        code.co_nlocals,
    )


def test_every_stored_code_object_is_the_compiled_source() -> None:
    assert len(_record_methods.CODE) > 150
    for source, code in _record_methods.CODE.items():
        assert _essence(code) == _essence(_compiled_alone(source)), source


def test_store_text_round_trips() -> None:
    sources = sorted(_record_methods.CODE)
    namespace: dict[str, object] = {}
    exec(compile(store_text(sources), "<store>", "exec"), namespace)  # noqa: S102
    assert list(namespace["CODE"]) == sources  # type: ignore[call-overload]


def test_a_stored_method_and_a_compiled_one_behave_as_the_dataclass_ones() -> None:
    # a field name no class of the package has: its methods are compiled, not stored
    body = {"__annotations__": {"zz_unstored_field": "int", "items": "tuple[int, ...]"}}
    body["items"] = dataclasses.field(default_factory=tuple)  # type: ignore[assignment]
    ours = record(frozen=True, slots=True)(type("Thing", (), dict(body)))
    theirs = dataclasses.dataclass(frozen=True, slots=True)(type("Thing", (), dict(body)))
    compile_pending()
    assert inspect.signature(ours.__init__) == inspect.signature(theirs.__init__)
    a, b = ours(1), ours(1)
    assert a == b and hash(a) == hash(theirs(1)) and a.items == ()
    assert repr(a) == repr(theirs(1)).replace(theirs.__qualname__, ours.__qualname__)
    assert ours.__init__.__qualname__ == "Thing.__init__"
    assert ours.__init__.__name__ == "__init__"
    assert ours.__init__.__kwdefaults__ is None
    assert ours.__init__.__defaults__ == (dataclasses._HAS_DEFAULT_FACTORY,)  # type: ignore[attr-defined]
    # the class's source was not stored: it was compiled, and its key is remembered
    assert any("zz_unstored_field" in s for s in records._SOURCES)
    assert not any("zz_unstored_field" in s for s in _record_methods.CODE)


def test_contractsim_classes_take_the_stored_code() -> None:
    from contractsim.dsl import ir

    compile_pending()
    init = ir.Binary.__init__
    stored = [
        code
        for source, code in _record_methods.CODE.items()
        if source.startswith("def ?(self, *, span=_D, kind=_D, op, left, right)")
    ]
    assert len(stored) == 1
    assert _essence(init.__code__) == _essence(stored[0])
    span_default = ir.Binary.__dataclass_fields__["span"].default
    assert init.__kwdefaults__ == {"span": span_default, "kind": "binary"}
    assert init.__code__.co_filename == _record_methods.__file__
    assert init.__code__.co_name == "__init__"
    node = ir.Binary(op="+", left=None, right=None, span=None)  # type: ignore[arg-type]
    assert (node.op, node.left) == ("+", None)


_COLD = """
import sys
from contractsim import records
from contractsim.cli import main
sys.argv = ["contractsim", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
records.compile_pending()
from contractsim import _record_methods
missing = [s for s in records._SOURCES if s not in _record_methods.CODE]
print("MISSING", len(missing), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "examples/file_system/file_system.contract"],
        [
            "simulate",
            "examples/file_system/file_system.contract",
            "examples/file_system/plans/fails_read_after_delete.yaml",
        ],
    ],
)
def test_a_cold_command_compiles_no_record_method(argv: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _COLD, *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert "MISSING 0" in done.stderr, done.stderr


@pytest.mark.slow
def test_the_store_is_current() -> None:
    """Else run ``python -m contractsim.record_store`` (after adding or changing a class)."""
    done = subprocess.run(
        [sys.executable, "-m", "contractsim.record_store", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def _twin(cls: type, **options: Any) -> type:
    """The class ``@dataclass(**options)`` makes from the body of ``cls``."""
    namespace: dict[str, Any] = {"__annotations__": {}}
    for f in dataclasses.fields(cls):
        namespace["__annotations__"][f.name] = f.type
        namespace[f.name] = dataclasses.field(
            default=f.default, default_factory=f.default_factory, compare=f.compare
        )
    for name in ("__eq__", "__hash__"):
        if name in vars(cls):
            namespace[name] = vars(cls)[name]
    return dataclasses.dataclass(**options)(type(cls.__name__, (), namespace))


@pytest.mark.parametrize(
    ("cls", "options", "values"),
    [
        (Span, {"frozen": True, "slots": True, "kw_only": True}, {"file": "f", "line": 3}),
        (
            Diagnostic,
            {"frozen": True, "slots": True, "kw_only": True},
            {"code": "E0101", "severity": "error", "message": "m", "hint": "h"},
        ),
        (BoundCall, {"frozen": True}, {"tool": "t", "args": (), "values": (), "fast": None}),
    ],
    ids=lambda value: getattr(value, "__name__", ""),
)
def test_classes_moved_to_record_behave_as_their_dataclass_twins(
    cls: type, options: dict[str, Any], values: dict[str, Any]
) -> None:
    """``Span``, ``Diagnostic`` (diagnostics.py) and ``BoundCall`` (simulator/fast.py) were
    ``@dataclass`` classes; ``record`` makes them now, with the same behaviour."""
    twin = _twin(cls, **options)
    compile_pending()
    assert str(inspect.signature(cls)) == str(inspect.signature(twin))
    assert cls.__dataclass_params__.frozen and twin.__dataclass_params__.frozen  # type: ignore[attr-defined]
    ours, theirs = cls(**values), twin(**values)
    assert repr(ours) == repr(theirs)
    assert ours == cls(**values) and hash(ours) == hash(cls(**values))
    if cls is Span:  # by its own methods, a Span equals every Span and hashes to 0
        assert ours == Span(file="elsewhere") and hash(ours) == 0
    else:
        assert theirs == twin(**values) and hash(ours) == hash(theirs)
    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
    assert pickle.loads(pickle.dumps(ours)) == ours
    assert copy.deepcopy(ours) == ours
    with pytest.raises(dataclasses.FrozenInstanceError):
        ours.code = "x"  # type: ignore[attr-defined]
    assert hasattr(cls, "__slots__") == hasattr(twin, "__slots__")


def test_a_diagnostic_still_loads_through_pydantic() -> None:
    diagnostic = Diagnostic(
        code="E0101", severity="error", message="m", span=Span(file="f", line=2), hint=None
    )
    loaded = Diagnostic.load(diagnostic.dump())
    assert loaded == diagnostic and loaded.span.same_place(diagnostic.span)
    with pytest.raises(ValueError):
        Diagnostic.load({**diagnostic.dump(), "extra": 1})
