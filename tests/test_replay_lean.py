"""Round 2 of replay's speed (branch s6b-replay): the step budget reads the clock once per
``lib.CLOCK_EVERY`` items, arguments are validated straight into a dict, and records returned
by a tool are validated by pydantic-core alone — each with the general path's answers."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from contractsim.api import load, loads
from contractsim.compiler import lib
from contractsim.compiler.core_schemas import PlainArgsModel, model_values


def test_a_step_of_few_items_does_not_read_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = []
    real = time.monotonic
    monkeypatch.setattr(lib.time, "monotonic", lambda: reads.append(1) or real())
    with lib.step_budget(10.0):
        start = len(reads)  # (the budget itself reads it once, on entering)
        for _ in range(lib.CLOCK_EVERY - 1):
            lib.charge(1)
        assert len(reads) == start
        lib.charge(1)  # the CLOCK_EVERY-th item: the clock is read
        assert len(reads) == start + 1
        lib.charge(lib.CLOCK_EVERY - 1)
        assert len(reads) == start + 1
        lib.charge(1)
        assert len(reads) == start + 2


def test_a_step_past_its_deadline_stops_within_clock_every_items() -> None:
    with lib.step_budget(10.0):
        lib.BUDGET.deadline = time.monotonic() - 1.0  # (as if the step had run 11 s)
        with pytest.raises(lib.EvalError, match="the step ran longer than 10 s"):
            for _ in range(lib.CLOCK_EVERY):
                lib.charge(1)
        assert lib.BUDGET.iterations == lib.CLOCK_EVERY


def test_a_whole_run_past_its_deadline_stops_within_clock_every_items() -> None:
    with lib.run_budget(time.monotonic() - 1.0), lib.step_budget(10.0):
        with pytest.raises(lib.OutOfTime):
            lib.charge(lib.CLOCK_EVERY)


def test_the_item_limit_is_exact_between_clock_readings() -> None:
    with lib.step_budget(10.0):
        lib.charge(lib.MAX_ITERATIONS)
        with pytest.raises(lib.EvalError, match="visited more than 5,000,000 items"):
            lib.charge(1)


def test_nested_budgets_restore_the_outer_clock_count() -> None:
    with lib.step_budget(10.0):
        lib.charge(100)
        outer = (lib.BUDGET.iterations, lib.BUDGET.next_clock, lib.BUDGET.deadline)
        with lib.step_budget(1.0):
            lib.charge(lib.CLOCK_EVERY + 5)
            assert lib.BUDGET.next_clock == 2 * lib.CLOCK_EVERY + 5
        assert (lib.BUDGET.iterations, lib.BUDGET.next_clock, lib.BUDGET.deadline) == outer


# --------------------------------------------------------------------- arguments into a dict

ROOT = Path(__file__).resolve().parent.parent
_POOL: list[Any] = [
    "x",
    "",
    "l",
    "a/b",
    0,
    1,
    -7,
    2**70,
    True,
    False,
    None,
    1.5,
    float("nan"),
    [],
    ["a", "b"],
    [1, 2],
    {"a": 1},
    {"k": "v"},
    ("t",),
    frozenset({"s"}),
]


_KINDS = """
contract kinds
version "1.0.0"
type Path = str pattern r"^/"
type Small = int min 0 max 9
state { n: int = 0 }
tool every(
    path: Path, content: str, mode: enum { w, a } = "w", note?: str, count: Small = 3,
    items: list[str] = [], tags: set[str] max_items 2, weights: map[str, int] = {},
    pair: tuple[int, str], ratio: float, flag: bool accepts bool | int = false
) { effect { n = n + 1 } }
"""


def _plain_models() -> list[tuple[str, type[PlainArgsModel], tuple[str, ...]]]:
    """Every plain argument model (accepted and declared types) of the examples, the golden
    files that load, and a tool with a parameter of every plain kind."""
    out = []
    paths = sorted(ROOT.glob("examples/**/*.contract"))
    paths += sorted(ROOT.glob("tests/golden/*.contract"))
    for path in [None, *paths]:
        try:
            compiled = (loads(_KINDS) if path is None else load(path)).compiled
        except Exception:  # noqa: BLE001 - golden files of errors do not load
            continue
        for ctool in compiled.tools.values():
            for model in (ctool.args_model, ctool.declared_model):
                if isinstance(model, type) and issubclass(model, PlainArgsModel):
                    names = tuple(p.name for p in ctool.ir.params)
                    out.append((f"{path}:{ctool.name}", model, names))
    return out


def _outcome(validate: Any, args: dict[str, Any]) -> Any:
    try:
        values = validate(args)
    except ValidationError as exc:
        return ("invalid", exc.errors(include_url=False))
    return ("valid", list(values), [(type(v), repr(v)) for v in values.values()])


def test_arguments_validated_into_a_dict_as_through_the_model() -> None:
    models = _plain_models()
    assert len(models) > 50  # (the examples and golden files have that many plain tools)
    assert any(label == "None:every" for label, _, _ in models)
    rng = random.Random(13)
    compared = valid = 0
    for _label, model, names in models:
        candidates = [dict(zip(names, combo)) for combo in [("x",) * len(names)]]
        for _ in range(40):
            chosen = [n for n in names if rng.random() < 0.8]
            args = {n: rng.choice(_POOL) for n in chosen}
            if rng.random() < 0.2:
                args["extra_" + rng.choice("ab")] = rng.choice(_POOL)
            if rng.random() < 0.3:
                args = dict(reversed(list(args.items())))
            candidates.append(args)

        def through(args: dict[str, Any], model: type[PlainArgsModel] = model) -> Any:
            return model_values(model.model_validate(args))

        for args in candidates:
            through_model = _outcome(through, args)
            into_dict = _outcome(model.validate_values, args)
            assert into_dict == through_model, (_label, args)
            compared += 1
            valid += through_model[0] == "valid"
    assert valid > 100 and compared - valid > 100
