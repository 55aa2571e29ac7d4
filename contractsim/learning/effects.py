"""Effects from the difference between the state before a successful call and ``state_after``.

Per state variable, candidate templates are tried on every observed success:

* sets: ``S.remove(T)…; S.add(T)…`` (a greedy cover of the removed and added items by terms),
  or one ``S.add(T)`` / ``S.remove(T)``;
* maps: ``M[T] = V`` and ``M.remove(T)``, V a term, a constant, ``result.f``, ``M2[T]`` or
  ``str(p)``; in a map of records ``M[T].f = V`` / ``+=`` / ``-=`` and ``M[T] = R(f=V, …)``;
* path-keyed sets and maps: removing, copying or moving the subtree at or below a path term;
* scalars: ``x = V``, V a term, a constant, ``result.f``, another state variable or
  ``parent(v)``;
* no change.

When no template explains every observation, a *decision list* of up to three
``if ATOM { template }`` branches (atoms of the precondition language, on the state before) and
a final template is searched. Observations nothing explains are reported, never guessed at; an
effect is kept when they are at most one in :data:`EXCEPTIONS`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..compiler.lib import BUILTIN_FUNCS
from .atoms import MISSING, Atom, Term, literal, value_kinds

MAX_BRANCHES = 3
MAX_TEMPLATES = 400
EXCEPTIONS = 50
"""An effect is kept when it explains every observation of the tool, except that one in every
``EXCEPTIONS`` observations (rounded down: none below 50) may be one that *no* template
explains — a value the language writes differently from the tool (``str(null)`` is ``"null"``,
Python writes ``None``), or objects the tool shares where the state's model copies (the
shallow ``cp`` of GorillaFileSystem). The exceptions are counted in the effect's comment and
listed in the report."""


@dataclass(frozen=True)
class Observation:
    args: Mapping[str, Any]
    before: Mapping[str, Any]
    after: Any
    """The variable's observed value after the call."""
    result: Any


@dataclass
class Template:
    lines: list[str]
    apply: Callable[[Observation], Any]
    explains: int = 0


@dataclass
class VariableEffect:
    """What was learned for one variable of one tool."""

    var: str
    lines: list[str] = field(default_factory=list)
    observations: int = 0
    changed: int = 0
    unexplained: int = 0
    examples: list[str] = field(default_factory=list)
    exceptions_allowed: int = 0
    """Observations the effect may leave unexplained and still be kept (see :data:`EXCEPTIONS`)."""

    @property
    def kept(self) -> bool:
        """Whether the effect goes into the contract: it explains every observation but at most
        :attr:`exceptions_allowed` that no template of the language explains at all."""
        return bool(self.lines) and self.unexplained <= self.exceptions_allowed


def _parent(value: Any) -> Any:
    if not isinstance(value, str) or "/" not in value:
        return MISSING
    head = value.rstrip("/").rsplit("/", 1)[0]
    return head or "/"


def _values(
    var: str,
    obs: Sequence[Observation],
    terms: Sequence[Term],
    kinds: Mapping[str, str],
    key_terms: Sequence[Term] = (),
) -> list[tuple[str, Callable[[Observation], Any]]]:
    """Candidate right-hand sides."""
    out: list[tuple[str, Callable[[Observation], Any]]] = []
    for t in _text_conversions(obs, terms):
        out.append((f"str({t.text})", partial(_term_text, t=t)))
    for t in terms:
        out.append((t.text, partial(_term_value, t=t)))
    for v, k in kinds.items():
        if k in ("str", "number", "bool"):
            out.append((v, partial(_state_value, var=v)))
        if k == "str":
            out.append((f"parent({v})", partial(_state_parent, var=v)))
    fields: set[str] = set()
    for o in obs[:200]:
        if isinstance(o.result, Mapping):
            fields.update(str(f) for f in o.result if str(f).isidentifier())
    for f in sorted(fields):
        out.append(
            (
                f"result.{f}",
                partial(_result_field, name=f),
            )
        )
    for v, k in kinds.items():
        if k == "map":
            for t in key_terms:
                out.append(
                    (
                        f"{v}[{t.text}]",
                        partial(_state_lookup, var=v, t=t),
                    )
                )
    return out


def _term_value(o: Observation, t: Term) -> Any:
    return t(o.args, o.before)


_TEXT = BUILTIN_FUNCS["str"]


def _term_text(o: Observation, t: Term) -> Any:
    value = t(o.args, o.before)
    return MISSING if value is MISSING else _TEXT(value)


def _text_conversions(obs: Sequence[Observation], terms: Sequence[Term]) -> list[Term]:
    """The parameters seen both as text and as other kinds (``null``, a list, a number): a
    value written as ``str(p)`` (the language's text form) is a candidate, tried first."""
    out = []
    for t in terms:
        if len(t.params) != 1 or t.text != t.params[0]:
            continue
        kinds = value_kinds(o.args.get(t.text, MISSING) for o in obs)
        if "str" in kinds and len(kinds) > 1:
            out.append(t)
    return out


def _state_value(o: Observation, var: str) -> Any:
    return o.before.get(var, MISSING)


def _state_parent(o: Observation, var: str) -> Any:
    return _parent(o.before.get(var, MISSING))


def _result_field(o: Observation, name: str) -> Any:
    return o.result.get(name, MISSING) if isinstance(o.result, Mapping) else MISSING


def _state_lookup(o: Observation, var: str, t: Term) -> Any:
    return _lookup(o.before.get(var), t(o.args, o.before))


def _constant(o: Observation, value: Any) -> Any:
    return value


def _set_add_term(o: Observation, var: str, t: Term) -> Any:
    return _set_add(o, var, t(o.args, o.before))


def _set_rem_term(o: Observation, var: str, t: Term) -> Any:
    return _set_rem(o, var, t(o.args, o.before))


def _shifted_by_term(o: Observation, var: str, t: Term, sign: int) -> Any:
    return _shifted(o.before.get(var), t(o.args, o.before), sign)


def _lookup(m: Any, key: Any) -> Any:
    if isinstance(m, Mapping) and key is not MISSING:
        try:
            return m.get(key, MISSING)
        except TypeError:
            return MISSING
    return MISSING


def _constants(values: Sequence[Any]) -> list[Any]:
    seen: dict[Any, int] = {}
    for v in values:
        if isinstance(v, str | int | float | bool) or v is None:
            seen[v] = seen.get(v, 0) + 1
    return [v for v, n in sorted(seen.items(), key=lambda kv: -kv[1]) if n >= 2][:3]


def _set_templates(var: str, obs: Sequence[Observation], terms: Sequence[Term]) -> list[Template]:
    out: list[Template] = []
    for t in terms:
        out.append(Template([f"{var}.add({t.text})"], partial(_set_add_term, var=var, t=t)))
        out.append(Template([f"{var}.remove({t.text})"], partial(_set_rem_term, var=var, t=t)))
    combo = _set_cover(var, obs, terms)
    if combo is not None:
        out.insert(0, combo)
    return out


def _set_add(o: Observation, var: str, value: Any) -> Any:
    s = o.before.get(var)
    if value is MISSING or not isinstance(s, frozenset):
        return MISSING
    return s | {value}


def _set_rem(o: Observation, var: str, value: Any) -> Any:
    s = o.before.get(var)
    if value is MISSING or not isinstance(s, frozenset):
        return MISSING
    return s - {value}


def _set_cover(var: str, obs: Sequence[Observation], terms: Sequence[Term]) -> Template | None:
    """``S.remove(R)…; S.add(A)…``: the terms always absent after / present after that cover
    every removed / added item."""
    adds: list[Term] = []
    rems: list[Term] = []
    for want_present, chosen in ((True, adds), (False, rems)):
        good = []
        for t in terms:
            ok = True
            for o in obs:
                v = t(o.args, o.before)
                if v is MISSING or not isinstance(o.after, frozenset):
                    ok = False
                    break
                if (v in o.after) != want_present and not (
                    # the delete-then-add order: a removed item that is added back is present
                    not want_present and any(a(o.args, o.before) == v for a in adds)
                ):
                    ok = False
                    break
            if ok:
                good.append(t)
        need = [
            (o.after - o.before.get(var, frozenset()))
            if want_present
            else (o.before.get(var, frozenset()) - o.after)
            for o in obs
        ]
        uncovered = {(i, x) for i, items in enumerate(need) for x in items}
        while uncovered:
            best, gain = None, 0
            for t in good:
                g = sum(1 for i, x in uncovered if t(obs[i].args, obs[i].before) == x)
                if g > gain:
                    best, gain = t, g
            if best is None:
                return None
            chosen.append(best)
            good.remove(best)
            uncovered = {(i, x) for i, x in uncovered if best(obs[i].args, obs[i].before) != x}
    if not adds and not rems:
        return None
    lines = [f"{var}.remove({t.text})" for t in rems] + [f"{var}.add({t.text})" for t in adds]

    def apply(o: Observation) -> Any:
        s = o.before.get(var)
        if not isinstance(s, frozenset):
            return MISSING
        gone = {t(o.args, o.before) for t in rems}
        new = {t(o.args, o.before) for t in adds}
        if MISSING in gone or MISSING in new:
            return MISSING
        return (s - gone) | new

    return Template(lines, apply)


def _map_templates(
    var: str,
    obs: Sequence[Observation],
    terms: Sequence[Term],
    kinds: Mapping[str, str],
    record: str = "",
) -> list[Template]:
    out: list[Template] = []
    changed_values = [
        o.after[k]
        for o in obs
        if isinstance(o.after, Mapping) and isinstance(o.before.get(var), Mapping)
        for k in o.after
        if k not in o.before[var] or o.before[var][k] != o.after[k]
    ]
    values = _values(var, obs, terms, kinds, terms)
    values += [(literal(c), partial(_constant, value=c)) for c in _constants(changed_values)]
    for t in terms:
        # which values ever fit: keep the template list short
        for text, fn in values:
            if text == f"{var}[{t.text}]":
                continue
            if not any(_fits(o, var, t, fn) for o in obs[:50]):
                continue
            out.append(
                Template([f"{var}[{t.text}] = {text}"], partial(_map_set, var=var, t=t, fn=fn))
            )
        out.append(Template([f"{var}.remove({t.text})"], partial(_map_del, var=var, t=t)))
    if record:
        out += _record_templates(var, record, obs, terms, values)
    return out[:MAX_TEMPLATES]


def _fits(o: Observation, var: str, t: Term, fn: Callable[[Observation], Any]) -> bool:
    key = t(o.args, o.before)
    if key is MISSING or not isinstance(o.after, Mapping):
        return False
    try:
        return key in o.after and o.after[key] == fn(o)
    except TypeError:
        return False


def _map_set(o: Observation, var: str, t: Term, fn: Callable[[Observation], Any]) -> Any:
    m = o.before.get(var)
    key, value = t(o.args, o.before), fn(o)
    if not isinstance(m, Mapping) or key is MISSING or value is MISSING:
        return MISSING
    try:
        out = dict(m)
        out[key] = value
    except TypeError:
        return MISSING
    return out


def _map_del(o: Observation, var: str, t: Term) -> Any:
    m = o.before.get(var)
    key = t(o.args, o.before)
    if not isinstance(m, Mapping) or key is MISSING:
        return MISSING
    out = dict(m)
    try:
        out.pop(key, None)
    except TypeError:
        return MISSING
    return out


def _scalar_templates(
    var: str, obs: Sequence[Observation], terms: Sequence[Term], kinds: Mapping[str, str]
) -> list[Template]:
    values = _values(var, obs, terms, kinds)
    values += [
        (literal(c), partial(_constant, value=c)) for c in _constants([o.after for o in obs])
    ]
    out = []
    # a parameter named like the variable (it hides it: the effect is written `state.var = var`)
    # comes first among the values; the variable's own old value is no change
    param_first = any(t.text == var for t in terms)
    for text, fn in values:
        if text == var:
            if not param_first:
                continue
            param_first = False
        out.append(Template([f"{var} = {text}"], fn))
    if kinds.get(var) == "number":
        # `budget -= cost`: a numeric update by a parameter or a conversion of one
        for t in terms:
            for op, sign in (("-=", -1), ("+=", 1)):
                out.append(
                    Template(
                        [f"{var} {op} {t.text}"],
                        partial(_shifted_by_term, var=var, t=t, sign=sign),
                    )
                )
    return out


def _shifted(value: Any, by: Any, sign: int) -> Any:
    """``value + sign * by`` for numbers (bools are no numbers here), else :data:`MISSING`."""
    numbers = [x for x in (value, by) if isinstance(x, int | float) and not isinstance(x, bool)]
    if len(numbers) < 2:
        return MISSING
    return value + sign * by


# ------------------------------------------------------------------- records inside a map
# A map whose values are records changes a field of the record at a key (`M[T].f += V`,
# `M[T].f -= V`, `M[T].f = V`) or gets a new record (`M[T] = R(f=V, …)`, R the record type the
# skeleton declares for the map's values; a field that is no identifier is set after it:
# `M[T]["f"] = V`).


def _field_ref(var: str, key: str, name: str) -> str:
    return f"{var}[{key}].{name}" if name.isidentifier() else f"{var}[{key}][{literal(name)}]"


def _field_set(
    o: Observation,
    var: str,
    t: Term,
    name: str,
    fn: Callable[[Observation], Any],
    sign: int,
) -> Any:
    """The map with the field ``name`` of the record at ``t`` set to (``sign`` 0) or moved by
    the value of ``fn``."""
    m, key, value = o.before.get(var), t(o.args, o.before), fn(o)
    if not isinstance(m, Mapping) or key is MISSING or value is MISSING:
        return MISSING
    record = _lookup(m, key)
    if not isinstance(record, Mapping) or name not in record:
        return MISSING
    new = value if sign == 0 else _shifted(record[name], value, sign)
    if new is MISSING:
        return MISSING
    out = dict(m)
    out[key] = {**record, name: new}
    return out


def _record_new(
    o: Observation,
    var: str,
    t: Term,
    fields: Sequence[tuple[str, Callable[[Observation], Any] | None]],
) -> Any:
    """The map with a new record at ``t``: the chosen fields' values, null elsewhere."""
    m, key = o.before.get(var), t(o.args, o.before)
    if not isinstance(m, Mapping) or key is MISSING:
        return MISSING
    record = {}
    for name, fn in fields:
        value = None if fn is None else fn(o)
        if value is MISSING:
            return MISSING
        record[name] = value
    out = dict(m)
    try:
        out[key] = record
    except TypeError:
        return MISSING
    return out


def _record_templates(
    var: str,
    record: str,
    obs: Sequence[Observation],
    terms: Sequence[Term],
    values: Sequence[tuple[str, Callable[[Observation], Any]]],
) -> list[Template]:
    """Field updates of the record at a key term, and a new record at a key term whose fields
    each take one value candidate on every observation that added the key."""
    out: list[Template] = []
    for t in terms:
        updated = [
            o
            for o in obs
            if isinstance(_lookup(o.before.get(var), t(o.args, o.before)), Mapping)
            and isinstance(_lookup(o.after, t(o.args, o.before)), Mapping)
        ]
        names: set[str] = set()
        for o in updated[:SUBTREE_SAMPLE]:
            key = t(o.args, o.before)
            names |= {
                str(f) for f, v in o.after[key].items() if o.before[var][key].get(f, MISSING) != v
            }
        for name in sorted(names):
            for text, fn in values:
                for op, sign in (("=", 0), ("+=", 1), ("-=", -1)):
                    apply = partial(_field_set, var=var, t=t, name=name, fn=fn, sign=sign)
                    if not any(_same(apply(o), o.after) for o in updated[:SUBTREE_SAMPLE]):
                        continue
                    line = f"{_field_ref(var, t.text, name)} {op} {text}"
                    out.append(Template([line], apply))
        added = [
            o
            for o in obs
            if _lookup(o.before.get(var), t(o.args, o.before)) is MISSING
            and isinstance(_lookup(o.after, t(o.args, o.before)), Mapping)
        ]
        if not added:
            continue
        sample = added[:SUBTREE_SAMPLE]
        seen = [_lookup(o.after, t(o.args, o.before)) for o in sample]
        chosen: list[tuple[str, Callable[[Observation], Any] | None]] = []
        parts: list[str] = []
        later: list[str] = []
        for name in seen[0]:
            wanted = [r.get(name, MISSING) if isinstance(r, Mapping) else MISSING for r in seen]
            if all(w is None for w in wanted):
                chosen.append((str(name), None))
                continue
            constants: list[tuple[str, Callable[[Observation], Any]]] = [
                (literal(c), partial(_constant, value=c)) for c in _constants(wanted)
            ]
            for text, fn in [*values, *constants]:
                if all(_same(fn(o), w) for o, w in zip(sample, wanted, strict=True)):
                    chosen.append((str(name), fn))
                    if str(name).isidentifier():
                        parts.append(f"{name}={text}")
                    else:
                        later.append(f"{_field_ref(var, t.text, str(name))} = {text}")
                    break
            else:
                chosen = []
                break
        if chosen and parts:
            lines = [f"{var}[{t.text}] = {record}({', '.join(parts)})", *later]
            out.append(Template(lines, partial(_record_new, var=var, t=t, fields=tuple(chosen))))
    return out


# ------------------------------------------------------------------------ subtrees of paths
# A collection keyed by path (a set of paths, a map from paths) changes by whole subtrees when a
# tool copies, moves or removes a directory: every item at or below the path P goes, or is
# re-keyed below the path Q. Written with the language's loops over the collection as it was
# when the loop began (`for x in S`, `for x in keys(M)`).

SUBTREE_SAMPLE = 30
"""Changed observations a subtree template is tried on before it is kept as a candidate."""


def _below_path(item: Any, path: str) -> bool:
    return isinstance(item, str) and (item == path or item.startswith(path + "/"))


def _subtree(o: Observation, var: str, p: Term, q: Term | None, keep_source: bool) -> Any:
    """The collection after copying (``keep_source``), moving (``q`` and not ``keep_source``)
    or removing (``q`` None) everything at or below the path ``p`` (re-keyed below ``q``)."""
    coll = o.before.get(var)
    src = p(o.args, o.before)
    dst = MISSING if q is None else q(o.args, o.before)
    if not isinstance(src, str) or (q is not None and not isinstance(dst, str)):
        return MISSING
    if isinstance(coll, frozenset):
        moved = {x for x in coll if _below_path(x, src)}
        out = set(coll)
        if q is not None:
            out |= {dst + x[len(src) :] for x in moved}
        if not keep_source:
            out = {x for x in out if not _below_path(x, src)}
        return frozenset(out)
    if isinstance(coll, Mapping):
        new = dict(coll)
        if q is not None:
            for x in [k for k in coll if _below_path(k, src)]:
                new[dst + x[len(src) :]] = coll[x]
        if not keep_source:
            new = {k: v for k, v in new.items() if not _below_path(k, src)}
        return new
    return MISSING


def _subtree_lines(
    var: str, is_map: bool, p: str, q: str | None, keep_source: bool, name: str
) -> list[str]:
    """The statements of :func:`_subtree` (``name``: the loop's item)."""
    items = f"keys({var})" if is_map else var
    lines = []
    if q is not None:
        rest = f'join(drop(split({name}, "/"), len(split({p}, "/"))), "/")'
        target = f'{q} + "/" + {rest}'
        copy = f"{var}[{target}] = {var}[{name}]" if is_map else f"{var}.add({target})"
        top = f"{var}[{q}] = {var}[{p}]" if is_map else f"{var}.add({q})"
        lines += [
            f'for {name} in {items} {{ if startswith({name}, {p} + "/") {{ {copy} }} }}',
            f"if {p} in {var} {{ {top} }}",
        ]
    if not keep_source:
        lines.append(
            f'for {name} in {items} {{ if {name} == {p} or startswith({name}, {p} + "/") '
            f"{{ {var}.remove({name}) }} }}"
        )
    return lines


def _subtree_templates(
    var: str,
    is_map: bool,
    obs: Sequence[Observation],
    changed: Sequence[int],
    terms: Sequence[Term],
    taken: Collection[str],
) -> list[Template]:
    """Removing, copying and moving the subtree at a path term, for the terms whose values are
    text; kept when they explain one of the first changed observations."""
    paths = []
    for t in terms:
        values = [t(o.args, o.before) for o in obs[:SUBTREE_SAMPLE]]
        present = [v for v in values if v is not MISSING]
        if present and all(isinstance(v, str) for v in present):
            paths.append(t)
    name = next(n for n in ("item", "item_", "item__", "path_item") if n not in taken)
    sample = [obs[i] for i in changed[:SUBTREE_SAMPLE]]
    out = []
    for p in paths:
        shapes: list[tuple[Term | None, bool]] = [(None, False)]
        shapes += [(q, keep) for q in paths if q is not p for keep in (True, False)]
        for q, keep in shapes:
            apply = partial(_subtree, var=var, p=p, q=q, keep_source=keep)
            if not any(_same(apply(o), o.after) for o in sample):
                continue
            lines = _subtree_lines(var, is_map, p.text, None if q is None else q.text, keep, name)
            out.append(Template(lines, apply))
    return out


def _same(x: Any, y: Any) -> bool:
    if x is MISSING:
        return False
    try:
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            return len(x) == len(y) and all(k in y and y[k] == v for k, v in x.items())
        return (
            bool(x == y)
            and type(x) is type(y)
            or (isinstance(x, int | float) and isinstance(y, int | float) and x == y)
        )
    except TypeError:
        return False


def learn_variable(
    var: str,
    kind: str,
    obs: Sequence[Observation],
    terms: Sequence[Term],
    kinds: Mapping[str, str],
    atoms: Sequence[Atom],
    min_support: int,
    taken: Collection[str] = (),
    record: str = "",
    exceptions: int = EXCEPTIONS,
) -> VariableEffect:
    """The effect on one variable that explains the most observations (a decision list);
    ``record``: the record type of a map's values, when the skeleton names one; ``exceptions``:
    one in that many observations may be one no template explains (0: none may)."""
    result = VariableEffect(var, observations=len(obs))
    changed = [i for i, o in enumerate(obs) if not _same(o.before.get(var, MISSING), o.after)]
    result.changed = len(changed)
    if not changed:
        return result
    if kind == "set":
        templates = _set_templates(var, obs, terms)
    elif kind == "map":
        templates = _map_templates(var, obs, terms, kinds, record)
    else:
        templates = _scalar_templates(var, obs, terms, kinds)
    everything = (1 << len(obs)) - 1
    nothing = Template([], lambda o: o.before.get(var, MISSING))
    templates.append(nothing)
    _score(templates, obs, var, terms)
    explainable = 0
    for tpl in templates:
        explainable |= tpl.explains
    if kind in ("set", "map") and not any(t.explains == everything for t in templates):
        extra = _subtree_templates(var, kind == "map", obs, changed, terms, taken)
        _score(extra, obs, var, terms)
        templates = extra + templates
        for tpl in extra:
            explainable |= tpl.explains
    templates = sorted((t for t in templates if t.explains), key=lambda t: len(t.lines))
    # observations no template explains at all are set aside (reported, and allowed up to one
    # in EXCEPTIONS); the decision list explains the rest
    aside = everything & ~explainable
    result.exceptions_allowed = len(obs) // exceptions if exceptions > 0 else 0
    everything = explainable
    atom_masks = []
    for atom in atoms:
        m = 0
        for i, o in enumerate(obs):
            if atom(o.args, o.before):
                m |= 1 << i
        if m and m != everything:
            atom_masks.append((atom, m))
    remaining = everything
    branches: list[tuple[Atom, Template]] = []
    final: Template | None = None
    for _ in range(MAX_BRANCHES + 1):
        whole = [t for t in templates if t.explains & remaining == remaining]
        if whole:
            final = min(whole, key=lambda t: (len(t.lines) == 0 and False, len(t.lines)))
            # no change wins when it explains all that is left
            if nothing in whole:
                final = nothing
            break
        if len(branches) >= MAX_BRANCHES:
            break
        best: tuple[int, Atom, Template] | None = None
        for atom, m in atom_masks:
            part = m & remaining
            n = part.bit_count()
            if n < min_support or (best is not None and n <= best[0]):
                continue
            for t in templates:
                if t.explains & part == part and (t is not nothing or atom.negation):
                    best = (n, atom, t)
                    break
        if best is None:
            break
        branches.append((best[1], best[2]))
        remaining &= ~(m_of(best[1], atom_masks))
    left = aside
    if final is None:
        final = max(templates, key=lambda t: (t.explains & remaining).bit_count(), default=nothing)
        left |= remaining & ~final.explains
    result.unexplained = left.bit_count()
    for i in range(len(obs)):
        if left >> i & 1 and len(result.examples) < 3:
            result.examples.append(f"call with {dict(obs[i].args)}")
    result.lines = _emit(branches, final)
    return result


def _score(
    templates: Sequence[Template], obs: Sequence[Observation], var: str, terms: Sequence[Term]
) -> None:
    """Each template's bit set of the observations it explains; a template reading a term
    behind a guard (an optional parameter) is wrapped in ``if GUARD { … }`` first."""
    for tpl in templates:
        joined = " ".join(tpl.lines)
        guards = [t for t in terms if t.guard and t.text in joined]
        if guards:
            cond = " and ".join(dict.fromkeys(t.guard for t in guards))
            tpl.lines = [f"if {cond} {{", *("  " + line for line in tpl.lines), "}"]
            tpl.apply = partial(_behind_guard, var=var, guards=tuple(guards), inner=tpl.apply)
        mask = 0
        for i, o in enumerate(obs):
            if _same(tpl.apply(o), o.after):
                mask |= 1 << i
        tpl.explains = mask


def _behind_guard(
    o: Observation, var: str, guards: Sequence[Term], inner: Callable[[Observation], Any]
) -> Any:
    """A guarded template: no change when a guarded term cannot be formed (its parameter is
    absent or null)."""
    if any(t(o.args, o.before) is MISSING for t in guards):
        return o.before.get(var, MISSING)
    return inner(o)


def m_of(atom: Atom, atom_masks: Sequence[tuple[Atom, int]]) -> int:
    for a, m in atom_masks:
        if a is atom:
            return m
    return 0


def _emit(branches: Sequence[tuple[Atom, Template]], final: Template) -> list[str]:
    if not branches:
        return list(final.lines)
    if not branches[0][1].lines:
        # `if A { no change } else { REST }` is written `if not A { REST }`
        rest = _emit(branches[1:], final)
        if not rest:
            return []
        return [f"if {branches[0][0].negation} {{", *("  " + line for line in rest), "}"]
    out: list[str] = []
    for n, (atom, tpl) in enumerate(branches):
        head = "if" if n == 0 else "} else if"
        out.append(f"{head} {atom.text} {{")
        out += ["  " + line for line in tpl.lines or ["# no change"]]
    if final.lines:
        out.append("} else {")
        out += ["  " + line for line in final.lines]
    out.append("}")
    return out
