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
