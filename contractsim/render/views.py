"""The three views of a contract — protocol machine, tool flow, overview — and the plan overlay.

Each builder turns IR into a :class:`~contractsim.render.graph.Graph`; iteration follows declaration
order (or sorted order where sets are involved), so the same contract always gives the same picture.

Node ids (stable, and the ``<title>`` of each node in Graphviz SVG):

* machine: ``state.NAME``, the entry point ``start``;
* flow: ``step.NAME``, ``outcome.NAME``, ``call`` (the call itself), ``rejected`` (a hard
  precondition fails), the entry point ``start``;
* overview: ``tool.NAME``;
* plan overlay: ``plan.start``, ``plan.fail.N`` (the note of failing step N), ``plan.tool.NAME``
  (a called tool the contract does not declare).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..dsl import ir
from ..dsl.pretty import expr_text
from ..dsl.walk import walk_stmts
from .deps import dependencies
from .graph import (
    FAILS,
    GREY,
    GUARD_WIDTH,
    KIND_COLOURS,
    ORANGE,
    PLAN,
    RED,
    Edge,
    Graph,
    LineStyle,
    Node,
    Shape,
    truncate,
    wrap,
)

if TYPE_CHECKING:
    from ..simulator.explore import PlanReport, StepReport


def _guard(when: ir.Expr | None) -> list[str]:
    return [] if when is None else wrap(f"[when {expr_text(when)}]", GUARD_WIDTH)


def _event(ev: ir.EventRef | None) -> list[str]:
    if ev is None:
        return []
    p = "?" if ev.probability is None else f"{ev.probability:g}"
    return wrap(f"on {ev.name} (p={p})", GUARD_WIDTH)


def _title(contract: ir.Contract, what: str, description: str | None) -> list[str]:
    lines = [f"{contract.header.name} {contract.header.version} — {what}"]
    if description:
        lines.extend(wrap(description, 70))
    return lines


# ----------------------------------------------------------------------------------------- machine


def machine_graph(contract: ir.Contract, name: str) -> Graph:
    """States, transitions labelled ``tool`` / ``tool.outcome`` with their guards, the initial
    state entered from a point, final states as double circles."""
    m = next(x for x in contract.machines if x.name == name)
    g = Graph(f"machine_{m.name}", _title(contract, f"machine {m.name}", m.description), "LR")
    finals = {s.name for s in m.finals}
    g.add_node(Node("start", [], shape="point"))
    for s in m.states:
        shape: Shape = "doublecircle" if s.name in finals else "circle"
        g.add_node(Node(f"state.{s.name}", [s.name], shape=shape))
    for s in m.initial:
        g.add_edge(Edge("start", f"state.{s.name}"))
    kinds = _outcome_kinds(contract)
    for t in m.transitions:
        label = t.tool if t.outcome is None else f"{t.tool}.{t.outcome}"
        edge = Edge(f"state.{t.source}", f"state.{t.target}", [label, *_guard(t.when)])
        if t.outcome is not None and kinds.get((t.tool, t.outcome)) == "fails":
            edge.colour = FAILS[1]
        g.add_edge(edge)
    return g


def _outcome_kinds(contract: ir.Contract) -> dict[tuple[str, str], str]:
    return {(t.name, o.name): o.outcome for t in contract.tools for o in t.outcomes}


# -------------------------------------------------------------------------------------------- flow


def _warnings(body: tuple[ir.Stmt, ...]) -> list[str]:
    codes: list[str] = []
    for s in walk_stmts(body):
        if isinstance(s, ir.Warn) and f"warn {s.code}" not in codes:
            codes.append(f"warn {s.code}")
        if isinstance(s, ir.Fail) and f"fail {s.code}" not in codes:
            codes.append(f"fail {s.code}")
    return codes


def _outcome_node(o: ir.Outcome) -> Node:
    fill, border = KIND_COLOURS[o.outcome]
    lines = [o.name, o.outcome if o.code is None else f"{o.outcome} {o.code}"]
    lines.extend(_warnings(o.body))
    return Node(f"outcome.{o.name}", lines, shape="box", fill=fill, border=border)


def flow_graph(contract: ir.Contract, name: str) -> Graph:
    """A tool's flow: the call (with its preconditions), steps with the warnings they emit,
    guarded transitions, environment events as dashed edges, outcomes coloured by kind. A tool
    without a flow shows its implicit one: the call straight to its outcomes."""
    tool = contract.tool(name)
    assert tool is not None
    g = Graph(f"tool_{tool.name}", _title(contract, f"tool {tool.name}", tool.description), "TB")
    params = ", ".join(p.name for p in tool.params)
    call_lines = wrap(f"call {tool.name}({params})")
    for c in tool.conditions:
        if c.strength == "should":
            call_lines.append(f"warn {c.code or 'SOFT_PRECONDITION'}")
    g.add_node(Node("start", [], shape="point"))
    g.add_node(Node("call", call_lines, shape="box", border=GREY))
    g.add_edge(Edge("start", "call"))
    codes = [c.code or "PRECONDITION_FAILED" for c in tool.conditions if c.strength == "require"]
    if codes:
        seen = list(dict.fromkeys(codes))
        g.add_node(
            Node("rejected", ["rejected", *wrap(", ".join(seen))], "box", FAILS[0], FAILS[1])
        )
        g.add_edge(Edge("call", "rejected", ["require fails"], "dashed", FAILS[1]))
    outcomes = {o.name: o for o in tool.outcomes}
    if not outcomes:
        outcomes = {"ok": ir.Outcome(name="ok", outcome="success")}
    if tool.flow is None:
        _implicit_flow(g, tool, list(outcomes.values()))
        return g
    flow = tool.flow
    steps = {s.name: s for s in flow.steps}
    step_names = list(steps)
    for t in flow.transitions:
        for n in (t.source, *(() if t.to_outcome else (t.target,))):
            if n not in step_names:
                step_names.append(n)
    for n in step_names:
        body = steps[n].body if n in steps else ()
        g.add_node(Node(f"step.{n}", [n, *_warnings(body)], shape="rounded"))
    if flow.initial is not None:
        g.add_edge(Edge("call", f"step.{flow.initial}"))
    guarded: set[str] = set()
    for t in flow.transitions:
        if t.to_outcome:
            o = outcomes.get(t.target)
            if o is None:
                o = ir.Outcome(name=t.target, outcome="success")
            g.add_node(_outcome_node(o))
            target = f"outcome.{t.target}"
        else:
            target = f"step.{t.target}"
        lines = [*_event(t.event), *_guard(t.when)]
        if t.event is None and t.when is None and t.source in guarded:
            lines = ["else"]
        if t.event is None and t.when is not None:
            guarded.add(t.source)
        style: LineStyle = "dashed" if t.event is not None else "solid"
        g.add_edge(Edge(f"step.{t.source}", target, lines, style))
    return g


def _implicit_flow(g: Graph, tool: ir.Tool, outcomes: list[ir.Outcome]) -> None:
    guarded = False
    for o in outcomes:
        g.add_node(_outcome_node(o))
        lines = [*_event(o.event), *_guard(o.when)]
        if o.event is None and o.when is None and guarded:
            lines = ["else"]
        if o.event is None and o.when is not None:
            guarded = True
        style: LineStyle = "dashed" if o.event is not None else "solid"
        g.add_edge(Edge("call", f"outcome.{o.name}", lines, style))


# ---------------------------------------------------------------------------------------- overview


def _tool_node(t: ir.Tool) -> Node:
    lines = [t.name]
    if t.cost is not None:
        lines.extend(wrap(f"cost {expr_text(t.cost)}", 30))
    if t.tags:
        lines.extend(wrap("[" + ", ".join(tag.name for tag in t.tags) + "]", 30))
    destructive = t.has_risk("destructive")
    if destructive:
        lines.append("destructive")
    return Node(
        f"tool.{t.name}",
        lines,
        shape="box",
        border=RED if destructive else None,
        pen_width=2.0 if destructive else None,
    )


def overview_graph(contract: ir.Contract) -> Graph:
    """Tools with cost and tags; ``A → B`` where A can make a precondition of B true (solid,
    labelled with the state it writes) or false (dashed red). See :mod:`contractsim.render.deps`."""
    title = _title(contract, "overview", contract.header.description)
    title.append("A → B: A can make a precondition of B true; dashed red: it can make one false")
    g = Graph("overview", title, "LR")
    for t in contract.tools:
        g.add_node(_tool_node(t))
    for d in dependencies(contract):
        lines = wrap(", ".join(d.reasons), 30)
        if d.effect == "enables":
            g.add_edge(Edge(f"tool.{d.source}", f"tool.{d.target}", lines, colour=GREY))
        else:
            g.add_edge(
                Edge(f"tool.{d.source}", f"tool.{d.target}", lines, "dashed", RED, constraint=False)
            )
    return g


# -------------------------------------------------------------------------------------------- plan


def _failure_lines(step: StepReport) -> list[str]:
    mark = "✗" if step.verdict == "fails" else "?"
    head = f"{mark} step {step.index}: {step.tool}"
    if not step.violations:
        return [head, "may fail" if step.verdict == "may_fail" else "fails"]
    # prefer a violation of this step itself over one on a path that had already failed
    earlier = getattr(step, "only_after_failure", None)
    own = [v for v in step.violations if earlier is None or earlier(v) is None]
    v = (own or step.violations)[0]
    return [head, v.code, *wrap(truncate(v.message, 90), 36)]


def _verdict_colour(step: StepReport) -> str:
    return RED if step.verdict == "fails" else (ORANGE if step.verdict == "may_fail" else PLAN)


def _plan_title(g: Graph, report: PlanReport, extra: list[str]) -> None:
    failing = [s.index for s in report.steps if s.verdict != "ok" and not s.skipped]
    verdict = report.verdict.replace("_", " ")
    line = f"plan: {len(report.steps)} step(s), verdict {verdict}"
    if failing:
        line += f" (step {', '.join(map(str, failing))})"
    g.title.append(line)
    g.title.extend(extra)


def _fail_note(g: Graph, step: StepReport, anchor: str) -> None:
    colour = _verdict_colour(step)
    fill = FAILS[0] if step.verdict == "fails" else KIND_COLOURS["partial"][0]
    note = g.add_node(
        Node(f"plan.fail.{step.index}", _failure_lines(step), "note", fill, colour, colour)
    )
    g.add_edge(Edge(anchor, note.id, [f"#{step.index}: {step.tool}"], "dashed", colour, 2.0))


def overlay_machine(g: Graph, contract: ir.Contract, name: str, report: PlanReport) -> Graph:
    """Draw ``report``'s path on machine ``name``'s graph: the transitions taken numbered with
    their steps (blue), a failing step in red with its violation."""
    m = next(x for x in contract.machines if x.name == name)
    in_machine = {t.tool for t in m.transitions}
    current = str(report.initial.machines.get(name, m.initial[0].name if m.initial else ""))
    key = f"machine {name}"
    off_machine: list[int] = []
    numbers: dict[int, list[str]] = {}
    coloured: dict[int, str] = {}
    for step in report.steps:
        if step.skipped:
            continue
        after = current
        for label, _before, new in step.changes:
            if label == key:
                after = str(new)
        taken = None
        if step.tool in in_machine and step.verdict != "fails":
            for i, e in enumerate(g.edges):
                if (
                    e.source == f"state.{current}"
                    and e.target == f"state.{after}"
                    and e.lines
                    and e.lines[0].split(".")[0] == step.tool
                ):
                    taken = i
                    break
        if taken is not None:
            numbers.setdefault(taken, []).append(str(step.index))
            if step.verdict == "may_fail" or coloured.get(taken) == ORANGE:
                coloured[taken] = ORANGE
            else:
                coloured[taken] = PLAN
        elif step.verdict == "ok":
            off_machine.append(step.index)
        if step.verdict != "ok":
            _fail_note(g, step, f"state.{current}")
        current = after
    for i, nums in numbers.items():
        e = g.edges[i]
        e.lines = [f"#{', #'.join(nums)}: {e.lines[0]}", *e.lines[1:]]
        e.colour = coloured[i]
        e.pen_width = 2.5
    extra = []
    if off_machine:
        extra.append(f"step(s) {', '.join(map(str, off_machine))} do not move machine {name}")
    _plan_title(g, report, extra)
    node = g.nodes.get(f"state.{current}")
    if node is not None:
        node.border, node.pen_width = PLAN, 2.5
    return g


def overlay_overview(g: Graph, report: PlanReport) -> Graph:
    """Draw ``report``'s path on the overview: the tools called numbered with their steps and
    linked in order (blue), a failing step's tool in red with its violation."""
    g.add_node(Node("plan.start", [], shape="point", border=PLAN))
    previous = "plan.start"
    calls: dict[str, list[str]] = {}
    for step in report.steps:
        if step.skipped:
            continue
        node_id = f"tool.{step.tool}"
        if node_id not in g.nodes:
            node_id = f"plan.tool.{step.tool}"
            g.add_node(Node(node_id, [step.tool, "(not declared)"], "box", FAILS[0], RED, RED))
        calls.setdefault(node_id, []).append(str(step.index))
        node = g.nodes[node_id]
        colour = _verdict_colour(step)
        if node.border != RED:
            node.border = colour
        node.pen_width = 2.5
        if step.verdict == "fails":
            node.fill = FAILS[0]
        g.add_edge(
            Edge(previous, node_id, [f"#{step.index}"], "bold", colour, 2.0, constraint=False)
        )
        if step.verdict != "ok":
            _fail_note(g, step, node_id)
        previous = node_id
    for node_id, nums in calls.items():
        g.nodes[node_id].lines.append(f"step{'s' if len(nums) > 1 else ''} {', '.join(nums)}")
    _plan_title(g, report, [])
    return g
