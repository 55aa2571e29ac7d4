"""Tree building for the stored parser: lark's, without its work on chain reductions.

With ``propagate_positions``, lark wraps every rule's tree builder in ``PropagatePositions``,
which after each reduction looks for the first and last child with a position and writes the
node's position and its "container" position (which includes the tokens the tree leaves out,
such as brackets). Most reductions of ``contract.lark`` are chain rules that hand their one
child up unchanged (``?expr: or_expr``, ``?or_expr: and_expr`` … ten of them above every name or
number in an expression); for those the result *is* the child, whose positions lark wrote
when it was built, and the wrapper writes the same values again: the first and last child is
the node itself, its ``line`` and ``end_line`` are set, and its container position is its own.
:class:`ChainAwarePositions` returns such a result at once and runs lark's code for every
other reduction; ``tests/test_parser_tables.py`` compares every node's position with lark's.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from lark import Token, Tree
from lark.parse_tree_builder import (
    ExpandSingleChild,
    PropagatePositions,
    maybe_create_child_filter,
)
from lark.tree import Meta


class ChainAwarePositions(PropagatePositions):
    """lark's ``PropagatePositions`` that skips reductions whose result is their only child."""

    def __call__(self, children: list[Any]) -> Any:
        res = self.node_builder(children)
        if len(children) == 1 and res is children[0]:
            return res
        if isinstance(res, Tree):
            # from here on lark's PropagatePositions.__call__ (lark 1.3.1), unchanged
            res_meta: Any = res.meta
            first_meta = self._pp_get_meta(children)  # type: ignore[no-untyped-call]
            if first_meta is not None:
                if not hasattr(res_meta, "line"):
                    res_meta.line = getattr(first_meta, "container_line", first_meta.line)
                    res_meta.column = getattr(first_meta, "container_column", first_meta.column)
                    res_meta.start_pos = getattr(
                        first_meta, "container_start_pos", first_meta.start_pos
                    )
                    res_meta.empty = False
                res_meta.container_line = getattr(first_meta, "container_line", first_meta.line)
                res_meta.container_column = getattr(
                    first_meta, "container_column", first_meta.column
                )
                res_meta.container_start_pos = getattr(
                    first_meta, "container_start_pos", first_meta.start_pos
                )
            last_meta = self._pp_get_meta(reversed(children))  # type: ignore[no-untyped-call]
            if last_meta is not None:
                if not hasattr(res_meta, "end_line"):
                    res_meta.end_line = getattr(last_meta, "container_end_line", last_meta.end_line)
                    res_meta.end_column = getattr(
                        last_meta, "container_end_column", last_meta.end_column
                    )
                    res_meta.end_pos = getattr(last_meta, "container_end_pos", last_meta.end_pos)
                    res_meta.empty = False
                res_meta.container_end_line = getattr(
                    last_meta, "container_end_line", last_meta.end_line
                )
                res_meta.container_end_column = getattr(
                    last_meta, "container_end_column", last_meta.end_column
                )
                res_meta.container_end_pos = getattr(
                    last_meta, "container_end_pos", last_meta.end_pos
                )
        return res


def tree_builder(rule: Any) -> Any:
    """The callback lark's ``ParseTreeBuilder`` makes for ``rule`` (a tree named after the rule's
    alias, template or origin; its only child handed up for ``?rule``; the tokens it keeps and
    the ``None`` placeholders of ``[…]``; positions), with :class:`ChainAwarePositions`. For the
    options of ``tables.PARSER_OPTIONS`` (no transformer, not ambiguous, placeholders on);
    ``tests/test_parser_tables.py`` compares it with lark's for every rule."""
    options = rule.options
    f: Any = partial(Tree, rule.alias or options.template_source or rule.origin.name)
    if options.expand1 and not rule.alias:
        f = ExpandSingleChild(f)  # type: ignore[no-untyped-call]
    child_filter = maybe_create_child_filter(
        rule.expansion, options.keep_all_tokens, False, options.empty_indices
    )
    if child_filter is not None:
        f = child_filter(f)
    return ChainAwarePositions(f)  # type: ignore[no-untyped-call]


class LazyCallbacks(dict[Any, Any]):
    """The parser's callbacks by rule, each made when its rule is first reduced: a process
    that parses one small file builds about a quarter of the grammar's 489."""

    def __init__(self, rules: list[Any]) -> None:
        super().__init__()
        self._count = len(rules)
        self._rules = set(rules)

    def __missing__(self, rule: Any) -> Any:
        if rule not in self._rules:
            raise KeyError(rule)
        made = self[rule] = tree_builder(rule)
        return made

    def __len__(self) -> int:  # lark tests `if callbacks`; the count is that of the rules
        return self._count

    def complete(self) -> dict[Any, Any]:
        """Every rule's callback (for tests and introspection)."""
        return {rule: self[rule] for rule in self._rules}


# ----------------------------------------------------------------------------------------------
# Builders specialised per rule, for the driver of .driver: the same trees and positions as
# tree_builder's, without the generic layers (partial, ExpandSingleChild, the child filter's loop,
# PropagatePositions' node_filter checks and getattr on tokens, which never have container
# positions: lark's Token has __slots__ and no __dict__).


def _first_position(children: Any) -> Any:
    """What ``PropagatePositions._pp_get_meta`` finds (no node filter): the first token, or
    the meta of the first tree with a position."""
    for c in children:
        if isinstance(c, Tree):
            meta = c.meta
            if not meta.empty:
                return meta
        elif isinstance(c, Token):
            return c
        elif hasattr(c, "__lark_meta__"):
            return c.__lark_meta__()
    return None


def _place(meta: Any, children: list[Any], fresh: bool) -> None:
    """``PropagatePositions.__call__``'s work on the result's ``meta`` (``fresh``: a meta just
    made, which has no position yet)."""
    first = _first_position(children)
    if first is not None:
        if first.__class__ is Token:
            line, column, start_pos = first.line, first.column, first.start_pos
        else:
            line = getattr(first, "container_line", first.line)
            column = getattr(first, "container_column", first.column)
            start_pos = getattr(first, "container_start_pos", first.start_pos)
        if fresh or not hasattr(meta, "line"):
            meta.line = line
            meta.column = column
            meta.start_pos = start_pos
            meta.empty = False
        meta.container_line = line
        meta.container_column = column
        meta.container_start_pos = start_pos
    last = _first_position(reversed(children))
    if last is not None:
        if last.__class__ is Token:
            line, column, end_pos = last.end_line, last.end_column, last.end_pos
        else:
            line = getattr(last, "container_end_line", last.end_line)
            column = getattr(last, "container_end_column", last.end_column)
            end_pos = getattr(last, "container_end_pos", last.end_pos)
        if fresh or not hasattr(meta, "end_line"):
            meta.end_line = line
            meta.end_column = column
            meta.end_pos = end_pos
            meta.empty = False
        meta.container_end_line = line
        meta.container_end_column = column
        meta.container_end_pos = end_pos


def is_chain_rule(rule: Any) -> bool:
    """Whether lark's builder for ``rule`` returns its only child unchanged (``?rule: sub``
    with one symbol that the tree keeps as it is; see :class:`ChainAwarePositions`)."""
    options = rule.options
    if len(rule.expansion) != 1 or not options.expand1 or rule.alias:
        return False
    if any(options.empty_indices):
        return False
    (symbol,) = rule.expansion
    if symbol.is_term:
        return options.keep_all_tokens or not symbol.filter_out
    return not symbol.name.startswith("_")


def specialised_builder(rule: Any) -> Any:
    """A function that builds, from a reduction's children, what :func:`tree_builder`'s
    callback builds for ``rule`` (same tree, same children list semantics, same positions),
    generated from the rule's shape: which children it keeps, which ``_inlined`` subtrees it
    splices in, where ``[…]`` leaves ``None``, which children are tokens.

    For the values of the driver's stack only (:mod:`.driver`): tokens, ``None`` and trees that
    these builders made, whose ``meta`` exists and, when not empty, holds container positions.
    ``tests/test_parse_driver.py`` compares the trees with lark's. The stored parser's builders
    are generated ahead of time from the same source (:func:`builder_source`, stored in
    ``contract_builders.py`` by ``python -m contractsim.grammar.tables``); this compiles one."""
    namespace: dict[str, Any] = dict(BUILDER_GLOBALS)
    exec(builder_source(rule, "build"), namespace)  # noqa: S102 (made here from the rule's shape)
    return namespace["build"]


BUILDER_GLOBALS: dict[str, Any] = {
    "Tree": Tree,
    "Meta": Meta,
    "new_meta": object.__new__,
    "new_tree": object.__new__,
    "_place": _place,
}
"""The names the builders' source uses (:func:`builder_source`)."""


def builder_source(rule: Any, function_name: str) -> str:
    """The source of :func:`specialised_builder`'s function for ``rule``, named
    ``function_name``; it uses only the names of :data:`BUILDER_GLOBALS`."""
    options = rule.options
    name = repr(str(rule.alias or options.template_source or rule.origin.name))
    filter_lines = _filter_source(rule)
    lines = [f"def {function_name}(children):"]
    lines += ["    " + line for line in filter_lines]
    kids = "filtered" if filter_lines else "children"
    if options.expand1 and not rule.alias:
        lines += [
            f"    if len({kids}) == 1:",
            f"        res = {kids}[0]",
            "        if len(children) == 1 and res is children[0]:",
            "            return res",
            "        if isinstance(res, Tree):",
            "            _place(res.meta, children, False)",
            "        return res",
        ]
    lines += ["    " + line for line in _search_source(rule.expansion, last=False)]
    lines += [
        "    if a is None:",
        f"        return Tree({name}, {kids}, Meta())",
        "    line, column, start_pos = a, b, d",
    ]
    lines += ["    " + line for line in _search_source(rule.expansion, last=True)]
    lines += [
        "    meta = new_meta(Meta)",
        "    meta.__dict__ = {",
        '        "empty": False, "line": line, "column": column, "start_pos": start_pos,',
        '        "container_line": line, "container_column": column,',
        '        "container_start_pos": start_pos, "end_line": a, "end_column": b, "end_pos": d,',
        '        "container_end_line": a, "container_end_column": b, "container_end_pos": d,',
        "    }",
        # Tree(name, kids, meta) without the call of Tree.__init__: the same three attributes
        "    tree = new_tree(Tree)",
        f"    tree.data = {name}",
        f"    tree.children = {kids}",
        "    tree._meta = meta",
        "    return tree",
    ]
    return "\n".join(lines) + "\n"


def _search_source(expansion: Any, last: bool) -> list[str]:
    """Statements that set ``a, b, d`` to where the first (``last``: last) child with a
    position starts (ends), as ``PropagatePositions`` reads it, or ``a`` to None: a child
    of a terminal is a token; one of a rule a token, ``None`` or a tree (empty or not)."""
    if last:
        order = reversed(range(len(expansion)))
        token, tree = ("end_line", "end_column", "end_pos"), "container_end_"
        in_tree = ("line", "column", "pos")
    else:
        order = iter(range(len(expansion)))
        token, tree = ("line", "column", "start_pos"), "container_"
        in_tree = ("line", "column", "start_pos")
    from_token = f"a, b, d = c.{token[0]}, c.{token[1]}, c.{token[2]}"
    from_meta = f"a, b, d = m.{tree}{in_tree[0]}, m.{tree}{in_tree[1]}, m.{tree}{in_tree[2]}"
    lines = ["while True:"]
    for i in order:
        lines.append(f"    c = children[{i}]")
        if expansion[i].is_term:
            lines += ["    " + from_token, "    break"]
            return lines
        lines += [
            "    if isinstance(c, Tree):",
            "        m = c._meta",
            "        if not m.empty:",
            "            " + from_meta,
            "            break",
            "    elif c is not None:",
            "        " + from_token,
            "        break",
        ]
    lines += ["    a = None", "    break"]
    return lines


def _filter_source(rule: Any) -> list[str]:
    """Statements that leave lark's child filter's result in ``filtered`` (none: no filter, the
    children are taken as they are); lark's loop unrolled, its run-time checks kept where the
    outcome depends on the children (an inlined subtree may be empty)."""
    options = rule.options
    expansion = rule.expansion
    empty = list(options.empty_indices)
    if empty:
        ones = "".join(str(int(b)) for b in empty).split("0")
        nones = [len(run) for run in ones]
    else:
        nones = [0] * (len(expansion) + 1)
    to_include: list[tuple[int, bool, int]] = []
    pending = 0
    for i, sym in enumerate(expansion):
        pending += nones[i]
        if options.keep_all_tokens or not (sym.is_term and sym.filter_out):
            to_include.append((i, not sym.is_term and sym.name.startswith("_"), pending))
            pending = 0
    pending += nones[len(expansion)]
    if not (empty or len(to_include) < len(expansion) or any(x for _, x, _ in to_include)):
        return []
    if not any(x for _, x, _ in to_include):
        items: list[str] = []
        for i, _, add_none in to_include:
            items += ["None"] * add_none + [f"children[{i}]"]
        items += ["None"] * pending
        return [f"filtered = [{', '.join(items)}]"]
    lines = ["filtered = []"]
    known_empty = True  # `filtered` is statically the empty list made above
    for i, expand, add_none in to_include:
        if add_none:
            lines.append(f"filtered += [None] * {add_none}")
            known_empty = False
        if expand:
            if known_empty:
                lines.append(f"filtered = children[{i}].children")
            else:
                lines += [
                    "if filtered:",
                    f"    filtered += children[{i}].children",
                    "else:",
                    f"    filtered = children[{i}].children",
                ]
            known_empty = False
        else:
            lines.append(f"filtered.append(children[{i}])")
            known_empty = False
    if pending:
        lines.append(f"filtered += [None] * {pending}")
    return lines
