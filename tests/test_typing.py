"""mypy finds no error in the two packages (issue 25): the configuration is
pyproject.toml's ``[tool.mypy]``, and mypy is pinned in the dev extra, so the
README's test command enforces it in CI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mypy_finds_no_error_in_proxy_and_memory_core() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "proxy", "memory_core"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert run.returncode == 0 and not errors, run.stdout + run.stderr
