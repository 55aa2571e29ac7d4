"""Run-time semantics of the values given to a simulation: state overrides checked against the
declared types (with the ``$unknown`` mark of state files), and the fresh values a simulated call
returns."""

from __future__ import annotations

from typing import Any

from pydantic_core import ValidationError

from ..compiler.compile import CompiledContract
from ..compiler.foreign import contract_value
from ..compiler.problems import ArgProblem, problems_from
from ..compiler.values import OPEN_JSON, UNKNOWN, Bounded, FMap, Fresh, OpenRecord
from ..diagnostics import ContractError, Diagnostic, suggestion_hint
from ..dsl import ir
from .formats import diagnostic_at, line_of
from .json_maps import JsonMaps, KeyProblem

UNKNOWN_MARK = "$unknown"


def validate_state_overrides(
    compiled: CompiledContract,
    overrides: dict[str, Any],
    source: str = "<state>",
    text: str = "",
    *,
    python_keys: bool = False,
    unknown_mark: bool = True,
) -> dict[str, Any]:
    """Check names and types of state overrides; returns runtime values. Map keys are read as
    JSON writes them (:mod:`.json_maps`); ``python_keys``: the values are live Python data, where
    a string key is a string even when the key type would also take what it spells.
    :data:`UNKNOWN` makes a value unknown, and so does the string ``"$unknown"`` when
    ``unknown_mark`` (state files; from Python the string is a string)."""
    out: dict[str, Any] = {}
    problems: list[Diagnostic] = []
    decls = {v.name: v for v in compiled.ir.state}
    machines = compiled.machines
    maps = JsonMaps(compiled, python_keys)  # JSON writes every map key as a string
    for name, value in overrides.items():
        line = line_of(text, f"{name}") if text else 1
        if name in ("$machines", "machines") and name not in decls and isinstance(value, dict):
            for mname, mstate in value.items():
                m = machines.get(mname)
                if m is None:
                    problems.append(
                        diagnostic_at(
                            "E0702",
                            f"unknown machine `{mname}`",
                            source,
                            line,
                            hint=suggestion_hint(mname, machines, "machine"),
                        )
                    )
                    continue
                states = [s.name for s in m.ir.states]
                if mstate not in states:
                    problems.append(
                        diagnostic_at(
                            "E0702",
                            f"machine `{mname}` has no state `{mstate}`",
                            source,
                            line,
                            hint=suggestion_hint(str(mstate), states, "state"),
                        )
                    )
                    continue
                out[f"machine:{mname}"] = mstate
            continue
        decl = decls.get(name)
        if decl is None:
            problems.append(
                diagnostic_at(
                    "E0702",
                    f"unknown state variable `{name}`",
                    source,
                    line,
                    hint=suggestion_hint(name, decls, "state variable"),
                )
            )
            continue
        if value is UNKNOWN or (unknown_mark and type(value) is str and value == UNKNOWN_MARK):
            out[name] = UNKNOWN
            continue
        if type(value) is Bounded or (
            unknown_mark and type(value) is dict and list(value) == [UNKNOWN_MARK]
        ):
            bounded, problem = _bounded_value(
                value, compiled, decls[name] if name in decls else None
            )
            if problem is None:
                out[name] = bounded
            else:
                problems.append(
                    diagnostic_at(
                        "E0702",
                        f"`{name}`: {problem}",
                        source,
                        line,
                        hint='write a bounded unknown as {"$unknown": {"min": 10, "max": 20}} '
                        "on a number variable",
                    )
                )
            continue
        converted = contract_value(value, name)
        if converted.problems:
            problems.append(
                diagnostic_at(
                    "E0702", f"the value of {converted.problems[0]}", source, line, hint=_PLAIN_HINT
                )
            )
            continue
        if not converted.exact:  # objects, subclasses: validate what was read from them
            value = converted.value
        try:
            value = maps.read(value, decl.type, name)
        except KeyProblem as exc:
            problems.append(diagnostic_at("E0702", str(exc), source, line, hint=exc.hint))
            continue
        try:
            validated = compiled.validators.adapter_for(decl.type).validate_python(value)
        except ValidationError as exc:
            hint = None
            if type(value) is str and value == UNKNOWN_MARK:
                hint = "from Python, make a value unknown with contractsim.UNKNOWN"
            for p in problems_from(exc, name):
                problems.append(
                    diagnostic_at(
                        "E0702",
                        f"`{p.path}`: {p.message}",
                        source,
                        line,
                        hint=hint or (_OPEN_HINT if _is_open_mark(p) else p.hint),
                    )
                )
            continue
        if unknown_mark and (OPEN_JSON in text if text else True):
            validated = _reopen(validated, decl.type, decls_of(compiled))
        out[name] = validated
    if problems:
        raise ContractError(problems, {source: text} if text else None)
    return out


MAX_VALUE_DEPTH = 200
"""How deep :func:`_reopen` looks (as deep as a simulated state may nest)."""
_OPEN_HINT = (
    f'"{OPEN_JSON}": true marks a simulated open record (reports write it so); a value of a '
    "closed record type holds exactly its fields: remove the key"
)


def _is_open_mark(problem: ArgProblem) -> bool:
    """Whether a validation problem is a closed record refusing the key ``"$open"`` (not a
    map's value under that key, which has a problem of its own)."""
    path = problem.path
    return problem.rule == "extra_forbidden" and (
        path.endswith("." + OPEN_JSON) or path.endswith(f'["{OPEN_JSON}"]')
    )


def decls_of(compiled: CompiledContract) -> dict[str, ir.TypeExpr]:
    """The contract's named types, by name."""
    return {d.name: d.type for d in compiled.ir.types}


def _reopen(value: Any, t: ir.TypeExpr, decls: dict[str, ir.TypeExpr], depth: int = 0) -> Any:
    """A validated state-file value with every record that JSON marks ``"$open": true`` (as
    reports write a simulated open record) restored as an :class:`OpenRecord`, where its type
    is an open record type (or ``any``): elsewhere the key is refused by validation (a closed
    record) or is a map's key like any other."""
    for _ in range(32):
        if isinstance(t, ir.NamedType) and t.name in decls:
            t = decls[t.name]
    if depth > MAX_VALUE_DEPTH or value is None:
        return value
    kind = type(value)
    if isinstance(t, ir.RecordType):
        if kind is not FMap:
            return value
        if any(f.name not in value for f in t.fields if not f.optional and f.default is None):
            # not a value of this record type (in a union, a map holding the key "$open" or a
            # record of another option): reports write every declared field of an open record
            return value
        declared = {f.name: f.type for f in t.fields}
        fields = {
            # an open record's other fields have no declared type: read as `any`
            k: _reopen(v, declared[k], decls, depth + 1)
            if k in declared
            else (_reopen_any(v, depth + 1) if t.open else v)
            for k, v in value.items()
        }
        if t.open and fields.get(OPEN_JSON) is True and OPEN_JSON not in declared:
            del fields[OPEN_JSON]
            return OpenRecord(fields)
        return FMap(fields)
    if isinstance(t, ir.TaggedUnionType):
        if kind is FMap:
            for variant in t.variants:
                if variant.tag == value.get(t.tag_field):
                    return _reopen(value, variant.type, decls, depth)
        return value
    if isinstance(t, ir.UnionType):
        for option in t.options:
            reopened = _reopen(value, option, decls, depth)
            if type(reopened) is not kind or reopened != value:
                return reopened  # (an open record never equals the map it was read as)
        return value
    if isinstance(t, ir.GenericType):
        if t.name == "map" and len(t.args) == 2 and kind is FMap:
            key_type, value_type = t.args  # (keys too: `{"$entries": [[KEY, VALUE], …]}`)
            return FMap(
                (_reopen(k, key_type, decls, depth + 1), _reopen(v, value_type, decls, depth + 1))
                for k, v in value.items()
            )
        if t.name in ("list", "set") and t.args and kind in (tuple, frozenset):
            return kind(_reopen(v, t.args[0], decls, depth + 1) for v in value)
        if t.name == "tuple" and kind is tuple and len(value) == len(t.args):
            return tuple(_reopen(v, a, decls, depth + 1) for v, a in zip(value, t.args))
        return value
    if isinstance(t, ir.NamedType) and t.name in ("any", "list", "set", "map", "tuple"):
        return _reopen_any(value, depth)
    return value


def _reopen_any(value: Any, depth: int) -> Any:
    """:func:`_reopen` for a value of type ``any``: every map marked ``"$open": true``."""
    kind = type(value)
    if depth > MAX_VALUE_DEPTH:
        return value
    if kind is FMap:
        fields = {_reopen_any(k, depth + 1): _reopen_any(v, depth + 1) for k, v in value.items()}
        if fields.get(OPEN_JSON) is True:
            del fields[OPEN_JSON]
            return OpenRecord(fields)
        return FMap(fields)
    if kind is tuple or kind is frozenset:
        return kind(_reopen_any(v, depth + 1) for v in value)
    return value


def _bounded_value(
    value: Any, compiled: CompiledContract, decl: ir.StateVar | None
) -> tuple[Any, str | None]:
    """A bounded unknown from a state file (``{"$unknown": {"min": LO, "max": HI}}``) or from
    Python (a :class:`Bounded`), checked: a number variable, numeric bounds, ``min <= max``."""
    from ..compiler import lib

    if decl is None:
        return None, "unknown state variable"
    prim = primitive_of(compiled.ir, decl.type)
    if prim not in ("int", "float"):
        return None, "only an int or float variable can hold a bounded unknown"
    if type(value) is Bounded:
        lo, hi = value.lo, value.hi
    else:
        inner = value[UNKNOWN_MARK]
        if type(inner) is not dict or set(inner) != {"min", "max"}:
            return None, 'a bounded unknown needs exactly "min" and "max"'
        lo, hi = inner["min"], inner["max"]
    if any(isinstance(b, bool) or not isinstance(b, (int, float)) for b in (lo, hi)):
        return None, f"the bounds must be numbers, got {lo!r} and {hi!r}"
    try:
        return lib.bounded(lo, hi, prim == "int"), None
    except lib.EvalError as exc:
        return None, str(exc)


def primitive_of(contract: ir.Contract, t: ir.TypeExpr) -> str | None:
    """The primitive type (``bool``, ``int``, ``float``, ``str``) a type resolves to through
    type aliases; None for anything else."""
    aliases = {d.name: d.type for d in contract.types}
    for _ in range(len(aliases) + 1):
        if not isinstance(t, ir.NamedType):
            return None
        if t.name in ("bool", "int", "float", "str"):
            return t.name
        if t.name not in aliases:
            return None
        t = aliases[t.name]
    return None


_PLAIN_HINT = "give plain data: str, numbers, bool, None, lists, sets, dicts"

# ------------------------------------------------------------------------------------ fresh values


def fresh_value(
    t: ir.TypeExpr,
    compiled: CompiledContract,
    work: list[Any],
    label: str,
    before: tuple[Any, Any] | None = None,
) -> Any:
    """What a call returns, in simulation: new strings are fresh ids (differing from the texts
    in ``before``, see :class:`Fresh`), the rest is unknown; a record of an open type is an
    :class:`OpenRecord` (it may hold fields it does not declare)."""
    decls = {d.name: d.type for d in compiled.ir.types}
    depth = 0
    while isinstance(t, ir.NamedType) and t.name in decls and depth < 32:
        t = decls[t.name]
        depth += 1
    if isinstance(t, ir.RecordType):
        fields = {
            f.name: fresh_value(f.type, compiled, work, f"{label}.{f.name}", before)
            for f in t.fields
        }
        # the real value of an open record may hold fields it does not declare
        return OpenRecord(fields) if t.open else FMap(fields)
    if (
        isinstance(t, ir.NamedType)
        and t.name == "str"
        and not t.constraints
        or (isinstance(t, ir.NamedType) and t.name == "str")
    ):
        work[-1] += 1
        return Fresh(label, work[-1], before)
    return UNKNOWN
