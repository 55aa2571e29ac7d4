"""Witness search: a concrete call (and state) on which OLD and NEW disagree.

Candidate arguments are drawn from the parameter types (bounds and their neighbours, enum
members, format examples, the shortest strings a pattern accepts), from every literal and constant
in either contract (map keys and set members of the initial state included) and from the example
plans beside the contracts; candidate states are the initial state, each undecided ``unknown``
boolean fixed either way, and the states one successful call reaches. Every candidate runs
through ``Simulator.run`` on both contracts, so what a witness claims is exactly what
``contractsim simulate`` prints for its plan.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..compiler.validators import FORMAT_EXAMPLES, ValidatorBuilder
from ..compiler.values import thaw
from ..dsl import ir
from ..dsl.walk import all_exprs, walk_expr
from .changes import Witness
from .patterns import compare_patterns

if TYPE_CHECKING:
    from ..api import Contract
    from ..simulator.engine import Simulator
    from ..simulator.explore import PlanReport

NOW = "2024-05-20T12:00:00Z"
"""Witness plans fix the clock, so they reproduce byte for byte."""

MAX_RUNS = 600
"""Simulated candidate plans per question (each runs on both contracts)."""
MAX_VALUES = 8
MAX_COMBOS = 120

Observation = dict[str, Any]
Disagrees = Callable[[Observation, Observation], bool]


def observe(report: PlanReport) -> Observation:
    """What a witness claims about one side: the plan's verdict and its last step's violation
    codes, warning codes and state changes."""
    if not report.steps:
        return {"verdict": report.verdict, "codes": [], "warnings": [], "changes": []}
    last = report.steps[-1].to_json()
    return {
        "verdict": report.verdict,
        "codes": sorted({v["code"] for v in last["violations"]}),
        "warnings": sorted({w["code"] for w in last["warnings"]}),
        "changes": last["changes"],
    }


def _literals(contract: ir.Contract) -> list[Any]:
    out: list[Any] = []
    roots: list[ir.Expr] = list(all_exprs(contract))
    for var in contract.state:
        if var.init is not None:
            roots.extend(walk_expr(var.init))
    for e in roots:
        if isinstance(e, ir.ScalarLit) and e.value is not None:
            out.append(e.value)
    return out


_NO_VALUE = object()


class _Values:
    """Candidate values for types of one pair of contracts."""

    def __init__(self, old: ir.Contract, new: ir.Contract, extra: list[Any]) -> None:
        self.decls = {t.name: t.type for t in old.types}
        self.decls.update({t.name: t.type for t in new.types if t.name not in self.decls})
        literals = _literals(old) + _literals(new) + extra
        seen: set[tuple[type, Any]] = set()
        self.strings: list[str] = []
        self.numbers: list[int | float] = []
        for v in literals:
            key = (type(v), v)
            if key in seen:
                continue
            seen.add(key)
            if isinstance(v, str):
                self.strings.append(v)
            elif isinstance(v, int | float) and not isinstance(v, bool):
                self.numbers.append(v)

    def of(self, t: ir.TypeExpr, depth: int = 0) -> list[Any]:
        if depth > 6:
            return []
        constraints = list(t.constraints)
        seen: set[str] = set()
        while isinstance(t, ir.NamedType) and t.name in self.decls and t.name not in seen:
            seen.add(t.name)
            t = self.decls[t.name]
            constraints.extend(t.constraints)
        values = self._base(t, tuple(constraints), depth)
        out: list[Any] = []
        for v in values:
            if v not in out or type(v) is not type(out[out.index(v)]):
                out.append(v)
        return out[: MAX_VALUES * 3]

    def _base(self, t: ir.TypeExpr, cons: tuple[ir.Constraint, ...], depth: int) -> list[Any]:
        if isinstance(t, ir.NullType) or (isinstance(t, ir.NamedType) and t.name == "null"):
            return [None]
        if isinstance(t, ir.NamedType):
            if t.name == "bool":
                return [True, False]
            if t.name in ("int", "float"):
                return self._numbers(t.name, cons)
            if t.name == "str":
                return self._strings(cons)
            if t.name == "any":
                return ["x", 0, None]
            return []
        if isinstance(t, ir.EnumType):
            return [m.value for m in t.members]
        if isinstance(t, ir.UnionType):
            return [v for o in t.options for v in self.of(o, depth + 1)[:4]]
        if isinstance(t, ir.GenericType):
            if t.name in ("list", "set"):
                elems = self.of(t.args[0], depth + 1)[:3]
                return [[], *[[e] for e in elems], elems[:2]]
            if t.name == "map":
                keys = self.of(t.args[0], depth + 1)[:2]
                vals = self.of(t.args[1], depth + 1)[:2]
                return [{}, *[{k: v} for k in keys if isinstance(k, str) for v in vals]]
            items = [self.of(a, depth + 1)[:1] for a in t.args]
            return [[i[0] for i in items]] if all(items) else []
        if isinstance(t, ir.RecordType):
            return self._records(t, None, depth)
        if isinstance(t, ir.TaggedUnionType):
            out: list[Any] = []
            for v in t.variants:
                inner = v.type
                while isinstance(inner, ir.NamedType) and inner.name in self.decls:
                    inner = self.decls[inner.name]
                if isinstance(inner, ir.RecordType):
                    out.extend(self._records(inner, (t.tag_field, v.tag), depth)[:2])
            return out
        return []

    def _records(self, t: ir.RecordType, tag: tuple[str, str] | None, depth: int) -> list[Any]:
        base: dict[str, Any] = {} if tag is None else {tag[0]: tag[1]}
        choices: dict[str, list[Any]] = {}
        for f in t.fields:
            vals = self.of(f.type, depth + 1)
            if f.optional or f.default is not None:
                choices[f.name] = [_NO_VALUE, *vals[:2]]
            else:
                choices[f.name] = vals[:3] or [None]
        first = dict(base)
        for name, vals in choices.items():
            if vals[0] is not _NO_VALUE:
                first[name] = vals[0]
        out = [first]
        for name, vals in choices.items():
            for v in vals[1:]:
                rec = dict(first)
                if v is _NO_VALUE:
                    rec.pop(name, None)
                else:
                    rec[name] = v
                out.append(rec)
        return out

    def _numbers(self, kind: str, cons: tuple[ir.Constraint, ...]) -> list[int | float]:
        lo, hi = -math.inf, math.inf
        for c in cons:
            if c.key == "min" and isinstance(c.value, int | float):
                lo = max(lo, c.value)
            if c.key == "max" and isinstance(c.value, int | float):
                hi = min(hi, c.value)
        cands: list[float] = []
        for b in (lo, hi):
            if not math.isinf(b):
                cands.extend((b, b + 1, b - 1))
        cands.extend((0, 1, 2, -1, 10, 100))
        cands.extend(self.numbers)
        out: list[int | float] = []
        for cand in cands:
            v: int | float = int(cand) if kind == "int" and float(cand).is_integer() else cand
            if kind == "int" and not isinstance(v, int):
                continue
            if kind == "float":
                v = float(v)
            if v not in out:
                out.append(v)
        return out

    def _strings(self, cons: tuple[ir.Constraint, ...]) -> list[str]:
        # the contract's own literals first (map keys of the initial state name real items),
        # then what the constraints suggest; values that do not fit are filtered later
        out: list[str] = list(self.strings)
        for c in cons:
            if c.key == "format" and str(c.value) in FORMAT_EXAMPLES:
                out.append(FORMAT_EXAMPLES[str(c.value)])
            if c.key == "pattern":
                sample = compare_patterns(r"[^\s\S]", str(c.value)).gained
                if sample is not None:
                    out.append(sample)
        out.extend(("x", "", "abc", "a" * 12))
        return out


@dataclass
class _Side:
    contract: Contract
    sim: Simulator
    builder: ValidatorBuilder


class WitnessSearch:
    """Searches calls on which two contracts disagree, within fixed bounds."""

    def __init__(self, old: Contract, new: Contract, example_args: list[Any] | None = None) -> None:
        self.old = _Side(old, old.simulator(now=NOW), ValidatorBuilder(old.ir))
        self.new = _Side(new, new.simulator(now=NOW), ValidatorBuilder(new.ir))
        self.values = _Values(old.ir, new.ir, example_args or [])
        self._arg_cache: dict[str, list[dict[str, Any]]] = {}
        self._states: list[dict[str, Any]] | None = None
        self._prefixes: list[tuple[dict[str, Any], dict[str, Any]]] | None = None

    # ---- candidates
    def _valid_both(self, value: Any, old_t: ir.TypeExpr, new_t: ir.TypeExpr) -> bool:
        return (
            self.old.builder.conformance_problem(value, old_t) is None
            and self.new.builder.conformance_problem(value, new_t) is None
        )

    def param_values(self, name: str, old_p: ir.Param, new_p: ir.Param) -> list[Any]:
        vals = self.values.of(old_p.type) + self.values.of(new_p.type)
        out: list[Any] = []
        for v in vals:
            if len(out) >= MAX_VALUES:
                break
            if any(v == o and type(v) is type(o) for o in out):
                continue
            if self._valid_both(v, old_p.type, new_p.type):
                out.append(v)
        if old_p.optional or old_p.default is not None:
            if new_p.optional or new_p.default is not None:
                out.append(_NO_VALUE)
        return out

    def arg_sets(self, tool: str) -> list[dict[str, Any]]:
        """Argument sets valid on both sides (every parameter varied around a base call)."""
        if tool in self._arg_cache:
            return self._arg_cache[tool]
        old_t, new_t = self.old.contract.ir.tool(tool), self.new.contract.ir.tool(tool)
        if old_t is None or new_t is None:
            return []
        new_params = {p.name: p for p in new_t.params}
        choices: dict[str, list[Any]] = {}
        for p in old_t.params:
            q = new_params.get(p.name)
            if q is None:
                continue
            vals = self.param_values(p.name, p, q)
            if not vals:
                self._arg_cache[tool] = []
                return []
            choices[p.name] = vals
        for name, q in new_params.items():
            if name not in choices and (q.optional or q.default is not None):
                choices[name] = [_NO_VALUE]
        out: list[dict[str, Any]] = []
        names = list(choices)
        for combo in itertools.islice(itertools.product(*(choices[n] for n in names)), MAX_COMBOS):
            out.append({n: v for n, v in zip(names, combo, strict=True) if v is not _NO_VALUE})
        # one-at-a-time variation, so every value of every parameter is tried
        base = out[0] if out else {}
        for n in names:
            for v in choices[n][1:]:
                args = dict(base)
                if v is _NO_VALUE:
                    args.pop(n, None)
                else:
                    args[n] = v
                if args not in out:
                    out.append(args)
        self._arg_cache[tool] = out
        return out

    def states(self) -> list[dict[str, Any]]:
        """State overrides to try: none, then each unknown boolean fixed either way."""
        if self._states is not None:
            return self._states
        new_vars = {v.name: v for v in self.new.contract.ir.state}
        out: list[dict[str, Any]] = [{}]
        unknown = [
            v.name
            for v in self.old.contract.ir.state
            if v.name in new_vars
            and (v.init is None or new_vars[v.name].init is None)
            and isinstance(v.type, ir.NamedType)
            and v.type.name == "bool"
        ][:4]
        for combo in itertools.product((True, False), repeat=len(unknown)):
            out.append(dict(zip(unknown, combo, strict=True)))
        out = out[:17]
        # then each known boolean flipped: a state file can say what no call has reached yet
        for v in self.old.contract.ir.state:
            w = new_vars.get(v.name)
            if (
                w is not None
                and isinstance(v.init, ir.ScalarLit)
                and isinstance(v.init.value, bool)
                and w.init == v.init
            ):
                out.append({v.name: not v.init.value})
        self._states = out[:25]
        return self._states

    def prefixes(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(state, first call) pairs that succeed on both sides: what a second step starts from."""
        if self._prefixes is not None:
            return self._prefixes
        out: list[tuple[dict[str, Any], dict[str, Any]]] = []
        common = [t.name for t in self.old.contract.ir.tools if self.new.contract.ir.tool(t.name)]
        for state in self.states()[:3]:
            for tool in common:
                for args in self.arg_sets(tool)[:6]:
                    call = {"tool": tool, "args": args}
                    a = self._run(self.old, [call], state)
                    b = self._run(self.new, [call], state)
                    if a is not None and b is not None and a.verdict == b.verdict == "ok":
                        out.append((state, call))
                    if len(out) >= 40:
                        break
        self._prefixes = out
        return out

    # ---- running
    def _run(
        self, side: _Side, steps: list[dict[str, Any]], state: dict[str, Any]
    ) -> PlanReport | None:
        try:
            start = side.sim.initial_state({k: v for k, v in state.items() if k in _names(side)})
            return side.sim.run(steps, start, max_states=2000, max_seconds=5.0)
        except Exception:  # a candidate that one side cannot even set up is not a witness
            return None

    def find(self, tool: str, disagrees: Disagrees) -> Witness | None:
        """The first candidate plan ending in a call of ``tool`` on which ``disagrees(old, new)``
        holds, as a witness; None when none is found within the bounds."""
        runs = 0
        for state in self.states():
            for args in self.arg_sets(tool):
                found = self._try(tool, state, [], args, disagrees)
                runs += 1
                if found is not None:
                    return found
                if runs >= MAX_RUNS:
                    return None
        for state, first in self.prefixes():
            for args in self.arg_sets(tool)[:20]:
                found = self._try(tool, state, [first], args, disagrees)
                runs += 1
                if found is not None:
                    return found
                if runs >= MAX_RUNS:
                    return None
        return None

    def find_args(
        self, tool: str, args_list: list[dict[str, Any]], disagrees: Disagrees
    ) -> Witness | None:
        """Like :meth:`find`, for given argument sets (a value one side refuses)."""

        def clean(a: Observation, b: Observation) -> bool:
            return a["verdict"] == "ok" and disagrees(a, b)

        for check in (clean, disagrees):
            for state in self.states()[:4]:
                for args in args_list:
                    found = self._try(tool, state, [], args, check)
                    if found is not None:
                        return found
            for state, first in self.prefixes()[:10]:
                for args in args_list[:4]:
                    found = self._try(tool, state, [first], args, check)
                    if found is not None:
                        return found
        return None

    def _try(
        self,
        tool: str,
        state: dict[str, Any],
        prefix: list[dict[str, Any]],
        args: dict[str, Any],
        disagrees: Disagrees,
    ) -> Witness | None:
        steps = [*prefix, {"tool": tool, "args": thaw(args)}]
        a = self._run(self.old, steps, state)
        b = self._run(self.new, steps, state)
        if a is None or b is None:
            return None
        oa, ob = observe(a), observe(b)
        if not disagrees(oa, ob):
            return None
        return Witness(tuple(steps), dict(state), oa, ob, NOW)


def _names(side: _Side) -> set[str]:
    return {v.name for v in side.contract.ir.state}


def iter_plan_args(plans: list[Any]) -> Iterator[Any]:
    """Every argument value in example plans (and the values nested in it)."""
    for plan in plans:
        steps = plan.get("steps", plan) if isinstance(plan, dict) else plan
        if not isinstance(steps, list):
            continue
        for step in steps:
            if isinstance(step, dict) and isinstance(step.get("args"), dict):
                for value in step["args"].values():
                    yield from _leaves(value)


def _leaves(value: Any, depth: int = 0) -> Iterator[Any]:
    if depth > 5:
        return
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v, depth + 1)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield value
