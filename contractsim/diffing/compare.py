"""Compare two contracts' IRs, item by item, and classify every difference.

The IR is frozen pydantic with spans left out of equality, so ``==`` on a node means "the same
clause, wherever it sits": identical clauses are never reported. A clause whose text is identical
but which reads a predicate or constant whose definition changed is compared like a changed one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..dsl import ir
from ..dsl.types import type_label
from ..dsl.walk import stmt_exprs, template_exprs, walk_expr, walk_stmts
from .changes import Change, ChangeType, DiffReport, Witness
from .valuesets import TypeChange, compare_types
from .witness import Observation, WitnessSearch

if TYPE_CHECKING:
    from ..api import Contract

NOT_SHOWN = "not shown to differ"
FOUND = "found"


def diff_contracts(
    old: Contract,
    new: Contract,
    tool: str | None = None,
    witnesses: bool = True,
    example_args: list[Any] | None = None,
) -> DiffReport:
    """Every change from ``old`` to ``new`` (only those of ``tool`` when given), classified, with
    witnesses searched for precondition and effect changes when ``witnesses`` is true."""
    differ = _Differ(old, new, witnesses, example_args or [])
    differ.run(tool)
    return DiffReport(new.ir.header.name, old.ir.header.version, new.ir.header.version, differ.out)


def _stmt_names(stmts: Iterable[ir.Stmt]) -> set[str]:
    out: set[str] = set()
    for s in walk_stmts(stmts):
        for e in stmt_exprs(s):
            out.update(_expr_names(e))
        if isinstance(s, (ir.Warn, ir.Fail)):
            for e in template_exprs(s.message):
                out.update(_expr_names(e))
    return out


def _expr_names(e: ir.Expr) -> set[str]:
    out: set[str] = set()
    for x in walk_expr(e):
        if isinstance(x, ir.Name):
            out.add(x.name)
        elif isinstance(x, ir.Call):
            out.add(x.func)
    return out


def _show(e: ir.Expr | None) -> str:
    if e is None:
        return "—"
    from ..dsl.pretty import expr_text

    text = expr_text(e)
    return text if len(text) <= 80 else text[:77] + "…"


class _Differ:
    def __init__(self, old: Contract, new: Contract, witnesses: bool, extra: list[Any]) -> None:
        self.old, self.new = old, new
        self.o, self.n = old.ir, new.ir
        self.out: list[Change] = []
        self.search = WitnessSearch(old, new, extra) if witnesses else None
        self.changed_defs = self._changed_definitions()

    # ---- helpers
    def add(
        self,
        type_: ChangeType,
        tool: str | None,
        field: str,
        description: str,
        impact: str,
        witness: Witness | None = None,
        status: str | None = None,
    ) -> None:
        self.out.append(Change(type_, tool, field, description, impact, witness, status))

    def _changed_definitions(self) -> set[str]:
        """Predicates, functions and constants whose definition is not the same in NEW."""
        out: set[str] = set()
        for kind in ("predicates", "functions", "consts"):
            old_items = {d.name: d for d in getattr(self.o, kind)}
            new_items = {d.name: d for d in getattr(self.n, kind)}
            for name in old_items.keys() | new_items.keys():
                if old_items.get(name) != new_items.get(name):
                    out.add(name)
        # a predicate (or function) that calls a changed one changed too
        bodies = {p.name: _expr_names(p.body) for p in self.n.predicates}
        bodies.update({f.name: _expr_names(f.body) for f in self.n.functions})
        grew = True
        while grew:
            grew = False
            for name, used in bodies.items():
                if name not in out and used & out:
                    out.add(name)
                    grew = True
        return out

    def _same(self, a: Any, b: Any, names: set[str]) -> bool:
        return bool(a == b) and not (names & self.changed_defs)

    # ---- the walk
    def run(self, only: str | None) -> None:
        old_tools = {t.name: t for t in self.o.tools}
        new_tools = {t.name: t for t in self.n.tools}
        removed = [t for t in self.o.tools if t.name not in new_tools]
        added = [t for t in self.n.tools if t.name not in old_tools]
        for t in removed:
            if only is not None and t.name != only:
                continue
            twin = next((a for a in added if _same_shape(t, a)), None)
            if twin is not None:
                self.add(
                    "breaking",
                    t.name,
                    "tool",
                    f"tool `{t.name}` renamed to `{twin.name}`",
                    f"calls to `{t.name}` now fail with UNKNOWN_TOOL; call `{twin.name}` instead",
                )
            else:
                self.add(
                    "breaking",
                    t.name,
                    "tool",
                    f"tool `{t.name}` removed",
                    f"calls to `{t.name}` now fail with UNKNOWN_TOOL",
                )
        for t in added:
            if only is not None and t.name != only:
                continue
            self.add(
                "additive",
                t.name,
                "tool",
                f"tool `{t.name}` added",
                f"a new tool `{t.name}` is available",
            )
        for t in self.o.tools:
            if t.name in new_tools and (only is None or t.name == only):
                self.tool(t, new_tools[t.name])
        if only is None:
            self.state_vars()
            self.goals()
            self.machines()
        else:  # the protocol changes that name this tool
            self.machines()
            self.out = [c for c in self.out if c.tool == only]

    # ---- tools
    def tool(self, o: ir.Tool, n: ir.Tool) -> None:
        name = o.name
        self.params(o, n)
        self.returns(o, n)
        self.conditions(o, n)
        self.effects(o, n)
        self.outcomes(o, n)
        if o.description != n.description:
            self.add(
                "behavioural",
                name,
                "description",
                "description changed",
                "the tool is described differently to the agent",
            )
        if not self._same(o.cost, n.cost, _expr_names(o.cost) if o.cost else set()):
            self.add(
                "behavioural",
                name,
                "cost",
                f"cost {_show(o.cost)} → {_show(n.cost)}",
                "plans that include this tool cost differently; a planner may pick other tools",
            )
        old_tags, new_tags = [t.name for t in o.tags], [t.name for t in n.tags]
        if sorted(old_tags) != sorted(new_tags):
            self.add(
                "behavioural",
                name,
                "tags",
                f"tags [{', '.join(old_tags)}] → [{', '.join(new_tags)}]",
                "capability search may now select this tool for other tasks",
            )
        old_r, new_r = sorted(r.name for r in o.risks), sorted(r.name for r in n.risks)
        if old_r != new_r:
            self.add(
                "behavioural",
                name,
                "risk",
                f"risk [{', '.join(old_r)}] → [{', '.join(new_r)}]",
                "a policy that gates tools by risk (confirmation, read-only mode) treats "
                "this tool differently",
            )
        if o.reports != n.reports:
            self.add(
                "behavioural",
                name,
                "report",
                "execution report fields changed",
                "the execution report the tool returns has a different shape",
            )

    def params(self, o: ir.Tool, n: ir.Tool) -> None:
        old_p = {p.name: p for p in o.params}
        new_p = {p.name: p for p in n.params}
        for p in o.params:
            q = new_p.get(p.name)
            field = f"param {p.name}"
            if q is None:
                self.add(
                    "breaking",
                    o.name,
                    field,
                    f"parameter `{p.name}` removed",
                    f"calls that pass `{p.name}` are now refused (INVALID_ARGUMENT: unknown "
                    "argument)",
                )
                continue
            o_req = not p.optional and p.default is None
            n_req = not q.optional and q.default is None
            if o_req and not n_req:
                self.add(
                    "additive",
                    o.name,
                    field,
                    f"parameter `{p.name}` is now optional",
                    f"calls may leave `{p.name}` out",
                )
            elif n_req and not o_req:
                self.add(
                    "breaking",
                    o.name,
                    field,
                    f"parameter `{p.name}` optional → required",
                    f"calls that leave `{p.name}` out are now refused (INVALID_ARGUMENT)",
                )
            elif p.default != q.default and p.default is not None and q.default is not None:
                self.add(
                    "behavioural",
                    o.name,
                    field,
                    f"default of `{p.name}` {_show(p.default)} → {_show(q.default)}",
                    f"calls that leave `{p.name}` out now get {_show(q.default)}",
                )
            for tc in compare_types(p.type, q.type, self.o, self.n):
                self.param_type_change(o.name, p.name, tc, n)
            if (p.accepts is not None or q.accepts is not None) and (
                p.accepted_type != q.accepted_type
            ):
                self.add(
                    "behavioural",
                    o.name,
                    field,
                    f"accepted type of `{p.name}` {_accepted_text(p)} → {_accepted_text(q)}",
                    "the tool takes other values than before beside its declared type "
                    "(those outside it are OFF_SPEC_ARGUMENT warnings)",
                )
            if p.description != q.description:
                self.add(
                    "behavioural",
                    o.name,
                    field,
                    f"description of `{p.name}` changed",
                    "the parameter is described differently to the agent",
                )
        for q in n.params:
            if q.name in old_p:
                continue
            if not q.optional and q.default is None:
                self.add(
                    "breaking",
                    n.name,
                    f"param {q.name}",
                    f"required parameter `{q.name}: {type_label(q.type)}` added",
                    f"calls without `{q.name}` are now refused (INVALID_ARGUMENT: missing)",
                )
            else:
                self.add(
                    "additive",
                    n.name,
                    f"param {q.name}",
                    f"optional parameter `{q.name}: {type_label(q.type)}` added",
                    "existing calls work as before; the new parameter is available",
                )

    def param_type_change(self, tool: str, param: str, tc: TypeChange, new_tool: ir.Tool) -> None:
        field = f"param {param}{tc.where}"
        what = f"`{param}{tc.where}`"
        if tc.direction == "widened":
            self.add(
                "additive",
                tool,
                field,
                f"{what} accepts more values: {tc.description}",
                f"values of {what} that were refused are now accepted",
            )
            return
        witness: Witness | None = None
        status: str | None = None
        if self.search is not None and tc.where == "" and tc.has_witness:
            witness = self._refused_value_witness(tool, param, tc.witness)
            status = FOUND if witness is not None else None
        verb = "narrowed" if tc.direction == "narrowed" else "changed"
        detail = tc.description
        if tc.has_witness and witness is None:
            detail += f"; e.g. {_json(tc.witness)} was accepted and is now refused"
        self.add(
            "breaking",
            tool,
            field,
            f"{what} accepted values {verb}: {detail}",
            f"calls with values of {what} that were accepted may now be refused (INVALID_ARGUMENT)",
            witness,
            status,
        )

    def _refused_value_witness(self, tool: str, param: str, value: Any) -> Witness | None:
        assert self.search is not None
        calls = []
        for args in self.search.arg_sets(tool)[:10] or [{}]:
            calls.append({**args, param: value})
        if not calls:
            return None

        def disagrees(a: Observation, b: Observation) -> bool:
            return "INVALID_ARGUMENT" not in a["codes"] and "INVALID_ARGUMENT" in b["codes"]

        return self.search.find_args(tool, calls, disagrees)

    def returns(self, o: ir.Tool, n: ir.Tool) -> None:
        if o.returns is None and n.returns is None:
            return
        if o.returns is None or n.returns is None:
            kind: ChangeType = "additive" if o.returns is None else "breaking"
            self.add(
                kind,
                o.name,
                "result",
                f"result type {_type_or_none(o.returns)} → {_type_or_none(n.returns)}",
                "code that reads the result sees a different shape",
            )
            return
        for tc in compare_types(o.returns, n.returns, self.o, self.n):
            field = f"result{tc.where}"
            if tc.direction == "narrowed":
                self.add(
                    "behavioural",
                    o.name,
                    field,
                    f"result `{field}` values narrowed: {tc.description}",
                    "some results the agent saw before no longer occur",
                )
            else:
                self.add(
                    "breaking",
                    o.name,
                    field,
                    f"result `{field}` values {tc.direction}: {tc.description}",
                    "the agent may receive results it was never shown (and did not handle)",
                )

    # ---- conditions
    def conditions(self, o: ir.Tool, n: ir.Tool) -> None:
        old = list(o.conditions)
        new = list(n.conditions)

        def names(c: ir.Condition) -> set[str]:
            return _expr_names(c.cond)

        # identical clauses (and nothing they read changed) are not reported
        for c in list(old):
            for d in new:
                if c == d and not (names(c) & self.changed_defs):
                    old.remove(c)
                    new.remove(d)
                    break
        pairs: list[tuple[ir.Condition, ir.Condition]] = []
        for c in list(old):  # same strength and code: the clause changed
            same_code = next(
                (d for d in new if d.strength == c.strength and c.code and d.code == c.code), None
            )
            if same_code is not None:
                pairs.append((c, same_code))
                old.remove(c)
                new.remove(same_code)
        for c in list(old):  # same condition, other code: the code was renamed
            same_cond = next(
                (d for d in new if d.strength == c.strength and d.cond == c.cond), None
            )
            if same_cond is not None:
                pairs.append((c, same_cond))
                old.remove(c)
                new.remove(same_cond)
        for c, d in pairs:
            self.condition_changed(o.name, c, d)
        for c in old:
            self.condition_removed(o.name, c)
        for d in new:
            self.condition_added(o.name, d)

    def _clause(self, c: ir.Condition) -> str:
        return f"{c.strength} {c.code}" if c.code else f"{c.strength} `{_show(c.cond)}`"

    def _witness_for_code(
        self, tool: str, code: str | None, old_ok: bool, soft: bool
    ) -> Witness | None:
        """A call that OLD accepts and NEW refuses with ``code`` (``old_ok``), or the reverse;
        for soft clauses, where one side warns ``code`` and the other does not."""
        if self.search is None:
            return None
        key = "warnings" if soft else "codes"

        def disagrees(a: Observation, b: Observation) -> bool:
            first, second = (a, b) if old_ok else (b, a)
            if soft:
                hit = code in second[key] if code else bool(set(second[key]) - set(first[key]))
                return hit and (code not in first[key] if code else True)
            if first["verdict"] != "ok" or second["verdict"] == "ok":
                return False
            return code in second[key] if code else True

        return self.search.find(tool, disagrees)

    def condition_added(self, tool: str, d: ir.Condition) -> None:
        clause = self._clause(d)
        if d.strength == "require":
            w = self._witness_for_code(tool, d.code, True, False)
            self.add(
                "breaking",
                tool,
                clause,
                f"precondition added: `{_show(d.cond)}`" + (f" else {d.code}" if d.code else ""),
                f"calls that succeeded may now fail with {d.code or 'a new violation'}",
                w,
                FOUND if w else (NOT_SHOWN if self.search else None),
            )
        elif d.strength == "should":
            w = self._witness_for_code(tool, d.code, True, True)
            self.add(
                "behavioural",
                tool,
                clause,
                f"soft precondition added: `{_show(d.cond)}`"
                + (f" warns {d.code}" if d.code else ""),
                f"calls may now carry the warning {d.code or ''}".rstrip() + " (they still run)",
                w,
                FOUND if w else (NOT_SHOWN if self.search else None),
            )
        else:
            self.add(
                "behavioural",
                tool,
                clause,
                f"postcondition added: `{_show(d.cond)}`",
                "the guard checks one more promise about the result",
            )

    def condition_removed(self, tool: str, c: ir.Condition) -> None:
        clause = self._clause(c)
        if c.strength == "require":
            w = self._witness_for_code(tool, c.code, False, False)
            self.add(
                "additive",
                tool,
                clause,
                f"precondition removed: `{_show(c.cond)}`" + (f" else {c.code}" if c.code else ""),
                f"calls that failed with {c.code or 'this violation'} may now succeed; "
                f"the error code {c.code or ''} no longer occurs".rstrip(),
                w,
                FOUND if w else (NOT_SHOWN if self.search else None),
            )
            if c.code and not _code_exists(self.n.tool(tool), c.code):
                self._code_removed(tool, c.code)
        elif c.strength == "should":
            self.add(
                "behavioural",
                tool,
                clause,
                f"soft precondition removed: `{_show(c.cond)}`",
                f"the warning {c.code or ''} is no longer given".replace("  ", " "),
            )
        else:
            self.add(
                "behavioural",
                tool,
                clause,
                f"postcondition removed: `{_show(c.cond)}`",
                "the tool promises less about its result",
            )

    def _code_removed(self, tool: str, code: str) -> None:
        self.add(
            "breaking",
            tool,
            f"code {code}",
            f"error code {code} removed",
            f"an agent that handles {code} (retry, fix, ask) never sees it again; the failure "
            "it stood for is reported differently or not at all",
        )

    def condition_changed(self, tool: str, c: ir.Condition, d: ir.Condition) -> None:
        clause = self._clause(c)
        if c.code != d.code:
            self.add(
                "breaking",
                tool,
                clause,
                f"error code {c.code} renamed to {d.code}",
                f"an agent that handles {c.code} sees {d.code} instead",
            )
        same_cond = c.cond == d.cond and not (_expr_names(c.cond) & self.changed_defs)
        if not same_cond:
            self._condition_body_changed(tool, c, d)
        elif c.strength != d.strength:
            pass
        if c.message != d.message or c.hint != d.hint:
            what = "message" if c.message != d.message else "hint"
            if c.message != d.message and c.hint != d.hint:
                what = "message and hint"
            self.add(
                "behavioural",
                tool,
                clause,
                f"{what} of {clause} changed",
                f"the agent reads a different {what} when {d.code or 'this clause'} is reported",
            )

    def _condition_body_changed(self, tool: str, c: ir.Condition, d: ir.Condition) -> None:
        clause = self._clause(d)
        desc = f"`{_show(c.cond)}` → `{_show(d.cond)}`"
        if d.strength == "ensure":
            self.add(
                "behavioural",
                tool,
                clause,
                f"postcondition changed: {desc}",
                "the tool promises something else about its result",
            )
            return
        soft = d.strength == "should"
        lost = self._witness_for_code(tool, d.code, True, soft)
        gained = None if lost is not None else self._witness_for_code(tool, c.code, False, soft)
        syntactic = _syntactic(c.cond, d.cond)
        if soft:
            w = lost or gained
            self.add(
                "behavioural",
                tool,
                clause,
                f"soft precondition changed: {desc}",
                f"the warning {d.code or ''} is given for other calls than before".replace(
                    "  ", " "
                ),
                w,
                FOUND if w else (NOT_SHOWN if self.search else None),
            )
            return
        if lost is not None or (syntactic == "stronger" and gained is None):
            self.add(
                "breaking",
                tool,
                clause,
                f"precondition strengthened: {desc}",
                f"some calls that succeeded now fail with {d.code or 'a violation'}",
                lost,
                FOUND if lost else (NOT_SHOWN if self.search else None),
            )
        elif gained is not None or syntactic == "weaker":
            self.add(
                "additive",
                tool,
                clause,
                f"precondition relaxed: {desc}",
                f"some calls that failed with {c.code or 'a violation'} now succeed",
                gained,
                FOUND if gained else (NOT_SHOWN if self.search else None),
            )
        else:
            self.add(
                "behavioural",
                tool,
                clause,
                f"precondition changed: {desc} (not shown to differ)",
                f"calls may succeed or fail with {d.code or 'a violation'} in other cases than "
                "before; no call was found on which they do",
                None,
                NOT_SHOWN if self.search else None,
            )

    # ---- effects and outcomes
    def _effects_witness(self, tool: str) -> Witness | None:
        if self.search is None:
            return None

        def disagrees(a: Observation, b: Observation) -> bool:
            return bool(a["verdict"] == b["verdict"] == "ok" and a["changes"] != b["changes"])

        return self.search.find(tool, disagrees)

    def effects(self, o: ir.Tool, n: ir.Tool) -> None:
        for label, a, b in (("effects", o.effects, n.effects), ("flow", o.flow, n.flow)):
            names = _stmt_names(a if isinstance(a, tuple) else _flow_stmts(a))
            if self._same(a, b, names):
                continue
            w = self._effects_witness(o.name)
            self.add(
                "behavioural",
                o.name,
                label,
                f"{label} changed" + ("" if w else " (not shown to differ)"),
                "the world state after a successful call differs from what the agent expects",
                w,
                FOUND if w else (NOT_SHOWN if self.search else None),
            )

    def outcomes(self, o: ir.Tool, n: ir.Tool) -> None:
        old = {x.name: x for x in o.outcomes}
        new = {x.name: x for x in n.outcomes}
        for name, x in old.items():
            y = new.get(name)
            field = f"outcome {name}"
            if y is None:
                self.add(
                    "breaking",
                    o.name,
                    field,
                    f"outcome `{name}` ({x.outcome}{' ' + x.code if x.code else ''}) removed",
                    f"the agent never sees the outcome `{name}` again",
                )
                if x.code and not _code_exists(n, x.code):
                    self._code_removed(o.name, x.code)
                continue
            if x.outcome != y.outcome:
                self.add(
                    "breaking",
                    o.name,
                    field,
                    f"outcome `{name}` {x.outcome} → {y.outcome}",
                    f"`{name}` now counts as {y.outcome}",
                )
            if x.code != y.code:
                self.add(
                    "breaking",
                    o.name,
                    field,
                    f"outcome `{name}` code {x.code} → {y.code}",
                    f"an agent that handles {x.code} sees {y.code} instead",
                )
            if x.event != y.event:
                self.add(
                    "behavioural",
                    o.name,
                    field,
                    f"outcome `{name}` event {_event(x.event)} → {_event(y.event)}",
                    f"`{name}` happens with a different likelihood or trigger",
                )
            names = _stmt_names(x.body) | (_expr_names(x.when) if x.when else set())
            if not self._same((x.body, x.when), (y.body, y.when), names):
                w = self._effects_witness(o.name)
                self.add(
                    "behavioural",
                    o.name,
                    field,
                    f"outcome `{name}` effects or condition changed"
                    + ("" if w else " (not shown to differ)"),
                    f"when `{name}` happens the state changes differently",
                    w,
                    FOUND if w else (NOT_SHOWN if self.search else None),
                )
            if x.message != y.message or x.hint != y.hint:
                self.add(
                    "behavioural",
                    o.name,
                    field,
                    f"message or hint of outcome `{name}` changed",
                    f"the agent reads different text when `{name}` happens",
                )
        for name, y in new.items():
            if name not in old:
                self.add(
                    "additive",
                    o.name,
                    f"outcome {name}",
                    f"outcome `{name}` ({y.outcome}{' ' + y.code if y.code else ''}) added",
                    f"calls may now end as `{name}`",
                )

    # ---- contract level
    def state_vars(self) -> None:
        old = {v.name: v for v in self.o.state}
        new = {v.name: v for v in self.n.state}
        for name, v in old.items():
            w = new.get(name)
            field = f"state {name}"
            if w is None:
                self.add(
                    "breaking",
                    None,
                    field,
                    f"state variable `{name}` removed",
                    f"state files and observations that set `{name}` are refused",
                )
                continue
            for tc in compare_types(v.type, w.type, self.o, self.n):
                kind: ChangeType = "additive" if tc.direction == "widened" else "breaking"
                self.add(
                    kind,
                    None,
                    field + tc.where,
                    f"state `{name}{tc.where}` values {tc.direction}: {tc.description}",
                    "state files with values that were valid may now be refused"
                    if kind == "breaking"
                    else "state files may hold more values",
                )
            if v.init != w.init:
                self.add(
                    "behavioural",
                    None,
                    field,
                    f"initial value of `{name}` {_init(v.init)} → {_init(w.init)}",
                    "plans start from a different world; verdicts that depend on it change",
                )
        for name in new:
            if name not in old:
                self.add(
                    "additive",
                    None,
                    f"state {name}",
                    f"state variable `{name}` added",
                    "the contract tracks one more fact about the world",
                )

    def machines(self) -> None:
        old = {m.name: m for m in self.o.machines}
        new = {m.name: m for m in self.n.machines}
        for name, m in old.items():
            k = new.get(name)
            field = f"machine {name}"
            if k is None:
                self.add(
                    "breaking",
                    None,
                    field,
                    f"protocol machine `{name}` removed",
                    "calls are no longer ordered by this protocol; state files that name its "
                    "state are refused",
                )
                continue
            self._machine(m, k)
        for name, k in new.items():
            if name not in old:
                tools = sorted({t.tool for t in k.transitions})
                self.add(
                    "breaking" if tools else "additive",
                    None,
                    f"machine {name}",
                    f"protocol machine `{name}` added (orders {', '.join(tools) or 'no tool'})",
                    "calls out of turn now fail with PROTOCOL_VIOLATION"
                    if tools
                    else "a new protocol is tracked",
                )

    def _machine(self, m: ir.Machine, k: ir.Machine) -> None:
        field = f"machine {m.name}"
        old_states = [s.name for s in m.states]
        new_states = [s.name for s in k.states]
        for s in old_states:
            if s not in new_states:
                self.add(
                    "breaking",
                    None,
                    field,
                    f"state `{s}` of `{m.name}` removed",
                    f"plans and state files that rely on `{m.name}` being `{s}` fail",
                )
        for s in new_states:
            if s not in old_states:
                self.add(
                    "additive",
                    None,
                    field,
                    f"state `{s}` of `{m.name}` added",
                    f"`{m.name}` can now be `{s}`",
                )
        if [s.name for s in m.initial] != [s.name for s in k.initial]:
            self.add(
                "breaking",
                None,
                field,
                f"initial state of `{m.name}` "
                f"{', '.join(s.name for s in m.initial)} → {', '.join(s.name for s in k.initial)}",
                "the first call that was allowed may now be a PROTOCOL_VIOLATION",
            )
        if sorted(s.name for s in m.finals) != sorted(s.name for s in k.finals):
            self.add(
                "behavioural",
                None,
                field,
                f"final states of `{m.name}` changed",
                "where a session may end has changed",
            )

        def key(t: ir.MachineTransition) -> tuple[str, str, str, str | None]:
            return (t.source, t.tool, t.target, t.outcome)

        old_t = {key(t): t for t in m.transitions}
        new_t = {key(t): t for t in k.transitions}
        for kk, t in old_t.items():
            u = new_t.get(kk)
            label = f"{t.source} -> {t.target} on {t.tool}" + (f":{t.outcome}" if t.outcome else "")
            if u is None:
                self.add(
                    "breaking",
                    t.tool,
                    field,
                    f"transition `{label}` removed",
                    f"`{t.tool}` in state `{t.source}` now fails with PROTOCOL_VIOLATION"
                    if not any(x.source == t.source and x.tool == t.tool for x in k.transitions)
                    else f"`{t.tool}` from `{t.source}` now leads elsewhere",
                )
            elif t.when != u.when:
                self.add(
                    "behavioural",
                    t.tool,
                    field,
                    f"guard of `{label}` {_show(t.when)} → {_show(u.when)}",
                    "the protocol moves in other cases than before",
                )
        for kk, u in new_t.items():
            if kk not in old_t:
                label = f"{u.source} -> {u.target} on {u.tool}" + (
                    f":{u.outcome}" if u.outcome else ""
                )
                self.add(
                    "additive",
                    u.tool,
                    field,
                    f"transition `{label}` added",
                    f"`{u.tool}` is now allowed in state `{u.source}`",
                )

    def goals(self) -> None:
        old = {g.name: g for g in self.o.goals}
        new = {g.name: g for g in self.n.goals}
        for name in sorted(old.keys() | new.keys()):
            a, b = old.get(name), new.get(name)
            if a == b and not (a and _expr_names(a.cond) & self.changed_defs):
                continue
            if b is None:
                kind: ChangeType = "breaking"
                desc = f"goal `{name}` removed"
                impact = f"`simulate --goal {name}` is refused"
            elif a is None:
                kind, desc, impact = "additive", f"goal `{name}` added", "a new goal can be checked"
            else:
                kind = "behavioural"
                desc = f"goal `{name}` changed: `{_show(a.cond)}` → `{_show(b.cond)}`"
                impact = "plans that reached the goal may no longer reach it, or the reverse"
            self.add(kind, None, f"goal {name}", desc, impact)


def _flow_stmts(flow: ir.Flow | None) -> list[ir.Stmt]:
    if flow is None:
        return []
    return [s for step in flow.steps for s in step.body]


def _same_shape(a: ir.Tool, b: ir.Tool) -> bool:
    """Whether ``b`` is ``a`` under another name (a rename, not a replacement)."""
    return (
        a.params == b.params
        and a.returns == b.returns
        and a.conditions == b.conditions
        and a.effects == b.effects
        and a.outcomes == b.outcomes
    )


def _code_exists(tool: ir.Tool | None, code: str) -> bool:
    if tool is None:
        return False
    if any(c.code == code for c in tool.conditions):
        return True
    if any(o.code == code for o in tool.outcomes):
        return True
    bodies = [tool.effects, *(o.body for o in tool.outcomes)]
    return any(isinstance(s, ir.Warn) and s.code == code for b in bodies for s in walk_stmts(b))


def _syntactic(old: ir.Expr, new: ir.Expr) -> str | None:
    """``stronger`` when NEW is OLD ``and`` something, ``weaker`` when NEW is OLD ``or``
    something (or OLD is NEW ``and`` something)."""

    def conjuncts(e: ir.Expr, op: str) -> list[ir.Expr]:
        if isinstance(e, ir.Binary) and e.op == op:
            return conjuncts(e.left, op) + conjuncts(e.right, op)
        return [e]

    old_and, new_and = conjuncts(old, "and"), conjuncts(new, "and")
    if all(x in new_and for x in old_and) and len(new_and) > len(old_and):
        return "stronger"
    if all(x in old_and for x in new_and) and len(old_and) > len(new_and):
        return "weaker"
    old_or, new_or = conjuncts(old, "or"), conjuncts(new, "or")
    if all(x in new_or for x in old_or) and len(new_or) > len(old_or):
        return "weaker"
    if all(x in old_or for x in new_or) and len(old_or) > len(new_or):
        return "stronger"
    return None


def _type_or_none(t: ir.TypeExpr | None) -> str:
    return "none" if t is None else type_label(t)


def _event(e: ir.EventRef | None) -> str:
    if e is None:
        return "none"
    return e.name + (f" probability {e.probability}" if e.probability is not None else "")


def _init(e: ir.Expr | None) -> str:
    return "unknown" if e is None else _show(e)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _accepted_text(p: ir.Param) -> str:
    """The type a parameter accepts, as written (``accepts`` or the declared type)."""
    return type_label(p.accepted_type)
