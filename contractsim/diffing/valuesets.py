"""Which values a type accepts, compared between two contracts: on value sets, never on text.

``compare_types(old, new)`` answers whether NEW accepts fewer values (``narrowed``), more values
(``widened``) or a set that is neither (``changed``), one finding per rule that moved: numeric
bounds, lengths, item counts, enum members, formats, patterns, union options, record fields and
their optionality, element types.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from ..dsl import ir
from ..dsl.patterns import regex_search
from ..dsl.types import type_label
from .patterns import compare_patterns

Direction = Literal["narrowed", "widened", "changed"]

_PRIMS = ("bool", "int", "float", "str", "null", "any")
_FORMAT_SUBSETS = {("uuid4", "uuid")}
"""(a, b): every value of format a is a value of format b."""


@dataclass(frozen=True)
class TypeChange:
    """One rule of a type that accepts a different value set in NEW.

    ``witness`` is a value that one side accepts and the other refuses (OLD accepts it when the
    change narrowed, NEW when it widened), when one is known; ``where`` names the part of the value
    (``""`` for the value itself, ``.field`` or ``[]`` inside it).
    """

    direction: Direction
    where: str
    description: str
    witness: Any = None
    has_witness: bool = False


class _Types:
    """The type declarations of one contract, for resolving names."""

    def __init__(self, contract: ir.Contract) -> None:
        self.decls = {t.name: t.type for t in contract.types}

    def resolve(self, t: ir.TypeExpr) -> tuple[ir.TypeExpr, tuple[ir.Constraint, ...], str]:
        """The structure behind a chain of declared names, with every constraint met on the way,
        and the name it was declared under ("" for an anonymous type)."""
        constraints: list[ir.Constraint] = list(t.constraints)
        seen: set[str] = set()
        label = ""
        while isinstance(t, ir.NamedType) and t.name in self.decls and t.name not in seen:
            seen.add(t.name)
            label = label or t.name
            t = self.decls[t.name]
            constraints.extend(t.constraints)
        return t, tuple(constraints), label


def _bounds(constraints: tuple[ir.Constraint, ...], low: str, high: str) -> tuple[float, float]:
    lo, hi = -math.inf, math.inf
    for c in constraints:
        if c.key == low and isinstance(c.value, int | float):
            lo = max(lo, c.value)
        elif c.key == high and isinstance(c.value, int | float):
            hi = min(hi, c.value)
    return lo, hi


def _show_bound(value: float) -> str:
    if value in (math.inf, -math.inf):
        return "none"
    return str(int(value)) if float(value).is_integer() else repr(value)


_BOUNDS = (
    ("min", "max", "minimum", "maximum"),
    ("min_length", "max_length", "min_length", "max_length"),
    ("min_items", "max_items", "min_items", "max_items"),
)


def _compare_constraints(
    old: tuple[ir.Constraint, ...], new: tuple[ir.Constraint, ...], where: str
) -> list[TypeChange]:
    out: list[TypeChange] = []
    for low, high, low_name, high_name in _BOUNDS:
        olo, ohi = _bounds(old, low, high)
        nlo, nhi = _bounds(new, low, high)
        if nlo != olo:
            direction: Direction = "narrowed" if nlo > olo else "widened"
            witness = olo if direction == "narrowed" else nlo
            out.append(
                TypeChange(
                    direction,
                    where,
                    f"{low_name} {_show_bound(olo)} → {_show_bound(nlo)}",
                    witness if low == "min" else None,
                    low == "min" and not math.isinf(witness),
                )
            )
        if nhi != ohi:
            direction = "narrowed" if nhi < ohi else "widened"
            witness = ohi if direction == "narrowed" else nhi
            out.append(
                TypeChange(
                    direction,
                    where,
                    f"{high_name} {_show_bound(ohi)} → {_show_bound(nhi)}",
                    witness if high == "max" else None,
                    high == "max" and not math.isinf(witness),
                )
            )
    old_formats = {str(c.value) for c in old if c.key == "format"}
    new_formats = {str(c.value) for c in new if c.key == "format"}
    if old_formats != new_formats:
        out.append(_compare_formats(old_formats, new_formats, where))
    old_patterns = sorted({str(c.value) for c in old if c.key == "pattern"})
    new_patterns = sorted({str(c.value) for c in new if c.key == "pattern"})
    if old_patterns != new_patterns:
        out.extend(_compare_pattern_sets(old_patterns, new_patterns, where))
    return out


def _compare_formats(old: set[str], new: set[str], where: str) -> TypeChange:
    def covered(fmts: set[str], by: set[str]) -> bool:
        # every value satisfying all of `fmts` satisfies all of `by`
        return all(b in fmts or any((f, b) in _FORMAT_SUBSETS for f in fmts) for b in by)

    label = f"format {', '.join(sorted(old)) or 'none'} → {', '.join(sorted(new)) or 'none'}"
    narrower = covered(new, old)  # new's values are old's values
    wider = covered(old, new)
    if wider and not narrower:
        return TypeChange("widened", where, label)
    if narrower and not wider:
        return TypeChange("narrowed", where, label)
    return TypeChange("changed", where, label)


def _compare_pattern_sets(old: list[str], new: list[str], where: str) -> list[TypeChange]:
    removed = [p for p in old if p not in new]
    added = [p for p in new if p not in old]
    if len(removed) == 1 and len(added) == 1:
        verdict = compare_patterns(removed[0], added[0])
        label = f'pattern r"{removed[0]}" → r"{added[0]}"'
        if verdict.relation == "equal":
            return []
        if verdict.relation == "wider":
            return [TypeChange("widened", where, label + " (accepts more strings)")]
        if verdict.relation == "narrower":
            return [
                TypeChange(
                    "narrowed",
                    where,
                    label + " (accepts fewer strings)",
                    verdict.lost,
                    verdict.lost is not None,
                )
            ]
        if verdict.relation == "incomparable":
            return [
                TypeChange(
                    "changed",
                    where,
                    label + " (accepts some new strings and refuses some old ones)",
                    verdict.lost,
                    verdict.lost is not None,
                )
            ]
        return [
            TypeChange(
                "changed",
                where,
                label + " (pattern changed, may narrow)",
                verdict.lost,
                verdict.lost is not None,
            )
        ]
    out: list[TypeChange] = []
    for p in removed:
        out.append(TypeChange("widened", where, f'pattern r"{p}" removed'))
    for p in added:
        witness = _refused_sample(old, p)
        out.append(
            TypeChange("narrowed", where, f'pattern r"{p}" added', witness, witness is not None)
        )
    return out


def _refused_sample(old: list[str], pattern: str) -> str | None:
    from .patterns import refused_sample

    return refused_sample(old, pattern)


def compare_types(
    old: ir.TypeExpr, new: ir.TypeExpr, old_contract: ir.Contract, new_contract: ir.Contract
) -> list[TypeChange]:
    """How the values NEW's type accepts differ from OLD's, one finding per rule that moved."""
    return _Comparer(_Types(old_contract), _Types(new_contract)).compare(old, new, "", 0)


def direction_of(changes: list[TypeChange]) -> Direction | None:
    """The overall direction of several findings (None when there are none)."""
    kinds = {c.direction for c in changes}
    if not kinds:
        return None
    if kinds == {"narrowed"}:
        return "narrowed"
    if kinds == {"widened"}:
        return "widened"
    return "changed"


_MAX_DEPTH = 40


class _Comparer:
    def __init__(self, old: _Types, new: _Types) -> None:
        self.old = old
        self.new = new
        self.active: set[tuple[str, str]] = set()

    def compare(
        self, old: ir.TypeExpr, new: ir.TypeExpr, where: str, depth: int
    ) -> list[TypeChange]:
        if depth > _MAX_DEPTH:
            return []
        ot, oc, oname = self.old.resolve(old)
        nt, nc, nname = self.new.resolve(new)
        key = (oname, nname)
        if oname and nname:
            if key in self.active:  # a recursive type: compared already on the way in
                return []
            self.active.add(key)
        try:
            return self._compare(ot, oc, nt, nc, where, depth)
        finally:
            self.active.discard(key)

    def _options(self, t: ir.TypeExpr, types: _Types) -> list[ir.TypeExpr]:
        resolved, constraints, _ = types.resolve(t)
        if isinstance(resolved, ir.UnionType) and not constraints:
            out: list[ir.TypeExpr] = []
            for o in resolved.options:
                out.extend(self._options(o, types))
            return out
        return [t]

    def _compare(
        self,
        ot: ir.TypeExpr,
        oc: tuple[ir.Constraint, ...],
        nt: ir.TypeExpr,
        nc: tuple[ir.Constraint, ...],
        where: str,
        depth: int,
    ) -> list[TypeChange]:
        if isinstance(ot, ir.UnionType) or isinstance(nt, ir.UnionType):
            return self._compare_unions(ot, nt, where, depth)
        o_kind, n_kind = _kind(ot), _kind(nt)
        if o_kind != n_kind:
            return self._compare_kinds(ot, oc, nt, nc, where)
        if isinstance(ot, ir.NamedType) and isinstance(nt, ir.NamedType):
            return _compare_constraints(oc, nc, where)
        if isinstance(ot, ir.NullType):
            return []
        if isinstance(ot, ir.EnumType) and isinstance(nt, ir.EnumType):
            return _compare_enums(ot, nt, where) + _compare_constraints(oc, nc, where)
        if isinstance(ot, ir.GenericType) and isinstance(nt, ir.GenericType):
            out: list[TypeChange] = []
            if len(ot.args) != len(nt.args):
                return [TypeChange("changed", where, f"type {type_label(ot)} → {type_label(nt)}")]
            for i, (a, b) in enumerate(zip(ot.args, nt.args, strict=True)):
                part = "[]" if ot.name in ("list", "set") else ("{key}" if i == 0 else "{value}")
                if ot.name == "tuple":
                    part = f"[{i}]"
                out.extend(self.compare(a, b, where + part, depth + 1))
            return out + _compare_constraints(oc, nc, where)
        if isinstance(ot, ir.RecordType) and isinstance(nt, ir.RecordType):
            return self._compare_records(ot, nt, where, depth) + _compare_constraints(oc, nc, where)
        if isinstance(ot, ir.TaggedUnionType) and isinstance(nt, ir.TaggedUnionType):
            return self._compare_tagged(ot, nt, where, depth)
        return []  # pragma: no cover - _kind covers every type

    def _compare_kinds(
        self,
        ot: ir.TypeExpr,
        oc: tuple[ir.Constraint, ...],
        nt: ir.TypeExpr,
        nc: tuple[ir.Constraint, ...],
        where: str,
    ) -> list[TypeChange]:
        o_kind, n_kind = _kind(ot), _kind(nt)
        label = f"type {_show_kind(ot)} → {_show_kind(nt)}"
        if n_kind == "any":
            return [TypeChange("widened", where, label)]
        if o_kind == "any":
            return [TypeChange("narrowed", where, label)]
        if (o_kind, n_kind) == ("int", "float"):
            # a strict float accepts integers: every old value is still accepted
            found = _compare_constraints(oc, nc, where)
            return [TypeChange("widened", where, label), *found]
        if (o_kind, n_kind) == ("float", "int"):
            found = _compare_constraints(oc, nc, where)
            return [TypeChange("narrowed", where, label, 0.5, True), *found]
        if (o_kind, n_kind) == ("enum", "str") and isinstance(ot, ir.EnumType):
            refused = [m.value for m in ot.members if not _str_accepts(nc, m.value)]
            if not refused:
                return [TypeChange("widened", where, label)]
            return [TypeChange("changed", where, label, refused[0], True)]
        if (o_kind, n_kind) == ("str", "enum") and isinstance(nt, ir.EnumType):
            return [TypeChange("narrowed", where, label)]
        return [TypeChange("changed", where, label)]

    def _compare_unions(
        self, ot: ir.TypeExpr, nt: ir.TypeExpr, where: str, depth: int
    ) -> list[TypeChange]:
        old_opts = self._options(ot, self.old)
        new_opts = self._options(nt, self.new)
        out: list[TypeChange] = []
        paired: set[int] = set()
        for o in old_opts:
            found = [self.compare(o, n, where, depth + 1) for n in new_opts]
            if any(all(c.direction == "widened" for c in f) for f in found):
                continue  # some option of NEW takes every value of this option
            o_kind = _kind(self.old.resolve(o)[0])
            same = [
                i
                for i, n in enumerate(new_opts)
                if _kind(self.new.resolve(n)[0]) == o_kind and i not in paired
            ]
            if same:  # the same kind of option, changed: say how
                paired.add(same[0])
                out.extend(found[same[0]])
                continue
            out.append(
                TypeChange(
                    "narrowed",
                    where,
                    f"option {type_label(o)} removed (not covered by "
                    f"{' | '.join(type_label(n) for n in new_opts)})",
                    None,
                    isinstance(o, ir.NullType),
                )
            )
        for i, n in enumerate(new_opts):
            if i in paired:
                continue
            covered = any(
                all(c.direction == "widened" for c in self.compare(n, o, where, depth + 1))
                for o in old_opts
            )
            if not covered:
                out.append(TypeChange("widened", where, f"option {type_label(n)} added"))
        return out

    def _compare_records(
        self, ot: ir.RecordType, nt: ir.RecordType, where: str, depth: int
    ) -> list[TypeChange]:
        out: list[TypeChange] = []
        if ot.open and not nt.open:
            out.append(TypeChange("narrowed", where, "open record → closed (undeclared fields)"))
        elif nt.open and not ot.open:
            out.append(TypeChange("widened", where, "closed record → open (undeclared fields)"))
        old_fields = {f.name: f for f in ot.fields}
        new_fields = {f.name: f for f in nt.fields}
        for name, f in old_fields.items():
            g = new_fields.get(name)
            path = f"{where}.{name}"
            if g is None:
                out.append(TypeChange("narrowed", path, f"field `{name}` removed"))
                continue
            o_req = not f.optional and f.default is None
            n_req = not g.optional and g.default is None
            if o_req and not n_req:
                out.append(TypeChange("widened", path, "required → optional"))
            elif n_req and not o_req:
                out.append(TypeChange("narrowed", path, "optional → required"))
            out.extend(self.compare(f.type, g.type, path, depth + 1))
        for name, g in new_fields.items():
            if name in old_fields:
                continue
            path = f"{where}.{name}"
            if not g.optional and g.default is None:
                out.append(TypeChange("narrowed", path, f"required field `{name}` added"))
            else:
                out.append(TypeChange("widened", path, f"optional field `{name}` added"))
        return out

    def _compare_tagged(
        self, ot: ir.TaggedUnionType, nt: ir.TaggedUnionType, where: str, depth: int
    ) -> list[TypeChange]:
        if ot.tag_field != nt.tag_field:
            return [
                TypeChange("changed", where, f"union tag field `{ot.tag_field}` → `{nt.tag_field}`")
            ]
        out: list[TypeChange] = []
        old_v = {v.tag: v for v in ot.variants}
        new_v = {v.tag: v for v in nt.variants}
        for tag, v in old_v.items():
            if tag not in new_v:
                out.append(TypeChange("narrowed", where, f"variant `{tag}` removed"))
            else:
                out.extend(self.compare(v.type, new_v[tag].type, f"{where}<{tag}>", depth + 1))
        for tag in new_v:
            if tag not in old_v:
                out.append(TypeChange("widened", where, f"variant `{tag}` added"))
        return out


def _compare_enums(ot: ir.EnumType, nt: ir.EnumType, where: str) -> list[TypeChange]:
    old = [m.value for m in ot.members]
    new = [m.value for m in nt.members]
    out: list[TypeChange] = []
    removed = [m for m in old if m not in new]
    added = [m for m in new if m not in old]
    if removed:
        shown = ", ".join(repr(m) for m in removed)
        out.append(TypeChange("narrowed", where, f"enum value {shown} removed", removed[0], True))
    if added:
        shown = ", ".join(repr(m) for m in added)
        out.append(TypeChange("widened", where, f"enum value {shown} added", added[0], True))
    return out


def _str_accepts(constraints: tuple[ir.Constraint, ...], text: str) -> bool:
    lo, hi = _bounds(constraints, "min_length", "max_length")
    if not lo <= len(text) <= hi:
        return False
    from ..compiler.formats import FORMAT_CHECKS

    for c in constraints:
        if c.key == "pattern" and not regex_search(str(c.value), text):
            return False
        if c.key == "format" and str(c.value) in FORMAT_CHECKS:
            if not FORMAT_CHECKS[str(c.value)](text):
                return False
    return True


def _kind(t: ir.TypeExpr) -> str:
    if isinstance(t, ir.NamedType):
        return t.name if t.name in _PRIMS else f"?{t.name}"
    if isinstance(t, ir.NullType):
        return "null"
    if isinstance(t, ir.EnumType):
        return "enum"
    if isinstance(t, ir.GenericType):
        return t.name
    if isinstance(t, ir.RecordType):
        return "record"
    if isinstance(t, ir.TaggedUnionType):
        return "tagged"
    return "union"


def _show_kind(t: ir.TypeExpr) -> str:
    text = type_label(t)
    return text if len(text) <= 60 else text[:57] + "…"
