"""Minimal tool sets: the cheapest set of tools whose ``tags`` cover every need.

A need ``data`` is covered by a tag ``data`` or ``data.*``. Exact branch and bound for up to
:data:`EXACT_LIMIT` candidate tools, greedy weighted set cover beyond (within a factor
H(n) = 1 + 1/2 + … + 1/n of the optimum, n the number of needs). Ties: fewer tools, then names.
A tool's cost is its base cost (:func:`tool_cost`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..dsl import ir

EXACT_LIMIT = 40


@dataclass
class Selection:
    """The chosen tools, their total cost, the method and which tools cover each need."""

    tools: list[str]
    cost: float
    method: str  # "exact" | "greedy" | "causal"
    covers: dict[str, list[str]]
    bound: float | None = None  # greedy: the H(n) factor
    necessary: dict[str, str] = field(default_factory=dict)  # causal: tool -> why

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tools": self.tools,
            "cost": self.cost,
            "method": self.method,
            "covers": self.covers,
        }
        if self.bound is not None:
            out["bound"] = self.bound
        if self.necessary:
            out["necessary"] = self.necessary
        return out


def covers(tag: str, need: str) -> bool:
    """A tag covers a need when it is the need or below it (``data.read`` covers ``data``)."""
    return tag == need or tag.startswith(need + ".")


def tool_cost(tool: ir.Tool) -> float:
    """A tool's base cost: its ``cost`` when that is a number; for a sum (``5 + len(code) /
    1000``) the sum of its number terms (the part no argument changes); else 1."""
    c = tool.cost
    if c is None:
        return 1.0
    base = _number_terms(c)
    return base if base is not None else 1.0


def _number_terms(e: ir.Expr) -> float | None:
    if isinstance(e, ir.ScalarLit):
        v = e.value
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if isinstance(e, ir.Binary) and e.op == "+":
        left, right = _number_terms(e.left), _number_terms(e.right)
        if left is None and right is None:
            return None
        return (left or 0.0) + (right or 0.0)
    return None


def harmonic(n: int) -> float:
    return sum(1.0 / i for i in range(1, n + 1))


def select_cover(
    tools: Sequence[tuple[str, frozenset[str], float]], needs: Sequence[str]
) -> Selection | None:
    """The cheapest cover of ``needs`` by ``(name, tags, cost)`` tools, or None when some need
    is covered by no tool."""
    needs = list(dict.fromkeys(needs))
    cov = {
        name: frozenset(n for n in needs if any(covers(t, n) for t in tags))
        for name, tags, _ in tools
    }
    cost = {name: c for name, _, c in tools}
    useful = sorted((n for n in cov if cov[n]), key=lambda n: (cost[n], n))
    if any(not any(need in cov[t] for t in useful) for need in needs):
        return None
    if len(useful) <= EXACT_LIMIT:
        chosen = _exact(useful, cov, cost, needs)
        method, bound = "exact", None
    else:
        chosen = _greedy(useful, cov, cost, needs)
        method, bound = "greedy", harmonic(len(needs))
    chosen = sorted(chosen)
    return Selection(
        chosen,
        sum(cost[t] for t in chosen),
        method,
        {n: [t for t in chosen if n in cov[t]] for n in needs},
        bound,
    )


def _key(chosen: Iterable[str], cost: dict[str, float]) -> tuple[float, int, list[str]]:
    names = sorted(chosen)
    return (round(sum(cost[t] for t in names), 9), len(names), names)


def _exact(
    useful: list[str], cov: dict[str, frozenset[str]], cost: dict[str, float], needs: list[str]
) -> list[str]:
    """Branch and bound: pick the uncovered need with fewest covering tools, branch on them."""
    by_need = {n: [t for t in useful if n in cov[t]] for n in needs}
    best: list[Any] = [None, None]  # key, chosen

    def search(uncovered: frozenset[str], chosen: list[str], spent: float) -> None:
        if best[0] is not None and (round(spent, 9), len(chosen)) > best[0][:2]:
            return
        if not uncovered:
            key = _key(chosen, cost)
            if best[0] is None or key < best[0]:
                best[0], best[1] = key, list(chosen)
            return
        # lower bound: the cheapest tool covering the hardest need
        need = min(uncovered, key=lambda n: (len(by_need[n]), n))
        for t in sorted(by_need[need], key=lambda t: (cost[t], t)):
            if best[0] is not None and round(spent + cost[t], 9) > best[0][0]:
                continue
            chosen.append(t)
            search(uncovered - cov[t], chosen, spent + cost[t])
            chosen.pop()

    search(frozenset(needs), [], 0.0)
    return list(best[1] or [])


def _greedy(
    useful: list[str], cov: dict[str, frozenset[str]], cost: dict[str, float], needs: list[str]
) -> list[str]:
    uncovered = set(needs)
    chosen: list[str] = []
    while uncovered:

        def ratio(t: str, left: set[str] = uncovered) -> tuple[float, str]:
            gain = len(cov[t] & left)
            return (cost[t] / gain if gain else float("inf"), t)

        t = min(useful, key=ratio)
        chosen.append(t)
        uncovered -= cov[t]
    return chosen


def select(
    contract: ir.Contract, needs: Sequence[str], exclude: Iterable[str] = ()
) -> Selection | None:
    """The cheapest set of the contract's tools (minus ``exclude``) covering ``needs``."""
    excluded = set(exclude)
    tools = [
        (t.name, frozenset(tag.name for tag in t.tags), tool_cost(t))
        for t in contract.tools
        if t.name not in excluded
    ]
    return select_cover(tools, needs)


def causal_select(
    sim: Any, needs: Sequence[str], exclude: Iterable[str], goal: str, **bounds: Any
) -> Selection | None:
    """The tools of the cheapest plan to ``goal`` from the initial state (plus the cheapest
    cover of the needs they leave uncovered), each tool of the plan checked necessary: with it
    excluded, no plan exists within the bounds. None when no plan reaches the goal."""
    from .grounding import ground
    from .search import plan

    excluded = list(exclude)
    state = sim.initial_state()
    grounding = ground(sim, state, bounds.pop("values", None))
    found = plan(sim, state, goal, grounding=grounding, exclude=excluded, **bounds)
    if not found.found:
        return None
    used = sorted({t for t, _ in found.steps or []})
    necessary: dict[str, str] = {}
    for t in used:
        without = plan(sim, state, goal, grounding=grounding, exclude=[*excluded, t], **bounds)
        if without.found:
            necessary[t] = f"not necessary: a plan of cost {without.cost:g} avoids it"
        elif without.stopped_by == "exhausted":
            necessary[t] = "necessary: no plan without it"
        else:
            necessary[t] = f"necessary within the bounds ({without.stopped_by} stopped the search)"
    irtools = {t.name: t for t in sim.compiled.ir.tools}
    chosen = list(used)
    cost_of = {t: tool_cost(irtools[t]) for t in irtools}
    left = [
        n for n in needs if not any(covers(tag.name, n) for t in used for tag in irtools[t].tags)
    ]
    if left:
        rest = select(sim.compiled.ir, left, [*excluded, *used])
        if rest is None:
            return None
        chosen = sorted(set(chosen) | set(rest.tools))
    return Selection(
        chosen,
        sum(cost_of[t] for t in chosen),
        "causal",
        {
            n: [t for t in chosen if any(covers(tag.name, n) for tag in irtools[t].tags)]
            for n in needs
        },
        None,
        necessary,
    )
