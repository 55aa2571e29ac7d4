"""The grounded STRIPS task of a contract that is one, searched on sets of fact ids.

A contract imported from PDDL (and any contract written in the same style) says nothing a STRIPS
task cannot: every state variable is a ``set[…]`` of facts or a ``bool``; every hard ``require``
is a conjunction of facts, negated facts and comparisons of the call's own arguments; every effect
adds or removes facts; there are no outcomes, flows, ``ensure``s or protocol machines. For such a
contract the planner does not need the simulator at every node: a call applies when its facts
are in the state and its negated facts are not, and leads to the state minus its deletes plus
its adds (later statements win, as the effects run in order). That is what a STRIPS planner
(pyperplan) does, at the same speed.

The reading is all-or-nothing — :func:`read_strips` returns None, with the reason, as soon as
one clause is something else — and the plan found is checked again by the simulator before it
is returned (:func:`contractsim.planning.search.plan`), so the fast path can never return a plan
the contract refuses.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..dsl import ir
from .relaxed import fact_ids

if TYPE_CHECKING:
    from ..simulator.engine import Simulator
    from ..simulator.fast import BoundCall
    from ..simulator.state import State

Fact = tuple[str, Any]
FactSet = frozenset[int]


class _NotStrips(Exception):
    pass


@dataclass(frozen=True)
class Operator:
    """One grounded call as a STRIPS operator over fact ids."""

    pre: FactSet
    absent: FactSet  # negated preconditions
    add: FactSet
    delete: FactSet
    cost: float


@dataclass
class StripsTask:
    """Facts, operators (one per grounded call, in the calls' order) and the goal."""

    index: dict[Fact, int]
    operators: list[Operator | None]  # None: a call whose static comparisons are false
    goal: FactSet
    goal_absent: FactSet
    fact_vars: dict[str, str]  # name -> "set" | "bool"

    def facts_of(self, state: State) -> FactSet | None:
        """The ids of the facts true in ``state`` (facts no call or goal mentions are left out:
        they change nothing); None when some fact variable is unknown."""
        ids = fact_ids(state, self.fact_vars, self.index)
        return None if ids is None else frozenset(ids)

    def is_goal(self, facts: FactSet) -> bool:
        return self.goal <= facts and not (self.goal_absent & facts)

    def successors(self, facts: FactSet) -> Iterator[tuple[int, FactSet, float]]:
        """(call index, next facts, cost) for every operator that applies."""
        for i, op in enumerate(self.operators):
            if op is None or not op.pre <= facts or op.absent & facts:
                continue
            yield i, (facts - op.delete) | op.add, op.cost

    def relevant(self) -> StripsTask:
        """The task without what cannot matter to the goal (backward relevance analysis, as in
        pyperplan's and Fast Downward's grounding): a fact is relevant when the goal or a
        relevant operator tests it, an operator when it adds a relevant fact the goal or an
        operator needs, or deletes one that must be absent. Leaving out an irrelevant operator
        never breaks a plan (what it adds is needed by nobody, what it deletes only hurts), so
        the cheapest plan stays the cheapest; states that differ only in irrelevant facts become
        one, which is what makes the search small."""
        needed = set(self.goal)  # facts some relevant test wants true
        avoided = set(self.goal_absent)  # facts some relevant test wants false
        keep: set[int] = set()
        changed = True
        while changed:
            changed = False
            for i, op in enumerate(self.operators):
                if op is None or i in keep:
                    continue
                if op.add & needed or op.delete & avoided:
                    keep.add(i)
                    needed |= op.pre
                    avoided |= op.absent
                    changed = True
        facts = frozenset(needed | avoided)
        operators: list[Operator | None] = [
            Operator(op.pre, op.absent, op.add & facts, op.delete & facts, op.cost)
            if op is not None and i in keep
            else None
            for i, op in enumerate(self.operators)
        ]
        index = {fact: i for fact, i in self.index.items() if i in facts}
        return StripsTask(index, operators, self.goal, self.goal_absent, self.fact_vars)

    def relaxed_facts(self, facts: FactSet, relax_ids: Sequence[int]) -> list[int]:
        """The relaxation's ids of ``facts`` (for its heuristics)."""
        return [r for r in (relax_ids[f] for f in facts) if r >= 0]


def read_strips(
    sim: Simulator, calls: Sequence[BoundCall], goal: str, costs: Sequence[float | None]
) -> tuple[StripsTask | None, str | None]:
    """The STRIPS task of ``calls`` (with their fixed ``costs``), or None and why not."""
    contract = sim.compiled.ir
    if contract.machines:
        return None, "the contract has a protocol machine"
    fact_vars: dict[str, str] = {}
    for var in contract.state:
        t = var.type
        if isinstance(t, ir.GenericType) and t.name == "set":
            fact_vars[var.name] = "set"
        elif isinstance(t, ir.NamedType) and t.name == "bool":
            fact_vars[var.name] = "bool"
        else:
            return None, f"state variable `{var.name}` is not a set or a bool"
    reader = _Reader(fact_vars, dict(sim.compiled.consts))
    operators: list[Operator | None] = []
    try:
        for call, cost in zip(calls, costs):
            if cost is None:
                raise _NotStrips(f"the cost of `{call.tool}` depends on the state")
            tool = contract.tool(call.tool)
            assert tool is not None
            operators.append(reader.operator(tool, dict(call.values), cost))
        gdecl = next(g for g in contract.goals if g.name == goal)
        want, absent, possible = reader.conjunction(gdecl.cond, {})
    except _NotStrips as exc:
        return None, str(exc)
    if not possible:
        return None, "the goal compares constants that differ"
    task = StripsTask(reader.index, operators, frozenset(want), frozenset(absent), fact_vars)
    return task, None


class _Reader:
    def __init__(self, fact_vars: dict[str, str], consts: Mapping[str, Any]) -> None:
        self.fact_vars = fact_vars
        self.consts = consts
        self.index: dict[Fact, int] = {}

    def fact(self, name: str, value: Any) -> int:
        key = (name, value)
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.index)
        return i

    def value(self, e: ir.Expr, env: Mapping[str, Any]) -> Any:
        if isinstance(e, ir.ScalarLit):
            return e.value
        if isinstance(e, ir.Name):
            if e.name in env:
                return env[e.name]
            if e.name in self.consts:
                return self.consts[e.name]
        elif isinstance(e, ir.Collection) and e.type == "tuple":
            return tuple(self.value(x, env) for x in e.items)
        raise _NotStrips("a condition or effect reads more than the call's arguments")

    def conjunction(self, e: ir.Expr, env: Mapping[str, Any]) -> tuple[set[int], set[int], bool]:
        """(facts needed, facts that must be absent, whether the static comparisons hold)."""
        want: set[int] = set()
        absent: set[int] = set()
        possible = True
        stack = [e]
        while stack:
            c = stack.pop()
            if isinstance(c, ir.Binary) and c.op == "and":
                stack += [c.right, c.left]
                continue
            positive = True
            if isinstance(c, ir.Unary) and c.op == "not":
                positive, c = False, c.operand
            if isinstance(c, ir.Name) and self.fact_vars.get(c.name) == "bool":
                (want if positive else absent).add(self.fact(c.name, True))
            elif (
                isinstance(c, ir.Binary)
                and c.op in ("in", "not in")
                and isinstance(c.right, ir.Name)
                and self.fact_vars.get(c.right.name) == "set"
                and c.right.name not in env
            ):
                holds = positive == (c.op == "in")
                (want if holds else absent).add(self.fact(c.right.name, self.value(c.left, env)))
            elif (
                isinstance(c, ir.Binary)
                and c.op in ("in", "not in")
                and isinstance(c.right, ir.Name)
                and c.right.name in self.consts
                and c.right.name not in env
                and isinstance(self.consts[c.right.name], (frozenset, tuple, dict))
            ):
                member = self.value(c.left, env) in self.consts[c.right.name]
                possible = possible and (member == (c.op == "in")) == positive
            elif isinstance(c, ir.Binary) and c.op in ("==", "!="):
                same = self.value(c.left, env) == self.value(c.right, env)
                possible = possible and (same == (c.op == "==")) == positive
            else:
                raise _NotStrips("a condition is not a conjunction of facts")
        return want, absent, possible

    def operator(self, tool: ir.Tool, env: dict[str, Any], cost: float) -> Operator | None:
        if tool.flow is not None or tool.outcomes:
            raise _NotStrips(f"`{tool.name}` has outcomes or a flow")
        pre: set[int] = set()
        absent: set[int] = set()
        possible = True
        for cond in tool.conditions:
            if cond.strength == "ensure":
                raise _NotStrips(f"`{tool.name}` has an ensure")
            if cond.strength != "require":
                continue  # a `should` warns; the call still succeeds
            want, avoid, holds = self.conjunction(cond.cond, env)
            pre |= want
            absent |= avoid
            possible = possible and holds
        last: dict[int, bool] = {}  # fact -> added (True) or deleted (False) by the last statement
        self.effects(tool.effects, env, last)
        if not possible or pre & absent:
            return None
        add = frozenset(f for f, added in last.items() if added)
        delete = frozenset(f for f, added in last.items() if not added)
        return Operator(frozenset(pre), frozenset(absent), add, delete, cost)

    def effects(self, body: Iterable[ir.Stmt], env: dict[str, Any], last: dict[int, bool]) -> None:
        for s in body:
            if isinstance(s, ir.MethodCall) and isinstance(s.target, ir.Name):
                name = s.target.name
                if self.fact_vars.get(name) == "set" and len(s.args) == 1:
                    if s.method == "add":
                        last[self.fact(name, self.value(s.args[0], env))] = True
                        continue
                    if s.method in ("remove", "discard"):
                        last[self.fact(name, self.value(s.args[0], env))] = False
                        continue
            elif (
                isinstance(s, ir.Assign)
                and isinstance(s.target, ir.Name)
                and self.fact_vars.get(s.target.name) == "bool"
                and s.op == "="
                and isinstance(s.value, ir.ScalarLit)
                and isinstance(s.value.value, bool)
            ):
                last[self.fact(s.target.name, True)] = s.value.value
                continue
            elif isinstance(s, ir.For):
                for item in self.value(s.coll, env):
                    self.effects(s.body, {**env, s.var: item}, last)
                continue
            elif isinstance(s, (ir.Warn, ir.Report)):
                continue
            raise _NotStrips("an effect does more than add or remove facts")
