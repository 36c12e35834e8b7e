"""The wheel and sdist carry the frontend built from ``js/src``, and one version throughout."""

from __future__ import annotations

import ast
import email
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP = {".git", ".venv", ".venv-kernels", "dist", "build", "artifacts", "__pycache__"}
BUNDLES = ("widget.js", "widget.css", "loader.js")
"""What ``npm run build`` writes into ``mead_notebook/static/``."""
VERSION = json.loads((ROOT / "js" / "package.json").read_text())["version"]
"""The version, written once, in ``js/package.json``."""


def _ignore(folder: str, names: list[str]) -> list[str]:
    if "node_modules" in Path(folder).parts:
        return []
    skipped = [n for n in names if n in SKIP or n.startswith(".venv")]
    if Path(folder).name != "js" and "node_modules" in names:
        skipped.append("node_modules")  # the test tools' own (ignored by git), not the build's
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


@pytest.fixture(scope="module")
def fresh_build(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The bundles ``npm run build`` makes from ``js/src`` now, in a folder of their own."""
    base = tmp_path_factory.mktemp("fresh")
    js = base / "js"
    js.mkdir()
    for name in ("src", "package.json", "package-lock.json"):
        source = ROOT / "js" / name
        if source.is_dir():
            shutil.copytree(source, js / name)
        else:
            shutil.copy2(source, js / name)
    (js / "node_modules").symlink_to(ROOT / "js" / "node_modules")
    subprocess.run(["npm", "run", "build", "--silent"], cwd=js, check=True, timeout=300)
    static = base / "mead_notebook" / "static"
    return {name: (static / name).read_bytes() for name in BUNDLES}


def wheel_files(dists: Path) -> dict[str, bytes]:
    (wheel,) = dists.glob("mead_notebook-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def sdist_files(dists: Path) -> dict[str, bytes]:
    (sdist,) = dists.glob("mead_notebook-*.tar.gz")
    out: dict[str, bytes] = {}
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            handle = archive.extractfile(member)
            if handle is not None and "/" in member.name:
                out[member.name.split("/", 1)[1]] = handle.read()
    return out


def node_exports(path: Path) -> dict[str, Any]:
    """Import an ES module in Node and describe its exports."""
    script = """
const m = await import(process.argv[1]);
const d = m.default ?? {};
console.log(JSON.stringify({
  names: Object.keys(m).sort(),
  initialize: typeof d.initialize,
  render: typeof d.render,
  version: m.version ?? null,
}));
"""
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script, path.as_uri()],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_the_wheel_carries_the_bundles_built_from_js_src(
    dists: Path, fresh_build: dict[str, bytes]
) -> None:
    files = wheel_files(dists)
    assert "mead_notebook/py.typed" in files
    assert "mead_notebook/notebook/frontend.py" in files
    for name in BUNDLES:
        shipped = files.get(f"mead_notebook/static/{name}")
        assert shipped is not None, f"the wheel lacks static/{name}"
        assert shipped == fresh_build[name], f"static/{name} is not the build of js/src"


def test_the_sdist_carries_the_same_bundles_and_the_frontend_source(
    dists: Path, fresh_build: dict[str, bytes]
) -> None:
    files = sdist_files(dists)
    for name in BUNDLES:
        assert files.get(f"mead_notebook/static/{name}") == fresh_build[name], name
    for name in ("js/src/index.js", "js/src/loader.js", "js/package.json", "js/package-lock.json"):
        assert files.get(name) == (ROOT / name).read_bytes(), name
    assert not any(n.startswith("js/node_modules") for n in files)


def test_the_bundles_export_what_the_widget_needs(dists: Path, tmp_path: Path) -> None:
    files = wheel_files(dists)
    for name in ("widget.js", "loader.js"):
        (tmp_path / name).write_bytes(files[f"mead_notebook/static/{name}"])
    code = node_exports(tmp_path / "widget.js")
    assert code == {
        "names": ["default", "version"],
        "initialize": "function",
        "render": "function",
        "version": VERSION,
    }
    loader = node_exports(tmp_path / "loader.js")
    assert loader["initialize"] == loader["render"] == "function"
    assert "createLoader" in loader["names"]
    css = files["mead_notebook/static/widget.css"].decode()
    assert ".mead-turn" in css
    assert ".mead-card" in css


def test_one_version_from_package_json_to_the_page(dists: Path, tmp_path: Path) -> None:
    files = wheel_files(dists)
    (metadata_name,) = [n for n in files if n.endswith(".dist-info/METADATA")]
    assert email.message_from_bytes(files[metadata_name])["Version"] == VERSION
    (pkg_info,) = [v for n, v in sdist_files(dists).items() if n == "PKG-INFO"]
    assert email.message_from_bytes(pkg_info)["Version"] == VERSION

    site = tmp_path / "site"
    (wheel,) = dists.glob("mead_notebook-*.whl")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), wheel],
        check=True,
        timeout=300,
    )
    probe = """
import json, sys
sys.path.insert(0, sys.argv[1])
import mead_notebook
from mead_notebook.notebook.frontend import STATIC, shared_frontend
shared = shared_frontend()
print(json.dumps({
    "file": mead_notebook.__file__,
    "version": mead_notebook.__version__,
    "frontend": shared.version,
    "code_is_the_bundle": shared.code == (STATIC / "widget.js").read_text(),
}))
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(site)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=120,
    )
    installed = json.loads(done.stdout)
    assert installed["file"].startswith(str(site))
    assert installed["version"] == installed["frontend"] == VERSION
    assert installed["code_is_the_bundle"]
    (site / "widget.js").write_bytes(files["mead_notebook/static/widget.js"])
    assert node_exports(site / "widget.js")["version"] == VERSION


def _runtime_imports() -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports when it runs
    (at the top or inside a function; not under ``TYPE_CHECKING``)."""
    package = ROOT / "mead_notebook"
    paths = {
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
        for p in package.rglob("*.py")
    }
    edges: dict[str, set[str]] = {}
    for module, path in paths.items():
        base = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text())
        typing_only = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)
        }
        found: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in typing_only or not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                parts = base.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                target = f"{anchor}.{node.module}" if node.module else anchor
            else:
                target = node.module or ""
            submodules = {f"{target}.{a.name}" for a in node.names} & paths.keys()
            if submodules:
                found |= submodules
            elif target in paths:
                found.add(target)
        edges[module] = found - {module}
    return edges


def test_no_import_cycle_among_the_packages_modules() -> None:
    edges = _runtime_imports()
    assert "mead_notebook.testing" in edges["mead_notebook.policies"]
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        for target in edges.get(module, ()):
            if target in path:
                cycles.append([*path[path.index(target) :], target])
            elif len(path) < 12:
                visit(target, [*path, target])

    for module in edges:
        visit(module, [module])
    modules_in_cycles = {m for c in cycles for m in c if not m.endswith("__init__")}
    assert not cycles, f"import cycles: {sorted(modules_in_cycles)[:10]} e.g. {cycles[:1]}"
