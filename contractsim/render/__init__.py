"""Diagrams of a contract: protocol machines, tool flows, the tool overview, plan overlays.

One model (:mod:`.graph`) is built per view (:mod:`.views`) and written as Graphviz DOT
(:mod:`.dot`, with SVG/PNG through the ``dot`` binary) or Mermaid (:mod:`.mermaid`);
:mod:`.deps` finds which tool can enable or disable which, for the overview.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..diagnostics import did_you_mean
from ..dsl import ir
from .graph import Graph

if TYPE_CHECKING:
    from ..simulator.explore import PlanReport

View = Literal["machine", "tool", "overview"]
FORMATS = ("dot", "svg", "png", "mermaid")


class RenderError(ValueError):
    """A view that cannot be drawn: an unknown or ambiguous name, a bad combination.

    ``hint`` says what would work (the declared names, the closest one).
    """

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def choose_view(
    contract: ir.Contract, view: str | None, name: str | None
) -> tuple[View, str | None]:
    """Resolve the view to draw; without one, the contract's only machine, or the overview when
    it declares no machine.

    Raises :class:`RenderError` for an unknown view or name, or when the default is ambiguous
    (several machines: the hint lists the choices).
    """
    machines = [m.name for m in contract.machines]
    tools = [t.name for t in contract.tools]
    if view is None:
        if name is not None:
            raise RenderError("a name needs a view (machine or tool)", "pass view='machine'")
        if len(machines) == 1:
            return "machine", machines[0]
        if not machines:
            return "overview", None
        raise RenderError(
            f"the contract has {len(machines)} protocol machines; choose what to draw",
            _choices(machines, tools),
        )
    if view == "overview":
        return "overview", None
    if view == "machine":
        if name is None and len(machines) == 1:
            return "machine", machines[0]
        if name not in machines:
            label = "no machine given" if name is None else f"no protocol machine `{name}`"
            guess = did_you_mean(name, machines) if name else None
            raise RenderError(
                f"the contract declares {label}",
                f"did you mean `{guess}`?" if guess else _choices(machines, tools),
            )
        return "machine", name
    if view == "tool":
        if name not in tools:
            label = "no tool given" if name is None else f"the contract declares no tool `{name}`"
            guess = did_you_mean(name, tools) if name else None
            raise RenderError(
                label, f"did you mean `{guess}`?" if guess else _choices(machines, tools)
            )
        return "tool", name
    raise RenderError(f"unknown view `{view}`", "use machine, tool or overview")


def _choices(machines: list[str], tools: list[str]) -> str:
    """Every view of a contract, as the CLI options that draw it."""
    options = [f"--machine {m}" for m in machines] + ["--overview"] + [f"--tool {t}" for t in tools]
    return "choose one of: " + ", ".join(options)


def build(
    contract: ir.Contract,
    view: str | None = None,
    name: str | None = None,
    plan_report: PlanReport | None = None,
) -> Graph:
    """The picture model of a view (with the plan drawn on it when ``plan_report`` is given)."""
    from .views import flow_graph, machine_graph, overlay_machine, overlay_overview, overview_graph

    kind, chosen = choose_view(contract, view, name)
    if kind == "tool":
        if plan_report is not None:
            raise RenderError(
                "a plan is drawn on a machine or on the overview, not on a tool's flow",
                "drop --tool, or use --overview",
            )
        assert chosen is not None
        return flow_graph(contract, chosen)
    if kind == "overview":
        g = overview_graph(contract)
        return g if plan_report is None else overlay_overview(g, plan_report)
    assert chosen is not None
    g = machine_graph(contract, chosen)
    return g if plan_report is None else overlay_machine(g, contract, chosen, plan_report)


def render(
    contract: ir.Contract,
    view: str | None = None,
    name: str | None = None,
    fmt: str = "dot",
    plan_report: PlanReport | None = None,
) -> str | bytes:
    """A diagram as DOT or Mermaid text, SVG text, or PNG bytes.

    SVG and PNG need Graphviz's ``dot`` (:class:`graphviz.ExecutableNotFound` otherwise).
    """
    if fmt not in FORMATS:
        raise RenderError(f"unknown format `{fmt}`", "use one of: " + ", ".join(FORMATS))
    g = build(contract, view, name, plan_report)
    if fmt == "mermaid":
        from .mermaid import to_mermaid

        return to_mermaid(g)
    from .dot import to_dot, to_image  # imports graphviz: only for DOT, SVG and PNG

    source = to_dot(g)
    if fmt == "dot":
        return source
    data = to_image(source, fmt)
    return data.decode("utf-8") if fmt == "svg" else data


__all__ = ["FORMATS", "Graph", "RenderError", "build", "choose_view", "render"]
