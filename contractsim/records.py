"""``record``: the classes ``dataclasses.dataclass`` makes, made for less at import time.

The dataclass decorator compiles every method it writes with an ``exec`` of its own:
``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, and for a frozen class ``__setattr__`` and
``__delattr__``. A module of twenty small dataclasses pays for a hundred compilations when it is
imported, which is most of what importing the IR, the checker's types or the compiled contract
cost a cold ``contractsim check``. ``record`` asks the decorator for everything but those methods
(fields, ``__slots__``, ``__match_args__``, ``__dataclass_fields__``), writes the same methods as
the decorator would, and compiles them in one ``exec`` per method name: the first call of an
``__init__`` compiles the ``__init__`` of every class made so far, and so on (or
:func:`compile_pending` does, e.g. at the end of a module; until then ``inspect.signature``
shows the stand-in's ``(*args, **kwargs)``). ``__setattr__`` and ``__delattr__`` of a frozen
class are plain closures (nothing to compile).

Compiling is the larger part of that work (the IR's 64 ``__init__`` methods take 10–20 ms), and
the methods of contractsim's own classes are the same in every process: they are stored, as
Python source, in :mod:`contractsim._record_methods`, which Python's bytecode cache loads like
any module. A method whose source text is stored there takes the stored code object (keyed by
the whole source text: a class that changed gets its new method compiled as before, never a
stale one); ``python -m contractsim.record_store`` rewrites the store from every ``record`` class of
the package (``--check`` says whether it is current; ``tests/test_record_store.py`` does too).

``__dataclass_params__`` records what was asked, as the decorator's does, and the classes mix
with the decorator's in either direction (a frozen dataclass may derive from a frozen record and
the other way round). ``order``, ``unsafe_hash``,
``init=False`` fields and ``InitVar`` are not supported (a ``TypeError`` says so).
"""

from __future__ import annotations

import builtins
import dataclasses
import reprlib
import sys
import threading
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: Any) -> Callable[[Any], Any]:
        """Only type checkers read it (``typing`` has it from Python 3.11 on)."""
        return lambda decorated: decorated


_T = TypeVar("_T")

#: (class, method name, source text, positional defaults, keyword defaults, globals) waiting to
#: be compiled by :func:`compile_pending`; the source's function is named ``?``
_PENDING: list[tuple[type, str, str, tuple[Any, ...], dict[str, Any] | None, dict[str, Any]]] = []
#: the globals of every method (a class with default factories adds them, as ``_f_NAME``)
_GLOBALS: dict[str, Any] = {
    "__builtins__": builtins,
    "_HAS_DEFAULT_FACTORY": dataclasses._HAS_DEFAULT_FACTORY,  # type: ignore[attr-defined]
    "_object_setattr": object.__setattr__,
}
#: every method source made in this process, in order (what ``python -m contractsim.records``
#: stores)
_SOURCES: dict[str, None] = {}
#: the stored code objects by source text (:mod:`contractsim._record_methods`), read on first use
_stored_code: dict[str, types.CodeType] | None = None
#: one compilation at a time: a thread that finds a stand-in while another compiles waits for it
_LOCK = threading.RLock()


def compile_pending(method: str | None = None) -> None:
    """Compile the methods waiting to be compiled (only the ``method`` ones, e.g.
    ``"__init__"``, if given) and install them: the code stored for their source, the others
    compiled in one ``compile``."""
    with _LOCK:
        _compile_pending(method)


def _stored() -> dict[str, types.CodeType]:
    global _stored_code
    if _stored_code is None:
        try:
            from . import _record_methods
        except ImportError:  # pragma: no cover - a checkout without the store compiles all
            _stored_code = {}
        else:
            _stored_code = _record_methods.CODE
    return _stored_code


def _compiled(sources: list[str]) -> list[types.CodeType]:
    """The code objects of ``sources``: the stored ones, the others compiled in one go."""
    stored = _stored()
    missing = [source for source in dict.fromkeys(sources) if source not in stored]
    made: dict[str, types.CodeType] = {}
    if missing:
        text = "\n".join(
            source.replace("def ?(", f"def _fn{i}(", 1) for i, source in enumerate(missing)
        )
        module = compile(text, "<record methods>", "exec", dont_inherit=True)
        codes = {c.co_name: c for c in module.co_consts if isinstance(c, types.CodeType)}
        made = {source: codes[f"_fn{i}"] for i, source in enumerate(missing)}
    return [stored[source] if source in stored else made[source] for source in sources]


def _compile_pending(method: str | None) -> None:
    pending = [entry for entry in _PENDING if method is None or entry[1] == method]
    if not pending:
        return
    _PENDING[:] = [entry for entry in _PENDING if method is not None and entry[1] != method]
    codes = _compiled([entry[2] for entry in pending])
    for (cls, method, _, defaults, kwdefaults, namespace), code in zip(pending, codes):
        qualname = f"{cls.__qualname__}.{method}"
        if sys.version_info >= (3, 11):
            code = code.replace(co_name=method, co_qualname=qualname)
        else:  # pragma: no cover - Python 3.10
            code = code.replace(co_name=method)
        fn: Any = types.FunctionType(code, namespace, method, defaults or None)
        fn.__kwdefaults__ = kwdefaults
        fn.__qualname__ = qualname
        fn.__module__ = cls.__module__
        if method == "__init__":
            fn.__annotations__ = {f.name: f.type for f in dataclasses.fields(cls)} | {
                "return": None
            }
        if method == "__repr__":
            fn = reprlib.recursive_repr()(fn)
        setattr(cls, method, fn)


def _stand_in(method: str) -> Callable[..., Any]:
    def stand_in(self: Any, *args: Any, **kwargs: Any) -> Any:
        compile_pending(method)  # a repr, say, is seldom needed where an __init__ is
        return getattr(type(self), method)(self, *args, **kwargs)

    stand_in.__name__ = method
    return stand_in


_STAND_INS = {
    method: _stand_in(method) for method in ("__init__", "__repr__", "__eq__", "__hash__")
}


def _defer(
    cls: type,
    method: str,
    source: list[str],
    defaults: tuple[Any, ...] = (),
    kwdefaults: dict[str, Any] | None = None,
    namespace: dict[str, Any] = _GLOBALS,
) -> None:
    """Queue ``source`` as ``cls.method`` and install the stand-in that compiles it on first
    call. Under the lock: an entry queued while another thread is between reading and
    rewriting the queue in :func:`_compile_pending` would be dropped, and its stand-in would
    then call itself for ever."""
    text = "\n".join(source)
    with _LOCK:
        _SOURCES[text] = None
        _PENDING.append((cls, method, text, defaults, kwdefaults, namespace))
        setattr(cls, method, _STAND_INS[method])


def _slot_setter(cls: type, name: str) -> Callable[[Any, Any], None] | None:
    """The ``__set__`` of the slot ``name`` of ``cls``: the descriptor ``object.__setattr__``
    finds on every call, found once (calling it directly costs a quarter as much: the IR's
    nodes are made by the thousand). None when the attribute is not a slot. The ``__init__``
    calls it as ``_s_NAME`` from its own globals, so its source stays that of every class with
    the same fields (and is found in the store)."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            slot = klass.__dict__[name]
            if isinstance(slot, types.MemberDescriptorType):
                setter: Callable[[Any, Any], None] = slot.__set__
                return setter
            return None
    return None


def _init_source(
    cls: type, fields: tuple[dataclasses.Field[Any], ...], frozen: bool
) -> tuple[list[str], tuple[Any, ...], dict[str, Any] | None, dict[str, Any]]:
    """The ``__init__``'s source, its positional and keyword defaults, and its globals. A
    default is the function's own (``=_D`` in the source, never evaluated), so the source
    depends only on the fields' names and kinds."""
    positional: list[str] = []
    keyword: list[str] = []
    defaults: list[Any] = []
    kwdefaults: dict[str, Any] = {}
    namespace = _GLOBALS
    body: list[str] = []
    for f in fields:
        if f.default is not dataclasses.MISSING:
            param = f"{f.name}=_D"
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            param = f"{f.name}=_D"
            default = dataclasses._HAS_DEFAULT_FACTORY  # type: ignore[attr-defined]
            if namespace is _GLOBALS:
                namespace = dict(_GLOBALS)
            namespace[f"_f_{f.name}"] = f.default_factory
            body.append(f" if {f.name} is _HAS_DEFAULT_FACTORY: {f.name} = _f_{f.name}()")
        else:
            if positional and "=" in positional[-1] and not f.kw_only:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
            param = f.name
        if f.kw_only:
            keyword.append(param)
            if "=" in param:
                kwdefaults[f.name] = default
        else:
            positional.append(param)
            if "=" in param:
                defaults.append(default)
        if frozen:
            setter = _slot_setter(cls, f.name)
            if setter is None:
                body.append(f" _object_setattr(self, {f.name!r}, {f.name})")
            else:
                if namespace is _GLOBALS:
                    namespace = dict(_GLOBALS)
                namespace[f"_s_{f.name}"] = setter
                body.append(f" _s_{f.name}(self, {f.name})")
        else:
            body.append(f" self.{f.name} = {f.name}")
    if hasattr(cls, "__post_init__"):
        body.append(" self.__post_init__()")
    params = ["self", *positional, *(["*", *keyword] if keyword else [])]
    source = [f"def ?({', '.join(params)}):", *(body or [" pass"])]
    return source, tuple(defaults), kwdefaults or None, namespace


def _signature_doc(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> str:
    """The docstring the decorator writes for a class without one: its name and the signature
    of its ``__init__`` as ``inspect.signature`` shows it (annotations are strings here)."""
    positional: list[str] = []
    keyword: list[str] = []
    for f in fields:
        text = f"{f.name}: {f.type!r}" if isinstance(f.type, str) else f"{f.name}: {f.type}"
        if f.default is not dataclasses.MISSING:
            text += f" = {f.default!r}"
        elif f.default_factory is not dataclasses.MISSING:
            text += " = <factory>"
        (keyword if f.kw_only else positional).append(text)
    params = [*positional, *(["*", *keyword] if keyword else [])]
    return f"{cls.__name__}({', '.join(params)})"


def _frozen_methods(cls: Any, names: frozenset[str]) -> None:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    for fn in (__setattr__, __delattr__):
        fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
        setattr(cls, fn.__name__, fn)


def _get_state(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _set_state(self: Any, state: list[Any]) -> None:
    for f, value in zip(dataclasses.fields(self), state):
        object.__setattr__(self, f.name, value)


@overload
def record(cls: type[_T], /) -> type[_T]: ...


@overload
def record(
    *,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    frozen: bool = False,
    slots: bool = False,
    kw_only: bool = False,
) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field,))
def record(
    cls: type[_T] | None = None,
    /,
    *,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    frozen: bool = False,
    slots: bool = False,
    kw_only: bool = False,
) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """What ``@dataclass(...)`` with the same arguments makes (see the module's docstring)."""

    def make(cls: type[_T]) -> type[_T]:
        own = cls.__dict__
        class_hash = own.get("__hash__", dataclasses.MISSING)
        explicit_hash = not (
            class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in own)
        )
        if frozen and ("__setattr__" in own or "__delattr__" in own):
            raise TypeError(f"cannot overwrite __setattr__/__delattr__ in {cls.__name__}")
        undocumented = not cls.__doc__
        if undocumented:  # else the decorator runs inspect.signature (slow) to write one
            cls.__doc__ = "?"
        # the decorator, asked for a class that is not frozen, refuses frozen dataclass bases:
        # theirs say "not frozen" for the time of the call (the real decorator makes the same
        # check the other way round, which is made here)
        base_params = [
            params
            for base in cls.__mro__[1:]
            if (params := base.__dict__.get("__dataclass_params__")) is not None
        ]
        if frozen and any(not params.frozen for params in base_params):
            raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
        thawed = [params for params in base_params if params.frozen] if frozen else []
        for params in thawed:
            params.frozen = False
        try:
            made: Any = dataclasses.dataclass(
                cls, init=False, repr=False, eq=False, frozen=False, slots=slots, kw_only=kw_only
            )
        finally:
            for params in thawed:
                params.frozen = True
        params = made.__dataclass_params__  # what was asked, as the decorator records it
        params.init, params.repr, params.eq, params.frozen = init, repr, eq, frozen
        for f in made.__dataclass_fields__.values():
            kind = f._field_type
            initvar = kind is dataclasses._FIELD_INITVAR  # type: ignore[attr-defined]
            if initvar or (kind is dataclasses._FIELD and not f.init):  # type: ignore[attr-defined]
                raise TypeError(f"record does not support the field {f.name!r} of {cls.__name__}")
        fields = dataclasses.fields(made)
        if undocumented:
            made.__doc__ = _signature_doc(made, fields) if init else ""
        own = made.__dict__
        result: type[_T] = made
        if init and "__init__" not in own:
            _defer(made, "__init__", *_init_source(made, fields, frozen))
        if repr and "__repr__" not in own:
            shown = ", ".join(f"{f.name}={{self.{f.name}!r}}" for f in fields if f.repr)
            source = ["def ?(self):", f' return self.__class__.__qualname__ + f"({shown})"']
            _defer(made, "__repr__", source)
        if eq and "__eq__" not in own:
            compared = "".join(f"self.{f.name}," for f in fields if f.compare)
            other = "".join(f"other.{f.name}," for f in fields if f.compare)
            source = [
                "def ?(self, other):",
                " if other.__class__ is self.__class__:",
                f"  return ({compared})==({other})",
                " return NotImplemented",
            ]
            _defer(made, "__eq__", source)
        if eq and not explicit_hash:
            if frozen:
                hashed = "".join(
                    f"self.{f.name}," for f in fields if (f.compare if f.hash is None else f.hash)
                )
                _defer(made, "__hash__", ["def ?(self):", f" return hash(({hashed}))"])
            else:
                made.__hash__ = None
        if frozen:
            _frozen_methods(made, frozenset(f.name for f in fields))
            if slots:
                made.__getstate__ = _get_state
                made.__setstate__ = _set_state
        return result

    return make if cls is None else make(cls)
