"""CI runs the integration tests for real: their packages (the `test` extra) must be installed
there, so that ``pytest.importorskip`` in tests/test_integrations_*.py cannot skip them quietly."""

from __future__ import annotations

import importlib.util
import os

import pytest


@pytest.mark.parametrize(
    ("module", "extra"), [("langchain_core", "langchain"), ("agents", "openai-agents")]
)
def test_integration_packages_are_installed_in_ci(module: str, extra: str) -> None:
    if not os.environ.get("CI"):
        pytest.skip("outside CI the integration tests may skip when their package is missing")
    assert importlib.util.find_spec(module) is not None, (
        f"CI must install {module} (pip install -e '.[test]' includes contractsim[{extra}])"
    )
