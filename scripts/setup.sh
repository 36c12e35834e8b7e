#!/usr/bin/env bash
# Create everything the project needs on a fresh machine; safe to run again.
# Usage: scripts/setup.sh [--minimal]   (--minimal: no browser, no kernel matrix)
#
# The npm installs run while the Python side installs; the frontend is built once
# both are done (its build reads the protocol from the Python package). A part
# whose inputs have not changed since it was last installed (a stamp records the
# lock file or requirements it was made from) is left as it is.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
minimal=0
[ "${1:-}" = "--minimal" ] && minimal=1
started=$SECONDS

need_apt=()
command -v npm >/dev/null 2>&1 || need_apt+=(nodejs npm)
[ $minimal = 1 ] || [ -x /usr/bin/chromium ] || need_apt+=(chromium)
# Codex's sandbox: the real-agent tests run Codex in it, and the codex preset refuses
# to start where bubblewrap is missing or does not work.
[ $minimal = 1 ] || command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: please install Debian packages: ${need_apt[*]} (sudo apt-get install ${need_apt[*]})" >&2
    exit 1
  fi
  echo "setup: installing ${need_apt[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# npm_ci DIR: `npm ci` in DIR unless its node_modules was made from the same lock file.
npm_ci() {
  local dir="$1" stamp="$1/node_modules/.mead-lock"
  local want
  want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "setup: $dir/node_modules is current"
    return 0
  fi
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
  echo "setup: $dir/node_modules installed"
}

npm_dirs=(js)
[ $minimal = 1 ] || npm_dirs+=(tests/agents tests/vscode)
npm_pids=()
logs="$(mktemp -d)"
for dir in "${npm_dirs[@]}"; do
  npm_ci "$dir" >"$logs/${dir//\//_}.log" 2>&1 &
  npm_pids+=($!)
done

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
[ -x .venv/bin/uv ] || .venv/bin/python -m pip install -q uv
export VIRTUAL_ENV="$root/.venv"
extras="dev,openai,anthropic,mcp,langchain,pydantic-ai,acp,openai-agents,claude-agent"
stamp=".venv/.mead-packages"
want="$(cat pyproject.toml scripts/constraints.txt | sha256sum | cut -d' ' -f1) $extras"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
  .venv/bin/python -c "import mead_notebook, xdist" 2>/dev/null; then
  echo "setup: Python packages are current"
else
  echo "setup: Python packages"
  # The editable build would npm-install and build js/ itself, racing the npm ci
  # above: this script builds the frontend once, below.
  HATCH_JUPYTER_BUILDER_SKIP_NPM=1 .venv/bin/uv pip install -q -c scripts/constraints.txt \
    -e ".[$extras]"
  echo "$want" >"$stamp"
fi
if [ $minimal = 0 ]; then
  bash scripts/kernel-envs.sh
fi

failed=0
for i in "${!npm_pids[@]}"; do
  log="$logs/${npm_dirs[$i]//\//_}.log"
  if wait "${npm_pids[$i]}"; then
    cat "$log"
  else
    echo "setup: npm ci in ${npm_dirs[$i]} failed:" >&2
    cat "$log" >&2
    failed=1
  fi
done
rm -rf "$logs"
[ $failed = 0 ] || exit 1
# The build writes the frontend's protocol types from the Python package: after it.
(cd js && npm run build --silent)
echo "setup: ready in $((SECONDS - started)) s"
