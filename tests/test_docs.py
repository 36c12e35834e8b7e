"""The documentation: the README's links and pictures, and the MkDocs site built strict.

``mkdocs build --strict`` fails on a broken link or anchor, a page left out of the
navigation, and (``scripts/griffe_docstrings.py``) a public object on an API page
without a docstring; the two builds of a small project here show that each of
those fails it. The pictures are made by ``tests/browser/test_pictures.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
IMAGES = REPO / "docs" / "images"
BUILD_TIMEOUT = 240
PICTURE_LIMIT = 100_000
"""Bytes a picture may take: a small PNG, not a page's screenshot."""
MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")
HTML_IMAGE = re.compile(r"""(?:src|srcset)=["']([^"']+)["']""")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
PNG = b"\x89PNG\r\n\x1a\n"


def pictures_named(page: Path) -> list[Path]:
    """The image files a Markdown page names (Markdown images, ``<img src>``, ``srcset``)."""
    text = page.read_text()
    found = MARKDOWN_IMAGE.findall(text) + HTML_IMAGE.findall(text)
    return [(page.parent / name.split()[0]).resolve() for name in found]


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=config.parent,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )


def test_the_site_builds_strict(tmp_path: Path) -> None:
    done = build(REPO / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    api = (tmp_path / "site" / "api" / "contract" / "index.html").read_text()
    assert 'id="mead_notebook.interaction.Interaction.request_permission"' in api
    assert ":class:" not in api
    home = (tmp_path / "site" / "index.html").read_text()
    assert "images/coding-agent-light.png" in home


def small_project(root: Path, page: str) -> Path:
    """A project with the repository's MkDocs settings, one page and a small package."""
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    plugin = next(p for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    handler = plugin["mkdocstrings"]["handlers"]["python"]
    handler["paths"] = [str(root)]
    handler["options"]["extensions"] = [
        f"{REPO / 'scripts' / 'griffe_docstrings.py'}:RequireDocstrings"
    ]
    config["nav"] = [{"Home": "index.md"}, {"API": "api/pkg.md"}]
    (root / "docs" / "api").mkdir(parents=True)
    (root / "docs" / "index.md").write_text(page)
    (root / "docs" / "api" / "pkg.md").write_text("# pkg\n\n::: pkg\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text(
        '"""A package."""\n\n'
        "from typing import Protocol\n\n"
        '__all__ = ["Runner", "Impl", "documented", "undocumented"]\n\n\n'
        "class Runner(Protocol):\n"
        '    """Something that runs."""\n\n'
        "    def run(self) -> None:\n"
        '        """Run once."""\n\n\n'
        "class Impl:\n"
        '    """A runner."""\n\n'
        "    def run(self) -> None:\n"
        "        return None\n\n\n"
        "def documented() -> None:\n"
        '    """Says what it does."""\n\n\n'
        "def undocumented() -> None:\n"
        "    return None\n"
    )
    path = root / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_an_undocumented_public_function_fails_the_build(tmp_path: Path) -> None:
    done = build(small_project(tmp_path, "# Home\n"), tmp_path / "site")
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if "no docstring" in line]
    assert len(said) == 1, done.stderr
    assert "pkg.undocumented" in said[0]


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    config = small_project(tmp_path / "p", "# Home\n\n[the API](api/pkg.md#nowhere)\n")
    (tmp_path / "p" / "pkg" / "__init__.py").write_text('"""A package."""\n\n__all__ = []\n')
    done = build(config, tmp_path / "site")
    assert done.returncode != 0
    assert "does not contain an anchor '#nowhere'" in done.stderr, done.stderr


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_picture_a_page_names_is_a_small_png(page: Path) -> None:
    for picture in pictures_named(page):
        assert picture.is_file(), f"{page.name} names {picture}, which is missing"
        data = picture.read_bytes()
        assert data.startswith(PNG), f"{picture} is not a PNG"
        assert len(data) <= PICTURE_LIMIT, f"{picture} takes {len(data)} bytes"


def test_the_readme_shows_the_widget_on_its_first_screen() -> None:
    head = "\n".join((REPO / "README.md").read_text().splitlines()[:20])
    shown = {p.name for p in pictures_named(REPO / "README.md") if p.name in head}
    assert {"coding-agent-light.png", "coding-agent-dark.png"} <= shown


def test_every_committed_picture_is_made_by_the_browser_tests() -> None:
    made = set(
        re.findall(
            r'picture\(lab, \w+, "([\w-]+)"\)',
            (REPO / "tests" / "browser" / "test_pictures.py").read_text(),
        )
    )
    committed = {p.stem for p in IMAGES.glob("*") if p.is_file()}
    assert committed == made
    named = {p.stem for page in PAGES for p in pictures_named(page)}
    assert made <= named, f"pictures no page shows: {made - named}"


def test_the_readmes_links_lead_somewhere() -> None:
    readme = REPO / "README.md"
    for target in LINK.findall(readme.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path = target.split("#")[0]
        assert (readme.parent / path).exists(), f"README links to {target}, which is missing"
