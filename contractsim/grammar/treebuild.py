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

from lark import Tree
from lark.parse_tree_builder import (
    ExpandSingleChild,
    PropagatePositions,
    maybe_create_child_filter,
)


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
