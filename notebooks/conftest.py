"""Settings for running the tutorials under nbval: the kernels import this checkout, and
outputs are compared through ``nbval-sanitize.cfg`` unless another file is given."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SANITIZE = Path(__file__).resolve().with_name("nbval-sanitize.cfg")

os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
)
for name in ("MEAD_OPENAI_BASE_URL", "MEAD_OPENAI_MODEL", "MEAD_ANTHROPIC_MODEL"):
    os.environ.pop(name, None)


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "nbval_sanitize_with", "") is None:
        config.option.nbval_sanitize_with = str(SANITIZE)
