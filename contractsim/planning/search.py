"""Cheapest plans to a goal: A* with h_max where the contract's delete relaxation is readable
(:mod:`.relaxed`), uniform-cost search otherwise, and greedy best-first with h_FF (``fast``).

A step is taken only when the simulator says it is ``ok`` and leads to a single state (with
``allow_may_fail``, ``may_fail`` steps whose non-failing branches lead to a single state are
taken too, and the plan's success probability and the unknowns it relies on are reported).
States are hashable, so duplicates are detected with a dict of best costs.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..dsl.walk import used_names
from .grounding import Grounding, ground
from .relaxed import INF, Relaxation
from .strips import FactSet, StripsTask, read_strips

if TYPE_CHECKING:
    from ..simulator.engine import Simulator
    from ..simulator.fast import BoundCall
    from ..simulator.results import Branch
    from ..simulator.state import State

Node = TypeVar("Node", bound=Hashable)

DEFAULT_MAX_STATES = 100_000
DEFAULT_MAX_SECONDS = 60.0

STOPPED = ("exhausted", "max_depth", "max_states", "max_seconds")
"""Why a search ended without a plan: every reachable state was expanded (no plan exists with
the grounded calls), or a bound cut it."""


@dataclass
class PlanResult:
    """A plan search's answer; ``steps`` is None when no plan was found."""

    goal: str
    steps: list[tuple[str, dict[str, Any]]] | None
    cost: float | None
    method: str  # "astar-hmax", "uniform-cost", "greedy-hff"
    optimal: bool  # the search guarantees the cheapest plan (within the grounded calls)
    stopped_by: str | None  # one of STOPPED when no plan was found
    expanded: int
    generated: int
    seconds: float
    probability: float | None = 1.0  # None: depends on unknowns without a probability
    assumptions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.steps is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "found": self.found,
            "steps": None
            if self.steps is None
            else [{"tool": t, "args": a} for t, a in self.steps],
            "cost": self.cost,
            "method": self.method,
            "optimal": self.optimal,
            "stopped_by": self.stopped_by,
            "expanded": self.expanded,
            "generated": self.generated,
            "seconds": round(self.seconds, 4),
            "probability": self.probability,
            "assumptions": list(self.assumptions),
            "notes": list(self.notes),
        }


class Successors:
    """The single-state successors of a state under the grounded calls, with their costs."""

    def __init__(self, sim: Simulator, calls: list[BoundCall], allow_may_fail: bool) -> None:
        self.sim = sim
        self.calls = calls
        self.allow_may_fail = allow_may_fail
        self.checker = sim.plan_checker
        self.nondeterministic = 0
        state_names = set(sim.layout)
        self.fixed_cost: list[float | None] = []
        self.environment: list[bool] = []  # the call has `on EVENT` branches
        for call in calls:
            ctool = sim.compiled.tools[call.tool]
            tool = ctool.ir
            self.environment.append(
                any(o.event is not None for o in tool.outcomes)
                or (
                    tool.flow is not None
                    and any(t.event is not None for t in tool.flow.transitions)
                )
            )
            if ctool.cost is None:
                self.fixed_cost.append(1.0)
            elif used_names([ctool.ir.cost] if ctool.ir.cost is not None else []) & state_names:
                self.fixed_cost.append(None)
            else:
                c = sim.call_cost(call, sim.initial_state())
                self.fixed_cost.append(float(c) if c is not None else None)

    def cost(self, i: int, state: State) -> float:
        c = self.fixed_cost[i]
        if c is not None:
            return c
        call = self.calls[i]
        v = self.sim.call_cost(call, state)
        return float(v) if v is not None else 1.0

    def __call__(
        self, state: State
    ) -> Iterator[tuple[int, State, float, float | None, tuple[str, ...]]]:
        """(call index, next state, cost, success probability, assumptions) per usable call."""
        for i in range(len(self.calls)):
            out = self.apply(i, state)
            if out is not None:
                yield out

    def apply(
        self, i: int, state: State
    ) -> tuple[int, State, float, float | None, tuple[str, ...]] | None:
        """Call ``i`` from ``state``, when it is a usable step (else None)."""
        sim = self.sim
        call = self.calls[i]
        if call.fast is not None and not state.has_unknown:
            check = self.checker.check([call], state)
            if check.verdict == "ok" and check.state is not None:
                return i, check.state, self.cost(i, state), 1.0, ()
            if check.verdict == "fails" and not (self.allow_may_fail and self.environment[i]):
                return None
            if check.verdict == "may_fail" and not self.allow_may_fail:
                return None
        step = sim.step(state, call.tool, call.args)
        verdict = step.verdict
        if verdict != "ok" and not self.allow_may_fail:
            return None
        if verdict == "fails":
            # with allow_may_fail, a call whose failures all come from the environment (an
            # `on EVENT` branch) may be taken like one whose failures depend on unknowns
            if not all(b.event is not None for b in step.branches if b.failed and b.certain):
                return None
            verdict = "may_fail"
        good = [b for b in step.branches if not b.failed]
        states = {b.state for b in good}
        if len(states) != 1:
            self.nondeterministic += 1
            return None
        prob: float | None = 1.0
        assumptions: tuple[str, ...] = ()
        if verdict == "may_fail":
            probs = [b.probability for b in good]
            prob = None if any(p is None for p in probs) else min(1.0, sum(p or 0.0 for p in probs))
            assumptions = tuple(
                dict.fromkeys(
                    a for b in step.branches if b.failed for a in _failure_conditions(call.tool, b)
                )
            )
        cost = step.cost if step.cost is not None else self.cost(i, state)
        return i, next(iter(states)), float(cost), prob, assumptions


def _failure_conditions(tool: str, branch: Branch) -> tuple[str, ...]:
    """When a call a plan takes fails after all: the failing branch's unknown conditions, or
    the environment event that leads to it (the plan relies on none of them happening)."""
    if branch.assumptions:
        return tuple(f"`{tool}` fails when {a}" for a in branch.assumptions)
    p = "" if branch.probability is None else f" (probability {branch.probability:g})"
    return (f"`{tool}` fails when event `{branch.event}` happens{p}",)


def plan(
    sim: Simulator,
    state: State,
    goal: str,
    *,
    values: Mapping[str, Iterable[Any]] | None = None,
    max_depth: int | None = None,
    max_states: int = DEFAULT_MAX_STATES,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    allow_may_fail: bool = False,
    fast: bool = False,
    grounding: Grounding | None = None,
    exclude: Iterable[str] = (),
    strips: bool = True,
) -> PlanResult:
    """The cheapest plan from ``state`` to a state where goal ``goal`` is certainly true.

    See :meth:`contractsim.simulator.engine.Simulator.plan`. ``strips=False`` searches with the
    simulator at every node even when the contract reads as a STRIPS task (:mod:`.strips`; the
    tests compare both)."""
    started = time.process_time()
    wall = time.monotonic()
    sim.goal(state, goal)  # a ValueError with a did-you-mean for an unknown goal
    if grounding is None:
        grounding = ground(sim, state, values)
    excluded = set(exclude)
    calls = [c for c in grounding.calls if c.tool not in excluded]
    notes = grounding.notes()
    relax = Relaxation(sim, calls, goal)
    keep = relax.prune(state)
    if len(keep) < len(calls):
        calls = [calls[i] for i in keep]
        relax.restrict(keep)
    informed = relax.usable and bool(relax.goal)
    if fast:
        method = "greedy-hff" if informed else "greedy-blind"
    else:
        method = "astar-hmax" if informed else "uniform-cost"
    if not relax.usable:
        notes.append(f"no heuristic: the relaxation cannot read {relax.reason}")
    succ = Successors(sim, calls, allow_may_fail)
    search = _Search(fast, max_depth, max_states, max_seconds, wall)

    def result(
        steps: list[tuple[str, dict[str, Any]]] | None,
        cost: float | None,
        stopped: str | None,
        prob: float | None = 1.0,
        assumptions: list[str] | None = None,
    ) -> PlanResult:
        if succ.nondeterministic:
            notes.append(
                f"{succ.nondeterministic} call(s) skipped: they lead to several possible states"
            )
        return PlanResult(
            goal,
            steps,
            cost,
            method,
            not fast,
            stopped,
            search.expanded,
            search.generated,
            time.process_time() - started,
            prob if steps is not None else None,
            assumptions or [],
            notes,
        )

    def is_goal(s: State) -> bool:
        return sim.goal(s, goal) is True

    if is_goal(state):
        return result([], 0.0, None)

    def h(s: State) -> float:
        if fast:
            return relax.h_ff(s)
        return relax.h(s, "max")

    h0 = h(state)
    if h0 == INF:
        notes.append("the goal is unreachable even when deletes are ignored")
        return result(None, None, "exhausted")

    task = None
    if strips and not allow_may_fail:
        task, _why = read_strips(sim, calls, goal, succ.fixed_cost)
        if task is not None:
            task = task.relevant()
    start_facts = task.facts_of(state) if task is not None else None
    if task is not None and start_facts is not None:
        found = _strips_search(search, task, start_facts, relax, fast)
        if found is None:
            return result(None, None, search.stopped)
        path, g = found
        steps = [(calls[i].tool, dict(calls[i].args)) for i in path]
        if _replays_to_goal(sim, state, goal, [calls[i] for i in path]):
            notes.append(
                "searched the contract's grounded STRIPS task (every clause reads as facts); "
                "the plan was checked again by the simulator"
            )
            return result(steps, g, None)
        notes.append("the STRIPS reading disagreed with the simulator: searched again with it")
        search = _Search(fast, max_depth, max_states, max_seconds, wall)

    def successors(s: State) -> Iterator[tuple[int, State, float, Any]]:
        for i, nxt, cost, p, a in succ(s):
            yield i, nxt, cost, (p, a)

    found_state = search.run(state, successors, h, is_goal, h0)
    if found_state is None:
        return result(None, None, search.stopped)
    path_state, g_state, labels = found_state
    steps = [(calls[i].tool, dict(calls[i].args)) for i in path_state]
    prob: float | None = 1.0
    assumptions: list[str] = []
    for p, a in labels:
        prob = None if prob is None or p is None else prob * p
        assumptions.extend(x for x in a if x not in assumptions)
    return result(steps, g_state, None, prob, assumptions)


def _replays_to_goal(sim: Simulator, state: State, goal: str, calls: list[BoundCall]) -> bool:
    """Whether the simulator agrees that ``calls`` succeed from ``state`` and reach ``goal``
    (on its plan checker's fast path when every call has one, else step by step)."""
    if not state.has_unknown and all(call.fast is not None for call in calls):
        check = sim.plan_checker.check(calls, state)
        if check.verdict != "ok":
            return False
        if check.state is not None:
            return sim.goal(check.state, goal) is True
    s = state
    for call in calls:
        step = sim.step(s, call.tool, call.args)
        if step.verdict != "ok" or len({b.state for b in step.branches}) != 1:
            return False
        s = step.branches[0].state
    return sim.goal(s, goal) is True


def _strips_search(
    search: _Search, task: StripsTask, start: FactSet, relax: Relaxation, fast: bool
) -> tuple[list[int], float] | None:
    relax_ids = [-1] * (max(task.index.values(), default=-1) + 1)
    for fact, i in task.index.items():
        relax_ids[i] = relax.index.get(fact, -1)
    goal = relax.goal
    cache: dict[FactSet, float] = {}

    def h(facts: FactSet) -> float:
        known = cache.get(facts)
        if known is not None:
            return known
        ids = task.relaxed_facts(facts, relax_ids)
        if not relax.usable or not goal:
            value = 0.0
        elif fast:
            value = relax.h_ff_facts(ids)
        else:
            dist = relax.dist(ids, "max")
            value = max(dist[g] for g in goal) if goal else 0.0
        cache[facts] = value
        return value

    def successors(facts: FactSet) -> Iterator[tuple[int, FactSet, float, Any]]:
        for i, nxt, cost in task.successors(facts):
            yield i, nxt, cost, None

    found = search.run(start, successors, h, task.is_goal, h(start))
    if found is None:
        return None
    path, g, _labels = found
    return path, g


class _Search:
    """A* (or greedy best-first with ``fast``) over any hashable nodes, with the bounds."""

    def __init__(
        self,
        fast: bool,
        max_depth: int | None,
        max_states: int,
        max_seconds: float,
        wall: float,
    ) -> None:
        self.fast = fast
        self.max_depth = max_depth
        self.max_states = max_states
        self.max_seconds = max_seconds
        self.wall = wall
        self.expanded = 0
        self.generated = 0
        self.stopped: str | None = None

    def run(
        self,
        start: Node,
        successors: Callable[[Node], Iterable[tuple[int, Node, float, Any]]],
        h: Callable[[Node], float],
        is_goal: Callable[[Node], bool],
        h0: float,
    ) -> tuple[list[int], float, list[Any]] | None:
        """(call indices, cost, the successors' labels along the path), or None with
        :attr:`stopped` saying why."""
        fast = self.fast
        tie = itertools.count()
        parent: dict[Node, tuple[Node | None, int, Any]] = {start: (None, -1, None)}
        best: dict[Node, float] = {start: 0.0}
        depth: dict[Node, int] = {start: 0}
        closed: set[Node] = set()
        heap: list[tuple[float, float, int, float, Node]] = [(h0, h0, next(tie), 0.0, start)]
        cut_depth = False

        def path(end: Node) -> tuple[list[int], list[Any]]:
            indices: list[int] = []
            labels: list[Any] = []
            node: Node | None = end
            while node is not None:
                prev, i, label = parent[node]
                if prev is None:
                    break
                indices.append(i)
                labels.append(label)
                node = prev
            indices.reverse()
            labels.reverse()
            return indices, labels

        while heap:
            _f, _h, _t, g, s = heapq.heappop(heap)
            if s in closed or g > best[s]:
                continue
            if not fast and is_goal(s):
                indices, labels = path(s)
                return indices, g, labels
            if self.expanded >= self.max_states:
                self.stopped = "max_states"
                return None
            if (self.expanded & 63) == 0 and time.monotonic() - self.wall > self.max_seconds:
                self.stopped = "max_seconds"
                return None
            closed.add(s)
            self.expanded += 1
            d = depth[s]
            if self.max_depth is not None and d >= self.max_depth:
                cut_depth = True
                continue
            for i, nxt, cost, label in successors(s):
                self.generated += 1
                if nxt in closed:
                    continue
                ng = g + cost
                if ng >= best.get(nxt, INF):
                    continue
                best[nxt] = ng
                parent[nxt] = (s, i, label)
                depth[nxt] = d + 1
                if fast and is_goal(nxt):
                    indices, labels = path(nxt)
                    return indices, ng, labels
                hn = h(nxt)
                if hn == INF:
                    continue
                heapq.heappush(heap, (hn if fast else ng + hn, hn, next(tie), ng, nxt))
        self.stopped = "max_depth" if cut_depth else "exhausted"
        return None
