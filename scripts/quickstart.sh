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
# Real-time collaboration (jupyter-collaboration, in the dev extra) stays off: it is for
# the tests that ask for it, and it would leave .jupyter_ystore.db in the checkout.
exec .venv/bin/jupyter lab --YDocExtension.disable_rtc=True --notebook-dir="$root/notebooks" "$root/notebooks/01-quickstart.ipynb"
