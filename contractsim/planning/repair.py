"""Plan repair: the cheapest calls to insert into a plan (keeping its own steps in order) so
that every step succeeds — uniform-cost search over (state, steps of the plan done)."""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..diagnostics import ContractError
from .grounding import ground
from .relaxed import INF
from .search import DEFAULT_MAX_SECONDS, DEFAULT_MAX_STATES, Successors

if TYPE_CHECKING:
    from ..simulator.engine import Simulator
    from ..simulator.state import State


@dataclass
class RepairResult:
    """The repaired plan (``plan``; None when no repair was found within the bounds), the calls
    inserted (``before``: the 1-based index of the plan step they come before, ``len+1`` for
    after the last one) and their total cost."""

    plan: list[tuple[str, dict[str, Any]]] | None
    inserted: list[dict[str, Any]]
    cost: float | None
    stopped_by: str | None
    expanded: int
    seconds: float
    notes: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.plan is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "plan": None if self.plan is None else [{"tool": t, "args": a} for t, a in self.plan],
            "inserted": self.inserted,
            "cost": self.cost,
            "stopped_by": self.stopped_by,
            "expanded": self.expanded,
            "notes": list(self.notes),
        }


def repair(
    sim: Simulator,
    steps: Sequence[tuple[str, Mapping[str, Any]]],
    state: State,
    *,
    goal: str | None = None,
    values: Mapping[str, Iterable[Any]] | None = None,
    max_states: int = DEFAULT_MAX_STATES,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    max_inserted: int | None = None,
) -> RepairResult:
    """See :meth:`contractsim.simulator.engine.Simulator.repair`."""
    started, wall = time.process_time(), time.monotonic()
    if goal is not None:
        sim.goal(state, goal)
    notes: list[str] = []
    own = []
    for i, (tool, args) in enumerate(steps, 1):
        try:
            own.append(sim.bind(tool, dict(args)))
        except ContractError as exc:
            msg = exc.diagnostics[0].message
            notes.append(f"step {i} can never succeed: {msg}")
            return RepairResult(None, [], None, "exhausted", 0, 0.0, notes)
    grounding = ground(sim, state, values)
    notes.extend(grounding.notes())
    insert = Successors(sim, grounding.calls, False)
    own_succ = Successors(sim, own, False)
    n = len(own)
    Node = tuple[Any, int]  # (state, plan steps done)
    start: Node = (state, 0)
    best: dict[Node, float] = {start: 0.0}
    parent: dict[Node, tuple[Node | None, int, bool, int]] = {start: (None, -1, False, 0)}
    closed: set[Node] = set()
    tie = itertools.count()
    heap: list[tuple[float, int, Node]] = [(0.0, next(tie), start)]
    expanded = 0
    stopped = "exhausted"
    while heap:
        g, _t, node = heapq.heappop(heap)
        if node in closed or g > best[node]:
            continue
        s, k = node
        if k == n and (goal is None or sim.goal(s, goal) is True):
            plan: list[tuple[str, dict[str, Any]]] = []
            inserted: list[dict[str, Any]] = []
            cur: Node | None = node
            chain = []
            while cur is not None:
                prev, i, is_insert, _ins = parent[cur]
                if prev is None:
                    break
                chain.append((prev, i, is_insert))
                cur = prev
            chain.reverse()
            for prev, i, is_insert in chain:
                call = grounding.calls[i] if is_insert else own[i]
                plan.append((call.tool, dict(call.args)))
                if is_insert:
                    inserted.append(
                        {
                            "before": prev[1] + 1,
                            "at": len(plan),
                            "tool": call.tool,
                            "args": dict(call.args),
                        }
                    )
            return RepairResult(
                plan, inserted, g, None, expanded, time.process_time() - started, notes
            )
        if expanded >= max_states:
            stopped = "max_states"
            break
        if (expanded & 63) == 0 and time.monotonic() - wall > max_seconds:
            stopped = "max_seconds"
            break
        closed.add(node)
        expanded += 1
        ins_count = parent[node][3]
        children: list[tuple[Node, float, int, bool]] = []
        if k < n:
            taken = own_succ.apply(k, s)
            if taken is not None:
                children.append(((taken[1], k + 1), 0.0, k, False))
        if max_inserted is None or ins_count < max_inserted:
            for i, nxt, cost, _p, _a in insert(s):
                children.append(((nxt, k), cost, i, True))
        for child, cost, i, is_insert in children:
            if child in closed:
                continue
            ng = g + cost
            if ng >= best.get(child, INF):
                continue
            best[child] = ng
            parent[child] = (node, i, is_insert, ins_count + (1 if is_insert else 0))
            heapq.heappush(heap, (ng, next(tie), child))
    if max_inserted is not None and stopped == "exhausted":
        stopped = "max_inserted"
    return RepairResult(None, [], None, stopped, expanded, time.process_time() - started, notes)
