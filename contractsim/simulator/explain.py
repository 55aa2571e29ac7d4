"""Failure explanation: evaluating a condition so that a failure becomes a violation that says
what broke and why (the values of its parts, the contract line, a precise message from the
reference interpreter), rendering messages and hints, and the calls that would unlock a protocol."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from ..compiler import lib
from ..compiler.compile import CCondition, CompiledContract, CTool, TemplateFn
from ..compiler.interp import Env
from ..compiler.values import show
from .fast import NullContext
from .results import Branch, StepWarning, Violation
from .state import State


class Explainer:
    """Evaluates a contract's conditions for one simulator, turning failures into violations."""

    def __init__(self, compiled: CompiledContract, today: str, now: str) -> None:
        self.compiled = compiled
        self.today, self.now = today, now
        self._env_base = dict(compiled.consts)
        self._null_ctx = NullContext(today, now)
        self.explain = True
        """Show the values of a failed condition's parts in its violation."""
        self.messages = True
        """Render the message and hint templates of violations (off: the default texts)."""

    def eval(
        self,
        fn: Any,
        state: State,
        values: dict[str, Any],
        safe: bool,
        ctool: CTool | None,
        result: Any = None,
        precise_errors: bool = True,
    ) -> Any:
        """``fn``'s value, or an ``EVAL_ERROR`` violation; its message comes from the reference
        interpreter (precise: which part failed) unless ``precise_errors`` is off (the caller
        drops the violation)."""
        try:
            return (fn.safe if safe else fn.fast)(
                state.data, values, result, state.data, self._null_ctx
            )
        except Exception as exc:  # noqa: BLE001 - generated code failing is a contract error
            precise = (
                self.interpreted_expr_error(fn, state, values, result) if precise_errors else None
            )
            return Violation(
                "EVAL_ERROR",
                f"the contract cannot evaluate this: {precise or lib.failure_text(exc)}",
                "evaluation",
                location=self.loc(fn.span),
                hint="guard the expression (e.g. `k in m and m[k] …`) in the contract",
            )

    def interpreted_expr_error(
        self, fn: Any, state: State, values: dict[str, Any], result: Any = None
    ) -> str | None:
        """Re-run a failed expression in the reference interpreter for a precise message."""
        if fn.ir is None:
            return None
        try:
            self.compiled.interpreter.eval(fn.ir, self.env(state, values, result))
        except lib.EvalError as exc:
            return str(exc)
        except Exception:  # noqa: BLE001
            return None
        return None

    def interpreted_error(
        self,
        body: Any,
        state: State,
        values: dict[str, Any],
        result: Any = None,
        old: State | None = None,
    ) -> tuple[str | None, Any]:
        """Re-run failed statements in the reference interpreter (with the same ``result``, and
        ``old``, the state before the call, which a tool's `let` reads in effects): a precise
        message and the span of the statement that failed."""
        if body.ir is None:
            return None, None
        env = self.env(state, values, result)
        if old is not None:
            env.old = {n: old[n] for n in self.compiled.state_names}
        try:
            self.compiled.interpreter.exec(body.ir, env)
        except lib.EvalError as exc:
            return str(exc), getattr(exc, "span", None)
        except Exception:  # noqa: BLE001
            return None, None
        return None, None

    def env(self, state: State, values: Mapping[str, Any], result: Any = None) -> Env:
        return Env(
            self.compiled.ir,
            state={n: state[n] for n in self.compiled.state_names},
            args=dict(values),
            consts=self._env_base,
            result=result,
            today=self.today,
            now=self.now,
            safe=True,
        )

    def condition_violation(
        self, cond: CCondition, state: State, values: dict[str, Any], ctool: CTool, certain: bool
    ) -> Violation:
        safe = state.has_unknown
        message = self.render(cond.message, state, values, ctool, safe)
        hint = self.render(cond.hint, state, values, ctool, safe)
        explained = (
            self.compiled.interpreter.explain(cond.ir.cond, self.env(state, values))
            if self.explain
            else ()
        )
        shown = tuple(
            (text, v if isinstance(v, str) and v.startswith("<error") else show(v))
            for text, v in explained
        )
        code = cond.ir.code or (
            "PRECONDITION_FAILED" if cond.ir.strength == "require" else "SOFT_PRECONDITION"
        )
        text = cond_text(cond)
        if message is None:
            message = f"`{text}` is {'false' if certain else 'unknown'}"
        elif not certain:
            message = f"{message} (unknown: `{text}` cannot be decided)"
        return Violation(
            code,
            message,
            "precondition",
            hint=hint,
            location=self.loc(cond.ir.span),
            values=shown,
            certain=certain,
        )

    def not_bool(self, cond: CCondition, result: Any) -> Violation:
        return Violation(
            "EVAL_ERROR",
            f"`{cond_text(cond)}` is {show(result)}, not true or false",
            "evaluation",
            location=self.loc(cond.ir.span),
        )

    def render(
        self,
        t: TemplateFn | None,
        state: State,
        values: dict[str, Any],
        ctool: CTool,
        safe: bool,
        result: Any = None,
    ) -> str | None:
        if t is None or not self.messages:
            return None
        if t.values is None:
            return t.render(())
        try:
            vals = (t.values.safe if state.has_unknown or safe else t.values.fast)(
                state.data, values, result, state.data, self._null_ctx
            )
        except Exception:  # noqa: BLE001 - a message hole that fails still renders
            vals = tuple("<error>" for _ in t.template.parts if _ is not None)
        return t.render(vals)

    def warning(self, code: str, key: str, vals: tuple[Any, ...]) -> StepWarning:
        t = self.compiled.warn_templates.get(key)
        return StepWarning(code, t.render(vals) if t is not None else code)

    def eval_failure(
        self, state: State, code: str, message: str, span: Any, precise: str | None = None
    ) -> Branch:
        v = Violation(
            code,
            f"the contract cannot evaluate this: {precise or message}"
            if code == "EVAL_ERROR"
            else message,
            "evaluation",
            location=self.loc(span),
        )
        return Branch(None, "fails", state, violations=[v])

    def loc(self, span: Any) -> str | None:
        if span is None or not getattr(span, "file", None):
            return None
        return f"{span.file}:{span.line}"

    def path_to(self, m: Any, start: str, goals: set[str]) -> list[str]:
        """Shortest sequence of tool calls that moves machine ``m`` into one of ``goals``."""
        if start in goals:
            return []
        seen = {start}
        queue: deque[tuple[str, list[str]]] = deque([(start, [])])
        edges: dict[str, list[tuple[str, str]]] = {}
        for tool, by_source in sorted(m.by_tool.items()):
            for source, transitions in by_source.items():
                for t in transitions:
                    edges.setdefault(source, []).append((t.ir.target, tool))
        while queue:
            node, path = queue.popleft()
            for target, tool in edges.get(node, []):
                if target in seen:
                    continue
                if target in goals:
                    return path + [tool]
                seen.add(target)
                queue.append((target, path + [tool]))
        return []


_COND_TEXTS: dict[int, tuple[CCondition, str]] = {}  # id → (the condition, its text)


def cond_text(cond: CCondition) -> str:
    known = _COND_TEXTS.get(id(cond))
    if known is not None and known[0] is cond:
        return known[1]
    from ..dsl.pretty import expr_text

    text = expr_text(cond.ir.cond)
    if len(_COND_TEXTS) >= 10_000:
        _COND_TEXTS.clear()
    _COND_TEXTS[id(cond)] = (cond, text)
    return text


def when_text(t: Any) -> str:
    from ..dsl.pretty import expr_text

    return expr_text(t.ir.when) if t.ir.when is not None else "true"
