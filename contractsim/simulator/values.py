"""Run-time semantics of the values given to a simulation: state overrides checked against the
declared types (with the ``$unknown`` mark of state files), and the fresh values a simulated call
returns."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic_core import ValidationError

from ..compiler.compile import CompiledContract
from ..compiler.constants import constant_value
from ..compiler.foreign import contract_value
from ..compiler.problems import ArgProblem, problems_from, value_problem
from ..compiler.values import (
    OPEN_JSON,
    UNKNOWN,
    Bounded,
    FMap,
    Fresh,
    OpenRecord,
    freeze,
    show,
    thaw,
)
from ..diagnostics import ContractError, Diagnostic, suggestion_hint
from ..dsl import ir
from .formats import diagnostic_at, line_of
from .json_maps import JsonMaps, KeyProblem, shape_fits

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
        if type(value) is Bounded:  # (its JSON form is read with the other marks, below)
            bounded, problem = _bounded_value(value, compiled, decl.type)
            if problem is None:
                out[name] = bounded
            else:
                problems.append(
                    diagnostic_at(
                        "E0702",
                        f"`{name}`: {problem}",
                        source,
                        line,
                        hint=_BOUNDED_HINT,
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
        # the JSON forms of simulated values (as reports write them) at any depth
        if unknown_mark and has_marks(value):
            reader = _MarkedValues(compiled)
            validated = reader.read(value, decl.type, name)
            for p in reader.problems:
                problems.append(
                    diagnostic_at(
                        "E0702",
                        p.text(),
                        source,
                        line,
                        hint=_OPEN_HINT if _is_open_mark(p) else p.hint,
                    )
                )
            if not reader.problems:
                out[name] = validated
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
        out[name] = validated
    if problems:
        raise ContractError(problems, {source: text} if text else None)
    return out


MAX_VALUE_DEPTH = 200
"""How deep :class:`_MarkedValues` looks (as deep as a simulated state may nest)."""
_OPEN_HINT = (
    f'"{OPEN_JSON}": true marks a simulated open record (reports write it so); a value of a '
    "closed record type holds exactly its fields: remove the key"
)
_BOUNDED_HINT = (
    'write a bounded unknown as {"$unknown": {"min": 10, "max": 20}} on a number variable'
)
_ANY = ir.NamedType(name="any")


def _is_any(t: ir.TypeExpr) -> bool:
    return isinstance(t, ir.NamedType) and t.name == "any"


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


def _resolved(t: ir.TypeExpr, decls: dict[str, ir.TypeExpr]) -> ir.TypeExpr:
    for _ in range(64):
        if not (isinstance(t, ir.NamedType) and t.name in decls):
            break
        t = decls[t.name]
    return t


def has_marks(value: Any) -> bool:
    """Whether JSON data holds, anywhere, a mark of the JSON forms of simulated values:
    ``"$unknown"``, ``{"$unknown": {"min": LO, "max": HI}}`` or a map key ``"$unknown"``, or
    ``"$open"`` (a simulated open record)."""
    stack = [value]
    while stack:
        v = stack.pop()
        kind = type(v)
        if kind is str:
            if v == UNKNOWN_MARK:
                return True
        elif kind is dict or kind is FMap:  # (keys of `{"$entries": …}` come frozen)
            if UNKNOWN_MARK in v or OPEN_JSON in v:
                return True
            stack.extend(v.values())
            stack.extend(k for k in v if type(k) is not str)
        elif kind is list or kind is tuple:
            stack.extend(v)
    return False


class _MarkedValues:
    """Reads a state file's value that holds the JSON forms reports write for simulated values,
    at any depth, walking its declared type: ``"$unknown"`` is :data:`UNKNOWN` (of any type,
    also as a map key), ``{"$unknown": {"min": LO, "max": HI}}`` a bounded unknown (of a number
    type), a record marked ``"$open": true`` an :class:`OpenRecord` (of an open record type or
    ``any``; a closed record refuses the key). Every part without marks is validated whole by
    its pydantic validator, so its problems read as they do anywhere else."""

    def __init__(self, compiled: CompiledContract) -> None:
        self.compiled = compiled
        self.decls = decls_of(compiled)
        self.problems: list[ArgProblem] = []

    def read(self, value: Any, t: ir.TypeExpr, path: str, depth: int = 0) -> Any:
        """``value`` (JSON data, maps read by :class:`JsonMaps`) as a runtime value of ``t``;
        problems are collected in :attr:`problems`."""
        t = _resolved(t, self.decls)
        if depth > MAX_VALUE_DEPTH or not has_marks(value):
            return self._validated(value, t, path)
        kind = type(value)
        if kind is str:  # the one string with a mark is the mark
            return UNKNOWN
        if isinstance(t, ir.UnionType):
            return self._union(value, t, path, depth)
        is_map = isinstance(t, ir.GenericType) and t.name == "map"
        if kind is dict and not is_map and list(value) == [UNKNOWN_MARK] and not _is_any(t):
            bounded, problem = _bounded_value(value, self.compiled, t)
            if problem is not None:
                self.problems.append(ArgProblem(path, "bounded", problem, value, _BOUNDED_HINT))
            return bounded
        if isinstance(t, ir.TaggedUnionType) and kind is dict:
            for variant in t.variants:
                if variant.tag == value.get(t.tag_field):
                    record = _resolved(variant.type, self.decls)
                    if isinstance(record, ir.RecordType):
                        return self._record(value, record, path, depth, t.tag_field)
        if isinstance(t, ir.RecordType) and kind is dict:
            return self._record(value, t, path, depth)
        if isinstance(t, ir.GenericType) and t.args:
            if is_map and len(t.args) == 2 and kind is dict:
                return self._map(value, t, path, depth)
            if t.name in ("list", "set") and kind is list:
                self._count(value, t, path)
                before = len(self.problems)
                items = [
                    self.read(v, t.args[0], f"{path}.{i}", depth + 1) for i, v in enumerate(value)
                ]
                if t.name == "list":
                    return tuple(items)
                # (a set of values that failed is not built: they may not hash)
                return frozenset(items) if len(self.problems) == before else value
            if t.name == "tuple" and kind is list and len(value) <= len(t.args):
                read = tuple(
                    self.read(v, a, f"{path}.{i}", depth + 1)
                    for i, (v, a) in enumerate(zip(value, t.args))
                )
                # (too short: the items missing, as pydantic names them; not the marks)
                self.problems.extend(
                    ArgProblem(
                        f"{path}.{i}",
                        "missing",
                        "is required but missing",
                        None,
                        f"add `{i}` to the arguments",
                    )
                    for i in range(len(value), len(t.args))
                )
                return read
        if isinstance(t, ir.NamedType) and t.name in ("any", "list", "set", "map", "tuple"):
            return self._any(value, path, depth)
        return self._validated(value, t, path)  # a mark where the type has no place for it

    def _validated(self, value: Any, t: ir.TypeExpr, path: str) -> Any:
        try:
            return self.compiled.validators.adapter_for(t).validate_python(value)
        except ValidationError as exc:
            self.problems.extend(problems_from(exc, path))
            return value

    def _union(self, value: Any, t: ir.UnionType, path: str, depth: int) -> Any:
        """The first option that reads the value without problems; else the problems of the
        option of the value's shape (an object, an array) that came closest, or (none of its
        shape) the union's own message."""
        outer = self.problems
        closest: list[ArgProblem] | None = None
        bounded = type(value) is dict and list(value) == [UNKNOWN_MARK]
        try:
            for option in t.options:
                self.problems = []
                read = self.read(value, option, path, depth)
                if not self.problems:
                    return read
                fits = bounded or shape_fits(value, _resolved(option, self.decls))
                if fits and (closest is None or len(self.problems) < len(closest)):
                    closest = self.problems
        finally:
            self.problems = outer
        if closest is None:
            return self._validated(value, t, path)
        outer.extend(closest)
        return value

    def _record(
        self, value: dict[Any, Any], t: ir.RecordType, path: str, depth: int, tag: str | None = None
    ) -> Any:
        fields: dict[Any, Any] = {}
        if tag is not None:
            fields[tag] = value[tag]
        for f in t.fields:
            where = f"{path}.{f.name}"
            if f.name in value:
                given = value[f.name]
                optional_none = given is None and f.optional
                fields[f.name] = (
                    None if optional_none else self.read(given, f.type, where, depth + 1)
                )
            elif f.default is not None:
                const = constant_value(f.default, self.compiled.ir)
                fields[f.name] = freeze(const.value) if const else None
            elif f.optional:
                fields[f.name] = None
            else:
                self.problems.append(
                    ArgProblem(
                        where,
                        "missing",
                        "is required but missing",
                        None,
                        f"add `{f.name}` to the arguments",
                    )
                )
        declared = {f.name for f in t.fields}
        extra = {k: v for k, v in value.items() if k not in declared and k != tag}
        if not t.open:
            for k, v in extra.items():
                self.problems.append(
                    ArgProblem(
                        f"{path}.{k}",
                        "extra_forbidden",
                        "is not a declared field",
                        v,
                        "remove it, or check the field names",
                    )
                )
            return FMap(fields)
        is_open = extra.get(OPEN_JSON) is True
        if is_open:
            del extra[OPEN_JSON]
        fields.update((k, self._any(v, f"{path}.{k}", depth + 1)) for k, v in extra.items())
        return OpenRecord(fields) if is_open else FMap(fields)

    def _map(self, value: dict[Any, Any], t: ir.GenericType, path: str, depth: int) -> FMap:
        self._count(value, t, path)
        key_type, value_type = t.args
        out: dict[Any, Any] = {}
        for k, v in value.items():
            key = k
            if k == UNKNOWN_MARK:
                key = UNKNOWN
            elif has_marks(k):
                before = len(self.problems)
                read = self.read(thaw(k), key_type, f"{path}.{k}.[key]", depth + 1)
                key = read if len(self.problems) == before else k
            else:
                key = self._validated(k, key_type, f"{path}.{k}.[key]")
            out[key] = self.read(v, value_type, f"{path}.{k}", depth + 1)
        return FMap(out)

    def _count(self, value: list[Any] | dict[Any, Any], t: ir.GenericType, path: str) -> None:
        """The constraints on how many items a list, set or map holds, checked by its
        validator on as many placeholders (the items are read one by one)."""
        if not t.constraints:
            return
        shape = ir.GenericType(
            name="map" if t.name == "map" else "list",
            args=(_ANY, _ANY) if t.name == "map" else (_ANY,),
            constraints=t.constraints,
        )
        placeholders = dict.fromkeys(range(len(value))) if t.name == "map" else [None] * len(value)
        before = len(self.problems)
        self._validated(placeholders, shape, path)
        # the messages show the value given, not the placeholders
        fake, real = f"(got {show(freeze(placeholders))})", f"(got {show(freeze(value))})"
        self.problems[before:] = [
            replace(p, message=p.message.replace(fake, real), value=value)
            for p in self.problems[before:]
        ]

    def _any(self, value: Any, path: str, depth: int) -> Any:
        """A value of type ``any``: JSON data, with marks."""
        kind = type(value)
        if depth > MAX_VALUE_DEPTH or not has_marks(value):
            return self._validated(value, _ANY, path)
        if kind is str:
            return UNKNOWN
        if kind is list:
            return tuple(self._any(v, f"{path}.{i}", depth + 1) for i, v in enumerate(value))
        if list(value) == [UNKNOWN_MARK] and type(value[UNKNOWN_MARK]) is dict:
            bounds = value[UNKNOWN_MARK]
            if set(bounds) == {"min", "max"}:
                # a bounded unknown (a simulated number): an int when both bounds are whole
                whole = all(type(b) is int for b in bounds.values())
                number = ir.NamedType(name="int" if whole else "float")
                bounded, problem = _bounded_value(value, self.compiled, number)
                if problem is None:
                    return bounded
                self.problems.append(ArgProblem(path, "bounded", problem, value, _BOUNDED_HINT))
                return value
        # (else a map with an unknown key)
        if any(type(k) is not str for k in value):
            return self._validated(value, _ANY, path)
        fields = {  # (the key "$unknown" is unknown, as in a map type)
            UNKNOWN if k == UNKNOWN_MARK else k: self._any(v, f"{path}.{k}", depth + 1)
            for k, v in value.items()
        }
        if fields.get(OPEN_JSON) is True:
            del fields[OPEN_JSON]
            return OpenRecord(fields)
        return FMap(fields)


def _bounded_value(
    value: Any, compiled: CompiledContract, t: ir.TypeExpr
) -> tuple[Any, str | None]:
    """A bounded unknown from a state file (``{"$unknown": {"min": LO, "max": HI}}``) or from
    Python (a :class:`Bounded`), checked: a number type ``t``, numeric bounds, ``min <= max``,
    each bound within the type's constraints."""
    from ..compiler import lib

    prim = primitive_of(compiled.ir, t)
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
        result = lib.bounded(lo, hi, prim == "int")
    except lib.EvalError as exc:
        return None, str(exc)
    # each bound must fit the type's constraints (`int min 0` holds no `unknown in [-9, -5]`)
    validate = compiled.validators.adapter_for(t).validate_python
    for bound in (result.lo, result.hi) if type(result) is Bounded else (result,):
        problem = value_problem(validate, bound)
        if problem is not None:
            return None, f"the bound {bound!r} does not fit the type: {problem}"
    return result, None


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
