#!/usr/bin/env bash
# Create one virtual environment per supported ipykernel version, for the
# real-kernel test matrix (tests/kernel/). Idempotent: an environment that
# already has the right ipykernel is left alone.
#
#   scripts/kernel-envs.sh            # every version of the matrix
#   scripts/kernel-envs.sh 7.4.0      # only these versions
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
uv="${UV:-$root/.venv/bin/uv}"
python="${KERNEL_ENVS_PYTHON:-$root/.venv/bin/python}"
envs="$root/.venv-kernels"

if [[ ! -x "$uv" ]]; then
  uv="$(command -v uv || true)"
fi
if [[ -z "$uv" ]]; then
  echo "kernel-envs: uv not found (install it into $root/.venv: pip install uv)" >&2
  exit 1
fi

# Keep in step with KERNEL_VERSIONS in tests/kernel/conftest.py.
versions=("$@")
if [[ ${#versions[@]} -eq 0 ]]; then
  versions=(6.29.5 6.31.0 7.0.1 7.3.0 7.4.0)
fi

# The agent frameworks of the adapters (extras langchain and pydantic-ai), tested on
# the oldest and the newest kernel of the matrix; keep in step with pyproject.toml.
framework_packages=("langchain>=1.5" "langgraph>=1.2" "pydantic-ai-slim>=2.68")
framework_modules="langchain, langgraph, pydantic_ai"
with_frameworks() { [[ "$1" == 6.29.5 || "$1" == 7.4.0 ]]; }

for version in "${versions[@]}"; do
  env="$envs/ipykernel-$version"
  extra_modules=""
  extra_packages=()
  if with_frameworks "$version"; then
    extra_modules=", $framework_modules"
    extra_packages=("${framework_packages[@]}")
  fi
  if [[ -x "$env/bin/python" ]] &&
    "$env/bin/python" -c "import sys, ipykernel, ipywidgets, anywidget, pydantic, mead_notebook$extra_modules; sys.exit(ipykernel.__version__ != '$version')" 2>/dev/null; then
    echo "kernel-envs: ipykernel $version ready at $env"
    continue
  fi
  echo "kernel-envs: creating $env"
  "$uv" venv --quiet --allow-existing --python "$python" "$env"
  VIRTUAL_ENV="$env" "$uv" pip install --quiet \
    "ipykernel==$version" "ipywidgets>=8" "anywidget>=0.9" "pydantic>=2.5" "traitlets>=5.9" \
    ${extra_packages[@]+"${extra_packages[@]}"}
  # The project itself, from this checkout, without building its frontend bundle.
  site="$("$env/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$root" >"$site/mead_notebook_checkout.pth"
  "$env/bin/python" -c "import ipykernel, mead_notebook; print('kernel-envs: ipykernel', ipykernel.__version__, 'ready at $env')"
done
