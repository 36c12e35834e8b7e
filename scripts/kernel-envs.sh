#!/usr/bin/env bash
# Create one virtual environment per supported ipykernel version, for the
# real-kernel test matrix (tests/kernel/). Each gets the project's own
# dependencies (read from pyproject.toml) and imports the project from this
# checkout; the oldest and newest also get the agent frameworks of the adapters and the
# data libraries the kernel's tools are tested with (pandas, matplotlib: the versions of
# scripts/constraints.txt).
# Idempotent: an environment whose packages match is left alone.
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

# requirements EXTRA...: the project's dependencies and those of the named extras, one a line.
requirements() {
  "$python" - "$root/pyproject.toml" "$@" <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
wanted = list(project["dependencies"])
for extra in sys.argv[2:]:
    wanted += project.get("optional-dependencies", {}).get(extra, [])
print("\n".join(wanted))
PY
}

for version in "${versions[@]}"; do
  env="$envs/ipykernel-$version"
  extras=()
  if [[ "$version" == 6.29.5 || "$version" == 7.4.0 ]]; then
    extras=(langchain pydantic-ai acp openai-agents claude-agent)
  fi
  mapfile -t packages < <(requirements ${extras[@]+"${extras[@]}"})
  packages=("ipykernel==$version" "${packages[@]}")
  if [[ ${#extras[@]} -gt 0 ]]; then
    mapfile -t data < <(grep -E '^(pandas|matplotlib)==' "$root/scripts/constraints.txt")
    packages+=("${data[@]}")
  fi
  stamp="$env/.mead-packages"
  if [[ -x "$env/bin/python" && -f "$stamp" ]] &&
    [[ "$(cat "$stamp")" == "$(printf '%s\n' "${packages[@]}")" ]] &&
    "$env/bin/python" -c "import sys, ipykernel, mead_notebook.notebook; sys.exit(ipykernel.__version__ != '$version')" 2>/dev/null; then
    echo "kernel-envs: ipykernel $version ready at $env"
    continue
  fi
  echo "kernel-envs: creating $env"
  "$uv" venv --quiet --allow-existing --python "$python" "$env"
  VIRTUAL_ENV="$env" "$uv" pip install --quiet "${packages[@]}"
  # The project itself, from this checkout, without building its frontend bundle.
  site="$("$env/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$root" >"$site/mead_notebook_checkout.pth"
  printf '%s\n' "${packages[@]}" >"$stamp"
  "$env/bin/python" -c "import ipykernel, mead_notebook.notebook; print('kernel-envs: ipykernel', ipykernel.__version__, 'ready at $env')"
done
