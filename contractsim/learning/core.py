"""The learner: preconditions, error codes and effects of every tool from recorded runs."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..compiler.values import thaw
from ..dsl.ir import ScalarLit
from ..replay.traces import Run
from .atoms import (
    Atom,
    atoms_for,
    conversion_terms,
    equality_atoms,
    literal,
    path_terms,
    terms_for,
)
from .effects import EXCEPTIONS, Observation, VariableEffect, learn_variable
from .messages import Cluster, cluster

if TYPE_CHECKING:
    from ..api import Contract

DEFAULT_MAX_ATOMS = 400
DEFAULT_MIN_SUPPORT = 2
MAX_PAIR_ATOMS = 120
"""Disjunctions of two atoms are formed from at most this many atoms per tool."""


@dataclass
class Call:
    args: Mapping[str, Any]
    before: Mapping[str, Any]
    outcome: str
    error: str | None
    result: Any
    after: Mapping[str, Any] | None


@dataclass
class Clause:
    text: str
    code: str
    template: str
    successes: int
    holds: int
    failures: int
    violated: int
    new: int = 0
    atoms: tuple[Atom, ...] = ()
    """The atoms the clause is the disjunction of (empty: ``false``)."""

    def comment(self) -> str:
        return (
            f"# learned: holds before {self.holds}/{self.successes} successes, "
            f"violated before {self.violated}/{self.failures} failures"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "require": self.text,
            "code": self.code,
            "message": self.template,
            "holds_before_successes": [self.holds, self.successes],
            "violated_before_failures": [self.violated, self.failures],
            "explains_new_failures": self.new,
            "confidence": self.violated / self.failures if self.failures else None,
        }


@dataclass
class ToolModel:
    """What was learned for one tool."""

    name: str
    calls: int = 0
    successes: int = 0
    failures: int = 0
    atoms: int = 0
    clauses: list[Clause] = field(default_factory=list)
    effects: list[VariableEffect] = field(default_factory=list)
    unexplained_failures: list[dict[str, Any]] = field(default_factory=list)
    lets: list[str] = field(default_factory=list)
    """``let`` lines the learned clauses and effects read (conversions such as ``float(p)``)."""
    failure_state_changes: int = 0
    refused_by_skeleton: int = 0
    """Failures the skeleton already predicts (a missing argument, a wrong type, a clause of
    the skeleton): not learned from."""

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "failures_the_skeleton_predicts": self.refused_by_skeleton,
            "successes": self.successes,
            "failures": self.failures,
            "atoms_considered": self.atoms,
            "clauses": [c.to_json() for c in self.clauses],
            "unexplained_failures": self.unexplained_failures,
            "effects": [
                {
                    "variable": e.var,
                    "effect": e.lines,
                    "observations": e.observations,
                    "changed": e.changed,
                    "unexplained": e.unexplained,
                    "examples": e.examples,
                }
                for e in self.effects
                if e.changed
            ],
            "failures_that_changed_state": self.failure_state_changes,
        }


@dataclass
class Learned:
    """The result of :func:`learn_runs`: the models per tool, and timing."""

    tools: dict[str, ToolModel]
    mode: str
    steps: int
    seconds: float
    dropped: list[str] = field(default_factory=list)
    """Learned items the checker refused (dropped from the contract)."""
    widened: list[str] = field(default_factory=list)
    """``tool.param`` whose declared type got ``accepts any`` (successes passed other kinds)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "dropped_by_check": self.dropped,
            "accepts_any": self.widened,
            "steps": self.steps,
            "seconds": round(self.seconds, 3),
            "tools": {k: v.to_json() for k, v in self.tools.items()},
        }


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "str"
    if isinstance(value, frozenset):
        return "set"
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, tuple | list):
        return "list"
    return "other"


def collect_calls(contract: Contract, runs: Sequence[Run]) -> dict[str, list[Call]]:
    """Every recorded call by tool, with the real state before it: the run's initial state,
    then each step's ``state_after`` (a step without one leaves the known state as it was)."""
    sim = contract.simulator()
    by_tool: dict[str, list[Call]] = {t.name: [] for t in contract.ir.tools}
    defaults = {
        t.name: {p.name: p.default.value for p in t.params if isinstance(p.default, ScalarLit)}
        for t in contract.ir.tools
    }
    for run in runs:
        state: dict[str, Any] = dict(sim.state_with(run.state))
        for step in run.steps:
            # an argument left out reads as its literal default (as the tool sees it)
            args = {**defaults.get(step.tool, {}), **step.args}
            after = None
            if step.state_after is not None:
                after = {k: v for k, v in step.state_after.items() if k in state}
            by_tool.setdefault(step.tool, []).append(
                Call(args, state, step.outcome, step.error, step.result, after)
            )
            if after:
                state = {**state, **after}
    return by_tool


def learn_runs(
    contract: Contract,
    runs: Sequence[Run],
    *,
    safe: bool = False,
    max_atoms: int = DEFAULT_MAX_ATOMS,
    min_support: int = DEFAULT_MIN_SUPPORT,
    results_typed: bool = True,
    effect_exceptions: int = EXCEPTIONS,
) -> Learned:
    """Learn every tool of ``contract`` (the skeleton) from ``runs``."""
    start = time.process_time()
    calls = collect_calls(contract, runs)
    initial = dict(contract.simulator().initial_state())
    kinds: dict[str, str] = {}
    for var, value in initial.items():
        kinds[var] = _kind(value)
    tuple_sizes = {
        len(next(iter(v)))
        for v in initial.values()
        if isinstance(v, frozenset) and v and isinstance(next(iter(v)), tuple)
    }
    for decl in contract.ir.state:  # set[tuple[A, B]]: the declared tuple lengths
        args = getattr(decl.type, "args", ()) or ()
        for item in args:
            if getattr(item, "name", None) == "tuple":
                tuple_sizes.add(len(getattr(item, "args", ()) or ()))
    atom_kinds = {v: ("collection" if k in ("set", "map", "list") else k) for v, k in kinds.items()}
    sim = contract.simulator()
    records = _map_records(contract)
    tools: dict[str, ToolModel] = {}
    steps = 0
    for tool in contract.ir.tools:
        tool_calls = calls.get(tool.name, [])
        steps += len(tool_calls)
        model = ToolModel(tool.name, calls=len(tool_calls))
        tools[tool.name] = model
        if not tool_calls:
            if safe:  # never seen: the conservative model refuses it (SAM's safety)
                model.clauses = [_never_succeeded(0)]
            continue
        params = [p.name for p in tool.params]
        string_params = [
            p.name for p in tool.params if not p.optional and _is_str(contract, p.type)
        ]
        optional_strings = [p.name for p in tool.params if p.optional and _is_str(contract, p.type)]
        pairs = [(c.args, c.before) for c in tool_calls]
        terms = terms_for(params, pairs, {}, tuple_sizes, 64)
        terms += conversion_terms(params, pairs)
        terms += path_terms(
            string_params, optional_strings, [v for v, k in kinds.items() if k == "str"]
        )
        maps = frozenset(v for v, k in kinds.items() if k == "map")
        atoms = atoms_for(
            params, terms, pairs, atom_kinds, max_atoms, min_support, maps, optional_strings
        )
        atoms = [a for a in atoms if _typed_ok(a, string_params + optional_strings)]
        model.atoms = len(atoms)
        ok = [c for c in tool_calls if c.outcome == "ok"]
        bad = []
        for c in tool_calls:
            if c.outcome == "ok":
                continue
            if _skeleton_refuses(sim, tool.name, c):
                model.refused_by_skeleton += 1
            else:
                bad.append(c)
        model.successes, model.failures = len(ok), len(bad)
        clusters, which = cluster(tool.name, [(c.error, c.args) for c in bad], params, set())
        model.clauses = _preconditions(
            atoms, ok, bad, clusters, which, safe, min_support, set(initial)
        )
        covered = 0
        for clause in model.clauses:
            covered += clause.new
        explained = _explained(model.clauses, bad)
        for i, c in enumerate(bad):
            if not explained[i] and len(model.unexplained_failures) < 20:
                model.unexplained_failures.append(
                    {
                        "args": thaw(dict(c.args)),
                        "outcome": c.outcome,
                        "error": c.error,
                        "cluster": clusters[which[i]].code,
                    }
                )
        model.failure_state_changes = sum(
            1 for c in bad if c.after and any(c.before.get(k) != v for k, v in c.after.items())
        )
        # effects (a tool whose skeleton already has effects or outcomes keeps them)
        effect_terms = terms
        effect_atoms = atoms + equality_atoms(string_params, pairs, min_support)
        taken = set(params) | set(initial) | {t.text for t in terms if t.let}
        for var in initial if not (tool.effects or tool.outcomes or tool.flow) else ():
            obs = [
                Observation(c.args, c.before, c.after[var], c.result if results_typed else None)
                for c in ok
                if c.after is not None and var in c.after
            ]
            if not obs:
                continue
            kind = kinds[var]
            if kind not in ("set", "map", "str", "number", "bool"):
                continue
            model.effects.append(
                learn_variable(
                    var,
                    kind,
                    obs,
                    effect_terms,
                    kinds,
                    effect_atoms,
                    min_support,
                    taken,
                    records.get(var, ""),
                    effect_exceptions,
                )
            )
        for effect in model.effects:
            if effect.var in params:
                effect.lines = [_state_target(line, effect.var) for line in effect.lines]
        used = " ".join(
            [c.text for c in model.clauses] + [x for e in model.effects if e.kept for x in e.lines]
        )
        model.lets = [t.let for t in terms if t.let and re.search(rf"\b{t.text}\b", used)]
    return Learned(tools, "safe" if safe else "default", steps, time.process_time() - start)


def _state_target(line: str, var: str) -> str:
    """An effect line assigning ``var`` written ``state.var`` (a parameter of the same name
    hides the state variable inside the tool)."""
    return re.sub(rf"^(\s*){var}\b(?=\s*(?:[-+]?=|\.|\[))", rf"\1state.{var}", line)


def _map_records(contract: Contract) -> dict[str, str]:
    """State maps whose values are a named record type: variable → the type's name."""
    records = {d.name for d in contract.ir.types if getattr(d.type, "kind", None) == "record"}
    out = {}
    for decl in contract.ir.state:
        t = decl.type
        args: tuple[Any, ...] = tuple(getattr(t, "args", ()) or ())
        if getattr(t, "name", None) == "map" and len(args) == 2:
            name = getattr(args[1], "name", None)
            if name in records:
                out[decl.name] = str(name)
    return out


def _is_str(contract: Contract, t: Any, depth: int = 0) -> bool:
    """Whether a declared type is ``str`` (through named aliases)."""
    if getattr(t, "kind", None) != "named" or depth > 20:
        return False
    if t.name == "str":
        return True
    for decl in contract.ir.types:
        if decl.name == t.name:
            return _is_str(contract, decl.type, depth + 1)
    return False


def _skeleton_refuses(sim: Any, tool: str, call: Call) -> bool:
    """Whether the skeleton already predicts this failure (arguments, its own clauses)."""
    try:
        state = sim.state_with(call.before)
        return bool(sim.step(state, tool, dict(call.args)).verdict != "ok")
    except (ValueError, TypeError):
        return False


def _typed_ok(atom: Atom, string_params: Sequence[str]) -> bool:
    """Atoms that read a parameter as a string only for parameters always seen as strings."""
    if '+ "/" +' in atom.text or atom.text.startswith('not ("'):
        return all(p in string_params for p in atom.params)
    return True


def _masks(atom: Atom, calls: Sequence[Call]) -> int:
    m = 0
    for i, c in enumerate(calls):
        if atom(c.args, c.before):
            m |= 1 << i
    return m


def _preconditions(
    atoms: Sequence[Atom],
    ok: Sequence[Call],
    bad: Sequence[Call],
    clusters: Sequence[Cluster],
    which: Sequence[int],
    safe: bool,
    min_support: int,
    state_vars: Collection[str] = (),
) -> list[Clause]:
    all_ok = (1 << len(ok)) - 1
    all_bad = (1 << len(bad)) - 1
    scored = []
    for atom in atoms:
        s = _masks(atom, ok)
        if s != all_ok:
            if safe or not ok:
                continue
            scored.append((atom, s, _masks(atom, bad), False))
            continue
        scored.append((atom, s, _masks(atom, bad), True))
    holding = [(a, s, f) for a, s, f, h in scored if h]
    out: list[Clause] = []
    if safe:
        if not ok:
            return [_never_succeeded(len(bad))]
        for atom, _, f in holding:
            violated = all_bad & ~f
            out.append(_clause((atom,), violated, violated, ok, bad, clusters, which))
        return out
    # default: greedy set cover of the failures by clauses that hold before every success
    candidates: list[tuple[tuple[Atom, ...], int]] = [((a,), all_bad & ~f) for a, _, f in holding]
    partial = [(a, s, f) for a, s, f, h in scored if not h and s][:MAX_PAIR_ATOMS]
    for i, (a, sa, fa) in enumerate(partial):
        for b, sb, fb in partial[i + 1 :]:
            if sa | sb == all_ok:
                candidates.append(((a, b), all_bad & ~(fa | fb)))
    # an atom with up to two exceptional constants: `T in S or p == ".." or p == "/"` (frequent
    # values of a parameter with an open set of values; a closed set's constants pair as above)
    constants = [(a, s, f) for a, s, f in partial if a.special]
    for a, sa, fa in partial:
        if a.constant:
            continue
        for j, (b, sb, fb) in enumerate(constants):
            for c, sc, fc in constants[j + 1 :]:
                if sa | sb != all_ok and sa | sc != all_ok and sa | sb | sc == all_ok:
                    candidates.append(((a, b, c), all_bad & ~(fa | fb | fc)))
    uncovered = all_bad
    read: set[str] = set()
    while uncovered:
        # the most new failures; among equals the fewest atoms, then the clause that reads the
        # fewest state variables the clauses chosen so far do not (`cwd + "/" + p` after
        # `cwd + "/" + q`, not `root + "/" + p` when the data cannot tell them apart)
        best: tuple[tuple[int, int, int], tuple[Atom, ...], int] | None = None
        for parts, violated in candidates:
            gain = (violated & uncovered).bit_count()
            if gain < min_support or (best is not None and gain < best[0][0]):
                continue
            key = (gain, -len(parts), -len(_reads(parts, state_vars) - read))
            if best is None or key > best[0]:
                best = (key, parts, violated)
        if best is None:
            break
        _, parts, violated = best
        out.append(_clause(parts, violated, violated & uncovered, ok, bad, clusters, which))
        read |= _reads(parts, state_vars)
        uncovered &= ~violated
    return out


_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def _reads(parts: Sequence[Atom], state_vars: Collection[str]) -> set[str]:
    """The state variables the atoms' texts name."""
    return {w for a in parts for w in _WORD.findall(a.text) if w in state_vars}


def _never_succeeded(failures: int) -> Clause:
    """``require false``: the --safe clause of a tool no recorded call of which succeeded."""
    return Clause(
        "false",
        "NEVER_SUCCEEDED",
        "no recorded call of this tool succeeded",
        0,
        0,
        failures,
        failures,
        failures,
    )


def _clause(
    parts: tuple[Atom, ...],
    violated: int,
    new: int,
    ok: Sequence[Call],
    bad: Sequence[Call],
    clusters: Sequence[Cluster],
    which: Sequence[int],
) -> Clause:
    votes: Counter[int] = Counter(which[i] for i in range(len(bad)) if (new or violated) >> i & 1)
    text = " or ".join(a.text for a in parts)
    if votes:
        chosen = clusters[votes.most_common(1)[0][0]]
        code, template = chosen.code, chosen.template
    else:
        code, template = "PRECONDITION", f"{text} does not hold"
    return Clause(
        text,
        code,
        template,
        len(ok),
        len(ok),
        len(bad),
        violated.bit_count(),
        new.bit_count(),
        parts,
    )


def _explained(clauses: Sequence[Clause], bad: Sequence[Call]) -> list[bool]:
    """Which failures some clause is violated before."""
    out = []
    for c in bad:
        hit = False
        for clause in clauses:
            if clause.text == "false":
                hit = True
                break
            if clause.atoms and not any(a(c.args, c.before) for a in clause.atoms):
                hit = True
                break
        out.append(hit)
    return out


def message_literal(template: str) -> str:
    """A message template as a contract string (holes kept)."""
    return literal(template)
