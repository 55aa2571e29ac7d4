"""The picture model shared by the DOT and Mermaid writers: nodes, edges and their styles.

The views (:mod:`contractsim.render.views`) build one :class:`Graph` from the IR; the writers
(:mod:`contractsim.render.dot`, :mod:`contractsim.render.mermaid`) only serialise it. Labels are
kept as lists of plain-text lines — never pre-escaped — so each writer escapes them for its own
syntax.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Literal

from ..diagnostics import control_escape

Shape = Literal["box", "rounded", "circle", "doublecircle", "point", "note", "ellipse"]
LineStyle = Literal["solid", "dashed", "bold"]
Direction = Literal["LR", "TB"]

# Colours (fill, border) by outcome kind, and the accents used by overlays and the overview.
SUCCESS = ("#e6f4ea", "#2e7d32")
PARTIAL = ("#fff3e0", "#ef6c00")
FAILS = ("#fdecea", "#c62828")
PLAN = "#1f5fbf"
RED = "#c62828"
ORANGE = "#ef6c00"
GREY = "#546e7a"
KIND_COLOURS = {"success": SUCCESS, "partial": PARTIAL, "fails": FAILS}

GUARD_WIDTH = 30
LABEL_WIDTH = 36


@dataclass
class Node:
    """A node: a stable ``id`` (also its SVG ``<title>``), label lines and a style."""

    id: str
    lines: list[str]
    shape: Shape = "rounded"
    fill: str | None = None
    border: str | None = None
    font_colour: str | None = None
    pen_width: float | None = None
    dashed: bool = False


@dataclass
class Edge:
    """A directed edge with label lines and a style (``constraint=False``: ignored by layout)."""

    source: str
    target: str
    lines: list[str] = field(default_factory=list)
    style: LineStyle = "solid"
    colour: str | None = None
    pen_width: float | None = None
    constraint: bool = True


@dataclass
class Graph:
    """A whole picture: a title, a direction, nodes in insertion order, edges in order."""

    id: str
    title: list[str]
    direction: Direction = "LR"
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    def add_node(self, node: Node) -> Node:
        """Add ``node`` (or return the node already registered under its id)."""
        return self.nodes.setdefault(node.id, node)

    def add_edge(self, edge: Edge) -> Edge:
        """Append ``edge``; both ends must already be nodes."""
        assert edge.source in self.nodes and edge.target in self.nodes, (edge.source, edge.target)
        self.edges.append(edge)
        return edge


def clean(text: str) -> str:
    """``text`` with control characters (other than newlines) shown as visible escapes."""
    out: list[str] = []
    for ch in text.replace("\r\n", "\n"):
        if ch == "\n" or ch.isprintable():
            out.append(ch)
        elif ch == "\t":
            out.append("    ")
        else:
            out.append(control_escape(ch))
    return "".join(out)


def wrap(text: str, width: int = LABEL_WIDTH) -> list[str]:
    """Label lines for ``text``: its own newlines kept, each line wrapped at ``width``."""
    lines: list[str] = []
    for part in clean(text).split("\n"):
        wrapped = textwrap.wrap(
            part, width, break_long_words=True, break_on_hyphens=False, drop_whitespace=True
        )
        lines.extend(wrapped or [""])
    return lines


def truncate(text: str, limit: int = 90) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    text = clean(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
