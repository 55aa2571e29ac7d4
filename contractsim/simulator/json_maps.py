"""Map keys read from JSON: JSON object keys are always strings, contract map keys need not be.

Where JSON reaches a map of the contract (state files, a plan's ``state`` and ``args``, trace
files, the guard's ``state=``), the keys are read by the map's key type:

* a key type that does not take strings (``int``, ``float``, ``bool``, an enum of numbers …)
  reads a key that spells a JSON number, ``true``/``false`` or ``null`` as that value:
  ``{"0": "a"}`` is ``{0: "a"}`` for ``map[int, str]``;
* a key type that takes strings only keeps the key as it is;
* a key type that takes both the string and what it spells (``int | str`` with the key
  ``"12446"``, ``any``) is ambiguous: that is an error, never a silent choice. Write such a map
  in the explicit form ``{"$entries": [[KEY, VALUE], ...]}``, where every key is a JSON value of
  its own type (``[[12446, …], ["12446", …]]``); the form works for every map, also for keys
  that are lists or records.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic_core import ValidationError

from ..compiler.compile import CompiledContract
from ..compiler.values import freeze, show
from ..dsl import ir
from ..dsl.types import type_label

ENTRIES_MARK = "$entries"
"""``{"$entries": [[key, value], ...]}``: a map whose keys JSON cannot write as object keys."""

ENTRIES_HINT = (
    'write the map as {"$entries": [[KEY, VALUE], ...]} with each key as a JSON value of its '
    "own type (a number, a string, …)"
)

_NO_READING = object()


class KeyProblem(Exception):
    """A map in JSON data that cannot be read without guessing."""

    def __init__(self, path: str, message: str, hint: str = ENTRIES_HINT) -> None:
        super().__init__(f"`{path}`: {message}")
        self.path, self.message, self.hint = path, message, hint


class JsonMaps:
    """Reads the maps inside JSON data by the contract's types (one reader per contract).

    ``python_keys``: the data comes from Python, where a string key is a string: an ambiguous
    key (``"12446"`` for ``int | str``) stays a string instead of being an error."""

    def __init__(self, compiled: CompiledContract, python_keys: bool = False) -> None:
        self.compiled = compiled
        self.python_keys = python_keys
        self.decls = {d.name: d.type for d in compiled.ir.types}
        # by id: hashing a frozen IR type walks all of it; the IR lives as long as `compiled`
        self._needs: dict[int, bool] = {}
        self._params: dict[str, dict[str, ir.TypeExpr]] = {}
        """Per tool: the parameters whose values can hold a map."""

    # ---- entry points
    def read(self, value: Any, t: ir.TypeExpr, path: str) -> Any:
        """``value`` (JSON data) with every map of type ``t`` keyed by the contract's key types;
        raises :class:`KeyProblem` where a key's type would be a guess."""
        t = self._resolve(t)
        if not self._has_map(t):
            return value
        if isinstance(t, ir.GenericType):
            if t.name == "map" and len(t.args) == 2:
                return self._map(value, t.args[0], t.args[1], path)
            if isinstance(value, list):
                if t.name in ("list", "set") and t.args:
                    return [self.read(v, t.args[0], f"{path}[{i}]") for i, v in enumerate(value)]
                return [
                    self.read(v, t.args[i], f"{path}[{i}]") if i < len(t.args) else v
                    for i, v in enumerate(value)
                ]
            return value
        if isinstance(t, ir.RecordType):
            return self._record(value, t, path)
        if isinstance(t, ir.TaggedUnionType):
            if isinstance(value, Mapping):
                tag = value.get(t.tag_field)
                for variant in t.variants:
                    if variant.tag == tag:
                        return self.read(value, variant.type, path)
            return value
        if isinstance(t, ir.UnionType):
            return self._union(value, t, path)
        return value

    def read_args(self, tool: str, args: Mapping[str, Any], path: str = "args") -> dict[str, Any]:
        """A call's JSON arguments with their maps read by the tool's parameter types."""
        types = self._params.get(tool)
        if types is None:
            ctool = self.compiled.tools.get(tool)
            params = () if ctool is None else ctool.ir.params
            types = self._params[tool] = {
                p.name: p.accepted_type for p in params if self._has_map(p.accepted_type)
            }
        if not types:
            return dict(args)
        return {
            name: self.read(v, types[name], f"{path}.{name}") if name in types else v
            for name, v in args.items()
        }

    def read_result(self, tool: str, value: Any, path: str = "result") -> Any:
        """A call's JSON result with its maps read by the tool's ``-> TYPE``."""
        ctool = self.compiled.tools.get(tool)
        if ctool is None or ctool.ir.returns is None:
            return value
        return self.read(value, ctool.ir.returns, path)

    # ---- types
    def _resolve(self, t: ir.TypeExpr) -> ir.TypeExpr:
        for _ in range(64):
            if isinstance(t, ir.NamedType) and t.name in self.decls:
                t = self.decls[t.name]
            else:
                break
        return t

    def _has_map(self, t: ir.TypeExpr, seen: frozenset[str] = frozenset()) -> bool:
        """Whether a value of type ``t`` can hold a map (the only place keys need reading)."""
        known = self._needs.get(id(t))
        if known is not None:
            return known
        if isinstance(t, ir.NamedType):
            if t.name not in self.decls or t.name in seen:
                return False
            found = self._has_map(self.decls[t.name], seen | {t.name})
        elif isinstance(t, ir.GenericType):
            found = t.name == "map" or any(self._has_map(a, seen) for a in t.args)
        elif isinstance(t, ir.RecordType):
            found = any(self._has_map(f.type, seen) for f in t.fields)
        elif isinstance(t, ir.TaggedUnionType):
            found = any(self._has_map(v.type, seen) for v in t.variants)
        elif isinstance(t, ir.UnionType):
            found = any(self._has_map(o, seen) for o in t.options)
        else:
            found = False
        if not seen:
            self._needs[id(t)] = found
        return found

    def _accepts(self, t: ir.TypeExpr, value: Any) -> bool:
        try:
            self.compiled.validators.adapter_for(t).validate_python(value)
        except (ValidationError, TypeError, ValueError):
            return False
        return True

    # ---- values
    def _record(self, value: Any, t: ir.RecordType, path: str) -> Any:
        if not isinstance(value, Mapping):
            return value
        fields = {f.name: f.type for f in t.fields}
        return {
            k: self.read(v, fields[k], f"{path}.{k}") if k in fields else v
            for k, v in value.items()
        }

    def _union(self, value: Any, t: ir.UnionType, path: str) -> Any:
        options = [
            o
            for o in (self._resolve(o) for o in t.options)
            if self._has_map(o) and shape_fits(value, o)
        ]
        if len(options) == 1:
            return self.read(value, options[0], path)
        for option in options:
            try:
                read = self.read(value, option, path)
            except KeyProblem:
                continue
            if self._accepts(option, read):
                return read
        return value

    def _map(self, value: Any, key_type: ir.TypeExpr, value_type: ir.TypeExpr, path: str) -> Any:
        if isinstance(value, Mapping) and ENTRIES_MARK in value:
            return self._entries(value, key_type, value_type, path)
        if not isinstance(value, Mapping):
            return value
        plain = self._resolve(key_type)
        plain_keys = isinstance(plain, ir.NamedType) and plain.name == "str"
        if plain_keys and not self._has_map(self._resolve(value_type)):
            return value
        out: dict[Any, Any] = {}
        spelled: dict[Any, str] = {}
        for k, v in value.items():
            key = k if plain_keys or not isinstance(k, str) else self._key(k, key_type, path)
            if key in out:
                raise KeyProblem(
                    path,
                    f'the keys "{spelled[key]}" and "{k}" are the same {type_label(key_type)} '
                    f"{show(key)}",
                    "keep one of them",
                )
            spelled[key] = str(k)
            out[key] = self.read(v, value_type, f"{path}.{k}")
        return out

    def _entries(
        self, value: Mapping[str, Any], key_type: ir.TypeExpr, value_type: ir.TypeExpr, path: str
    ) -> dict[Any, Any]:
        pairs = value[ENTRIES_MARK]
        where = f"{path}.{ENTRIES_MARK}"
        if len(value) != 1 or not isinstance(pairs, list):
            raise KeyProblem(
                path if len(value) != 1 else where,
                f"an object with `{ENTRIES_MARK}` holds only a list of [key, value] pairs",
                '{"$entries": [[1, "a"], [2, "b"]]}',
            )
        out: dict[Any, Any] = {}
        for i, pair in enumerate(pairs):
            if not isinstance(pair, list) or len(pair) != 2:
                raise KeyProblem(
                    f"{where}[{i}]",
                    f"must be a [key, value] pair (got {show(freeze(pair))})",
                    '{"$entries": [[1, "a"], [2, "b"]]}',
                )
            key = freeze(self.read(pair[0], key_type, f"{where}[{i}][0]"))
            try:
                duplicate = key in out
            except TypeError:  # pragma: no cover - frozen JSON data is hashable
                duplicate = False
            if duplicate:
                raise KeyProblem(
                    f"{where}[{i}]", f"the key {show(key)} appears twice", "keep one of them"
                )
            out[key] = self.read(pair[1], value_type, f"{path}[{show(key)}]")
        return out

    def _key(self, text: str, key_type: ir.TypeExpr, path: str) -> Any:
        """A JSON object key as a key of ``key_type``: the value it spells when the type takes
        that and not the text, the text otherwise; both: :class:`KeyProblem`."""
        reading = _json_scalar(text)
        if reading is _NO_READING:
            return text
        plain = self._resolve(key_type)
        if isinstance(plain, ir.NamedType) and plain.name == "int" and not plain.constraints:
            return reading if type(reading) is int else text
        takes_reading = self._accepts(key_type, reading)
        if not takes_reading:
            return text
        if self._accepts(key_type, text):
            if self.python_keys:
                return text
            raise KeyProblem(
                f"{path}.{text}",
                f'the key "{text}" could be the string "{text}" or the '
                f"{_kind(reading)} {json.dumps(reading)}: the key type {type_label(key_type)} "
                "takes both, and JSON writes every object key as a string",
                ENTRIES_HINT,
            )
        return reading


def entries_for_keys(value: Any) -> tuple[Any, bool]:
    """Python data with every dict that has a non-string key written in the explicit
    ``$entries`` form (so that JSON keeps its keys' types), and whether there was one."""
    if not _has_other_keys(value):
        return value, False
    return _entries_for_keys(value)


def _has_other_keys(value: Any) -> bool:
    if isinstance(value, Mapping):
        return any(
            not isinstance(k, str) or (isinstance(v, (Mapping, list, tuple)) and _has_other_keys(v))
            for k, v in value.items()
        )
    if isinstance(value, (list, tuple)):
        return any(isinstance(v, (Mapping, list, tuple)) and _has_other_keys(v) for v in value)
    return False


def _entries_for_keys(value: Any) -> tuple[Any, bool]:
    if isinstance(value, Mapping):
        items = [(k, _entries_for_keys(v)) for k, v in value.items()]
        changed = any(c for _, (_, c) in items)
        if any(not isinstance(k, str) for k, _ in items):
            return {ENTRIES_MARK: [[k, v] for k, (v, _) in items]}, True
        return ({k: v for k, (v, _) in items}, True) if changed else (value, False)
    if isinstance(value, (list, tuple)):
        read = [_entries_for_keys(v) for v in value]
        if any(c for _, c in read):
            return [v for v, _ in read], True
    return value, False


def entries_as_dicts(value: Any) -> Any:
    """JSON data with every ``{"$entries": [[k, v], ...]}`` left as a dict (keys frozen)."""
    if isinstance(value, Mapping):
        pairs = value.get(ENTRIES_MARK)
        if len(value) == 1 and isinstance(pairs, list):
            if all(isinstance(p, list) and len(p) == 2 for p in pairs):
                return {freeze(k): entries_as_dicts(v) for k, v in pairs}
        return {k: entries_as_dicts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [entries_as_dicts(v) for v in value]
    return value


def _json_scalar(text: str) -> Any:
    """What a key spells when read as a JSON number, ``true``, ``false`` or ``null``."""
    if not text or text != text.strip() or text[0] not in "-0123456789tfn":
        return _NO_READING
    try:
        value = json.loads(text)
    except ValueError:  # not JSON, or an integer too long to convert
        return _NO_READING
    if isinstance(value, (str, list, dict)):
        return _NO_READING
    if isinstance(value, float) and not math.isfinite(value):
        return _NO_READING
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "integer" if isinstance(value, int) else "number"


def shape_fits(value: Any, t: ir.TypeExpr) -> bool:
    """Whether JSON ``value`` has the shape of a value of ``t`` (object or list)."""
    if isinstance(value, Mapping):
        return isinstance(t, (ir.RecordType, ir.TaggedUnionType)) or (
            isinstance(t, ir.GenericType) and t.name == "map"
        )
    if isinstance(value, list):
        return isinstance(t, ir.GenericType) and t.name != "map"
    return False
