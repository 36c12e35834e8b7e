#!/usr/bin/env bash
# The main job: open the quickstart tutorial (offline scripted model) in JupyterLab.
# With --headless, run it top to bottom without a browser and print what it shows
# as text (each cell's source and outputs, the turn's transcript).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh --minimal
if [ "${1:-}" = "--headless" ]; then
  exec .venv/bin/python scripts/headless.py --timeout 120 notebooks/01-quickstart.ipynb
fi
exec .venv/bin/jupyter lab --notebook-dir="$root/notebooks" "$root/notebooks/01-quickstart.ipynb"
