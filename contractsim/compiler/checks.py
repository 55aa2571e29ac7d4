"""The checker's passes that compute values, which need the compiler: a constant default or
initial value against its type's constraints (E0404) and every constant expression that cannot
be computed (E0414). The front end calls them through :class:`~contractsim.dsl.check.BackEndChecks`
so that it never imports the back end; :data:`COMPILER_CHECKS` is what :func:`contractsim.loads`
passes to ``check_and_resolve``."""

from __future__ import annotations

from pydantic_core import SchemaError

from ..diagnostics import Span
from ..dsl import ir
from ..dsl.check import has_error_within
from ..dsl.typecheck import Checker
from ..dsl.walk import walk_expr
from . import lib
from .constants import constant_value
from .consteval import CONSTANT_SECONDS, ConstantError, evaluate_constant
from .core_schemas import plain_validator
from .interp import Interpreter
from .problems import value_problem


class CompilerChecks:
    """:class:`~contractsim.dsl.check.BackEndChecks` by the validators and the interpreter."""

    def conformance_problem(
        self, ck: Checker, value: ir.Expr, type_expr: ir.TypeExpr
    ) -> str | None:
        const = constant_value(value, ck.c)
        if const is None:
            return None
        try:
            plain = plain_validator(type_expr, ck.type_decls)
        except (SchemaError, TypeError, ValueError):
            return None  # as the validators do: an ill-formed constraint is reported elsewhere
        if plain is not None:  # pydantic-core alone: the same schema pydantic would generate
            return value_problem(plain.validate_python, const.value)
        if ck.validators is None:
            from .validators import ValidatorBuilder  # pydantic's model machinery: only here

            ck.validators = ValidatorBuilder(ck.c)
        problem: str | None = ck.validators.conformance_problem(const.value, type_expr)
        return problem

    def check_constant_values(self, ck: Checker) -> None:
        """Constants, initial values and defaults are computed when the contract is compiled: one
        that cannot be computed (``1 / 0``, a missing key, ``range(1e9)`` …) is an error at its
        place, not a crash of every command that compiles the contract. Only expressions without
        an earlier error are evaluated, with the same budget as a simulated step."""
        with lib.step_budget(CONSTANT_SECONDS):  # one budget for all: 5,000,000 items, 10 s
            _compute_constants(ck)


COMPILER_CHECKS = CompilerChecks()


def _compute_constants(ck: Checker) -> None:
    interpreter = Interpreter(ck.c)
    consts: dict[str, object] = {}
    failed: set[str] = set()

    def evaluate(e: ir.Expr, what: str, owner: Span) -> object:
        """The value, or ``failed`` (a sentinel) when it was not computed."""
        if (
            has_error_within(ck, owner)
            or has_error_within(ck, e.span)
            # walking the expression (100,000s of nodes in a bulk literal) only when a
            # constant it might name has failed
            or (failed and any(isinstance(x, ir.Name) and x.name in failed for x in walk_expr(e)))
        ):
            return failed
        try:
            return evaluate_constant(interpreter, e, consts)
        except ConstantError as exc:
            ck.err(
                "E0414",
                f"{what} cannot be computed: {exc}",
                e.span,
                hint="constants, initial values and defaults are computed before any call; "
                "change the expression so that it has a value",
            )
            return failed

    for c in ck.c.consts:
        value = evaluate(c.value, f"constant `{c.name}`", c.span)
        if value is failed:
            failed.add(c.name)
        else:
            consts[c.name] = value
    for var in ck.c.state:
        if var.init is not None:
            evaluate(var.init, f"the initial value of `{var.name}`", var.span)
    for t in ck.c.types:
        if isinstance(t.type, ir.RecordType):
            for f in t.type.fields:
                if f.default is not None:
                    evaluate(f.default, f"the default of `{t.name}.{f.name}`", f.span)
    for tool in ck.c.tools:
        for p in tool.params:
            if p.default is not None:
                evaluate(p.default, f"the default of `{p.name}` in `{tool.name}`", p.span)
