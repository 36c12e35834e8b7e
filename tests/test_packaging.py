"""The wheel and sdist carry the frontend bundle, built from source by the build hook."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP = {".git", ".venv", ".venv-kernels", "dist", "build", "artifacts", "__pycache__"}


def _ignore(folder: str, names: list[str]) -> list[str]:
    if "node_modules" in Path(folder).parts:
        return []
    skipped = [n for n in names if n in SKIP or n.startswith(".venv")]
    if Path(folder).name == "mead_notebook":
        skipped.append("static")
    return skipped


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src") / "mead-notebook"
    shutil.copytree(ROOT, src, ignore=_ignore)
    assert not (src / "mead_notebook" / "static").exists()
    out = src / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-build-isolation",
            "--no-deps",
            "-q",
            "-w",
            str(out),
            str(src),
        ],
        check=True,
        timeout=600,
    )
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, hatchling.build as b; b.build_sdist(sys.argv[1])",
            str(out),
        ],
        check=True,
        cwd=src,
        timeout=600,
    )
    return out


def test_the_wheel_contains_the_bundle_built_from_source(dists: Path) -> None:
    (wheel,) = dists.glob("mead_notebook-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        js = archive.read("mead_notebook/static/widget.js").decode()
    assert "mead_notebook/static/widget.js" in names
    assert "mead_notebook/static/widget.css" in names
    assert "mead_notebook/py.typed" in names
    assert "export" in js
    assert len(js) > 10_000


def test_the_sdist_contains_the_bundle_and_the_frontend_source(dists: Path) -> None:
    (sdist,) = dists.glob("mead_notebook-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    assert "mead_notebook/static/widget.js" in names
    assert "js/src/index.js" in names
    assert "js/package-lock.json" in names
    assert not any(n.startswith("js/node_modules") for n in names)
