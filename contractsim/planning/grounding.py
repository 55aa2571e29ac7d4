"""Grounding: the candidate calls a planner tries, built from the contract itself.

A parameter's candidate values (in this order, without repeats):

1. members of an ``enum`` type (PDDL objects are enum members), ``true``/``false`` for ``bool``,
   the empty list for ``list[…]`` and ``set[…]``;
2. values of the parameter's primitive type found in the state (set items, map keys and values,
   tuple items, nested), then in the contract's constants and literals;
3. values given by the caller (``--values TOOL.PARAM=V,…``) *replace* the above for that
   parameter.

A parameter with a default, or an optional one, keeps its default unless values are given for it.
A combination that breaks a ``require X in S`` over a state variable ``S`` no tool changes
(PDDL's static predicates) is dropped before anything else. Each remaining combination is
validated once with :meth:`Simulator.bind`; combinations the parameter types
refuse (a constraint, a pattern) are dropped. A parameter no rule gives a value is *ungrounded*:
its tool is left out and the report names it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..compiler.values import UNKNOWN
from ..diagnostics import ContractError
from ..dsl import ir
from ..dsl.walk import all_exprs, assigned_roots

if TYPE_CHECKING:
    from ..simulator.engine import Simulator
    from ..simulator.fast import BoundCall
    from ..simulator.state import State

MAX_ACTIONS = 200_000
"""At most this many grounded calls; beyond it grounding stops and says so."""

_PRIMITIVES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (float, int),
    "bool": (bool,),
}


@dataclass
class Grounding:
    """The grounded calls (bound once) and what could not be grounded."""

    calls: list[BoundCall] = field(default_factory=list)
    ungrounded: dict[str, list[str]] = field(default_factory=dict)  # tool -> parameters
    truncated: bool = False  # MAX_ACTIONS reached

    def notes(self) -> list[str]:
        out = [
            f"`{tool}` left out: no value to try for parameter(s) "
            + ", ".join(f"`{p}`" for p in params)
            + f" (give some with --values {tool}.{params[0]}=…)"
            for tool, params in self.ungrounded.items()
        ]
        if self.truncated:
            out.append(f"grounding stopped at {MAX_ACTIONS} calls; some calls were not tried")
        return out


def _type_decls(contract: ir.Contract) -> dict[str, ir.TypeExpr]:
    return {t.name: t.type for t in contract.types}


def _resolve(
    t: ir.TypeExpr, decls: Mapping[str, ir.TypeExpr], seen: frozenset[str] = frozenset()
) -> tuple[list[Any], set[str]]:
    """(finite members, primitive names) of a parameter type."""
    if isinstance(t, ir.EnumType):
        return [m.value for m in t.members], set()
    if isinstance(t, ir.UnionType):
        members: list[Any] = []
        prims: set[str] = set()
        for option in t.options:
            m, p = _resolve(option, decls, seen)
            members.extend(x for x in m if x not in members)
            prims |= p
        return members, prims
    if isinstance(t, ir.NullType):
        return [None], set()
    if isinstance(t, ir.NamedType):
        if t.name == "bool":
            return [True, False], set()
        if t.name in _PRIMITIVES:
            return [], {t.name}
        if t.name in decls and t.name not in seen:
            return _resolve(decls[t.name], decls, seen | {t.name})
    return [], set()


def _candidates(
    t: ir.TypeExpr, decls: Mapping[str, ir.TypeExpr], pool: Callable[[], list[Any]]
) -> list[Any]:
    """A parameter type's candidate values: its finite members, the pool's values of its
    primitive types; for ``list[T]``/``set[T]`` the empty one and one-item ones. The pool is
    only built when a primitive type asks for it (walking the contract for literals costs more
    than grounding an all-enum PDDL problem)."""
    seen: set[str] = set()
    while isinstance(t, ir.NamedType) and t.name in decls and t.name not in seen:
        seen.add(t.name)
        t = decls[t.name]
    if isinstance(t, ir.GenericType) and t.name in ("list", "set") and len(t.args) == 1:
        items = _candidates(t.args[0], decls, pool)
        return [[], *([v] for v in items)]
    members, prims = _resolve(t, decls)
    candidates = list(members)
    for v in pool() if prims else ():
        if v in candidates or not any(isinstance(v, _PRIMITIVES[k]) for k in prims):
            continue
        if isinstance(v, bool) or (
            isinstance(v, int) and "int" not in prims and "float" not in prims
        ):
            continue
        candidates.append(v)
    return candidates


def _scalars(value: Any, out: list[Any], depth: int = 0) -> None:
    if depth > 20 or value is UNKNOWN:
        return
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        if value not in out:
            out.append(value)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _scalars(k, out, depth + 1)
            _scalars(v, out, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            _scalars(v, out, depth + 1)


def contract_literals(contract: ir.Contract) -> list[Any]:
    """The scalar literals written in a contract (goals, conditions, effects, constants)."""
    out: list[Any] = []
    for e in all_exprs(contract):
        if isinstance(e, ir.ScalarLit) and not isinstance(e.value, bool) and e.value is not None:
            if e.value not in out:
                out.append(e.value)
    return out


def _static_vars(contract: ir.Contract) -> set[str]:
    """State variables no tool changes (PDDL's static predicates: ``(truck ?t)``)."""
    changed: set[str] = set()
    for tool in contract.tools:
        bodies = [tool.effects, *(o.body for o in tool.outcomes)]
        if tool.flow is not None:
            bodies.extend(step.body for step in tool.flow.steps)
        for body in bodies:
            changed |= assigned_roots(body)
    return {v.name for v in contract.state} - changed


def _static_checks(
    tool: ir.Tool, static: set[str], names: list[str]
) -> list[tuple[str, list[Any]]]:
    """The ``require`` conjuncts ``X in STATIC`` of a tool whose X is made of parameters and
    literals: (variable, X as a template of parameter positions and literals)."""
    out: list[tuple[str, list[Any]]] = []

    def conjuncts(e: ir.Expr) -> list[ir.Expr]:
        if isinstance(e, ir.Binary) and e.op == "and":
            return conjuncts(e.left) + conjuncts(e.right)
        return [e]

    def template(e: ir.Expr) -> Any:
        if isinstance(e, ir.Name) and e.name in names and not e.state:
            return ("param", names.index(e.name))
        if isinstance(e, ir.ScalarLit):
            return ("literal", e.value)
        if isinstance(e, ir.Collection) and e.type == "tuple":
            items = [template(x) for x in e.items]
            return None if any(i is None for i in items) else ("tuple", items)
        return None

    for cond in tool.conditions:
        if cond.strength != "require":
            continue
        for c in conjuncts(cond.cond):
            if (
                isinstance(c, ir.Binary)
                and c.op == "in"
                and isinstance(c.right, ir.Name)
                and c.right.name in static
                and c.right.name not in names
            ):
                t = template(c.left)
                if t is not None:
                    out.append((c.right.name, t))
    return out


def _fill(t: Any, combo: tuple[Any, ...]) -> Any:
    kind, v = t
    if kind == "param":
        return combo[v]
    if kind == "literal":
        return v
    return tuple(_fill(x, combo) for x in v)


def ground(
    sim: Simulator,
    state: State,
    values: Mapping[str, Iterable[Any]] | None = None,
    tools: Iterable[str] | None = None,
) -> Grounding:
    """Every candidate call of the contract's tools (or of ``tools``) from ``state``.

    ``values`` maps ``"tool.param"`` to extra values for that parameter."""
    contract = sim.compiled.ir
    decls = _type_decls(contract)
    extra = {k: list(v) for k, v in (values or {}).items()}
    built: list[list[Any]] = []

    def pool() -> list[Any]:
        if not built:
            found: list[Any] = []
            for name in sim.layout:
                _scalars(state[name], found)
            for value in sim.compiled.consts.values():
                _scalars(value, found)
            found.extend(v for v in contract_literals(contract) if v not in found)
            built.append(found)
        return built[0]

    wanted = set(tools) if tools is not None else None
    static = _static_vars(contract)
    out = Grounding()
    count = 0
    for tool in contract.tools:
        if wanted is not None and tool.name not in wanted:
            continue
        names: list[str] = []
        choices: list[list[Any]] = []
        missing: list[str] = []
        for p in tool.params:
            given = extra.get(f"{tool.name}.{p.name}")
            if given is None and (p.default is not None or p.optional):
                continue
            if given is not None:
                candidates = list(dict.fromkeys(given))  # the caller's values replace the rest
            else:
                candidates = _candidates(p.type, decls, pool)
            if not candidates:
                missing.append(p.name)
            names.append(p.name)
            choices.append(candidates)
        if missing:
            out.ungrounded[tool.name] = missing
            continue
        checks = [
            (state[var], t)
            for var, t in _static_checks(tool, static, names)
            if isinstance(state[var], (set, frozenset))
        ]
        # members of an enum or bool parameter type are valid by construction: once one call
        # of the tool has been validated and validation kept its arguments as they are, the
        # other combinations reuse its bound form (pydantic per call was most of the set-up
        # time of a small PDDL problem)
        members_only = all(
            f"{tool.name}.{p.name}" not in extra
            and p.accepted_type == p.type
            and _finite_members_only(p.type, decls)
            for p in tool.params
            if p.name in names
        )
        template: BoundCall | None = None
        for combo in itertools.product(*choices):
            if checks and any(_fill(t, combo) not in items for items, t in checks):
                continue  # a static fact it needs is false, and no call makes it true
            if count >= MAX_ACTIONS:
                out.truncated = True
                return out
            args = dict(zip(names, combo, strict=True))
            if template is not None:
                call = replace(template, args=args, values={**template.values, **args})
            else:
                try:
                    call = sim.bind(tool.name, args)
                except ContractError:
                    continue  # the parameter types refuse this combination
                if members_only and not call.references and _kept_as_given(call, args):
                    template = call
            out.calls.append(call)
            count += 1
    return out


def _finite_members_only(t: ir.TypeExpr, decls: Mapping[str, ir.TypeExpr]) -> bool:
    """Whether ``t`` is (a name for) an ``enum`` or ``bool``: every candidate is a member."""
    seen: set[str] = set()
    while isinstance(t, ir.NamedType) and t.name in decls and t.name not in seen:
        seen.add(t.name)
        t = decls[t.name]
    return isinstance(t, ir.EnumType) or (isinstance(t, ir.NamedType) and t.name == "bool")


def _kept_as_given(call: BoundCall, args: Mapping[str, Any]) -> bool:
    return all(
        k in call.values and type(call.values[k]) is type(v) and call.values[k] == v
        for k, v in args.items()
    )
