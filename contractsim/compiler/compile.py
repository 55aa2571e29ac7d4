"""IR → runtime artefacts, compiled once per contract: state layout and initial state, argument
validators, generated predicate/condition/effect functions, and transition tables."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from ..diagnostics import Span
from ..dsl import ir
from ..dsl.walk import stmt_exprs, walk_expr, walk_stmts
from ..records import record
from . import comprehend, lib
from .codegen import CodeGen, Flavour, Source
from .consteval import CONSTANT_SECONDS as CONSTANT_SECONDS
from .consteval import ConstantError as ConstantError
from .consteval import evaluate_constant as evaluate_constant
from .core_schemas import PlainArgsModel, plain_args_model
from .empty import empty_of, is_float_type
from .interp import Env, Interpreter, empty_like, quantify
from .lib import sum_values
from .typetest import type_test
from .values import PLAN_TEXTS, UNKNOWN, Bounded, FMap, Fresh

if TYPE_CHECKING:
    from typing import TypeAlias

    from pydantic import BaseModel

    from .validators import ValidatorBuilder

    # a tool's argument model: ``model_validate(args)``, ``model_fields``; read the validated
    # values with ``core_schemas.model_values``
    ArgsModel: TypeAlias = type[BaseModel] | type[PlainArgsModel]

Fn = Callable[..., Any]
FLAVOURS: tuple[Flavour, ...] = ("fast", "safe")


@record
class Compiled:
    """One generated function in both flavours, and the contract place it came from."""

    fast: Fn
    safe: Fn
    span: Span
    ir: Any = None  # the expression or statements, for the reference interpreter
    makes_unknowns: bool = False  # statements that make a fresh value or a bounded unknown


@record
class TemplateFn:
    template: ir.Template
    values: Compiled | None  # returns the tuple of hole values

    def render(self, values: tuple[Any, ...]) -> str:
        out: list[str] = []
        it = iter(values)
        for part in self.template.parts:
            if part.expr is None:
                out.append(part.text or "")
            else:
                out.append(render_value(next(it, UNKNOWN)))
        return "".join(out)


def render_value(value: Any) -> str:
    from .values import show

    if isinstance(value, str):
        return value if len(value) <= 200 else value[:199] + "…"
    return show(value)


@record
class CCondition:
    ir: ir.Condition
    test: Compiled
    message: TemplateFn | None
    hint: TemplateFn | None


@record
class COutcome:
    ir: ir.Outcome
    when: Compiled | None
    body: Compiled | None
    # ``observed when``: evaluated with the arguments plus ``error`` (the real failure text)
    observed: Compiled | None
    message: TemplateFn | None
    hint: TemplateFn | None

    @property
    def name(self) -> str:
        return self.ir.name

    @property
    def kind(self) -> str:
        return self.ir.outcome


@record
class CTransition:
    ir: ir.FlowTransition
    when: Compiled | None


@record
class CFlow:
    initial: str
    steps: dict[str, Compiled]  # on-enter bodies
    outgoing: dict[str, list[CTransition]]


class _Validators:
    """A contract's :class:`~.validators.ValidatorBuilder`, made on first use: importing it
    imports pydantic's model machinery, which a command that validates no arguments (``check``,
    exports, a plan of known calls only) need not pay for."""

    __slots__ = ("contract", "_builder")

    def __init__(self, contract: ir.Contract) -> None:
        self.contract = contract
        self._builder: ValidatorBuilder | None = None

    def get(self) -> ValidatorBuilder:
        if self._builder is None:
            from .validators import ValidatorBuilder

            self._builder = ValidatorBuilder(self.contract)
        return self._builder


@record
class CTool:
    ir: ir.Tool
    index: int
    requires: list[CCondition]
    shoulds: list[CCondition]
    ensures: list[CCondition]
    effects: Compiled | None
    outcomes: dict[str, COutcome]
    flow: CFlow
    cost: Compiled | None
    # builds the argument models on first use (pydantic's model machinery costs a process more
    # than compiling a contract: a command that never validates arguments never pays for it)
    validators: _Validators
    machines: list[str] = field(default_factory=list)
    fast_pre: Fn | None = None  # every hard precondition at once, on a known state
    params: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return self.ir.name

    @functools.cached_property
    def args_model(self) -> ArgsModel:
        """The model of the arguments the tool accepts (unknown names forbidden): pydantic-core
        alone when every parameter is of a plain type (:mod:`.core_schemas`), else pydantic."""
        return self._model(declared=False)

    @functools.cached_property
    def declared_model(self) -> ArgsModel | None:
        """The model of the declared types when some parameter ``accepts`` more
        (OFF_SPEC_ARGUMENT), else None."""
        if not any(p.accepts is not None for p in self.ir.params):
            return None
        return self._model(declared=True)

    def _model(self, declared: bool) -> ArgsModel:
        plain = plain_args_model(self.ir, self.validators.contract, declared)
        if plain is not None:
            return plain
        return self.validators.get().args_model(self.ir, declared=declared)


@record
class CMachineTransition:
    ir: ir.MachineTransition
    guard: Compiled | None


@record
class CMachine:
    ir: ir.Machine
    slot: int
    initial: str
    by_tool: dict[str, dict[str, list[CMachineTransition]]]  # tool → source state → transitions
    tools: frozenset[str]

    @property
    def name(self) -> str:
        return self.ir.name


@record
class CompiledContract:
    """Everything the simulator and the guard need, built once."""

    ir: ir.Contract
    slots: dict[str, int]
    state_names: list[str]
    fresh_slot: int
    consts: dict[str, Any]
    defaults: dict[tuple[str, str], Any]  # record field defaults by (type, field)
    initial: tuple[Any, ...]
    tools: dict[str, CTool]
    machines: dict[str, CMachine]
    goals: dict[str, Compiled]
    warn_templates: dict[str, TemplateFn]
    lazy_validators: _Validators
    python_source: str
    source_map: dict[int, Span]
    interpreter: Interpreter
    # the generated code, compiled chunk by chunk when first called (``compile_all`` compiles
    # it all at once)
    generated: _Builder

    @property
    def validators(self) -> ValidatorBuilder:
        """The pydantic validators of the contract's types, built on first use."""
        return self.lazy_validators.get()


class _Ctx:
    """The ``C`` argument of generated functions: time, and what effects emit."""

    __slots__ = ("today", "now", "havoc", "warnings", "reports", "may_fail")

    def __init__(self, today: str, now: str) -> None:
        self.today = today
        self.now = now
        self.havoc = False
        self.warnings: list[tuple[str, str, tuple[Any, ...]]] = []
        self.reports: dict[str, Any] = {}
        # `fail` statements under an unknown condition: (code, template key, hole count, the
        # working state there) — each is a branch where the call may fail
        self.may_fail: list[tuple[str, str, int, tuple[Any, ...]]] = []

    def possible_failure(self, code: str, key: str, holes: int, state: list[Any]) -> None:
        self.may_fail.append((code, key, holes, tuple(state)))

    def warn(self, code: str, key: str, values: tuple[Any, ...]) -> None:
        self.warnings.append((code, key, values))

    def report(self, name: str, value: Any) -> None:
        self.reports[name] = value


def make_context(today: str, now: str) -> _Ctx:
    return _Ctx(today, now)


def _fresh_maker(texts: frozenset[str], state_vars: int) -> Callable[..., Fresh]:
    """``fresh(label)`` in generated code: a new value that differs from the contract's
    ``texts`` and from the texts in the state and the arguments (see :class:`Fresh`)."""

    def fresh(state: list[Any], args: dict[str, Any], label: Any) -> Fresh:
        n = state[-1] + 1
        state[-1] = n
        made_before = (texts, tuple(state[:state_vars]), tuple(args.values()), PLAN_TEXTS.get())
        return Fresh(str(label), n, (made_before, ()))

    return fresh


def _truth(value: Any) -> bool:
    if value is True or value is False:
        return value
    return lib.truth(value)


def _fast_iter(coll: Any) -> Any:
    return lib.iterate(coll)


def _fast_sum(values: Any) -> Any:
    return sum_values(values)


def _empty_like(value: Any) -> Any:
    return UNKNOWN if value is UNKNOWN else empty_like(value)


def _safe_quant(op: str, coll: Any, body: Fn) -> Any:
    return quantify(op, coll, body)


def _first(values: Any) -> Any:
    """The first value a generator yields, or null."""
    return next(values, None)


def runtime_env(
    consts: dict[str, Any],
    defaults: dict[tuple[str, str], Any],
    flavour: Flavour,
    texts: frozenset[str] = frozenset(),
    state_vars: int = 0,
) -> dict[str, Any]:
    """The only names generated code can reach. No builtins."""
    safe = flavour == "safe"
    env: dict[str, Any] = {
        "__builtins__": {},
        "U": UNKNOWN,
        "FMap": FMap,
        "frozenset": frozenset,
        "_all": all,
        "_any": any,
        "_sum": sum,
        "K_float": float,
        "H_EMPTY": frozenset(),
        "H_attr": lib.attr,
        "H_index": lib.index,
        "H_set": lib.coll_set,
        "H_iter": _fast_iter,
        "H_sum": _fast_sum,
        "H_truth": _truth,
        "H_neg": lib.neg,
        "H_plus": lib.plus,
        "H_times": lib.times,
        "H_arith": lib.safe_arith if safe else lib.arith,
        "H_compare": lib.safe_compare if safe else lib.compare,
        "H_contains": lib.safe_contains,
        "H_unobserved": lib.unobserved,
        "H_not": lib.safe_not,
        "H_and": lib.safe_and,
        "H_or": lib.safe_or,
        "H_quant": _safe_quant,
        "H_fresh": _fresh_maker(texts, state_vars),
        "H_empty_like": _empty_like,
        # comprehensions, first/last, filtered quantifiers, `a if c else b` (comprehend.py)
        "H_items": comprehend.items,
        "H_fast_items": comprehend.fast_items,
        "H_quant_where": comprehend.quantify,
        "H_comp": comprehend.comprehend,
        "H_build": comprehend.build,
        "H_choose": comprehend.choose,
        "H_first": _first,
        "H_Fail": lib.ContractFail,
        "H_istype": type_test,
        "H_bounded": lib.bounded,
    }
    for name, fn in (lib.SAFE_FUNCS if safe else lib.BUILTIN_FUNCS).items():
        env[f"F_{name}"] = fn
    for name, fn in lib.METHODS.items():
        env[f"H_method_{name}"] = fn
    for name, value in consts.items():
        env[f"K_{name}"] = value
    env["D"] = defaults
    return env


class _Builder:
    def __init__(self, contract: ir.Contract, source_text: str) -> None:
        self.c = contract
        self.slots = {v.name: i for i, v in enumerate(contract.state)}
        for m in contract.machines:
            self.slots[f"machine:{m.name}"] = len(self.slots)
        self.fresh_slot = len(self.slots)
        self.interpreter = Interpreter(contract)
        self.consts = self._consts()
        self.defaults = self._defaults()
        self.gen = {flavour: CodeGen(contract, self.slots, flavour) for flavour in FLAVOURS}
        self.src = {flavour: Source() for flavour in FLAVOURS}
        # the generated code is compiled in chunks, each when one of its functions is first
        # called: the predicates, each tool's functions, the rest (machines, goals); a chunk is
        # a range of lines, the same in both flavours' sources except for the fast-only lines
        self.chunks: dict[Flavour, list[tuple[int, int]]] = {flavour: [] for flavour in FLAVOURS}
        self.chunk = 0  # the chunk whose functions are being generated
        self.modules: dict[Flavour, dict[str, Any]] = {}  # a namespace per flavour
        self.compiled_chunks: set[tuple[Flavour, int]] = set()
        self.roots: tuple[Any, ...] = ()
        self.lock = threading.RLock()
        self._n = 0
        for flavour in FLAVOURS:
            for pred in contract.predicates:
                self.gen[flavour].predicate_function(self.src[flavour], pred)
            for function in contract.functions:
                self.gen[flavour].predicate_function(self.src[flavour], function)
        self.end_chunk()

    def end_chunk(self) -> None:
        """Close the chunk of the functions generated since the last one."""
        for flavour in FLAVOURS:
            chunks = self.chunks[flavour]
            start = chunks[-1][1] if chunks else 0
            chunks.append((start, len(self.src[flavour].lines)))
        self.chunk = len(self.chunks["fast"])

    def _consts(self) -> dict[str, Any]:
        env = Env(self.c, state={})
        values: dict[str, Any] = {}
        for c in self.c.consts:
            env.consts = values
            values[c.name] = self.interpreter.eval(c.value, env)
        env.consts = values
        return values

    def _defaults(self) -> dict[tuple[str, str], Any]:
        """Record field defaults by (type, field): a table of their own, so no constant's or
        type's name can collide with them."""
        env = Env(self.c, state={}, consts=self.consts)
        return {
            (t.name, f.name): self.interpreter.eval(f.default, env)
            for t in self.c.types
            if isinstance(t.type, ir.RecordType)
            for f in t.type.fields
            if f.default is not None
        }

    def lazy(self, name: str, flavour: Flavour) -> _Lazy:
        """The placeholder of a function of the chunk being generated."""
        return _Lazy(self, name, flavour, self.chunk)

    def name(self, base: str) -> str:
        self._n += 1
        return f"{base}_{self._n}"

    def expr_fn(self, e: ir.Expr, params: tuple[ir.Param, ...]) -> Compiled:
        name = self.name("expr")
        for flavour in FLAVOURS:
            self.gen[flavour].expr_function(self.src[flavour], name, e, params, e.span)
        return Compiled(
            fast=self.lazy(name, "fast"), safe=self.lazy(name, "safe"), span=e.span, ir=e
        )

    def effect_fn(
        self, body: tuple[ir.Stmt, ...], params: tuple[ir.Param, ...], span: Span
    ) -> Compiled | None:
        if not body:
            return None
        name = self.name("effect")
        for flavour in FLAVOURS:
            self.gen[flavour].effect_function(self.src[flavour], name, body, params, span)
        # a fresh value's order and its joins with text are unknown, and so is most of what a
        # bounded unknown takes part in: only the three-valued flavour can say so, so a body
        # that makes one runs it even on a known state
        makes = _makes_fresh_values(body)
        fast: Flavour = "safe" if makes else "fast"
        return Compiled(
            fast=self.lazy(name, fast),
            safe=self.lazy(name, "safe"),
            span=span,
            ir=body,
            makes_unknowns=makes,
        )

    def template_fn(self, t: ir.Template | None, params: tuple[ir.Param, ...]) -> TemplateFn | None:
        if t is None:
            return None
        holes = [p.expr for p in t.parts if p.expr is not None]
        if not holes:
            return TemplateFn(t, None)
        name = self.name("template")
        for flavour in FLAVOURS:
            self.gen[flavour].tuple_function(self.src[flavour], name, holes, params, t.span)
        return TemplateFn(
            t, Compiled(fast=self.lazy(name, "fast"), safe=self.lazy(name, "safe"), span=t.span)
        )

    def condition(self, cond: ir.Condition, params: tuple[ir.Param, ...]) -> CCondition:
        return CCondition(
            ir=cond,
            test=self.expr_fn(cond.cond, params),
            message=self.template_fn(cond.message, params),
            hint=self.template_fn(cond.hint, params),
        )

    def fast_pre(self, tool: ir.Tool) -> str | None:
        requires = [c.cond for c in tool.conditions if c.strength == "require"]
        if not requires:
            return None
        conj = requires[0]
        for nxt in requires[1:]:
            conj = ir.Binary(op="and", left=conj, right=nxt, span=nxt.span)
        name = self.name("pre")
        self.gen["fast"].expr_function(self.src["fast"], name, conj, tool.params, tool.span)
        return name

    def tool(self, tool: ir.Tool, index: int, validators: _Validators) -> CTool:
        params = tool.params
        conds = {"require": [], "should": [], "ensure": []}  # type: dict[str, list[CCondition]]
        for cond in tool.conditions:
            conds[cond.strength].append(self.condition(cond, params))
        outcomes: dict[str, COutcome] = {}
        declared = tool.outcomes or (ir.Outcome(name="ok", outcome="success", span=tool.span),)
        for out in declared:
            outcomes[out.name] = COutcome(
                ir=out,
                when=None if out.when is None else self.expr_fn(out.when, params),
                body=self.effect_fn(out.body, params, out.span),
                observed=None
                if out.observed is None
                else self.expr_fn(out.observed, _with_observed_error(params, out.observed.span)),
                message=self.template_fn(out.message, params),
                hint=self.template_fn(out.hint, params),
            )
        flow = self.flow(tool, declared, params, outcomes)
        pre_name = self.fast_pre(tool)
        ctool = CTool(
            ir=tool,
            index=index,
            requires=conds["require"],
            shoulds=conds["should"],
            ensures=conds["ensure"],
            effects=self.effect_fn(tool.effects, params, tool.span),
            outcomes=outcomes,
            flow=flow,
            cost=None if tool.cost is None else self.expr_fn(tool.cost, params),
            params=frozenset(p.name for p in params),
            validators=validators,
        )
        if pre_name is not None:
            ctool.fast_pre = self.lazy(pre_name, "fast")
        return ctool

    def flow(
        self,
        tool: ir.Tool,
        outcomes: tuple[ir.Outcome, ...],
        params: tuple[ir.Param, ...],
        compiled: dict[str, COutcome],
    ) -> CFlow:
        if tool.flow is not None:
            assert tool.flow.initial is not None
            steps = {}
            for step in tool.flow.steps:
                body = self.effect_fn(step.body, params, step.span)
                if body is not None:
                    steps[step.name] = body
            outgoing: dict[str, list[CTransition]] = {}
            for t in tool.flow.transitions:
                outgoing.setdefault(t.source, []).append(
                    CTransition(t, None if t.when is None else self.expr_fn(t.when, params))
                )
            return CFlow(tool.flow.initial, steps, outgoing)

        # no flow: an implicit one-step flow whose transitions are the outcomes, in order — except
        # that an outcome recognised only in real calls (`observed when`, no `on`/`when`) is the
        # default in simulation only when no other outcome is
        def recognised_only(o: ir.Outcome) -> bool:
            return o.observed is not None and o.event is None and o.when is None

        outcomes = tuple(sorted(outcomes, key=recognised_only))
        transitions = [
            CTransition(
                ir.FlowTransition(
                    source="call",
                    target=o.name,
                    to_outcome=True,
                    event=o.event,
                    when=o.when,
                    span=o.span,
                ),
                compiled[o.name].when,
            )
            for o in outcomes
        ]
        return CFlow("call", {}, {"call": transitions})

    def machine(self, m: ir.Machine) -> CMachine:
        by_tool: dict[str, dict[str, list[CMachineTransition]]] = {}
        tools = {t.name: t for t in self.c.tools}
        for t in m.transitions:
            params = tools[t.tool].params if t.tool in tools else ()
            guard = None if t.when is None else self.expr_fn(t.when, params)
            by_tool.setdefault(t.tool, {}).setdefault(t.source, []).append(
                CMachineTransition(t, guard)
            )
        return CMachine(
            ir=m,
            slot=self.slots[f"machine:{m.name}"],
            initial=m.initial[0].name,
            by_tool=by_tool,
            tools=frozenset(by_tool),
        )

    def finish(self, roots: tuple[Any, ...]) -> None:
        """Close the last chunk. ``roots`` (the compiled tools, machines and goals) hold the
        placeholders that :meth:`function` replaces by the functions as it compiles them."""
        self.end_chunk()
        self.roots = roots

    def function(self, flavour: Flavour, chunk: int, name: str) -> Fn:
        """A generated function, its chunk compiled (once) if it was not: then every
        placeholder of that chunk in the roots is replaced by its function."""
        key = (flavour, chunk)
        with self.lock:
            if key not in self.compiled_chunks:
                env = self.modules.get(flavour)
                if env is None:
                    env = self.modules[flavour] = self._namespace(flavour)
                    self._compile_chunk(flavour, 0, env)  # the predicates the others call
                self._compile_chunk(flavour, chunk, env)
                for obj in self.roots:
                    _resolve(obj, self)
            fn: Fn = self.modules[flavour][name]
            return fn

    def compile_all(self) -> None:
        """Compile every chunk of both flavours now (what was done at load before chunks)."""
        for flavour in FLAVOURS:
            for chunk in range(len(self.chunks[flavour])):
                with self.lock:
                    env = self.modules.get(flavour)
                    if env is None:
                        env = self.modules[flavour] = self._namespace(flavour)
                    self._compile_chunk(flavour, chunk, env)
        for obj in self.roots:
            _resolve(obj, self)

    def _namespace(self, flavour: Flavour) -> dict[str, Any]:
        from .typetest import declared_specs

        env = runtime_env(
            self.consts,
            self.defaults,
            flavour,
            self.interpreter.texts,
            len(self.c.state),
        )
        env["TS"] = tuple(self.gen[flavour].type_specs)
        env["TY"] = declared_specs(self.c)
        return env

    def _compile_chunk(self, flavour: Flavour, chunk: int, env: dict[str, Any]) -> None:
        if (flavour, chunk) in self.compiled_chunks:
            return
        start, end = self.chunks[flavour][chunk]
        # blank lines before the chunk: its functions keep their line numbers in the whole
        # source (source_map, tracebacks), as when the flavour was compiled in one piece
        text = "\n" * start + "\n".join(self.src[flavour].lines[start:end]) + "\n"
        code = compile(
            text,
            f"<contract {self.c.header.name}{' (safe)' if flavour == 'safe' else ''}>",
            "exec",
        )
        exec(code, env)  # noqa: S102 - generated from checked IR with every literal escaped
        self.compiled_chunks.add((flavour, chunk))


def _makes_fresh_values(body: tuple[ir.Stmt, ...]) -> bool:
    """Whether a body makes a fresh value or a bounded unknown (the rest of the body must then
    run three-valued)."""
    return any(
        (isinstance(x, ir.Call) and x.func == "fresh") or isinstance(x, ir.UnknownIn)
        for s in walk_stmts(body)
        for e in stmt_exprs(s)
        for x in walk_expr(e)
    )


class _Lazy:
    """A reference to a generated function, replaced by the function once its chunk of
    generated code is compiled; called before that, it compiles the chunk and calls it."""

    __slots__ = ("builder", "name", "flavour", "chunk", "fn")

    def __init__(self, builder: _Builder, name: str, flavour: Flavour, chunk: int) -> None:
        self.builder = builder
        self.name = name
        self.flavour = flavour
        self.chunk = chunk
        self.fn: Fn | None = None

    def __call__(self, *args: Any) -> Any:
        fn = self.fn
        if fn is None:
            fn = self.fn = self.builder.function(self.flavour, self.chunk, self.name)
        return fn(*args)


def _resolve(obj: Any, builder: _Builder) -> Any:
    """Replace every _Lazy placeholder whose chunk is compiled, in the compiled structures, by
    the real function (the others stay)."""
    if isinstance(obj, _Lazy):
        if (obj.flavour, obj.chunk) in builder.compiled_chunks:
            return builder.modules[obj.flavour][obj.name]
        return obj
    if isinstance(obj, Compiled):
        obj.fast = _resolve(obj.fast, builder)
        obj.safe = _resolve(obj.safe, builder)
        return obj
    if isinstance(obj, list):
        for i, item in enumerate(obj):
            obj[i] = _resolve(item, builder)
        return obj
    if isinstance(obj, dict):
        for k, item in obj.items():
            obj[k] = _resolve(item, builder)
        return obj
    if hasattr(obj, "__dataclass_fields__"):
        for name in obj.__dataclass_fields__:
            if name in ("ir", "template", "validators"):
                continue
            setattr(obj, name, _resolve(getattr(obj, name), builder))
        return obj
    return obj


def initial_state(
    contract: ir.Contract, slots: dict[str, int], consts: dict[str, Any], interpreter: Interpreter
) -> tuple[Any, ...]:
    values: list[Any] = [None] * (len(slots) + 1)
    env = Env(contract, state={}, consts=consts)
    decls = {t.name: t.type for t in contract.types}
    for var in contract.state:
        if var.init is None:
            values[slots[var.name]] = UNKNOWN
        else:
            value = interpreter.eval(var.init, env)
            if type(value) is Bounded and value.whole and is_float_type(var.type, decls):
                value = lib.bounded(value.lo, value.hi, False)  # a float between whole bounds
            if isinstance(var.init, ir.Collection) and var.init.type == "empty":
                value = empty_of(var.type, decls)
            values[slots[var.name]] = value
    for m in contract.machines:
        values[slots[f"machine:{m.name}"]] = m.initial[0].name
    values[-1] = 0
    return tuple(values)


def compile_contract(
    contract: ir.Contract, source_text: str = "", *, lazy: bool = False
) -> CompiledContract:
    """Compile a checked contract into runtime artefacts. ``lazy``: the generated code is
    compiled chunk by chunk (the predicates, each tool's functions, the machines' and goals'),
    each when one of its functions is first called, instead of all now — a process that calls
    a few tools (one ``contractsim simulate``) compiles only theirs."""
    b = _Builder(contract, source_text)
    validators = _Validators(contract)
    tools: dict[str, CTool] = {}
    for i, t in enumerate(contract.tools):
        tools[t.name] = b.tool(t, i, validators)
        b.end_chunk()
    machines = {m.name: b.machine(m) for m in contract.machines}
    for m in machines.values():
        for tool_name in m.tools:
            if tool_name in tools:
                tools[tool_name].machines.append(m.name)
    goals = {g.name: b.expr_fn(g.cond, ()) for g in contract.goals}
    warn_templates: dict[str, TemplateFn] = {}
    from ..dsl.walk import walk_stmts

    for tool in contract.tools:
        bodies = [tool.effects, *(o.body for o in tool.outcomes)]
        if tool.flow is not None:
            bodies.extend(s.body for s in tool.flow.steps)
        for body in bodies:
            for s in walk_stmts(body):
                if isinstance(s, (ir.Warn, ir.Fail)) and s.message is not None:
                    tf = TemplateFn(s.message, None)
                    warn_templates[f"{s.span.line}:{s.span.col}"] = tf
    b.finish((tools, machines, goals))
    if not lazy:
        b.compile_all()
    state_names = [v.name for v in contract.state]
    return CompiledContract(
        ir=contract,
        slots=b.slots,
        state_names=state_names,
        fresh_slot=b.fresh_slot,
        consts=b.consts,
        defaults=b.defaults,
        initial=initial_state(contract, b.slots, b.consts, b.interpreter),
        tools=tools,
        machines=machines,
        goals=goals,
        warn_templates=warn_templates,
        lazy_validators=validators,
        python_source=b.src["fast"].text()
        + "\n# ---- three-valued flavour ----\n"
        + b.src["safe"].text(),
        source_map=b.src["fast"].spans,
        interpreter=b.interpreter,
        generated=b,
    )


OBSERVED_ERROR = "error"


def _with_observed_error(params: tuple[ir.Param, ...], span: Span) -> tuple[ir.Param, ...]:
    """The parameters seen by ``observed when``: ``error`` (the real failure text) hides a
    parameter of that name (the checker warns, W0611)."""
    error = ir.Param(
        span=span, name=OBSERVED_ERROR, type=ir.NamedType(span=span, name="str"), optional=True
    )
    return tuple(p for p in params if p.name != OBSERVED_ERROR) + (error,)
