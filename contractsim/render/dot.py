"""Graphviz DOT from a :class:`~contractsim.render.graph.Graph`, and SVG/PNG through ``dot``.

The DOT text is built with the ``graphviz`` package, which quotes identifiers and attribute values;
every label line goes through :func:`graphviz.escape` first (backslashes and ``<…>`` lose their
special meaning), and lines are joined with DOT's own ``\\n`` escape.
"""

from __future__ import annotations

import graphviz

from .graph import Edge, Graph, Node

FONT = "Helvetica,Arial,sans-serif"

_SHAPES = {
    "box": ("box", ""),
    "rounded": ("box", "rounded"),
    "circle": ("circle", ""),
    "doublecircle": ("doublecircle", ""),
    "point": ("point", ""),
    "note": ("note", ""),
    "ellipse": ("ellipse", ""),
}


def label(lines: list[str]) -> str:
    """A DOT label for plain-text ``lines``: each escaped, joined by centred line breaks."""
    text: str = graphviz.nohtml("\\n".join(graphviz.escape(line) for line in lines))
    return text


def _node_attrs(n: Node) -> dict[str, str]:
    shape, style = _SHAPES[n.shape]
    styles = [s for s in (style, "filled" if n.fill else "", "dashed" if n.dashed else "") if s]
    attrs = {"shape": shape}
    if n.shape == "point":
        attrs.update(width="0.18", height="0.18", label="")
        attrs["color"] = n.border or "black"
        return attrs
    attrs["label"] = label(n.lines)
    if n.shape in ("circle", "doublecircle"):
        attrs["margin"] = "0.02"
    if styles:
        attrs["style"] = ",".join(styles)
    if n.fill:
        attrs["fillcolor"] = n.fill
    if n.border:
        attrs["color"] = n.border
    if n.font_colour:
        attrs["fontcolor"] = n.font_colour
    if n.pen_width:
        attrs["penwidth"] = f"{n.pen_width:g}"
    return attrs


def _edge_attrs(e: Edge) -> dict[str, str]:
    attrs: dict[str, str] = {}
    if e.lines:
        attrs["label"] = label(e.lines)
    if e.style != "solid":
        attrs["style"] = e.style
    if e.colour:
        attrs["color"] = e.colour
        attrs["fontcolor"] = e.colour
    if e.pen_width:
        attrs["penwidth"] = f"{e.pen_width:g}"
    if not e.constraint:
        attrs["constraint"] = "false"
    return attrs


def to_digraph(g: Graph) -> graphviz.Digraph:
    """``g`` as a :class:`graphviz.Digraph` (deterministic: nodes and edges in model order)."""
    d = graphviz.Digraph(
        name=g.id,
        graph_attr={
            "rankdir": g.direction,
            "label": label(g.title),
            "labelloc": "t",
            "fontname": FONT,
            "fontsize": "16",
            "nodesep": "0.4",
            "ranksep": "0.5",
            "pad": "0.3",
            "bgcolor": "white",
        },
        node_attr={"fontname": FONT, "fontsize": "12"},
        edge_attr={"fontname": FONT, "fontsize": "10", "arrowsize": "0.8"},
    )
    for n in g.nodes.values():
        d.node(n.id, **_node_attrs(n))
    for e in g.edges:
        d.edge(e.source, e.target, **_edge_attrs(e))
    return d


def to_dot(g: Graph) -> str:
    """DOT source text for ``g``."""
    return str(to_digraph(g).source)


def to_image(dot_source: str, fmt: str) -> bytes:
    """Lay out DOT source with Graphviz's ``dot`` into ``svg`` or ``png`` bytes.

    Raises :class:`graphviz.ExecutableNotFound` when the ``dot`` binary is not installed.
    """
    data: bytes = graphviz.Source(dot_source).pipe(format=fmt)
    return data
