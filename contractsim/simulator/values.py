"""Run-time semantics of the values given to a simulation: state overrides checked against the
declared types (with the ``$unknown`` mark of state files), and the fresh values a simulated call
returns."""

from __future__ import annotations

from typing import Any

from pydantic_core import ValidationError

from ..compiler.compile import CompiledContract
from ..compiler.foreign import contract_value
from ..compiler.problems import problems_from
from ..compiler.values import UNKNOWN, Bounded, FMap, Fresh, OpenRecord
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
                        "E0702", f"`{p.path}`: {p.message}", source, line, hint=hint or p.hint
                    )
                )
            continue
        out[name] = validated
    if problems:
        raise ContractError(problems, {source: text} if text else None)
    return out


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
