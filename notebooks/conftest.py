"""Settings for running the tutorials under nbval: the kernels import this checkout."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
)
for name in ("MEAD_OPENAI_BASE_URL", "MEAD_OPENAI_MODEL", "MEAD_ANTHROPIC_MODEL"):
    os.environ.pop(name, None)
