"""The delete relaxation of a contract, for admissible (h_max) and informative (h_add, h_FF)
heuristics.

A *fact* is an item of a ``set[…]`` state variable (``("b", "a") in on_``) or a ``bool`` state
variable being true — the state of an imported PDDL problem. For each grounded call the
relaxation keeps the facts its hard ``require``s need (conjuncts it cannot read as facts are
dropped: that only makes the relaxed problem easier) and the facts its effects may add (both
branches of an ``if``, every item of a ``for`` over a constant, every outcome). Deletes are
ignored. The relaxation is *usable* only when every change to a fact variable is understood;
otherwise adds could be missed, the heuristic could overestimate, and the planner falls back to
uniform-cost search.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..compiler.values import UNKNOWN
from ..dsl import ir
from ..dsl.walk import used_names

if TYPE_CHECKING:
    from ..simulator.engine import Simulator
    from ..simulator.fast import BoundCall
    from ..simulator.state import State

INF = float("inf")
Fact = tuple[str, Any]


class _Unreadable(Exception):
    pass


class Relaxation:
    """Grounded relaxed actions (pre facts, add facts, cost lower bound) and the goal's facts."""

    def __init__(self, sim: Simulator, calls: Sequence[BoundCall], goal: str) -> None:
        contract = sim.compiled.ir
        self.sim = sim
        self.fact_vars: dict[str, str] = {}  # name -> "set" | "bool"
        for var in contract.state:
            t = var.type
            if isinstance(t, ir.GenericType) and t.name == "set":
                self.fact_vars[var.name] = "set"
            elif isinstance(t, ir.NamedType) and t.name == "bool":
                self.fact_vars[var.name] = "bool"
        self.consts = dict(sim.compiled.consts)
        self.reason: str | None = None
        self.index: dict[Fact, int] = {}
        self.pre: list[tuple[int, ...]] = []
        self.add: list[tuple[int, ...]] = []
        self.cost: list[float] = []
        try:
            for call in calls:
                tool = contract.tool(call.tool)
                assert tool is not None
                if tool.flow is not None:
                    raise _Unreadable(f"`{tool.name}` has a flow")
                env = dict(call.values)
                pre: list[Fact] = []
                for cond in tool.conditions:
                    if cond.strength == "require":
                        pre.extend(self._facts(cond.cond, env))
                adds: list[Fact] = []
                self._adds(tool.effects, env, adds)
                for out in tool.outcomes:
                    self._adds(out.body, env, adds)
                self.pre.append(tuple(sorted({self._id(f) for f in pre})))
                self.add.append(tuple(sorted({self._id(f) for f in adds})))
                self.cost.append(self._cost_bound(sim, tool, call))
            gdecl = next(g for g in contract.goals if g.name == goal)
            self.goal = tuple(sorted({self._id(f) for f in self._facts(gdecl.cond, {})}))
        except _Unreadable as exc:
            self.reason = str(exc)
            self.goal = ()
        self.usable = self.reason is None
        self.by_pre: list[list[int]] = [[] for _ in self.index]
        for a, pre_ids in enumerate(self.pre):
            for f in pre_ids:
                self.by_pre[f].append(a)
        self.free = [a for a, p in enumerate(self.pre) if not p]
        self._pre_count = [len(p) for p in self.pre]

    # -------------------------------------------------------------- reading the contract
    def _id(self, fact: Fact) -> int:
        i = self.index.get(fact)
        if i is None:
            i = self.index[fact] = len(self.index)
        return i

    def _value(self, e: ir.Expr, env: Mapping[str, Any]) -> Any:
        if isinstance(e, ir.ScalarLit):
            return e.value
        if isinstance(e, ir.Name):
            if e.name in env and not e.state:
                return env[e.name]
            if e.name in self.consts:
                return self.consts[e.name]
            raise _Unreadable(e.name)
        if isinstance(e, ir.Collection) and e.type == "tuple":
            return tuple(self._value(x, env) for x in e.items)
        raise _Unreadable(e.kind)

    def _facts(self, e: ir.Expr, env: Mapping[str, Any]) -> list[Fact]:
        """The facts a condition needs (the conjuncts read as facts; the others dropped)."""
        if isinstance(e, ir.Binary) and e.op == "and":
            return self._facts(e.left, env) + self._facts(e.right, env)
        if (
            isinstance(e, ir.Name)
            and self.fact_vars.get(e.name) == "bool"
            and (e.state or e.name not in env)  # a parameter may hide the state variable
        ):
            return [(e.name, True)]
        if (
            isinstance(e, ir.Binary)
            and e.op == "in"
            and isinstance(e.right, ir.Name)
            and self.fact_vars.get(e.right.name) == "set"
            and (e.right.state or e.right.name not in env)
        ):
            try:
                return [(e.right.name, self._value(e.left, env))]
            except _Unreadable:
                return []
        return []

    def _adds(self, body: Iterable[ir.Stmt], env: dict[str, Any], out: list[Fact]) -> None:
        for s in body:
            if isinstance(s, ir.MethodCall):
                target = s.target
                if isinstance(target, ir.Name) and target.name in self.fact_vars:
                    if s.method == "add" and len(s.args) == 1:
                        out.append((target.name, self._value(s.args[0], env)))
                    elif s.method not in ("remove", "discard", "clear"):
                        raise _Unreadable(f"`{target.name}.{s.method}(…)`")
            elif isinstance(s, ir.Assign):
                root = s.target
                if isinstance(root, ir.Name) and root.name in self.fact_vars:
                    kind = self.fact_vars[root.name]
                    if kind == "bool" and s.op == "=" and isinstance(s.value, ir.ScalarLit):
                        if s.value.value is True:
                            out.append((root.name, True))
                        continue
                    raise _Unreadable(f"an assignment to `{root.name}`")
                if not isinstance(root, ir.Name) and used_names([root]) & set(self.fact_vars):
                    raise _Unreadable("an assignment inside a fact variable")
            elif isinstance(s, ir.If):
                self._adds(s.then, env, out)
                self._adds(s.orelse, env, out)
            elif isinstance(s, ir.For):
                items = self._value(s.coll, env)
                for item in items:
                    self._adds(s.body, {**env, s.var: item}, out)
            elif isinstance(s, (ir.Let, ir.Var)):
                env = {**env}
                env.pop(s.name, None)  # a local shadows nothing we read as a fact
            # warn / report statements change no state

    def _cost_bound(self, sim: Simulator, tool: ir.Tool, call: BoundCall) -> float:
        """A lower bound of the call's cost: its value when it reads no state, else 0."""
        if tool.cost is None:
            return 1.0
        state_names = set(sim.layout)
        if used_names([tool.cost]) & state_names:
            return 0.0
        c = sim.call_cost(call, sim.initial_state())
        return float(c) if c is not None and c >= 0 else 0.0

    def prune(self, state: State) -> list[int]:
        """Indices of the calls that can ever apply from ``state``: a call needing a fact that
        no call adds and that is false now never can (PDDL's static predicates: ``(truck ?t)``).
        All calls when the relaxation is not usable."""
        if not self.usable:
            return list(range(len(self.pre)))
        facts = self.state_facts(state)
        if facts is None:
            return list(range(len(self.pre)))
        added = {f for a in self.add for f in a}
        true = set(facts)
        never = {f for f in range(len(self.index)) if f not in added and f not in true}
        return [a for a, pre in enumerate(self.pre) if not never.intersection(pre)]

    def restrict(self, keep: list[int]) -> None:
        """Keep only the calls ``keep`` (in that order)."""
        self.pre = [self.pre[a] for a in keep]
        self.add = [self.add[a] for a in keep]
        self.cost = [self.cost[a] for a in keep]
        self.by_pre = [[] for _ in self.index]
        for a, pre_ids in enumerate(self.pre):
            for f in pre_ids:
                self.by_pre[f].append(a)
        self.free = [a for a, p in enumerate(self.pre) if not p]
        self._pre_count = [len(p) for p in self.pre]

    # -------------------------------------------------------------- heuristics
    def state_facts(self, state: State) -> list[int] | None:
        """The fact ids true in a state (None when a fact variable is unknown)."""
        return fact_ids(state, self.fact_vars, self.index)

    def h(self, state: State, kind: str = "max") -> float:
        """h_max (``kind="max"``, admissible) or h_add (``"add"``) of a state; ``inf`` when
        the relaxed problem has no solution (then no real plan exists either)."""
        if not self.usable:
            return 0.0
        facts = self.state_facts(state)
        if facts is None:
            return 0.0
        goal = self.goal
        if not goal:
            return 0.0
        dist = self.dist(facts, kind)
        if kind == "max":
            return max(dist[g] for g in goal)
        return sum(dist[g] for g in goal)

    def dist(self, facts: list[int], kind: str, supporters: list[int] | None = None) -> list[float]:
        """Relaxed cost of every fact (generalised Dijkstra); ``supporters`` receives the best
        achiever of each fact (for h_FF)."""
        if kind == "max" and supporters is None:
            return self._dist_max(facts)
        n = len(self.index)
        dist = [INF] * n
        heap: list[tuple[float, int]] = []
        for f in facts:
            if dist[f] > 0:
                dist[f] = 0.0
                heap.append((0.0, f))
        pre, add, cost = self.pre, self.add, self.cost
        for a in self.free:
            c = cost[a]
            for g in add[a]:
                if c < dist[g]:
                    dist[g] = c
                    heap.append((c, g))
                    if supporters is not None:
                        supporters[g] = a
        heapq.heapify(heap)
        left = self._pre_count.copy()
        acc = [0.0] * len(pre)
        goals_left = set(self.goal)
        by_pre = self.by_pre
        is_max = kind == "max"
        while heap:
            d, f = heapq.heappop(heap)
            if d > dist[f]:
                continue
            goals_left.discard(f)
            if not goals_left and supporters is None:
                break
            for a in by_pre[f]:
                left[a] -= 1
                if is_max:
                    if d > acc[a]:
                        acc[a] = d
                else:
                    acc[a] += d
                if left[a] == 0:
                    c = acc[a] + cost[a]
                    for g in add[a]:
                        if c < dist[g]:
                            dist[g] = c
                            heapq.heappush(heap, (c, g))
                            if supporters is not None:
                                supporters[g] = a
        return dist

    def _dist_max(self, facts: list[int]) -> list[float]:
        """:meth:`dist` for h_max, the planner's inner loop: facts leave the queue in
        non-decreasing cost, so an operator's cost is that of its last precondition to leave
        it, and the state's own facts (cost 0) are taken first without the queue."""
        dist = [INF] * len(self.index)
        add, cost, by_pre = self.add, self.cost, self.by_pre
        left = self._pre_count.copy()
        goals_left = set(self.goal)
        heap: list[tuple[float, int]] = []
        push, pop = heapq.heappush, heapq.heappop
        start = []
        for f in facts:
            if dist[f]:
                dist[f] = 0.0
                start.append(f)
        goals_left.difference_update(start)
        for a in self.free:
            c = cost[a]
            for g in add[a]:
                if c < dist[g]:
                    dist[g] = c
                    push(heap, (c, g))
        for f in start:
            for a in by_pre[f]:
                left[a] -= 1
                if not left[a]:
                    c = cost[a]
                    for g in add[a]:
                        if c < dist[g]:
                            dist[g] = c
                            push(heap, (c, g))
        while heap and goals_left:
            d, f = pop(heap)
            if d > dist[f]:
                continue
            goals_left.discard(f)
            for a in by_pre[f]:
                left[a] -= 1
                if not left[a]:
                    c = d + cost[a]
                    for g in add[a]:
                        if c < dist[g]:
                            dist[g] = c
                            push(heap, (c, g))
        return dist

    def h_ff(self, state: State) -> float:
        """The cost of a relaxed plan extracted from h_add's best supporters (inadmissible)."""
        if not self.usable or not self.goal:
            return 0.0
        facts = self.state_facts(state)
        if facts is None:
            return 0.0
        return self.h_ff_facts(facts)

    def h_ff_facts(self, facts: list[int]) -> float:
        """:meth:`h_ff` of the state whose true facts are ``facts`` (ids of :attr:`index`)."""
        if not self.usable or not self.goal:
            return 0.0
        supporters = [-1] * len(self.index)
        dist = self.dist(facts, "add", supporters)
        if any(dist[g] == INF for g in self.goal):
            return INF
        chosen: set[int] = set()
        stack = [g for g in self.goal if dist[g] > 0]
        seen: set[int] = set()
        while stack:
            f = stack.pop()
            if f in seen or dist[f] == 0:
                continue
            seen.add(f)
            a = supporters[f]
            if a < 0 or a in chosen:
                continue
            chosen.add(a)
            stack.extend(self.pre[a])
        return sum(self.cost[a] for a in chosen)


def fact_ids(
    state: State, fact_vars: Mapping[str, str], index: Mapping[Fact, int]
) -> list[int] | None:
    """The ids in ``index`` of the facts true in ``state`` (facts it does not list are left out);
    None when a fact variable, or an item of one, is unknown."""
    out: list[int] = []
    for name, kind in fact_vars.items():
        value = state[name]
        if value is UNKNOWN:
            return None
        if kind == "bool":
            if value is True:
                i = index.get((name, True))
                if i is not None:
                    out.append(i)
        else:
            try:
                items = iter(value)
            except TypeError:
                return None
            for item in items:
                if item is UNKNOWN:
                    return None
                i = index.get((name, item))
                if i is not None:
                    out.append(i)
    return out
