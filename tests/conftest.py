"""Shared test configuration.

Hypothesis profiles: the default run (the README's ``python -m pytest``) tries 50 examples per
property of ``test_compile.py`` and ``test_fuzz.py``; ``.ci/run`` sets ``HYPOTHESIS_PROFILE=ci``
for 200. (A test that names its own ``max_examples`` keeps it.)

Helpers that many test files share are below; import them with ``from conftest import …``
(pytest puts tests/ on ``sys.path``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

settings.register_profile("dev", max_examples=50)
settings.register_profile("ci", max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def write(folder: Path, name: str, text: str) -> str:
    """Write ``text`` (UTF-8) to ``folder/name`` and return the path as a string."""
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def cli(*args: str) -> Result:
    """Run the ``contractsim`` command in-process with click's runner."""
    from contractsim.cli import main

    return CliRunner().invoke(main, list(args))


def cli_exit(*args: str) -> tuple[int, str]:
    """Run the command, which must end with an exit code (no escaping exception); return the
    exit code and the output."""
    result = cli(*args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


# A small contract with constrained types, an enum with odd members and a guarded machine, read by
# the export and render tests that came from review.
REVIEW_CONTRACT = """contract t version "1.0.0"
type Lower = str pattern r"^[a-z]+$"
type Percent = float min 0 max 100
type Odd = enum { plain, "x\\"y", "new\\nline" }
state { count: int = 0 }
tool g(a?: map[str, int], b: Lower pattern r"^a", c: Percent max 200, o: Odd = "plain") { }
tool start() { }
tool stop() { }
machine life {
  states idle, busy
  initial idle
  final idle
  idle -> busy on start when count < 3
  busy -> busy on g
  busy -> idle on stop
}
"""


def _integrations_doc_example(section: str) -> tuple[str, str]:
    """The first ```python block of a section of docs/integrations.md and the ```text block
    after it (what the example prints)."""
    text = (Path(__file__).parents[1] / "docs" / "integrations.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    code_at = text.index("```python\n", start) + len("```python\n")
    code = text[code_at : text.index("```", code_at)]
    out_at = text.index("```text\n", code_at) + len("```text\n")
    return code, text[out_at : text.index("```", out_at)]


@pytest.fixture
def integrations_doc_example() -> Callable[[str], tuple[str, str]]:
    """Reads a section's example of docs/integrations.md (tests/test_integrations_*.py)."""
    return _integrations_doc_example
