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

from typing import Any

from lark import Tree
from lark.parse_tree_builder import PropagatePositions


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


def chain_aware(callbacks: dict[Any, Any]) -> dict[Any, Any]:
    """The parser's callbacks with every plain ``PropagatePositions`` made chain-aware."""
    return {
        rule: (
            ChainAwarePositions(f.node_builder)  # type: ignore[no-untyped-call]
            if type(f) is PropagatePositions and f.node_filter is None
            else f
        )
        for rule, f in callbacks.items()
    }
