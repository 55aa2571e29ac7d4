"""Read a PDDL domain and problem into :mod:`.model`, checking names, arities and types.

Every problem is a located diagnostic (codes E0801–E0849, docs/errors.md); nothing raises
anything but :class:`~contractsim.ContractError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from ..diagnostics import ContractError, Diagnostic, article, did_you_mean
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
)
from .sexpr import Node, SList, Sym, pddl_error, read_sexprs

SUPPORTED = {
    ":strips",
    ":typing",
    ":negative-preconditions",
    ":equality",
    ":disjunctive-preconditions",
    ":existential-preconditions",
    ":universal-preconditions",
    ":quantified-preconditions",
    ":conditional-effects",
    ":action-costs",
    ":adl",
}
UNSUPPORTED = {
    ":derived-predicates": "derived predicates",
    ":numeric-fluents": "numeric fluents (only `total-cost`, as in :action-costs, is supported)",
    ":fluents": "numeric fluents (only `total-cost`, as in :action-costs, is supported)",
    ":object-fluents": "object fluents",
    ":durative-actions": "durative actions",
    ":duration-inequalities": "duration inequalities",
    ":continuous-effects": "continuous effects",
    ":timed-initial-literals": "timed initial literals",
    ":preferences": "preferences",
    ":constraints": "state trajectory constraints",
}
DOMAIN_SECTIONS = (":requirements", ":types", ":constants", ":predicates", ":functions", ":action")
SECTION_REQUIREMENT = {
    ":derived": ":derived-predicates",
    ":durative-action": ":durative-actions",
    ":constraints": ":constraints",
}
PROBLEM_SECTIONS = (":domain", ":objects", ":init", ":goal", ":metric", ":requirements", ":length")
NUMERIC_HEADS = {"<", "<=", ">", ">=", "+", "-", "*", "/"}
NUMERIC_EFFECTS = {"increase", "decrease", "assign", "scale-up", "scale-down"}
TOTAL_COST = "total-cost"
HINT_SHAPE = "see docs/pddl.md for what the importer reads"
PDDL_NAME = re.compile(r"\w[\w\-.+*/<>=!?@$%&^~:|]*")
"""A name PDDL declares. The BNF's is a letter, then letters, digits, ``-`` and ``_``; planners
read more (``2nd-step``, ``über``, ``move.fast``), and so does the importer: a letter, digit or
``_``, then those and the marks above. Quotes, backslashes, braces, commas, backticks, ``#``
and control characters are E0803: no name changes the contract or the message it is written
into."""
HINT_NAME = (
    "write a name of letters, digits, `-` and `_` (e.g. `truck-1`); quotes, backslashes, "
    "braces, commas and control characters are not read"
)


class _Reader:
    """Shared helpers: diagnostics with positions, typed lists, terms."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.diags: list[Diagnostic] = []
        self.ancestor_cache: dict[str, list[str]] = {}
        self.fits: set[tuple[str, tuple[str, ...]]] = set()  # (object type, parameter types)

    def fail(self, code: str, message: str, node: Node | None, hint: str | None = None) -> None:
        """Stop reading: the problems found so far and this one."""
        self.report(code, message, node, hint)
        raise ContractError(self.sorted_diags())

    def sorted_diags(self) -> list[Diagnostic]:
        """The problems found, each once, in the order of their position in the file."""
        seen: set[tuple[str, int, int, str]] = set()
        out = []
        for d in sorted(self.diags, key=lambda d: (d.span.line, d.span.col)):
            key = (d.code, d.span.line, d.span.col, d.message)
            if key not in seen:
                seen.add(key)
                out.append(d)
        return out

    def report(self, code: str, message: str, node: Node | None, hint: str | None = None) -> None:
        self.diags.append(pddl_error(code, message, node, self.file, hint))

    def check_name(self, s: Sym, what: str) -> Sym:
        """``s`` when it is a PDDL name (a variable's after its ``?``), else an E0803."""
        if not PDDL_NAME.fullmatch(s.text[1:] if s.text.startswith("?") else s.text):
            self.report("E0803", f"`{s.text}` is not a PDDL name ({what})", s, HINT_NAME)
        return s

    def sym(self, node: Node | None, what: str, at: Node) -> Sym:
        if not isinstance(node, Sym):
            self.fail("E0803", f"expected {what}", node if node is not None else at, HINT_SHAPE)
            raise AssertionError  # pragma: no cover
        return node

    def slist(self, node: Node | None, what: str, at: Node) -> SList:
        if not isinstance(node, SList):
            self.fail("E0803", f"expected {what} in parentheses", node or at, HINT_SHAPE)
            raise AssertionError  # pragma: no cover
        return node

    def typed_list(
        self, items: Sequence[Node], what: str, at: Node, either: bool = True
    ) -> list[tuple[Sym, tuple[str, ...], Node | None]]:
        """``a b - t c`` → [(a, (t,)), (b, (t,)), (c, ("object",))]; the node of each type."""
        out: list[tuple[Sym, tuple[str, ...], Node | None]] = []
        pending: list[Sym] = []
        i = 0
        while i < len(items):
            item = items[i]
            if isinstance(item, Sym) and item.text == "-":
                if not pending:
                    self.fail("E0803", f"`-` without {article(what)} before it", item, HINT_SHAPE)
                if i + 1 >= len(items):
                    self.fail("E0803", "`-` without a type after it", item, "write `NAME - TYPE`")
                tnode = items[i + 1]
                types = self.type_ref(tnode, either)
                out.extend((p, types, tnode) for p in pending)
                pending = []
                i += 2
                continue
            pending.append(self.check_name(self.sym(item, article(what), at), article(what)))
            i += 1
        out.extend((p, ("object",), None) for p in pending)
        return out

    def type_ref(self, node: Node, either: bool) -> tuple[str, ...]:
        if isinstance(node, Sym):
            return (self.check_name(node, "a type").key,)
        if node.head_key == "either" and either:
            return tuple(
                self.check_name(self.sym(t, "a type name", node), "a type").key
                for t in node.items[1:]
            )
        self.fail(
            "E0803",
            "expected a type name" + (" or `(either …)`" if either else ""),
            node,
            HINT_SHAPE,
        )
        raise AssertionError  # pragma: no cover


def _root(nodes: list[Node], kind: str, file: str) -> tuple[SList, str]:
    """``(define (KIND NAME) …)``: the define list and NAME."""
    lists = [n for n in nodes if isinstance(n, SList)]
    stray = [n for n in nodes if isinstance(n, Sym)]
    if stray:
        raise ContractError(
            [
                pddl_error(
                    "E0803",
                    f"`{stray[0].text}` outside `(define …)`",
                    stray[0],
                    file,
                    "a PDDL file is one `(define …)` expression",
                )
            ]
        )
    if not lists:
        raise ContractError(
            [
                pddl_error(
                    "E0803",
                    f"no `(define ({kind} NAME) …)` in this file",
                    None,
                    file,
                    "is this a PDDL file?",
                )
            ]
        )
    if len(lists) > 1:
        raise ContractError(
            [
                pddl_error(
                    "E0803",
                    "more than one top-level expression: only one `(define …)` is read",
                    lists[1],
                    file,
                    "put the domain and the problem in separate files",
                )
            ]
        )
    root = lists[0]
    if root.head_key != "define":
        raise ContractError([pddl_error("E0803", "expected `(define …)`", root, file, HINT_SHAPE)])
    header = root.items[1] if len(root.items) > 1 else None
    if (
        not isinstance(header, SList)
        or header.head_key != kind
        or len(header.items) != 2
        or not isinstance(header.items[1], Sym)
    ):
        other = "problem" if kind == "domain" else "domain"
        hint = (
            f"this looks like a {other} file: check the order of the arguments"
            if isinstance(header, SList) and header.head_key == other
            else f"write `(define ({kind} NAME) …)`"
        )
        raise ContractError(
            [pddl_error("E0803", f"expected `({kind} NAME)`", header or root, file, hint)]
        )
    name = header.items[1]
    assert isinstance(name, Sym)
    if not PDDL_NAME.fullmatch(name.text):
        raise ContractError(
            [pddl_error("E0803", f"`{name.text}` is not a PDDL name", name, file, HINT_NAME)]
        )
    return root, name.key


# ------------------------------------------------------------------------------------ domain


class DomainReader(_Reader):
    def read(self, text: str) -> Domain:
        root, name = _root(read_sexprs(text, self.file), "domain", self.file)
        d = Domain(name=name, file=self.file)
        self.domain = d
        self.type_nodes: dict[str, Node] = {}
        sections = [
            self.slist(section, "a domain section such as `(:predicates …)`", root)
            for section in root.items[2:]
        ]
        # requirements and types first: the other sections name types, in whatever order
        for sec in sections:
            if sec.head_key == ":requirements":
                self.requirements(sec)
            elif sec.head_key == ":types":
                self.types(sec)
        self.check_types()
        pending_actions: list[SList] = []
        for sec in sections:
            head = sec.head_key
            if head in (":requirements", ":types"):
                continue
            if head == ":constants":
                for obj, types, tnode in self.typed_list(sec.items[1:], "constant", sec, False):
                    self.add_object(d.constants, obj, types[0], tnode)
            elif head == ":predicates":
                self.predicates(sec)
            elif head == ":functions":
                self.functions(sec)
            elif head == ":action":
                pending_actions.append(sec)
            elif head in SECTION_REQUIREMENT:
                req = SECTION_REQUIREMENT[head]
                self.fail(
                    "E0805",
                    f"`{head}` needs {req} ({UNSUPPORTED[req]}), which the importer does not "
                    "support",
                    sec.items[0],
                    "only STRIPS and ADL domains with action costs can be imported (docs/pddl.md)",
                )
            else:
                self.unknown_keyword(sec.items[0] if sec.items else sec, DOMAIN_SECTIONS)
        tools: dict[str, Action] = {}
        for sec in pending_actions:
            action = self.action(sec)
            if action is None:
                continue
            self.unique_action(action, tools)
            d.actions.append(action)
        if self.diags:
            raise ContractError(self.sorted_diags())
        return d

    def unique_action(self, action: Action, tools: dict[str, Action]) -> None:
        """Two actions with one name (PDDL compares names case-insensitively), or whose names
        become the same tool name, are E0810: a plan could not say which one it means."""
        from .emit import tool_ident

        node = action.node
        where = node.items[1] if isinstance(node, SList) else node
        tool = tool_ident(action.name)
        other = tools.get(tool)
        if other is None:
            tools[tool] = action
        elif other.name == action.name:
            self.report(
                "E0810",
                f"action `{action.name}` is declared twice (at line {other.node.line})",
                where,
                "PDDL names are case-insensitive: rename one of them",
            )
        else:
            self.report(
                "E0810",
                f"actions `{other.name}` (line {other.node.line}) and `{action.name}` would "
                f"both become tool `{tool}`",
                where,
                "rename one of them (tool names keep letters, digits and `_`; others become `_`)",
            )

    def unknown_keyword(self, node: Node, known: Iterable[str]) -> None:
        text = node.text if isinstance(node, Sym) else "(…)"
        guess = did_you_mean(text.lower(), list(known))
        self.fail(
            "E0804",
            f"unknown keyword `{text}` here",
            node,
            f"did you mean `{guess}`?" if guess else "expected one of " + ", ".join(known),
        )

    def requirements(self, sec: SList) -> None:
        for item in sec.items[1:]:
            req = self.sym(item, "a requirement such as `:strips`", sec)
            if req.key in UNSUPPORTED:
                self.fail(
                    "E0805",
                    f"requirement `{req.text}` is not supported: {UNSUPPORTED[req.key]}",
                    req,
                    "the importer reads STRIPS, typing, negative/disjunctive/quantified "
                    "preconditions, equality, conditional effects and action costs",
                )
            if req.key not in SUPPORTED:
                guess = did_you_mean(req.key, sorted(SUPPORTED | set(UNSUPPORTED)))
                self.fail(
                    "E0804",
                    f"unknown requirement `{req.text}`",
                    req,
                    f"did you mean `{guess}`?" if guess else "see docs/pddl.md",
                )
            self.domain.requirements.append(req.key)

    def types(self, sec: SList) -> None:
        for t, parents, tnode in self.typed_list(sec.items[1:], "type", sec, False):
            parent = parents[0]
            if t.key == "object":
                continue
            old = self.domain.types.get(t.key)
            if old is not None and old != parent:
                self.fail(
                    "E0810",
                    f"type `{t.text}` is declared twice, under `{old}` and `{parent}`",
                    t,
                    "a type has one parent (multiple inheritance is not supported)",
                )
            self.domain.types[t.key] = parent
            self.type_nodes[t.key] = t
            if parent != "object" and tnode is not None:
                self.type_nodes.setdefault("#parent:" + parent, tnode)

    def check_types(self) -> None:
        d = self.domain
        for parent in list(d.types.values()):
            if parent != "object" and parent not in d.types:
                # a parent used but never declared itself is a type directly under object
                d.types[parent] = "object"
        for t in d.types:
            seen = {t}
            p = d.types[t]
            while p != "object":
                if p in seen:
                    self.fail(
                        "E0810",
                        f"type `{t}` is its own ancestor",
                        self.type_nodes.get(t),
                        "the type hierarchy must be a tree under `object`",
                    )
                seen.add(p)
                p = d.types[p]

    def known_type(self, t: str, node: Node | None) -> None:
        if t != "object" and t not in self.domain.types:
            guess = did_you_mean(t, list(self.domain.types))
            self.report(
                "E0806",
                f"undeclared type `{t}`",
                node,
                f"did you mean `{guess}`?" if guess else "declare it in `(:types …)`",
            )

    def add_object(self, table: dict[str, str], obj: Sym, t: str, tnode: Node | None) -> None:
        self.known_type(t, tnode)
        old = table.get(obj.key)
        if old is not None and old != t:
            self.report(
                "E0810",
                f"`{obj.text}` is declared twice, as `{old}` and as `{t}`",
                obj,
                "give each object one type",
            )
        table[obj.key] = t

    def params(self, node: SList, what: str) -> tuple[Param, ...]:
        out = []
        seen: set[str] = set()
        for var, types, tnode in self.typed_list(node.items, what, node):
            if not var.text.startswith("?"):
                self.fail(
                    "E0803",
                    f"`{var.text}` is not a variable",
                    var,
                    f"write `?{var.text}`",
                )
            for t in types:
                self.known_type(t, tnode)
            name = var.key[1:]
            if name in seen and what != "predicate parameter":
                self.report("E0810", f"variable `{var.text}` is declared twice", var, None)
            seen.add(name)
            out.append(Param(name, types))
        return tuple(out)

    def predicates(self, sec: SList) -> None:
        for item in sec.items[1:]:
            p = self.slist(item, "a predicate such as `(on ?x ?y)`", sec)
            name = self.sym(p.items[0] if p.items else None, "a predicate name", p)
            self.check_name(name, "a predicate")
            if name.key in self.domain.predicates:
                self.report("E0810", f"predicate `{name.text}` is declared twice", name, None)
            # parameter names of a declaration do not matter: (in ?obj ?obj) has arity 2
            self.domain.predicates[name.key] = self.params(
                SList(p.items[1:], p.line, p.col), "predicate parameter"
            )

    def functions(self, sec: SList) -> None:
        items = sec.items[1:]
        i = 0
        while i < len(items):
            f = self.slist(items[i], "a function such as `(total-cost)`", sec)
            name = self.check_name(
                self.sym(f.items[0] if f.items else None, "a function name", f), "a function"
            )
            i += 1
            dash = items[i] if i + 1 < len(items) else None
            if isinstance(dash, Sym) and dash.key == "-":
                rtype = items[i + 1]
                if not (isinstance(rtype, Sym) and rtype.key == "number"):
                    self.fail(
                        "E0805",
                        "a function that is not numeric needs :object-fluents, which the "
                        "importer does not support",
                        rtype,
                        "only numeric cost functions are read",
                    )
                i += 2
            self.domain.functions[name.key] = self.params(
                SList(f.items[1:], f.line, f.col), "function parameter"
            )

    # ------------------------------------------------------------------------ actions

    def action(self, sec: SList) -> Action | None:
        name = self.sym(sec.items[1] if len(sec.items) > 1 else None, "an action name", sec)
        self.check_name(name, "an action")
        params: tuple[Param, ...] = ()
        pre: Formula | None = None
        effects: tuple[Effect, ...] = ()
        items = sec.items[2:]
        if len(items) % 2:
            self.fail(
                "E0803",
                f"action `{name.text}`: every keyword needs a value",
                items[-1],
                "write `:parameters (…) :precondition (…) :effect (…)`",
            )
        scope: dict[str, tuple[str, ...]] = {}
        seen: dict[str, Sym] = {}
        for key_node, value in zip(items[0::2], items[1::2]):
            key = self.sym(key_node, "`:parameters`, `:precondition` or `:effect`", sec)
            if key.key in seen and key.key in (":parameters", ":precondition", ":effect"):
                self.report(
                    "E0810",
                    f"action `{name.text}` has a second `{key.text}` (the first is at line "
                    f"{seen[key.key].line})",
                    key,
                    f"give each action one `{key.key}`",
                )
                continue
            seen[key.key] = key
            if key.key == ":parameters":
                params = self.params(self.slist(value, "the parameters", key), "parameter")
                scope = {p.name: p.types for p in params}
            elif key.key == ":precondition":
                pre = self.formula(value, scope) if _nonempty(value) else None
            elif key.key == ":effect":
                effects = self.effects(value, scope) if _nonempty(value) else ()
            else:
                self.unknown_keyword(key, (":parameters", ":precondition", ":effect"))
        return Action(name.key, params, pre, effects, sec)

    def term(self, node: Node, scope: dict[str, tuple[str, ...]]) -> Term:
        s = self.sym(node, "a variable or an object name", node)
        if s.text.startswith("?"):
            if s.key[1:] not in scope:
                self.report(
                    "E0806",
                    f"undeclared variable `{s.text}`",
                    s,
                    "declare it in the action's `:parameters` or in a quantifier",
                )
            return Term(s.key[1:], True)
        if s.key not in self.objects():
            guess = did_you_mean(s.key, list(self.objects()))
            self.report(
                "E0806",
                f"undeclared object or constant `{s.text}`",
                s,
                f"did you mean `{guess}`?" if guess else "declare it in `(:constants …)`",
            )
        return Term(s.key, False)

    def objects(self) -> dict[str, str]:
        return self.domain.constants

    def term_types(self, t: Term, scope: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
        if t.is_var:
            return scope.get(t.name, ("object",))
        return (self.objects().get(t.name, "object"),)

    def atom(self, node: SList, scope: dict[str, tuple[str, ...]], added: bool = False) -> Atom:
        """An atom, its predicate, arity and argument types checked. An ``added`` atom (an add
        effect) must be of the declared types for every value of its variables."""
        name = self.sym(node.items[0] if node.items else None, "a predicate name", node)
        args = tuple(self.term(a, scope) for a in node.items[1:])
        decl = self.domain.predicates.get(name.key)
        if decl is None:
            guess = did_you_mean(name.key, list(self.domain.predicates))
            self.report(
                "E0806",
                f"undeclared predicate `{name.text}`",
                name,
                f"did you mean `{guess}`?" if guess else "declare it in `(:predicates …)`",
            )
            return Atom(name.key, args)
        if len(args) != len(decl):
            self.report(
                "E0807",
                f"`{name.text}` takes {len(decl)} argument(s), {len(args)} given",
                node,
                f"declared as ({name.key}"
                + "".join(f" ?{p.name} - {'|'.join(p.types)}" for p in decl)
                + ")",
            )
            return Atom(name.key, args)
        objects = self.objects()
        for arg, p, anode in zip(args, decl, node.items[1:]):
            if not arg.is_var and (objects.get(arg.name, "object"), p.types) in self.fits:
                continue  # the common case of a fact in :init, decided once per type
            self.check_arg(arg, p, anode, scope, name.key, added)
        return Atom(name.key, args)

    def check_arg(
        self,
        arg: Term,
        p: Param,
        node: Node,
        scope: dict[str, tuple[str, ...]],
        pred: str,
        added: bool = False,
    ) -> None:
        if (arg.name not in scope) if arg.is_var else (arg.name not in self.objects()):
            return  # undeclared: reported once, as such
        have = self.term_types(arg, scope)
        if arg.is_var and added:
            # an add effect makes the atom true for every value: each must be of the type
            if all(any(w in self.ancestors(h) for w in p.types) for h in have):
                return
        elif arg.is_var and any(self.overlaps(h, w) for h in have for w in p.types):
            return  # a variable may be of a supertype: the atom is then false for some values
        if not arg.is_var and any(w in self.ancestors(have[0]) for w in p.types):
            self.fits.add((have[0], p.types))
            return
        wanted = "`" + "|".join(p.types) + "`"
        if arg.is_var and added:
            self.report(
                "E0808",
                f"this effect adds `{pred}` for `?{arg.name}` of type `{'|'.join(have)}`, but "
                f"`{pred}` holds only {article(wanted)} there",
                node,
                f"declare `?{arg.name}` with type `{'|'.join(p.types)}` (or a subtype), or widen "
                f"`{pred}`'s parameter",
            )
            return
        self.report(
            "E0808",
            f"argument `{'?' if arg.is_var else ''}{arg.name}` of `{pred}` is of type "
            f"`{'|'.join(have)}`, which is not {article(wanted)}",
            node,
            "pass an object of the declared type",
        )

    def ancestors(self, t: str) -> list[str]:
        """``t`` and the types above it (remembered: a problem asks this for every argument)."""
        cached = self.ancestor_cache.get(t)
        if cached is None:
            cached = self.ancestor_cache[t] = self.find_ancestors(t)
        return cached

    def find_ancestors(self, t: str) -> list[str]:
        out = [t]
        seen = {t}
        while t != "object":
            t = self.domain.types.get(t, "object")
            if t in seen:
                break
            seen.add(t)
            out.append(t)
        return out

    def overlaps(self, a: str, b: str) -> bool:
        """Whether a value can be of both types (one is the other's subtype)."""
        return b in self.ancestors(a) or a in self.ancestors(b)

    def formula(self, node: Node, scope: dict[str, tuple[str, ...]]) -> Formula:
        f = self.slist(node, "a condition", node)
        head = f.head_key
        args = f.items[1:]
        if head == "and":
            return And(tuple(self.formula(a, scope) for a in args))
        if head == "or":
            return Or(tuple(self.formula(a, scope) for a in args))
        if head == "not":
            self.arity(f, 1)
            return Not(self.formula(args[0], scope))
        if head == "imply":
            self.arity(f, 2)
            return Imply(self.formula(args[0], scope), self.formula(args[1], scope))
        if head in ("exists", "forall"):
            self.arity(f, 2)
            params = self.params(self.slist(args[0], "the quantified variables", f), "variable")
            inner = dict(scope)
            inner.update({p.name: p.types for p in params})
            return Quant(head, params, self.formula(args[1], inner))
        if head == "=":
            self.arity(f, 2)
            if isinstance(args[0], SList) or isinstance(args[1], SList):
                self.fail(
                    "E0805",
                    "a numeric comparison needs :numeric-fluents, which is not supported",
                    f,
                    "only `(= ?a ?b)` between objects (:equality) is read",
                )
            left, right = self.term(args[0], scope), self.term(args[1], scope)
            return Eq(left, right, self.can_equal(left, right, scope))
        if head in NUMERIC_HEADS:
            self.fail(
                "E0805",
                f"`{head}` compares numbers: :numeric-fluents is not supported",
                f.items[0],
                "only `total-cost` (:action-costs) is read",
            )
        if head in ("when", "preference", "at", "over") and head not in self.domain.predicates:
            self.fail("E0803", f"`{head}` is not allowed in a condition", f.items[0], HINT_SHAPE)
        if not f.items:
            self.fail("E0803", "an empty condition `()`", f, "write `(and)` for no condition")
        return self.atom(f, scope)

    def can_equal(self, a: Term, b: Term, scope: dict[str, tuple[str, ...]]) -> bool:
        """Whether ``(= a b)`` can hold: two constants are equal when they are one; a variable
        can be a constant when the constant's type is (under) one of the variable's; two
        variables when their types overlap."""
        if not a.is_var and not b.is_var:
            return a.name == b.name
        if not a.is_var:
            a, b = b, a
        have = self.term_types(a, scope)
        if not b.is_var:
            return any(t in self.ancestors(self.term_types(b, scope)[0]) for t in have)
        return any(self.overlaps(x, y) for x in have for y in self.term_types(b, scope))

    def arity(self, f: SList, n: int) -> None:
        if len(f.items) - 1 != n:
            self.fail(
                "E0807",
                f"`{f.head_key}` takes {n} argument(s), {len(f.items) - 1} given",
                f,
                HINT_SHAPE,
            )

    def effects(self, node: Node, scope: dict[str, tuple[str, ...]]) -> tuple[Effect, ...]:
        e = self.slist(node, "an effect", node)
        head = e.head_key
        args = e.items[1:]
        if head == "and":
            out: list[Effect] = []
            for a in args:
                out.extend(self.effects(a, scope))
            return tuple(out)
        if head == "not":
            self.arity(e, 1)
            return (Lit(self.atom(self.slist(args[0], "an atom", e), scope), False),)
        if head == "when":
            self.arity(e, 2)
            cond = self.formula(args[0], scope)
            then = self.effects(args[1], scope)
            self.no_nested_cost(then, e)
            return (When(cond, then),)
        if head == "forall":
            self.arity(e, 2)
            params = self.params(self.slist(args[0], "the quantified variables", e), "variable")
            inner = dict(scope)
            inner.update({p.name: p.types for p in params})
            body = self.effects(args[1], inner)
            self.no_nested_cost(body, e)
            return (ForallEff(params, body),)
        if head in NUMERIC_EFFECTS:
            return (self.cost(e, scope),)
        if not e.items:
            return ()
        return (Lit(self.atom(e, scope, added=True), True),)

    def cost_number(self, s: Sym) -> int | float:
        """An action cost: a finite number, not negative (:action-costs)."""
        value: int | float
        try:
            value = int(s.text)
        except ValueError:
            try:
                value = float(s.text)
            except ValueError:
                self.fail("E0803", f"`{s.text}` is not a number", s, HINT_SHAPE)
                raise AssertionError from None  # pragma: no cover
        if not math.isfinite(value) or value < 0:
            self.fail(
                "E0803",
                f"`{s.text}` is not a cost: action costs are finite and not negative",
                s,
                "write a number such as 0, 3 or 2.5 (:action-costs)",
            )
        return value

    def no_nested_cost(self, effects: tuple[Effect, ...], at: SList) -> None:
        if any(isinstance(x, Cost) for x in effects):
            self.fail(
                "E0805",
                f"`(increase (total-cost) …)` inside `{at.head_key}` is not supported",
                at.items[0],
                "a tool's cost cannot depend on a conditional effect; move the increase to the "
                "top level of the effect",
            )

    def cost(self, e: SList, scope: dict[str, tuple[str, ...]]) -> Cost:
        head = e.head_key
        target = e.items[1] if len(e.items) > 1 else None
        if (
            head != "increase"
            or not isinstance(target, SList)
            or target.head_key != TOTAL_COST
            or len(e.items) != 3
        ):
            self.fail(
                "E0805",
                f"`({head} …)` changes a numeric fluent: :numeric-fluents is not supported",
                e.items[0],
                "only `(increase (total-cost) N)` (:action-costs) is read",
            )
        amount = e.items[2]
        if isinstance(amount, Sym):
            return Cost(self.cost_number(amount))
        fname = self.sym(amount.items[0] if amount.items else None, "a function name", amount)
        decl = self.domain.functions.get(fname.key)
        if decl is None or fname.key == TOTAL_COST:
            self.fail(
                "E0806",
                f"undeclared cost function `{fname.text}`",
                fname,
                "declare it in `(:functions …)`",
            )
            raise AssertionError  # pragma: no cover
        args = tuple(self.term(a, scope) for a in amount.items[1:])
        if len(args) != len(decl):
            self.fail(
                "E0807",
                f"`{fname.text}` takes {len(decl)} argument(s), {len(args)} given",
                amount,
                None,
            )
        return Cost(CostTerm(fname.key, args))


def _nonempty(node: Node) -> bool:
    return not (
        isinstance(node, SList)
        and (not node.items or (node.head_key == "and" and len(node.items) == 1))
    )


# ----------------------------------------------------------------------------------- problem


class ProblemReader(DomainReader):
    def __init__(self, file: str, domain: Domain) -> None:
        super().__init__(file)
        self.domain = domain
        self.problem: Problem | None = None
        self.all_objects: dict[str, str] | None = None

    def objects(self) -> dict[str, str]:
        # built once, after `:objects` (a dict per term made reading 180,000 facts quadratic)
        if self.all_objects is None:
            assert self.problem is not None
            return {**self.domain.constants, **self.problem.objects}
        return self.all_objects

    def read(self, text: str) -> Problem:  # type: ignore[override]
        root, name = _root(read_sexprs(text, self.file), "problem", self.file)
        p = Problem(name=name, file=self.file, domain_name="")
        self.problem = p
        goal: Node | None = None
        once: dict[str, SList] = {}
        for section in root.items[2:]:
            sec = self.slist(section, "a problem section such as `(:init …)`", root)
            head = sec.head_key
            if head in (":domain", ":objects", ":init", ":goal", ":metric"):
                if head in once:
                    self.report(
                        "E0810",
                        f"a second `({head} …)` section (the first is at line {once[head].line})",
                        sec.items[0],
                        f"merge them into one `({head} …)`",
                    )
                    continue
                once[head] = sec
            if head == ":domain":
                dname = self.sym(sec.items[1] if len(sec.items) > 1 else None, "a name", sec)
                p.domain_name = dname.key
                if dname.key != self.domain.name:
                    self.report(
                        "E0809",
                        f"the problem is for domain `{dname.text}`, not `{self.domain.name}`",
                        dname,
                        "pass the domain file this problem was written for",
                    )
            elif head == ":objects":
                for obj, types, tnode in self.typed_list(sec.items[1:], "object", sec, False):
                    if obj.text.startswith("?"):
                        self.report(
                            "E0803",
                            f"`{obj.text}` is a variable: objects are plain names",
                            obj,
                            f"write `{obj.text[1:]}`",
                        )
                        continue
                    if obj.key in self.domain.constants:
                        continue  # repeating a constant as an object is harmless
                    self.add_object(p.objects, obj, types[0], tnode)
            elif head == ":goal":
                if len(sec.items) != 2:
                    self.fail("E0807", "`:goal` takes one condition", sec, None)
                goal = sec.items[1]
            elif head == ":metric":
                self.metric(sec)
            elif head in (":init", ":length"):
                pass
            elif head == ":requirements":
                self.requirements(sec)
            elif head == ":constraints":
                self.fail(
                    "E0805",
                    "`:constraints` needs :constraints (state trajectory constraints), which "
                    "is not supported",
                    sec.items[0],
                    None,
                )
            else:
                self.unknown_keyword(sec.items[0] if sec.items else sec, PROBLEM_SECTIONS)
        if ":domain" not in once:
            self.report(
                "E0803",
                "the problem does not name its domain",
                root.items[1],
                f"add `(:domain {self.domain.name})` after `(problem {name})`",
            )
        if ":goal" not in once:
            self.report(
                "E0803",
                "the problem has no `(:goal …)`",
                root.items[1],
                "add the condition a plan must reach, e.g. `(:goal (and …))`",
            )
        self.all_objects = {**self.domain.constants, **p.objects}
        if ":init" in once:
            self.init(once[":init"])
        if goal is not None and _nonempty(goal):
            p.goal = self.formula(goal, {})
        for func in sorted(self.constant_costs() - {f for f, args in p.costs if not args}):
            at = once.get(":init")
            self.report(
                "E0803",
                f"the action cost `({func})` has no value in `:init`",
                at.items[0] if at is not None else root.items[1],
                f"add `(= ({func}) N)` to `:init`",
            )
        if self.diags:
            raise ContractError(self.sorted_diags())
        return p

    def constant_costs(self) -> set[str]:
        """The functions without arguments that actions add to the total cost."""
        return {
            e.amount.func
            for a in self.domain.actions
            for e in a.effects
            if isinstance(e, Cost) and isinstance(e.amount, CostTerm) and not e.amount.args
        }

    def metric(self, sec: SList) -> None:
        ok = (
            len(sec.items) == 3
            and isinstance(sec.items[1], Sym)
            and sec.items[1].key == "minimize"
            and isinstance(sec.items[2], SList)
            and sec.items[2].head_key in (TOTAL_COST, "total-time")
        )
        if not ok:
            self.fail(
                "E0805",
                "only `(:metric minimize (total-cost))` is supported",
                sec,
                "other metrics need :numeric-fluents",
            )

    def init(self, sec: SList) -> None:
        assert self.problem is not None
        for item in sec.items[1:]:
            fact = self.slist(item, "a fact such as `(on a b)`", sec)
            head = fact.head_key
            if head == "=":
                self.init_cost(fact)
            elif head == "not":
                self.arity(fact, 1)
                self.atom(self.slist(fact.items[1], "an atom", fact), {})  # false anyway
            elif head == "at" and "at" not in self.domain.predicates:
                self.fail(
                    "E0805",
                    "a timed initial literal needs :timed-initial-literals, which is not supported",
                    fact,
                    None,
                )
            else:
                self.problem.init.append(self.atom(fact, {}))

    def init_cost(self, fact: SList) -> None:
        assert self.problem is not None
        self.arity(fact, 2)
        target, value = fact.items[1], fact.items[2]
        f = self.slist(target, "a function term such as `(road-length a b)`", fact)
        fname = self.sym(f.items[0] if f.items else None, "a function name", f)
        decl = self.domain.functions.get(fname.key)
        if decl is None:
            self.fail(
                "E0806",
                f"undeclared function `{fname.text}`",
                fname,
                "declare it in the domain's `(:functions …)`",
            )
            raise AssertionError  # pragma: no cover
        args = tuple(self.term(a, {}) for a in f.items[1:])
        if len(args) != len(decl):
            self.fail(
                "E0807", f"`{fname.text}` takes {len(decl)} argument(s), {len(args)} given", f, None
            )
        number = self.cost_number(self.sym(value, "a number", fact))
        self.problem.costs[(fname.key, tuple(a.name for a in args))] = number


def read_domain(text: str, file: str) -> Domain:
    """Parse and check a domain. Raises :class:`ContractError` with located diagnostics."""
    return DomainReader(file).read(text)


def read_problem(text: str, file: str, domain: Domain) -> Problem:
    """Parse and check a problem against its domain."""
    return ProblemReader(file, domain).read(text)
