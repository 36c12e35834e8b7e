#!/usr/bin/env bash
# Every check the project has: lint, types, frontend tests, Python tests on real
# kernels (every supported ipykernel), real JupyterLab in Chromium, and the tutorials.
#
# The Python tests run in parallel (pytest-xdist: MEAD_TEST_WORKERS workers, 4 unless
# set; they mostly wait on kernels, servers and browsers). The run ends with its
# slowest tests and the time per area, also in tests/artifacts/durations.json with
# the setup's and the other checks' seconds beside the tests' (total_s).
set -euo pipefail
# Python keeps what it compiles: the run starts hundreds of interpreters (kernels,
# agents, servers, workers), and each would otherwise compile every module it imports.
unset PYTHONDONTWRITEBYTECODE
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
started=$SECONDS
bash scripts/setup.sh
export MEAD_SETUP_S=$((SECONDS - started))
export PATH="$root/.venv/bin:$PATH"

started=$SECONDS
echo "== ruff"
ruff check .
ruff format --check .
# mypy, tsc and vitest at once, each with its own output, shown in order.
logs="$(mktemp -d)"
mypy >"$logs/mypy" 2>&1 &
mypy_pid=$!
(cd js && npm run typecheck --silent) >"$logs/typecheck" 2>&1 &
tsc_pid=$!
(cd js && npm test --silent) >"$logs/vitest" 2>&1 &
vitest_pid=$!
failed=0
for check in mypy:$mypy_pid typecheck:$tsc_pid vitest:$vitest_pid; do
  name=${check%%:*}
  echo "== $name"
  wait "${check#*:}" || failed=1
  cat "$logs/$name"
done
rm -rf "$logs"
[ $failed = 0 ] || { echo "checks failed" >&2; exit 1; }
export MEAD_CHECKS_S=$((SECONDS - started))

echo "== pytest"
MEAD_TESTS_STARTED="$(date +%s.%N)" pytest --nbval -n "${MEAD_TEST_WORKERS:-4}" --dist loadgroup --durations=25 "$@"
