"""The PDDL domain and problem as read: formulas, effects, actions, objects (lower-case names)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .sexpr import Node


@dataclass(frozen=True)
class Term:
    """A variable (``?x``, stored without ``?``) or an object/constant name."""

    name: str
    is_var: bool


@dataclass(frozen=True)
class Param:
    """A typed variable: ``types`` holds one type name, or several for ``(either a b)``."""

    name: str
    types: tuple[str, ...]


@dataclass(frozen=True)
class Atom:
    pred: str
    args: tuple[Term, ...]


@dataclass(frozen=True)
class Eq:
    """``(= left right)``; ``possible`` is False when the types say it can never hold."""

    left: Term
    right: Term
    possible: bool = True


@dataclass(frozen=True)
class Not:
    arg: Formula


@dataclass(frozen=True)
class And:
    args: tuple[Formula, ...]


@dataclass(frozen=True)
class Or:
    args: tuple[Formula, ...]


@dataclass(frozen=True)
class Imply:
    left: Formula
    right: Formula


@dataclass(frozen=True)
class Quant:
    """``exists`` or ``forall`` over typed variables."""

    kind: str
    params: tuple[Param, ...]
    body: Formula


Formula = Atom | Eq | Not | And | Or | Imply | Quant


@dataclass(frozen=True)
class Lit:
    """An add (``positive``) or delete effect."""

    atom: Atom
    positive: bool


@dataclass(frozen=True)
class When:
    cond: Formula
    effects: tuple[Effect, ...]


@dataclass(frozen=True)
class ForallEff:
    params: tuple[Param, ...]
    effects: tuple[Effect, ...]


@dataclass(frozen=True)
class CostTerm:
    """A cost function applied to terms, e.g. ``(road-length ?from ?to)``."""

    func: str
    args: tuple[Term, ...]


@dataclass(frozen=True)
class Cost:
    """``(increase (total-cost) AMOUNT)``."""

    amount: int | float | CostTerm


Effect = Lit | When | ForallEff | Cost


@dataclass
class Action:
    name: str
    params: tuple[Param, ...]
    pre: Formula | None
    effects: tuple[Effect, ...]
    node: Node


@dataclass
class Domain:
    name: str
    file: str
    requirements: list[str] = field(default_factory=list)
    types: dict[str, str] = field(default_factory=dict)  # type -> parent ("object" at the top)
    constants: dict[str, str] = field(default_factory=dict)  # name -> type
    predicates: dict[str, tuple[Param, ...]] = field(default_factory=dict)
    functions: dict[str, tuple[Param, ...]] = field(default_factory=dict)
    actions: list[Action] = field(default_factory=list)


@dataclass
class Problem:
    name: str
    file: str
    domain_name: str
    objects: dict[str, str] = field(default_factory=dict)  # name -> type
    init: list[Atom] = field(default_factory=list)
    costs: dict[tuple[str, tuple[str, ...]], int | float] = field(default_factory=dict)
    goal: Formula | None = None
    goal_text: str = ""


def conjuncts(f: Formula | None) -> list[Formula]:
    """The top-level conjuncts of a formula (nested ``and``s flattened)."""
    if f is None:
        return []
    if isinstance(f, And):
        out: list[Formula] = []
        for a in f.args:
            out.extend(conjuncts(a))
        return out
    return [f]
