"""The typed, positioned intermediate representation of a contract.

Every node is a frozen pydantic model with a ``span``; spans never take part in equality. Unions are
discriminated on the ``kind`` literal of each node.
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field

from ..diagnostics import NO_SPAN, Span


class Node(BaseModel):
    # defer_build: a model's validator is built when the model is first used, not at import
    # (building all of them took most of a second, in every process that imported the IR)
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
    span: Span = NO_SPAN


# ------------------------------------------------------------------------------------------- types

ConstraintKey = Literal[
    "pattern", "format", "min", "max", "min_length", "max_length", "min_items", "max_items"
]


class Constraint(Node):
    kind: Literal["constraint"] = "constraint"
    key: ConstraintKey
    value: int | float | str


class NamedType(Node):
    """A primitive (``int``, ``str`` …) or a declared type, by name."""

    kind: Literal["named"] = "named"
    name: str
    constraints: tuple[Constraint, ...] = ()


class GenericType(Node):
    """``list[T]``, ``set[T]``, ``map[K, V]`` or ``tuple[A, B, …]``."""

    kind: Literal["generic"] = "generic"
    name: str
    args: tuple[TypeExpr, ...]
    constraints: tuple[Constraint, ...] = ()


class EnumMember(Node):
    kind: Literal["enum_member"] = "enum_member"
    value: str


class EnumType(Node):
    kind: Literal["enum"] = "enum"
    members: tuple[EnumMember, ...]
    constraints: tuple[Constraint, ...] = ()


class NullType(Node):
    kind: Literal["null"] = "null"
    constraints: tuple[Constraint, ...] = ()


class RecordField(Node):
    kind: Literal["field"] = "field"
    name: str
    type: TypeExpr
    optional: bool = False
    default: Expr | None = None
    description: str | None = None


class RecordType(Node):
    kind: Literal["record"] = "record"
    fields: tuple[RecordField, ...]
    constraints: tuple[Constraint, ...] = ()
    # ``record { id: int, ... }``: values keep (and may carry) fields nobody declared
    open: bool = False


class Variant(Node):
    kind: Literal["variant"] = "variant"
    tag: str
    type: TypeExpr


class TaggedUnionType(Node):
    """``union by op { and: AndQuery, … }``: exactly one variant, chosen by the ``op`` field."""

    kind: Literal["tagged"] = "tagged"
    tag_field: str
    variants: tuple[Variant, ...]
    constraints: tuple[Constraint, ...] = ()


class UnionType(Node):
    """``A | B``: a value matching one of the options (JSON Schema ``anyOf``)."""

    kind: Literal["union"] = "union"
    options: tuple[TypeExpr, ...]
    constraints: tuple[Constraint, ...] = ()


TypeExpr = Annotated[
    Union[NamedType, GenericType, EnumType, NullType, RecordType, TaggedUnionType, UnionType],
    Field(discriminator="kind"),
]


# ------------------------------------------------------------------------------------- expressions


class ScalarLit(Node):
    kind: Literal["literal"] = "literal"
    value: bool | int | float | str | None
    raw: bool = False


class Name(Node):
    """A name: a parameter, local, state variable, constant or `result`. ``state.NAME`` is a
    name with ``state`` set: always the state variable, even where a parameter hides it."""

    kind: Literal["name"] = "name"
    name: str
    state: bool = False


class Attr(Node):
    kind: Literal["attr"] = "attr"
    obj: Expr
    name: str
    name_span: Span = NO_SPAN


class Index(Node):
    kind: Literal["index"] = "index"
    obj: Expr
    key: Expr


class KeywordArg(Node):
    kind: Literal["kwarg"] = "kwarg"
    name: str
    value: Expr


class Call(Node):
    kind: Literal["call"] = "call"
    func: str
    func_span: Span = NO_SPAN
    args: tuple[Expr, ...] = ()
    kwargs: tuple[KeywordArg, ...] = ()


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


class Unary(Node):
    kind: Literal["unary"] = "unary"
    op: Literal["not", "-"]
    operand: Expr


BinOp = Literal[
    "and", "or", "==", "!=", "<", "<=", ">", ">=", "in", "not in", "+", "-", "*", "/", "//", "%"
]


class Binary(Node):
    kind: Literal["binary"] = "binary"
    op: BinOp
    left: Expr
    right: Expr


class Collection(Node):
    """``[a, b]`` (list), ``{a, b}`` (set), ``(a, b)`` (tuple) or ``{}`` (empty set or map)."""

    kind: Literal["collection"] = "collection"
    type: Literal["list", "set", "tuple", "empty"]
    items: tuple[Expr, ...] = ()


class MapEntry(Node):
    kind: Literal["entry"] = "entry"
    key: Expr
    value: Expr


class MapLit(Node):
    kind: Literal["map"] = "map"
    entries: tuple[MapEntry, ...]


# ---------------------------------------------------- comprehensions and conditional expressions


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


class Conditional(Node):
    """``then if cond else orelse``."""

    kind: Literal["conditional"] = "conditional"
    cond: Expr
    then: Expr
    orelse: Expr


# ----------------------------------------------- dynamically typed values (lang-types)


class TypeTest(Node):
    """``x is T`` (or ``x is not T`` when ``negated``): whether a value has a type."""

    kind: Literal["type_test"] = "type_test"
    operand: Expr
    type: TypeExpr
    negated: bool = False


# ------------------------------------------------------------------ bounded unknowns (issue 16)
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
    Field(discriminator="kind"),
]


class TemplatePart(Node):
    """A piece of a message template: literal text, or an interpolated ``{expr}``."""

    kind: Literal["part"] = "part"
    text: str | None = None
    expr: Expr | None = None


class Template(Node):
    """A message with ``{expr}`` holes that are filled with actual values when reported."""

    kind: Literal["template"] = "template"
    source: str
    parts: tuple[TemplatePart, ...]


# -------------------------------------------------------------------------------------- statements


class Assign(Node):
    kind: Literal["assign"] = "assign"
    target: Expr
    op: Literal["=", "+=", "-="] = "="
    value: Expr


class MethodCall(Node):
    """A collection update: ``s.add(x)``, ``s.remove(x)``, ``m.remove(k)``, ``l.append(x)``,
    ``c.clear()``."""

    kind: Literal["method"] = "method"
    target: Expr
    method: str
    method_span: Span = NO_SPAN
    args: tuple[Expr, ...] = ()


class If(Node):
    kind: Literal["if"] = "if"
    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...] = ()


class For(Node):
    kind: Literal["for"] = "for"
    var: str
    coll: Expr
    body: tuple[Stmt, ...]


class Let(Node):
    kind: Literal["let"] = "let"
    name: str
    value: Expr


class Warn(Node):
    kind: Literal["warn"] = "warn"
    code: str
    code_span: Span = NO_SPAN
    message: Template | None = None


class ReportField(Node):
    kind: Literal["report_field"] = "report_field"
    name: str
    value: Expr


class Report(Node):
    kind: Literal["report"] = "report"
    fields: tuple[ReportField, ...]


# ------------------------------------------------ statements that compute and fail part-way


class Var(Node):
    """``var x = …``: a local that the statements after it in its block may reassign."""

    kind: Literal["var"] = "var"
    name: str
    value: Expr


class Fail(Node):
    """``fail CODE "message"``: the call ends as a failure here, keeping the effects applied so
    far."""

    kind: Literal["fail"] = "fail"
    code: str
    code_span: Span = NO_SPAN
    message: Template | None = None


class Break(Node):
    """``break``: leave the innermost ``for`` loop."""

    kind: Literal["break"] = "break"


class Continue(Node):
    """``continue``: go on with the next item of the innermost ``for`` loop."""

    kind: Literal["continue"] = "continue"


Stmt = Annotated[
    Union[Assign, MethodCall, If, For, Let, Warn, Report, Var, Fail, Break, Continue],
    Field(discriminator="kind"),
]


# ------------------------------------------------------------------------------------ declarations


class Header(Node):
    kind: Literal["header"] = "header"
    name: str
    version: str
    version_span: Span = NO_SPAN
    description: str | None = None


class TypeDecl(Node):
    kind: Literal["type_decl"] = "type_decl"
    name: str
    type: TypeExpr
    description: str | None = None


class StateVar(Node):
    kind: Literal["state_var"] = "state_var"
    name: str
    type: TypeExpr
    init: Expr | None  # None: declared ``unknown``
    description: str | None = None


class ConstDecl(Node):
    kind: Literal["const"] = "const"
    name: str
    type: TypeExpr | None = None
    value: Expr


class Param(Node):
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


class PredicateDecl(Node):
    kind: Literal["predicate"] = "predicate"
    name: str
    params: tuple[Param, ...]
    body: Expr
    description: str | None = None


class FunctionDecl(Node):
    """``function NAME(PARAMS) -> TYPE = EXPR``: a pure function, callable in any expression."""

    kind: Literal["function"] = "function"
    name: str
    params: tuple[Param, ...]
    returns: TypeExpr
    body: Expr
    description: str | None = None


class EventDecl(Node):
    kind: Literal["event"] = "event"
    name: str
    description: str | None = None


class GoalDecl(Node):
    kind: Literal["goal"] = "goal"
    name: str
    cond: Expr
    description: str | None = None


class Condition(Node):
    """A ``require`` (hard), ``should`` (soft) or ``ensure`` (postcondition) clause."""

    kind: Literal["condition"] = "condition"
    strength: Literal["require", "should", "ensure"]
    cond: Expr
    code: str | None = None
    code_span: Span = NO_SPAN
    message: Template | None = None
    hint: Template | None = None


class EventRef(Node):
    kind: Literal["event_ref"] = "event_ref"
    name: str
    probability: float | None = None
    probability_span: Span = NO_SPAN


OutcomeKind = Literal["success", "partial", "fails"]


class Outcome(Node):
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


class FlowStep(Node):
    kind: Literal["flow_step"] = "flow_step"
    name: str
    body: tuple[Stmt, ...]


class FlowTransition(Node):
    kind: Literal["flow_transition"] = "flow_transition"
    source: str
    target: str
    target_span: Span = NO_SPAN
    to_outcome: bool = False
    event: EventRef | None = None
    when: Expr | None = None


class Flow(Node):
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


class Tag(Node):
    kind: Literal["tag"] = "tag"
    name: str


class Risk(Node):
    kind: Literal["risk"] = "risk"
    name: str


class Tool(Node):
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


class MachineState(Node):
    kind: Literal["machine_state"] = "machine_state"
    name: str


class MachineTransition(Node):
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


class Machine(Node):
    kind: Literal["machine"] = "machine"
    name: str
    description: str | None = None
    states: tuple[MachineState, ...]
    initial: tuple[MachineState, ...]
    finals: tuple[MachineState, ...]
    transitions: tuple[MachineTransition, ...]


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


# ----------------------------------------------------------------------------- trusted construction

_M = TypeVar("_M", bound=BaseModel)

#: per model class: every field in declaration order with its default (required fields hold
#: :data:`_REQUIRED`), and the names of the required fields
_LAYOUTS: dict[type[BaseModel], tuple[dict[str, Any], frozenset[str]]] = {}
_REQUIRED: Any = object()

#: when true, :func:`construct` validates like the model's constructor (tests and debugging; set
#: ``CONTRACTSIM_VALIDATE_IR=1`` in the environment, or set it in a test)
VALIDATE: bool = os.environ.get("CONTRACTSIM_VALIDATE_IR", "") not in ("", "0")

_set = object.__setattr__


def _layout(cls: type[BaseModel]) -> tuple[dict[str, Any], frozenset[str]]:
    fields = cls.__pydantic_fields__
    template = {
        name: _REQUIRED
        if field.is_required()
        else field.get_default(call_default_factory=True, validated_data={})
        for name, field in fields.items()
    }
    required = frozenset(name for name, value in template.items() if value is _REQUIRED)
    layout = _LAYOUTS[cls] = (template, required)
    return layout


def construct(cls: type[_M], **fields: Any) -> _M:
    """``cls(**fields)`` without validation, for callers that already guarantee the types.

    The result is what the validating constructor builds from well-typed values: the same
    ``__dict__`` (fields in declaration order, defaults filled in) and the same fields-set.
    Validating an IR node costs far more than building it (and the first validation of each
    model class builds its validator), so lowering builds every node this way; a test builds the
    IR of every example and golden file both ways under :data:`VALIDATE` and compares them,
    spans included.

    Only for models without validators that transform values, aliases or mutable defaults (the IR
    models and :class:`~contractsim.diagnostics.Span`). An unknown or missing field raises
    ``TypeError``, as the constructor would.
    """
    if VALIDATE:
        return cls(**fields)
    template, required = _LAYOUTS.get(cls) or _layout(cls)
    if not required <= fields.keys():
        missing = sorted(required - fields.keys())
        raise TypeError(f"{cls.__name__}: missing field(s) {', '.join(missing)}")
    values = template.copy()
    values.update(fields)  # keeps the declaration order of the template's keys
    if len(values) != len(template):
        unknown = sorted(set(fields) - set(template))
        raise TypeError(f"{cls.__name__}: unknown field(s) {', '.join(unknown)}")
    node = cls.__new__(cls)
    _set(node, "__dict__", values)
    _set(node, "__pydantic_fields_set__", set(fields))
    _set(node, "__pydantic_extra__", None)
    _set(node, "__pydantic_private__", None)
    return node
