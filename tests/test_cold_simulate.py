"""Round 2 of issue 13 (branch s6b-start): shortcuts on the path of a cold ``simulate`` that
must not change what it computes. Each shortcut is compared with the code it replaces."""

from __future__ import annotations

import re

import pytest

from contractsim.compiler.codegen import _comment
from contractsim.simulator.formats import _looks_like_ipc


def _comment_before(text: str) -> str:
    """What ``_comment`` was before its printable fast path."""
    return "".join(ch if ch.isprintable() else " " for ch in text)[:200]


def _looks_like_ipc_before(text: str) -> bool:
    """What ``_looks_like_ipc`` was before the digit pre-check."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    code = [ln for ln in lines if not ln.startswith(";")]
    if not code:
        return bool(lines)
    return any(ln.startswith("(") or re.match(r"\d+(\.\d+)?\s*:\s*\(", ln) for ln in code)


COMMENT_TEXTS = [
    "",
    "x > 0",
    'name == "a\\nb"',
    "a\rb",
    "a\x00b\x1fc",
    "tab\there",
    "é ü 日本 \u200b zero-width",
    "\u2028line separator",
    "x" * 250,
    "x" * 199 + "\n" + "y" * 10,
    "\x7f" * 3,
]


@pytest.mark.parametrize("text", COMMENT_TEXTS)
def test_generated_comments_are_unchanged(text: str) -> None:
    assert _comment(text) == _comment_before(text)


def test_a_control_character_in_a_comment_is_still_a_space() -> None:
    assert _comment("a\rb\x00c") == "a b c"
    assert _comment("x" * 300) == "x" * 200


PLAN_TEXTS = [
    "",
    "   \n\n",
    "; cost = 0 (unit cost)\n",
    "(open a)\n(close a)\n",
    "0: (open a) [1]\n",
    "0.5 : (open a)\n",
    "12:(x)\n",
    "\u0661: (open a)\n",  # an Arabic-Indic digit: ``\d`` matches it
    "\u00b2: (open a)\n",  # a superscript: isdigit() but not ``\d``
    "steps:\n  - tool: read_file\n    args: {path: /a}\n",
    '{"steps": [{"tool": "read_file", "args": {"path": "/a"}}]}',
    "- 1: (not a step\n",
    "1: x\n2: y\n",
    "10:\n  (a)\n",
    "; only\n; comments\nsteps: []\n",
]


@pytest.mark.parametrize("text", PLAN_TEXTS)
def test_plan_format_detection_is_unchanged(text: str) -> None:
    assert _looks_like_ipc(text) is _looks_like_ipc_before(text)


def test_timed_ipc_steps_are_still_recognised() -> None:
    assert _looks_like_ipc("0: (open a)\n") is True
    assert _looks_like_ipc("1: x\n") is False


# -- record classes: the decorator's field processing done in records.py -----------------------

_DESCRIBE = r"""
import dataclasses, importlib, json, pkgutil, sys
import contractsim.records as records
records._FIELDS_HERE = sys.argv[1] == "here"
import contractsim
names = sorted(info.name for info in pkgutil.walk_packages(contractsim.__path__, "contractsim."))
for module_name in names:
    try:
        importlib.import_module(module_name)
    except ImportError:
        pass
def text(value):
    return value if isinstance(value, str) else repr(value)
out = {}
for name, module in sorted(sys.modules.items()):
    if not name.startswith("contractsim"):
        continue
    for cls in vars(module).values():
        if not isinstance(cls, type) or "__dataclass_fields__" not in cls.__dict__:
            continue
        if cls.__module__ != name:
            continue
        fields = [
            [f.name, text(f.type), text(f.default), text(f.default_factory), f.init, f.repr,
             f.hash, f.compare, text(f.kw_only), f._field_type.name, dict(f.metadata)]
            for f in cls.__dataclass_fields__.values()
        ]
        params = cls.__dataclass_params__
        out[f"{name}.{cls.__qualname__}"] = {
            "fields": fields,
            "match_args": list(getattr(cls, "__match_args__", ())),
            "slots": list(cls.__dict__.get("__slots__", ())),
            "dict": sorted(cls.__dict__),
            "params": repr(params),
            "bases": [b.__qualname__ for b in cls.__mro__],
            "doc": cls.__doc__,
            "hash": cls.__dict__.get("__hash__", "-") is None,
        }
print(json.dumps(out, sort_keys=True, default=repr))
"""


@pytest.mark.slow
def test_every_record_class_is_made_as_the_decorator_makes_it() -> None:
    """Every class of the package made with ``record``: the same fields (every attribute),
    ``__match_args__``, ``__slots__``, class attributes, parameters and MRO whether the
    decorator or ``records._fields_made_here`` processed its fields."""
    import json
    import subprocess
    import sys

    def describe(mode: str) -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", _DESCRIBE, mode], capture_output=True, text=True, check=True
        )
        # object addresses (``<function f at 0x…>``) differ between processes
        result: dict[str, object] = json.loads(re.sub(r" at 0x[0-9a-f]+", "", done.stdout))
        return result

    here, decorator = describe("here"), describe("decorator")
    assert len(here) > 150
    assert here == decorator
