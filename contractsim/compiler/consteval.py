"""Constant expressions computed as compiling computes them, for the checker (E0414): the
interpreter and a budget, without the code generator (``check`` does not import
:mod:`.compile`)."""

from __future__ import annotations

from typing import Any

from ..dsl import ir
from . import lib
from .interp import Env, Interpreter

CONSTANT_SECONDS = lib.STEP_SECONDS
"""Wall-clock time the constants, initial values and defaults of a contract may take together
(with the items of one step's budget): see :func:`evaluate_constant`."""


class ConstantError(Exception):
    """A constant expression (a ``const``, an initial value, a default) cannot be evaluated."""


def evaluate_constant(interpreter: Interpreter, e: ir.Expr, consts: dict[str, Any]) -> Any:
    """The value of an expression that sees only constants, computed as compiling does, and
    every failure a :class:`ConstantError`. Run it inside ``lib.step_budget(CONSTANT_SECONDS)``
    (one budget for all the constants of a contract) to bound loops and time."""
    env = Env(interpreter.contract, state={}, consts=consts)
    try:
        value = interpreter.eval(e, env)
        lib.check_value_size(value)
        return value
    except Exception as exc:  # noqa: BLE001 - whatever the contract makes Python raise
        raise ConstantError(lib.failure_text(exc)) from None
