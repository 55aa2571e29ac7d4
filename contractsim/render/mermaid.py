"""Mermaid ``flowchart`` text (renders on GitHub) from a :class:`~contractsim.render.graph.Graph`.

Every label is a ``"…"`` quoted string whose special characters are written as Mermaid entity
codes (``#quot;``, ``#lt;``, ``#gt;``, ``#124;`` for ``|``, ``#123;`` / ``#125;`` for braces,
``#35;`` for ``#`` itself, ``#amp;``, ``#96;`` for a backtick); label lines are joined with
``<br>``. Node ids are the model's ids with ``.`` replaced by ``_`` (always prefixed, so they never
collide with Mermaid keywords such as ``end``).
"""

from __future__ import annotations

import json

from .graph import Edge, Graph, Node

_ENTITIES = {
    "#": "#35;",
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "&": "#amp;",
    "|": "#124;",
    "{": "#123;",
    "}": "#125;",
    "[": "#91;",
    "]": "#93;",
    "`": "#96;",
    "\\": "#92;",
}


def escape(text: str) -> str:
    """One label line with every character Mermaid could misread written as an entity code."""
    return "".join(_ENTITIES.get(ch, ch) for ch in text.replace("\r", ""))


def label(lines: list[str]) -> str:
    """A quoted Mermaid label: escaped lines joined by ``<br>`` (a newline inside a line too)."""
    return '"' + "<br>".join(escape(part) for line in lines for part in line.split("\n")) + '"'


def node_id(identifier: str) -> str:
    """A Mermaid-safe id for a model id: letters, digits and ``_`` only. The namespace dot
    becomes ``_``; anything else (only undeclared tool names in a plan can have it) is written
    as ``_xHH_``."""
    return "".join(
        "_"
        if ch == "."
        else ch
        if ch.isascii() and (ch.isalnum() or ch == "_")
        else f"_x{ord(ch):X}_"
        for ch in identifier
    )


def _node(n: Node) -> str:
    i = node_id(n.id)
    if n.shape == "point":
        return f'{i}((" "))'
    text = label(n.lines)
    return {
        "box": f"{i}[{text}]",
        "rounded": f"{i}({text})",
        "circle": f"{i}(({text}))",
        "doublecircle": f"{i}((({text})))",
        "note": f"{i}>{text}]",
        "ellipse": f"{i}([{text}])",
    }[n.shape]


def _node_style(n: Node) -> str | None:
    props: list[str] = []
    if n.shape == "point":
        colour = n.border or "#000"
        props = [f"fill:{colour}", f"stroke:{colour}"]
    else:
        if n.fill:
            props.append(f"fill:{n.fill}")
        if n.border:
            props.append(f"stroke:{n.border}")
        if n.pen_width:
            props.append(f"stroke-width:{n.pen_width:g}px")
        if n.font_colour:
            props.append(f"color:{n.font_colour}")
        if n.dashed:
            props.append("stroke-dasharray:5 5")
    return f"style {node_id(n.id)} {','.join(props)}" if props else None


def _edge(e: Edge) -> str:
    arrow = {"solid": "-->", "dashed": "-.->", "bold": "==>"}[e.style]
    text = f"|{label(e.lines)}|" if e.lines else ""
    return f"{node_id(e.source)} {arrow}{text} {node_id(e.target)}"


def _edge_style(index: int, e: Edge) -> str | None:
    props: list[str] = []
    if e.colour:
        props.extend((f"stroke:{e.colour}", f"color:{e.colour}"))
    if e.pen_width:
        props.append(f"stroke-width:{e.pen_width:g}px")
    return f"linkStyle {index} {','.join(props)}" if props else None


def to_mermaid(g: Graph) -> str:
    """Mermaid flowchart text for ``g``, with its title in the front matter."""
    title = " — ".join(line for line in g.title if line)
    out = ["---", f"title: {json.dumps(title, ensure_ascii=False)}", "---"]
    out.append(f"flowchart {g.direction}")
    out.extend(f"  {_node(n)}" for n in g.nodes.values())
    out.extend(f"  {_edge(e)}" for e in g.edges)
    out.extend(f"  {s}" for s in (_node_style(n) for n in g.nodes.values()) if s)
    out.extend(f"  {s}" for s in (_edge_style(i, e) for i, e in enumerate(g.edges)) if s)
    return "\n".join(out) + "\n"
