"""The typed, positioned intermediate representation of a contract.

Every node is a frozen, slotted, keyword-only dataclass with a ``span``; spans never take part in
equality or hashing. Unions are discriminated on the ``kind`` literal of each node.

Nodes are plain dataclasses, not pydantic models: importing and building them costs what any
Python object costs, so the ``check`` path never loads pydantic's model machinery. pydantic
remains the IR's validator and serialiser on demand: :func:`validate_node`, :func:`load` and
:func:`dump` build a ``TypeAdapter`` the first time they are called (tests, ``--dump-ir``,
``CONTRACTSIM_VALIDATE_IR=1``).
"""

from __future__ import annotations

import dataclasses
import operator
import os
from collections.abc import Callable
from dataclasses import field
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Literal,
    TypeVar,
    Union,
)

from ..diagnostics import NO_SPAN, Span
from ..records import compile_pending, record

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema


class _ByKind:
    """Annotation metadata: pydantic validates the union it annotates as discriminated on
    ``kind`` (``pydantic.Discriminator("kind")``, imported only when a validator is built)."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        from pydantic import Discriminator

        return Discriminator("kind").__get_pydantic_core_schema__(source, handler)

    def __repr__(self) -> str:
        return "ByKind"


BY_KIND = _ByKind()


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Node:
    """The base of every node: a ``span`` that equality and hashing ignore.

    ``eq=False, repr=False``: ``__eq__``, ``__hash__`` and ``__repr__`` are these three, shared
    by every node class, and behave as the dataclass-generated ones would (``span`` has
    ``compare=False``). Generating them for each of ~60 classes made importing this module
    cost a third more. ``record`` (``contractsim/records.py``) is ``dataclass`` made cheaper:
    the ``__init__`` of every node class is compiled in one ``exec`` at the end of this module.
    """

    #: read by pydantic when it validates a node: unknown keys are errors
    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "forbid"}

    span: Span = field(default=NO_SPAN, compare=False)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        key = _compared(self.__class__)
        return bool(key(self) == key(other))

    def __hash__(self) -> int:
        return hash(_compared(self.__class__)(self))

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self) if f.repr
        )
        return f"{self.__class__.__qualname__}({shown})"


#: per node class: the values that equality and hashing compare (every field but ``span``)
_COMPARED: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def _compared(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    key = _COMPARED.get(cls)
    if key is None:
        names = [f.name for f in dataclasses.fields(cls) if f.compare]
        get = operator.attrgetter(*names)
        key = _COMPARED[cls] = get if len(names) > 1 else (lambda node: (get(node),))
    return key


# ------------------------------------------------------------------------------------------- types

ConstraintKey = Literal[
    "pattern", "format", "min", "max", "min_length", "max_length", "min_items", "max_items"
]


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Constraint(Node):
    """A constraint on a type: ``pattern``, ``format``, ``min``, ``max`` or a length bound."""

    kind: Literal["constraint"] = "constraint"
    key: ConstraintKey
    value: int | float | str


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class NamedType(Node):
    """A primitive (``int``, ``str`` …) or a declared type, by name."""

    kind: Literal["named"] = "named"
    name: str
    constraints: tuple[Constraint, ...] = ()


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class GenericType(Node):
    """``list[T]``, ``set[T]``, ``map[K, V]`` or ``tuple[A, B, …]``."""

    kind: Literal["generic"] = "generic"
    name: str
    args: tuple[TypeExpr, ...]
    constraints: tuple[Constraint, ...] = ()


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class EnumMember(Node):
    """One member of an ``enum { … }``."""

    kind: Literal["enum_member"] = "enum_member"
    value: str


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class EnumType(Node):
    """``enum { a, b, … }``: one of the listed names."""

    kind: Literal["enum"] = "enum"
    members: tuple[EnumMember, ...]
    constraints: tuple[Constraint, ...] = ()


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class NullType(Node):
    """``null``: the type whose only value is ``null``."""

    kind: Literal["null"] = "null"
    constraints: tuple[Constraint, ...] = ()


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class RecordField(Node):
    """A field of a record type (also a tool's ``reports`` entry)."""

    kind: Literal["field"] = "field"
    name: str
    type: TypeExpr
    optional: bool = False
    default: Expr | None = None
    description: str | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class RecordType(Node):
    """``record { name: T, … }``: a JSON object with the declared fields."""

    kind: Literal["record"] = "record"
    fields: tuple[RecordField, ...]
    constraints: tuple[Constraint, ...] = ()
    # ``record { id: int, ... }``: values keep (and may carry) fields nobody declared
    open: bool = False


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Variant(Node):
    """One variant of a tagged union: its tag and its type."""

    kind: Literal["variant"] = "variant"
    tag: str
    type: TypeExpr


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TaggedUnionType(Node):
    """``union by op { and: AndQuery, … }``: exactly one variant, chosen by the ``op`` field."""

    kind: Literal["tagged"] = "tagged"
    tag_field: str
    variants: tuple[Variant, ...]
    constraints: tuple[Constraint, ...] = ()


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class UnionType(Node):
    """``A | B``: a value matching one of the options (JSON Schema ``anyOf``)."""

    kind: Literal["union"] = "union"
    options: tuple[TypeExpr, ...]
    constraints: tuple[Constraint, ...] = ()


TypeExpr = Annotated[
    Union[NamedType, GenericType, EnumType, NullType, RecordType, TaggedUnionType, UnionType],
    BY_KIND,
]


# ------------------------------------------------------------------------------------- expressions


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ScalarLit(Node):
    """A literal: a boolean, number, string (``raw`` for ``r"…"``) or ``null``."""

    kind: Literal["literal"] = "literal"
    value: bool | int | float | str | None
    raw: bool = False


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Name(Node):
    """A name: a parameter, local, state variable, constant or `result`. ``state.NAME`` is a
    name with ``state`` set: always the state variable, even where a parameter hides it."""

    kind: Literal["name"] = "name"
    name: str
    state: bool = False


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Attr(Node):
    """``obj.name``: a field of a record, or ``Enum.member``."""

    kind: Literal["attr"] = "attr"
    obj: Expr
    name: str
    name_span: Span = NO_SPAN


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Index(Node):
    """``obj[key]``: an item of a list, tuple or map."""

    kind: Literal["index"] = "index"
    obj: Expr
    key: Expr


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class KeywordArg(Node):
    """``name=value`` in a call."""

    kind: Literal["kwarg"] = "kwarg"
    name: str
    value: Expr


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Call(Node):
    """``func(args, name=value)``: a built-in, predicate or function call."""

    kind: Literal["call"] = "call"
    func: str
    func_span: Span = NO_SPAN
    args: tuple[Expr, ...] = ()
    kwargs: tuple[KeywordArg, ...] = ()


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Quantifier(Node):
    """``all(body for var in coll)``, likewise ``any``, ``count``, ``sum``, ``first`` and ``last``;
    optionally ``… if cond`` and ``for i, x in …`` (see :class:`Comprehension` for both)."""

    kind: Literal["quantifier"] = "quantifier"
    op: Literal["all", "any", "count", "sum", "first", "last"]
    var: str
    coll: Expr
    body: Expr
    unpack: tuple[str, ...] = ()
    cond: Expr | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Unary(Node):
    """``not x`` or ``-x``."""

    kind: Literal["unary"] = "unary"
    op: Literal["not", "-"]
    operand: Expr


BinOp = Literal[
    "and", "or", "==", "!=", "<", "<=", ">", ">=", "in", "not in", "+", "-", "*", "/", "//", "%"
]


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Binary(Node):
    """``left op right``: arithmetic, comparison, membership or ``and``/``or``."""

    kind: Literal["binary"] = "binary"
    op: BinOp
    left: Expr
    right: Expr


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Collection(Node):
    """``[a, b]`` (list), ``{a, b}`` (set), ``(a, b)`` (tuple) or ``{}`` (empty set or map)."""

    kind: Literal["collection"] = "collection"
    type: Literal["list", "set", "tuple", "empty"]
    items: tuple[Expr, ...] = ()


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class MapEntry(Node):
    """``key: value`` in a map literal."""

    kind: Literal["entry"] = "entry"
    key: Expr
    value: Expr


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class MapLit(Node):
    """``{key: value, …}``: a map literal."""

    kind: Literal["map"] = "map"
    entries: tuple[MapEntry, ...]


# ---------------------------------------------------- comprehensions and conditional expressions


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Comprehension(Node):
    """``[body for var in coll if cond]`` (list), ``{body for …}`` (set) or
    ``{key: body for …}`` (map). With ``unpack`` (``for i, x in …``) every item is a tuple whose
    parts are bound to those names, and ``var`` is the text of the target (``i, x``)."""

    kind: Literal["comprehension"] = "comprehension"
    type: Literal["list", "set", "map"]
    var: str
    coll: Expr
    body: Expr
    key: Expr | None = None
    unpack: tuple[str, ...] = ()
    cond: Expr | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Conditional(Node):
    """``then if cond else orelse``."""

    kind: Literal["conditional"] = "conditional"
    cond: Expr
    then: Expr
    orelse: Expr


# ----------------------------------------------- dynamically typed values (lang-types)


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TypeTest(Node):
    """``x is T`` (or ``x is not T`` when ``negated``): whether a value has a type."""

    kind: Literal["type_test"] = "type_test"
    operand: Expr
    type: TypeExpr
    negated: bool = False


# ------------------------------------------------------------------ bounded unknowns (issue 16)
@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class UnknownIn(Node):
    """``unknown in [lo, hi]``: a number nobody has observed, known to lie in the interval.
    Only a state variable's initial value or the value of an assignment (``x = unknown in
    [lo, hi]``) is one."""

    kind: Literal["unknown_in"] = "unknown_in"
    lo: Expr
    hi: Expr


Expr = Annotated[
    Union[
        ScalarLit,
        Name,
        Attr,
        Index,
        Call,
        Quantifier,
        Unary,
        Binary,
        Collection,
        MapLit,
        Comprehension,
        Conditional,
        TypeTest,
        UnknownIn,
    ],
    BY_KIND,
]


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TemplatePart(Node):
    """A piece of a message template: literal text, or an interpolated ``{expr}``."""

    kind: Literal["part"] = "part"
    text: str | None = None
    expr: Expr | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Template(Node):
    """A message with ``{expr}`` holes that are filled with actual values when reported."""

    kind: Literal["template"] = "template"
    source: str
    parts: tuple[TemplatePart, ...]


# -------------------------------------------------------------------------------------- statements


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Assign(Node):
    """``target = value`` (or ``+=``, ``-=``) in an effect."""

    kind: Literal["assign"] = "assign"
    target: Expr
    op: Literal["=", "+=", "-="] = "="
    value: Expr


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class MethodCall(Node):
    """A collection update: ``s.add(x)``, ``s.remove(x)``, ``m.remove(k)``, ``l.append(x)``,
    ``c.clear()``."""

    kind: Literal["method"] = "method"
    target: Expr
    method: str
    method_span: Span = NO_SPAN
    args: tuple[Expr, ...] = ()


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class If(Node):
    """``if cond { … } else { … }``."""

    kind: Literal["if"] = "if"
    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class For(Node):
    """``for var in coll { … }``."""

    kind: Literal["for"] = "for"
    var: str
    coll: Expr
    body: tuple[Stmt, ...]


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Let(Node):
    """``let name = value``: a name for a value in the statements after it."""

    kind: Literal["let"] = "let"
    name: str
    value: Expr


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Warn(Node):
    """``warn CODE "message"``: a warning reported with the call's result."""

    kind: Literal["warn"] = "warn"
    code: str
    code_span: Span = NO_SPAN
    message: Template | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ReportField(Node):
    """``name = value`` in a ``report { … }``."""

    kind: Literal["report_field"] = "report_field"
    name: str
    value: Expr


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Report(Node):
    """``report { name = value, … }``: values the call reports."""

    kind: Literal["report"] = "report"
    fields: tuple[ReportField, ...]


# ------------------------------------------------ statements that compute and fail part-way


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Var(Node):
    """``var x = …``: a local that the statements after it in its block may reassign."""

    kind: Literal["var"] = "var"
    name: str
    value: Expr


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Fail(Node):
    """``fail CODE "message"``: the call ends as a failure here, keeping the effects applied so
    far."""

    kind: Literal["fail"] = "fail"
    code: str
    code_span: Span = NO_SPAN
    message: Template | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Break(Node):
    """``break``: leave the innermost ``for`` loop."""

    kind: Literal["break"] = "break"


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Continue(Node):
    """``continue``: go on with the next item of the innermost ``for`` loop."""

    kind: Literal["continue"] = "continue"


Stmt = Annotated[
    Union[Assign, MethodCall, If, For, Let, Warn, Report, Var, Fail, Break, Continue],
    BY_KIND,
]


# ------------------------------------------------------------------------------------ declarations


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Header(Node):
    """``contract NAME version "V" "description"``."""

    kind: Literal["header"] = "header"
    name: str
    version: str
    version_span: Span = NO_SPAN
    description: str | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class TypeDecl(Node):
    """``type NAME = T``."""

    kind: Literal["type_decl"] = "type_decl"
    name: str
    type: TypeExpr
    description: str | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class StateVar(Node):
    """A state variable: its name, type and initial value."""

    kind: Literal["state_var"] = "state_var"
    name: str
    type: TypeExpr
    init: Expr | None  # None: declared ``unknown``
    description: str | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class ConstDecl(Node):
    """``const NAME [: TYPE] = EXPR``: a constant."""

    kind: Literal["const"] = "const"
    name: str
    type: TypeExpr | None = None
    value: Expr


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Param(Node):
    """A parameter of a tool, predicate or function."""

    kind: Literal["param"] = "param"
    name: str
    type: TypeExpr  # the declared type: what exports, cards and diagrams show agents
    optional: bool = False
    default: Expr | None = None
    description: str | None = None
    # ``name: DECLARED accepts ACCEPTED``: what the tool really takes (None: the declared type)
    accepts: TypeExpr | None = None

    @property
    def accepted_type(self) -> TypeExpr:
        """The type a call's argument is validated against and the tool body sees."""
        return self.type if self.accepts is None else self.accepts


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class PredicateDecl(Node):
    """``predicate NAME(PARAMS) = EXPR``: a named condition."""

    kind: Literal["predicate"] = "predicate"
    name: str
    params: tuple[Param, ...]
    body: Expr
    description: str | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class FunctionDecl(Node):
    """``function NAME(PARAMS) -> TYPE = EXPR``: a pure function, callable in any expression."""

    kind: Literal["function"] = "function"
    name: str
    params: tuple[Param, ...]
    returns: TypeExpr
    body: Expr
    description: str | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class EventDecl(Node):
    """``event NAME``: something outside the contract that may happen."""

    kind: Literal["event"] = "event"
    name: str
    description: str | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class GoalDecl(Node):
    """``goal NAME = EXPR``: a condition on the state that plans aim for."""

    kind: Literal["goal"] = "goal"
    name: str
    cond: Expr
    description: str | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Condition(Node):
    """A ``require`` (hard), ``should`` (soft) or ``ensure`` (postcondition) clause."""

    kind: Literal["condition"] = "condition"
    strength: Literal["require", "should", "ensure"]
    cond: Expr
    code: str | None = None
    code_span: Span = NO_SPAN
    message: Template | None = None
    hint: Template | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class EventRef(Node):
    """``on EVENT`` (with an optional probability) on an outcome or a flow transition."""

    kind: Literal["event_ref"] = "event_ref"
    name: str
    probability: float | None = None
    probability_span: Span = NO_SPAN


OutcomeKind = Literal["success", "partial", "fails"]


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Outcome(Node):
    """An outcome of a tool: success, partial or failure, when it happens and its effects."""

    kind: Literal["outcome"] = "outcome"
    name: str
    outcome: OutcomeKind
    code: str | None = None
    code_span: Span = NO_SPAN
    message: Template | None = None
    hint: Template | None = None
    event: EventRef | None = None
    when: Expr | None = None
    # how a real call's result is recognised as this outcome (guard, replay); not used in simulation
    observed: Expr | None = None
    body: tuple[Stmt, ...] = ()


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class FlowStep(Node):
    """A named step of a tool's flow and its statements."""

    kind: Literal["flow_step"] = "flow_step"
    name: str
    body: tuple[Stmt, ...]


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class FlowTransition(Node):
    """``source -> target`` in a tool's flow, with an optional event and condition."""

    kind: Literal["flow_transition"] = "flow_transition"
    source: str
    target: str
    target_span: Span = NO_SPAN
    to_outcome: bool = False
    event: EventRef | None = None
    when: Expr | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Flow(Node):
    """A tool's flow: its steps and the transitions between them."""

    kind: Literal["flow"] = "flow"
    initial: str | None
    initial_span: Span = NO_SPAN
    steps: tuple[FlowStep, ...]
    transitions: tuple[FlowTransition, ...]


RiskLevel = Literal["read_only", "destructive", "idempotent", "open_world", "needs_confirmation"]
RISKS: tuple[str, ...] = (
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "needs_confirmation",
)


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Tag(Node):
    """A tag of a tool (``tags [fs.write, fs]``)."""

    kind: Literal["tag"] = "tag"
    name: str


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Risk(Node):
    """A risk of a tool (``read_only``, ``destructive`` …)."""

    kind: Literal["risk"] = "risk"
    name: str


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Tool(Node):
    """A tool: its parameters, conditions, effects, outcomes and flow."""

    kind: Literal["tool"] = "tool"
    name: str
    params: tuple[Param, ...]
    returns: TypeExpr | None = None
    description: str | None = None
    cost: Expr | None = None
    tags: tuple[Tag, ...] = ()
    risks: tuple[Risk, ...] = ()
    conditions: tuple[Condition, ...] = ()
    effects: tuple[Stmt, ...] = ()
    outcomes: tuple[Outcome, ...] = ()
    flow: Flow | None = None
    reports: tuple[RecordField, ...] = ()
    # ``let NAME = EXPR`` at the top of the body, in order (lang-types)
    lets: tuple[Let, ...] = ()

    def has_risk(self, name: str) -> bool:
        return any(r.name == name for r in self.risks)


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class MachineState(Node):
    """A state of a protocol machine."""

    kind: Literal["machine_state"] = "machine_state"
    name: str


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class MachineTransition(Node):
    """``source -> target on tool`` in a machine (optionally an outcome and a condition)."""

    kind: Literal["machine_transition"] = "machine_transition"
    source: str
    source_span: Span = NO_SPAN
    target: str
    target_span: Span = NO_SPAN
    tool: str
    tool_span: Span = NO_SPAN
    outcome: str | None = None
    outcome_span: Span = NO_SPAN
    when: Expr | None = None


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Machine(Node):
    """A protocol machine: which tool calls may follow which."""

    kind: Literal["machine"] = "machine"
    name: str
    description: str | None = None
    states: tuple[MachineState, ...]
    initial: tuple[MachineState, ...]
    finals: tuple[MachineState, ...]
    transitions: tuple[MachineTransition, ...]


@record(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Contract(Node):
    """A whole contract: its header and its declarations, in source order per kind."""

    kind: Literal["contract"] = "contract"
    header: Header
    types: tuple[TypeDecl, ...] = ()
    state: tuple[StateVar, ...] = ()
    consts: tuple[ConstDecl, ...] = ()
    predicates: tuple[PredicateDecl, ...] = ()
    functions: tuple[FunctionDecl, ...] = ()
    events: tuple[EventDecl, ...] = ()
    goals: tuple[GoalDecl, ...] = ()
    tools: tuple[Tool, ...] = ()
    machines: tuple[Machine, ...] = ()

    def tool(self, name: str) -> Tool | None:
        for tool in self.tools:
            if tool.name == name:
                return tool
        return None


# ----------------------------------------------------------- validation and serialisation on demand

_N = TypeVar("_N", bound=Node)

#: when true, :func:`contractsim.dsl.lower.lower` validates the IR it built through
#: :func:`validate_node` (tests and debugging; set ``CONTRACTSIM_VALIDATE_IR=1`` in the
#: environment, or set it in a test)
VALIDATE: bool = os.environ.get("CONTRACTSIM_VALIDATE_IR", "") not in ("", "0")


_ADAPTERS: dict[object, TypeAdapter[Any]] = {}


def adapter(cls: Any) -> TypeAdapter[Any]:
    """pydantic's validator and serialiser of ``cls`` (an IR node class, or a union alias such
    as :data:`Expr`), built on first use and kept."""
    found = _ADAPTERS.get(cls)
    if found is None:
        from pydantic import TypeAdapter

        found = _ADAPTERS[cls] = TypeAdapter(cls)
    return found


def dump(node: Node, **options: Any) -> dict[str, Any]:
    """``node`` as nested dictionaries (pydantic's ``dump_python``; ``options`` are its keyword
    arguments, e.g. ``mode="json"``, ``exclude_defaults=True``)."""
    result: dict[str, Any] = adapter(type(node)).dump_python(node, **options)
    return result


def dump_json(node: Node, **options: Any) -> str:
    """``node`` as JSON text (pydantic's ``dump_json``, e.g. ``indent=2``)."""
    return adapter(type(node)).dump_json(node, **options).decode("utf-8")


def load(cls: type[_N], data: Any, *, strict: bool | None = None) -> _N:
    """A ``cls`` validated from nested dictionaries (what :func:`dump` returns); raises
    pydantic's ``ValidationError`` on data that is not one."""
    result: _N = adapter(cls).validate_python(data, strict=strict)
    return result


def validate_node(node: _N) -> _N:
    """``node`` checked against its declared field types, all the way down: validating its dump
    must give back the same node, with values of the same types (spans included; pydantic's
    coercions, such as a list to a tuple or an int to a float, count as differences). Raises
    ``TypeError`` naming the first difference, or pydantic's ``ValidationError``."""
    again = load(type(node), dump(node, warnings=False))
    difference = _first_difference(node, again, type(node).__name__)
    if difference is not None:
        raise TypeError(f"invalid IR: {difference}")
    return node


def _first_difference(a: object, b: object, path: str) -> str | None:
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} is not {type(b).__name__}"
    if isinstance(a, Span):
        assert isinstance(b, Span)
        return None if a.same_place(b) else f"{path}: span {a} vs {b}"
    if isinstance(a, Node):
        for name in a.__dataclass_fields__:
            found = _first_difference(getattr(a, name), getattr(b, name), f"{path}.{name}")
            if found is not None:
                return found
        return None
    if isinstance(a, tuple):
        assert isinstance(b, tuple)
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            found = _first_difference(x, y, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


compile_pending()  # every node class's methods, in one exec (see contractsim/records.py)
