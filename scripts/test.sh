#!/usr/bin/env bash
# Every check the project has: lint, types, frontend tests, Python tests on real
# kernels (every supported ipykernel), real JupyterLab in Chromium, and the tutorials.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
export PATH="$root/.venv/bin:$PATH"

echo "== ruff"; ruff check . && ruff format --check .
echo "== mypy"; mypy
echo "== typecheck"; (cd js && npm run typecheck --silent)
echo "== vitest"; (cd js && npm test --silent)
echo "== pytest"; pytest --nbval "$@"
