#!/usr/bin/env bash
# Create everything the project needs on a fresh machine; safe to run again.
# Usage: scripts/setup.sh [--minimal]   (--minimal: no browser, no kernel matrix)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
minimal=0
[ "${1:-}" = "--minimal" ] && minimal=1

need_apt=()
command -v npm >/dev/null 2>&1 || need_apt+=(nodejs npm)
[ $minimal = 1 ] || [ -x /usr/bin/chromium ] || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: please install Debian packages: ${need_apt[*]} (sudo apt-get install ${need_apt[*]})" >&2
    exit 1
  fi
  echo "setup: installing ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
[ -x .venv/bin/uv ] || .venv/bin/python -m pip install -q uv
export VIRTUAL_ENV="$root/.venv"
echo "setup: Python packages"
.venv/bin/uv pip install -q -c scripts/constraints.txt -e ".[dev,openai,anthropic,mcp,langchain,pydantic-ai,acp,openai-agents,claude-agent]"
# The build writes the frontend's protocol types from the Python package: install it first.
(cd js && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent)
if [ $minimal = 0 ]; then
  echo "setup: the real ACP agents the tests drive (tests/agents)"
  (cd tests/agents && npm ci --no-audit --no-fund --loglevel=error)
fi

if [ $minimal = 0 ]; then
  bash scripts/kernel-envs.sh
  echo "setup: VS Code's widget manager for tests/vscode"
  (cd tests/vscode && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "setup: ready"
