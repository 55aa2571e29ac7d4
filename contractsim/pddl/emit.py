"""Write a read PDDL domain + problem as readable ``.contract`` text.

Object types become enum types (a supertype is the union of its subtypes), predicates state
relations (``bool``, ``set[T]`` or ``set[tuple[…]]``), actions tools, each top-level conjunct of a
precondition one ``require`` with a code and a message naming the values, effects deletes-then-adds
(PDDL's semantics: conditions are read in the state before the action), ``:init`` the initial
state and ``:goal`` the goal ``solved``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..dsl.builtins import BUILTINS
from ..dsl.types import PRIMITIVE_NAMES
from .model import (
    Action,
    And,
    Atom,
    Cost,
    CostTerm,
    Domain,
    Effect,
    Eq,
    ForallEff,
    Formula,
    Imply,
    Lit,
    Not,
    Or,
    Param,
    Problem,
    Quant,
    Term,
    When,
    conjuncts,
)

GOAL_NAME = "solved"
PDDL_ACTION = "PDDL action `{}`"
"""A tool's description: the PDDL action it comes from (IPC plans name tools by it)."""
LINE = 96
# the grammar's keywords (contractsim/grammar/contract.lark), names with a meaning of their own,
# the type names the checker reserves (E0203) and the built-in functions
KEYWORDS = set(
    "and by const contract cost effect else ensure enum event fails false final flow for "
    "format goal hint if in initial let machine max max_items max_length min min_items "
    "min_length not null on or outcome partial pattern predicate probability record report "
    "reports require risk should state states step success tags tool true type union "
    "unknown unrolled version warn when result old fresh function var fail break continue".split()
)
"""What a tool cannot be named (tools may have the names of types and built-in functions)."""
RESERVED = (
    set(
        "and by const contract cost effect else ensure enum event fails false final flow for "
        "format goal hint if in initial let machine max max_items max_length min min_items "
        "min_length not null on or outcome partial pattern predicate probability record report "
        "reports require risk should state states step success tags tool true type union "
        "unknown unrolled version warn when result old fresh any all list set map tuple "
        "function var fail break continue".split()
    )
    | set(PRIMITIVE_NAMES)
    | set(BUILTINS)
)


def ident(name: str, reserved: set[str] = RESERVED) -> str:
    """A PDDL name as a contract identifier: ``at-robby`` → ``at_robby``, keywords get ``_``."""
    out = re.sub(r"[^a-z0-9_]", "_", name.lower())
    if not out or not (out[0].isalpha() or out[0] == "_"):
        out = "n_" + out
    if out in reserved:
        out += "_"
    return out


def tool_ident(action: str) -> str:
    """The tool name of a PDDL action (before any clash with another action, which is E0810)."""
    return ident(action, KEYWORDS)


def camel(name: str) -> str:
    """A PDDL type name as a contract type name: ``bread-portion`` → ``BreadPortion``."""
    parts = [p for p in re.split(r"[^a-zA-Z0-9]+", name) if p]
    out = "".join(p[:1].upper() + p[1:] for p in parts) or "T"
    return out if out[0].isalpha() else "T" + out


def member(name: str) -> str:
    """An enum member: bare when it is an identifier, else quoted."""
    if re.fullmatch(r"[a-z_][a-z0-9_]*", name) and name not in RESERVED:
        return name
    return _quote(name)


def lit(name: str) -> str:
    """An object in an expression: a string literal (the enum member's value)."""
    return _quote(name)


class Names:
    """One namespace: every new name is made unique against those taken."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken = set(taken)

    def new(self, base: str, reserved: set[str] = RESERVED) -> str:
        name, n = base, 2
        while name in self.taken or name in reserved:
            name = f"{base}_{n}" if not base.endswith("_") else f"{base}{n}"
            n += 1
        self.taken.add(name)
        return name


class Emitter:
    def __init__(self, domain: Domain, problem: Problem) -> None:
        self.d, self.p = domain, problem
        self.objects = {**domain.constants, **problem.objects}
        self.globals = Names()
        self.children: dict[str, list[str]] = {}
        for t, parent in domain.types.items():
            self.children.setdefault(parent, []).append(t)
        self.used_types: set[str] = set()
        self.all_consts: dict[str, str] = {}  # type -> const name (all members)
        self.lines: list[str] = []
        # tools first: IPC plans name them, so they keep their names when they can
        self.tool_names = {
            a.name: self.globals.new(tool_ident(a.name), KEYWORDS) for a in domain.actions
        }
        used = self.used_predicates()
        self.rel: dict[str, str] = {}
        for pred in domain.predicates:
            if pred in used:
                self.rel[pred] = self.globals.new(ident(pred))
        self.unused = [p for p in domain.predicates if p not in used]
        self.type_names: dict[str, str] = {}
        for t in ["object", *domain.types]:
            self.type_names[t] = self.globals.new(camel(t))
        self.cost_consts: dict[str, str] = {}
        self.adders: dict[str, list[str]] = {}
        self.deleters: dict[str, list[str]] = {}
        for a in domain.actions:
            for lit_ in _lits(a.effects):
                table = self.adders if lit_.positive else self.deleters
                names = table.setdefault(lit_.atom.pred, [])
                if self.tool_names[a.name] not in names:
                    names.append(self.tool_names[a.name])
        self.uses_costs = any(isinstance(e, Cost) for a in domain.actions for e in _walk(a.effects))

    # ---------------------------------------------------------------- what is used

    def used_predicates(self) -> set[str]:
        used: set[str] = set()
        for a in self.d.actions:
            for f in conjuncts(a.pre):
                used |= _preds(f)
            for e in _walk(a.effects):
                if isinstance(e, Lit):
                    used.add(e.atom.pred)
                elif isinstance(e, When):
                    used |= _preds(e.cond)
        if self.p.goal is not None:
            used |= _preds(self.p.goal)
        return used

    # ---------------------------------------------------------------- types

    def members(self, t: str) -> list[str]:
        out = [o for o, ot in self.objects.items() if ot == t]
        for c in self.children.get(t, []):
            out.extend(self.members(c))
        return out

    def direct(self, t: str) -> list[str]:
        return [o for o, ot in self.objects.items() if ot == t]

    def type_expr(self, types: tuple[str, ...]) -> str:
        """The contract type of a parameter or relation argument (``str`` for an empty type)."""
        live = [t for t in types if self.members(t)]
        if not live:
            return "str"
        for t in live:
            self.use_type(t)
        return " | ".join(self.type_names[t] for t in live)

    def use_type(self, t: str) -> None:
        if t in self.used_types:
            return
        self.used_types.add(t)
        for c in self.children.get(t, []):
            if self.members(c):
                self.use_type(c)

    def type_decl(self, t: str) -> list[str]:
        subs = [self.type_names[c] for c in self.children.get(t, []) if self.members(c)]
        direct = self.direct(t)
        head = f"type {self.type_names[t]} = "
        if not direct:
            return [head + " | ".join(subs)]
        tail = "".join(f" | {s}" for s in subs)
        lines = _wrap(head + "enum ", [member(o) for o in direct], "{ ", " }" + tail)
        if len(lines) > 1:
            lines[0] = lines[0].rstrip()
            lines[-1] = lines[-1].strip()
        return lines

    def all_of(self, types: tuple[str, ...]) -> str | None:
        """A collection of every object of the types (a constant), or None when there is none."""
        names = []
        for t in types:
            if not self.members(t):
                continue
            if t not in self.all_consts:
                self.use_type(t)
                self.all_consts[t] = self.globals.new("ALL_" + ident(t).upper().strip("_"))
            names.append(self.all_consts[t])
        if not names:
            return None
        out = names[0]
        for n in names[1:]:
            out = f"union({out}, {n})"
        return out

    # ---------------------------------------------------------------- conditions

    def term(self, t: Term, env: dict[str, str]) -> str:
        return env[t.name] if t.is_var else lit(t.name)

    def atom_parts(self, a: Atom, env: dict[str, str], rels: dict[str, str]) -> tuple[str, str]:
        """(element, relation) of ``element in relation``; element is "" for a 0-ary atom."""
        rel = rels[a.pred]
        args = [self.term(x, env) for x in a.args]
        if not args:
            return "", rel
        if len(args) == 1:
            return args[0], rel
        return "(" + ", ".join(args) + ")", rel

    def cond(
        self, f: Formula, env: dict[str, str], names: Names, rels: dict[str, str]
    ) -> tuple[str, int]:
        """The expression of a condition and its precedence (1 or, 2 and, 3 not, 4 in/==, 9)."""
        if isinstance(f, Atom):
            elem, rel = self.atom_parts(f, env, rels)
            return (f"{elem} in {rel}", 4) if elem else (rel, 9)
        if isinstance(f, Eq):
            if not f.possible or not (f.left.is_var or f.right.is_var):
                # the types (or two constants) decide it: no comparison of unrelated enums
                return ("true" if f.possible else "false"), 9
            return f"{self.term(f.left, env)} == {self.term(f.right, env)}", 4
        if isinstance(f, Not):
            inner = f.arg
            if isinstance(inner, Atom):
                elem, rel = self.atom_parts(inner, env, rels)
                return (f"{elem} not in {rel}", 4) if elem else (f"not {rel}", 3)
            if isinstance(inner, Eq):
                if not inner.possible or not (inner.left.is_var or inner.right.is_var):
                    return ("false" if inner.possible else "true"), 9
                return f"{self.term(inner.left, env)} != {self.term(inner.right, env)}", 4
            text, prec = self.cond(inner, env, names, rels)
            return (f"not {text}" if prec >= 4 else f"not ({text})"), 3
        if isinstance(f, And):
            if not f.args:
                return "true", 9
            if len(f.args) == 1:
                return self.cond(f.args[0], env, names, rels)
            parts = [self.cond(a, env, names, rels) for a in f.args]
            return " and ".join(t if p >= 2 else f"({t})" for t, p in parts), 2
        if isinstance(f, Or):
            if not f.args:
                return "false", 9
            if len(f.args) == 1:
                return self.cond(f.args[0], env, names, rels)
            parts = [self.cond(a, env, names, rels) for a in f.args]
            # `and` binds tighter than `or`; the parentheses are for the reader
            return " or ".join(t if p != 2 else f"({t})" for t, p in parts), 1
        if isinstance(f, Imply):
            return self.cond(Or((Not(f.left), f.right)), env, names, rels)
        assert isinstance(f, Quant)
        return self.quant(f, env, names, rels)

    def quant(
        self, f: Quant, env: dict[str, str], names: Names, rels: dict[str, str]
    ) -> tuple[str, int]:
        fn = "any" if f.kind == "exists" else "all"
        inner_env = dict(env)
        colls = []
        for p in f.params:
            coll = self.all_of(p.types)
            if coll is None:  # no object of that type: exists is false, forall is true
                return ("false" if f.kind == "exists" else "true"), 9
            inner_env[p.name] = names.new(ident(p.name))
            colls.append((inner_env[p.name], coll))
        text, _ = self.cond(f.body, inner_env, names, rels)
        for var, coll in reversed(colls):
            text = f"{fn}({text} for {var} in {coll})"
        return text, 9

    # ---------------------------------------------------------------- PDDL text for messages

    def pddl(self, f: Formula, env: dict[str, str]) -> str:
        """The PDDL text of a condition as a message template: a variable of ``env`` becomes
        ``{name}`` (its value), literal braces are doubled."""

        def term(t: Term) -> str:
            return self.pddl_term(t, env)

        if isinstance(f, Atom):
            return "(" + " ".join([_braces(f.pred), *(term(a) for a in f.args)]) + ")"
        if isinstance(f, Eq):
            return f"(= {term(f.left)} {term(f.right)})"
        if isinstance(f, Not):
            return f"(not {self.pddl(f.arg, env)})"
        if isinstance(f, And | Or):
            head = "and" if isinstance(f, And) else "or"
            return f"({head} " + " ".join(self.pddl(a, env) for a in f.args) + ")"
        if isinstance(f, Imply):
            return f"(imply {self.pddl(f.left, env)} {self.pddl(f.right, env)})"
        assert isinstance(f, Quant)
        inner = {k: v for k, v in env.items() if k not in {p.name for p in f.params}}
        params = " ".join(f"?{p.name} - {'|'.join(p.types)}" for p in f.params)
        return f"({f.kind} ({params}) {self.pddl(f.body, inner)})"

    def pddl_term(self, t: Term, env: dict[str, str]) -> str:
        if t.is_var:
            return "{" + env[t.name] + "}" if t.name in env else "?" + _braces(t.name)
        return _braces(t.name)

    # ---------------------------------------------------------------- tools

    def tool(self, a: Action) -> list[str]:
        name = self.tool_names[a.name]
        empty = [p for p in a.params if not any(self.members(t) for t in p.types)]
        if empty:
            types = "|".join(empty[0].types)
            return [
                f"# action `{a.name}` is left out: no object is of type `{types}` "
                f"(parameter ?{empty[0].name}), so it can never be called",
                "",
            ]
        names = Names(self.globals.taken)
        env: dict[str, str] = {}
        params = []
        for p in a.params:
            env[p.name] = names.new(ident(p.name))
            params.append(f"{env[p.name]}: {self.type_expr(p.types)}")
        head = f"tool {name}({', '.join(params)}) {_quote(PDDL_ACTION.format(a.name))}"
        cost = self.cost(a, env)
        if cost is not None:
            head += f" cost {cost}"
        out = [head + " {"]
        codes = Names()
        for i, c in enumerate(conjuncts(a.pre), 1):
            text, _ = self.cond(c, env, names, self.rel)
            if text == "true":
                continue  # decided by the types: nothing to check
            code, hint = self.code_and_hint(c, i)
            code = codes.new(code)
            if isinstance(c, Not) and isinstance(c.arg, Eq):
                left, right = (self.pddl_term(t, env) for t in (c.arg.left, c.arg.right))
                msg = f"{left} and {right} are the same object"
            else:
                msg = self.pddl(c, env) + " does not hold"
            out += _wrap_expr("  require ", text)
            out.append(f"    else {code} {_quote(msg)}")
            if hint:
                out.append(f"    hint {_quote(hint)}")
        out += self.cost_requires(a, env, codes)
        body = self.effect_body(a, env, names)
        if body:
            out.append("  effect {")
            out += ["    " + b for b in body]
            out.append("  }")
        out += ["}", ""]
        return out

    def code_and_hint(self, c: Formula, i: int) -> tuple[str, str | None]:
        def upper(pred: str) -> str:
            return ident(pred).upper().strip("_")

        if isinstance(c, Atom):
            tools = self.adders.get(c.pred)
            hint = (
                "made true by " + ", ".join(tools)
                if tools
                else f"no action adds {_braces(c.pred)}: only :init makes it true"
            )
            return f"NOT_{upper(c.pred)}", hint
        if isinstance(c, Not) and isinstance(c.arg, Atom):
            undo = self.deleters.get(c.arg.pred)
            return f"{upper(c.arg.pred)}_HOLDS", (
                "made false by " + ", ".join(undo) if undo else None
            )
        if isinstance(c, Eq):
            return "NOT_EQUAL", None
        if isinstance(c, Not) and isinstance(c.arg, Eq):
            return "SAME_OBJECT", None
        return f"PRECONDITION_{i}", None

    def cost(self, a: Action, env: dict[str, str]) -> str | None:
        parts: list[str] = []
        for e in a.effects:
            if isinstance(e, Cost):
                parts.append(self.cost_amount(e.amount, env))
        if not parts:
            return "0" if self.uses_costs else None
        return " + ".join(parts)

    def cost_requires(self, a: Action, env: dict[str, str], codes: Names) -> list[str]:
        """A ``require`` for each cost the problem's ``:init`` leaves undefined for some
        arguments: PDDL cannot apply an action whose cost has no value."""
        out: list[str] = []
        for e in a.effects:
            if not isinstance(e, Cost) or not isinstance(e.amount, CostTerm):
                continue
            amount = e.amount
            params = self.d.functions[amount.func]
            if not params:
                continue  # the problem reader requires a value
            defined = sum(1 for f, _ in self.p.costs if f == amount.func)
            combos = 1
            for q in params:
                combos *= len(set(self.members_of(q.types)))
            if defined >= combos:
                continue
            cost = self.cost_amount(amount, env)
            key = cost[cost.index("[") + 1 : -1]
            const = cost[: cost.index("[")]
            out.append(f"  require {key} in {const}")
            args = " ".join(self.pddl_term(t, env) for t in amount.args)
            msg = f"({_braces(amount.func)} {args}) has no value in :init"
            out.append(f"    else {codes.new('COST_UNDEFINED')} {_quote(msg)}")
            out.append('    hint "PDDL cannot apply an action whose cost is undefined"')
        return out

    def members_of(self, types: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        for t in types:
            out += self.members(t)
        return out

    def cost_amount(self, amount: int | float | CostTerm, env: dict[str, str]) -> str:
        if not isinstance(amount, CostTerm):
            return repr(amount)
        const = self.cost_consts.get(amount.func)
        if const is None:
            const = self.globals.new(ident(amount.func).upper().strip("_") or "COST")
            self.cost_consts[amount.func] = const
        args = [self.term(t, env) for t in amount.args]
        if not args:
            return const
        key = args[0] if len(args) == 1 else "(" + ", ".join(args) + ")"
        return f"{const}[{key}]"

    def effect_body(self, a: Action, env: dict[str, str], names: Names) -> list[str]:
        modified = {lit_.atom.pred for lit_ in _lits(a.effects)}
        read: set[str] = set()
        for e in _walk(a.effects):
            if isinstance(e, When):
                read |= _preds(e.cond)
        rels = dict(self.rel)
        lets: list[tuple[str, str]] = []
        for pred in sorted(read & modified):
            snap = names.new("was_" + self.rel[pred])
            lets.append((snap, self.rel[pred]))
            rels[pred] = snap
        body = self.effect_lines(a.effects, env, names, rels, False)
        body += self.effect_lines(a.effects, env, names, rels, True)
        used = [
            f"let {snap} = {rel}"
            for snap, rel in lets
            if any(re.search(rf"\b{snap}\b", line) for line in body)
        ]
        return used + body

    def effect_lines(
        self,
        effects: tuple[Effect, ...],
        env: dict[str, str],
        names: Names,
        rels: dict[str, str],
        positive: bool,
    ) -> list[str]:
        out: list[str] = []
        for e in effects:
            if isinstance(e, Lit):
                if e.positive != positive:
                    continue
                elem, rel = self.atom_parts(e.atom, env, self.rel)
                if not elem:
                    out.append(f"{rel} = {'true' if positive else 'false'}")
                else:
                    out.append(f"{rel}.{'add' if positive else 'remove'}({elem})")
            elif isinstance(e, When):
                inner = self.effect_lines(e.effects, env, names, rels, positive)
                text = self.cond(e.cond, env, names, rels)[0] if inner else "false"
                if text == "true":
                    out += inner
                elif text != "false":
                    head = _wrap_expr("if ", text)
                    head[-1] += " {"
                    out += head
                    out += ["  " + x for x in inner]
                    out.append("}")
            elif isinstance(e, ForallEff):
                inner_env = dict(env)
                loops = []
                skip = False
                for p in e.params:
                    coll = self.all_of(p.types)
                    if coll is None:
                        skip = True
                        break
                    inner_env[p.name] = names.new(ident(p.name))
                    loops.append((inner_env[p.name], coll))
                if skip:
                    continue
                inner = self.effect_lines(e.effects, inner_env, names, rels, positive)
                if not inner:
                    continue
                for depth, (var, coll) in enumerate(loops):
                    out.append("  " * depth + f"for {var} in {coll} {{")
                out += ["  " * len(loops) + x for x in inner]
                for depth in reversed(range(len(loops))):
                    out.append("  " * depth + "}")
        return out

    # ---------------------------------------------------------------- the whole file

    def emit(self) -> str:
        d, p = self.d, self.p
        tools: list[str] = []
        for a in d.actions:
            tools += self.tool(a)
        goal = ["true"]
        if p.goal is not None:
            names = Names(self.globals.taken)
            goal = []
            for c in conjuncts(p.goal):
                text, prec = self.cond(c, {}, names, self.rel)
                if text != "true" or len(conjuncts(p.goal)) == 1:
                    goal.append(text if prec >= 2 else f"({text})")
            goal = goal or ["true"]
        state = self.state_lines()
        out = [
            f"# Imported from PDDL by `contractsim import-pddl`: domain `{d.name}`, "
            f"problem `{p.name}`.",
            "# Predicates are state relations, objects are enum members, :init is the initial "
            "state,",
            f"# :goal is the goal `{GOAL_NAME}` (contractsim simulate --goal {GOAL_NAME}).",
            f'contract {ident(d.name + "_" + p.name).strip("_")} version "1.0.0"',
            f"  {_quote(f'PDDL domain {d.name}, problem {p.name}')}",
            "",
            *self.renamed(),
        ]
        for t in ["object", *d.types]:
            if t in self.used_types:
                out += self.type_decl(t)
        out.append("")
        for t, const in self.all_consts.items():
            out += _wrap(
                f"const {const}: set[{self.type_names[t]}] = ",
                [lit(o) for o in self.members(t)],
                "{",
                "}",
            )
        for func, const in self.cost_consts.items():
            out += self.cost_const(func, const)
        if self.all_consts or self.cost_consts:
            out.append("")
        out += state
        out.append("")
        out += _wrap_expr(f"goal {GOAL_NAME} = ", goal[0])
        for g in goal[1:]:
            out += _wrap_expr("  and ", g)
        out.append(f"  {_quote(f'the goal of problem {p.name}')}")
        out.append("")
        out += tools
        return "\n".join(out).rstrip() + "\n"

    def renamed(self) -> list[str]:
        """Comment lines naming each action and predicate whose contract name differs."""
        pairs = [f"action {a} → tool {t}" for a, t in self.tool_names.items() if a != t]
        pairs += [f"predicate {p} → {r}" for p, r in self.rel.items() if p != r]
        if not pairs:
            return []
        out = ["# Renamed from PDDL:"]
        for pair in pairs:
            if len(out[-1]) + len(pair) + 2 > LINE:
                out[-1] += ","
                out.append("#  ")
            elif out[-1] != "# Renamed from PDDL:":
                out[-1] += ","
            out[-1] += " " + pair
        return out

    def state_lines(self) -> list[str]:
        facts: dict[str, list[Atom]] = {}
        for atom in self.p.init:
            facts.setdefault(atom.pred, []).append(atom)
        out = ["state {"]
        for pred in self.unused:
            out.append(f"  # predicate `{pred}` is not used by any action or the goal: left out")
        for pred, rel in self.rel.items():
            params = self.d.predicates[pred]
            atoms = facts.get(pred, [])
            if not params:
                out.append(f"  {rel}: bool = {'true' if atoms else 'false'}")
                continue
            elems = []
            seen: set[tuple[str, ...]] = set()
            for atom in atoms:
                key = tuple(t.name for t in atom.args)
                if key in seen:
                    continue
                seen.add(key)
                elems.append(self.atom_parts(atom, {}, self.rel)[0])
            if len(params) == 1:
                typ = f"set[{self.type_expr(params[0].types)}]"
            else:
                typ = "set[tuple[" + ", ".join(self.type_expr(q.types) for q in params) + "]]"
            out += ["  " + x for x in _wrap(f"{rel}: {typ} = ", elems, "{", "}")]
        out.append("}")
        return out

    def cost_const(self, func: str, const: str) -> list[str]:
        params = self.d.functions[func]
        values = {k[1]: v for k, v in self.p.costs.items() if k[0] == func}
        num = "float" if any(isinstance(v, float) for v in values.values()) else "int"
        if not params:
            return [f"const {const}: {num} = {values.get((), 0)}"]
        if len(params) == 1:
            ktype = self.type_expr(params[0].types)
        else:
            ktype = "tuple[" + ", ".join(self.type_expr(q.types) for q in params) + "]"
        items = []
        for args, v in values.items():
            key = lit(args[0]) if len(args) == 1 else "(" + ", ".join(lit(a) for a in args) + ")"
            items.append(f"{key}: {v}")
        return _wrap(f"const {const}: map[{ktype}, {num}] = ", items, "{", "}")


def _wrap_expr(head: str, text: str, width: int = LINE) -> list[str]:
    """``head + text``, broken before top-level ``and``/``or`` when longer than ``width``
    (continuation lines indented two more; an expression across lines reads the same)."""
    one = head + text
    if len(one) <= width:
        return [one]
    indent = " " * (len(head) - len(head.lstrip()) + 4)
    parts: list[str] = []
    depth, quoted, start, i = 0, False, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch in "([{":
            depth += 1
        elif not quoted and ch in ")]}":
            depth -= 1
        elif not quoted and depth == 0:
            for op in (" and ", " or "):
                if text.startswith(op, i):
                    parts.append(text[start:i])
                    start = i + 1
                    break
        i += 1
    parts.append(text[start:])
    if len(parts) == 1:
        return [one]
    lines = [head + parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + 1 + len(part) <= width and len(lines) > 1:
            lines[-1] += " " + part
        else:
            lines.append(indent + part)
    return lines


def _braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _wrap(head: str, items: list[str], open_: str, close: str) -> list[str]:
    one = head + open_ + ", ".join(items) + close
    if len(one) <= LINE:
        return [one]
    lines = [head + open_]
    cur = "  "
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "")
        if len(cur) + len(piece) + 1 > LINE and cur.strip():
            lines.append(cur.rstrip())
            cur = "  "
        cur += piece + " "
    if cur.strip():
        lines.append(cur.rstrip())
    lines.append(close)
    return lines


def _walk(effects: tuple[Effect, ...]) -> Iterable[Effect]:
    for e in effects:
        yield e
        if isinstance(e, When | ForallEff):
            yield from _walk(e.effects)


def _lits(effects: tuple[Effect, ...]) -> list[Lit]:
    return [e for e in _walk(effects) if isinstance(e, Lit)]


def _preds(f: Formula) -> set[str]:
    if isinstance(f, Atom):
        return {f.pred}
    if isinstance(f, Eq):
        return set()
    if isinstance(f, Not):
        return _preds(f.arg)
    if isinstance(f, And | Or):
        out: set[str] = set()
        for a in f.args:
            out |= _preds(a)
        return out
    if isinstance(f, Imply):
        return _preds(f.left) | _preds(f.right)
    return _preds(f.body)


def emit_contract(domain: Domain, problem: Problem) -> str:
    """The ``.contract`` text of a domain and problem."""
    return Emitter(domain, problem).emit()


__all__ = ["GOAL_NAME", "Param", "emit_contract", "ident"]
