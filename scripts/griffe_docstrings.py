"""A griffe extension for the docs site (``mkdocs.yml``): the API pages hold no object
without a docstring, and the docstrings' Sphinx roles read as code.

The API pages render the modules named by their ``::: module`` lines (``docs/api/``).
For every public module, class, function and method among them (griffe's
``is_public``, as the pages' ``filters: public``), one without a docstring is a
warning through griffe's logger, which ``mkdocs build --strict`` turns into a
failed build. A role such as ``:class:`~mead_notebook.turn.Turn``` becomes the
code span ``Turn``: the docstrings are written for Python's ``help()`` too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import griffe

API_PAGES = Path("docs") / "api"
"""Where the API pages are, from the folder MkDocs runs in (that of ``mkdocs.yml``)."""
RENDERED = re.compile(r"^::: ([\w.]+)\s*$", re.MULTILINE)
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):`~?([^`]+)`")
CHECKED = (griffe.Kind.MODULE, griffe.Kind.CLASS, griffe.Kind.FUNCTION)


def rendered_paths(pages: Path = API_PAGES) -> list[str]:
    """The dotted paths the API pages render, in page order."""
    found: list[str] = []
    for page in sorted(pages.glob("*.md")):
        found += RENDERED.findall(page.read_text())
    return found


def _short(match: re.Match[str]) -> str:
    target = match.group(1)
    shown = target.rsplit(".", 1)[-1] if match.group(0).split("`")[1].startswith("~") else target
    return f"`{shown}`"


def _public_members(obj: griffe.Object) -> Iterator[griffe.Object | griffe.Alias]:
    for name, member in obj.members.items():
        if name.startswith("__") or member.inherited:
            continue
        try:
            if member.is_public:
                yield member
        except griffe.AliasResolutionError:
            continue


def _target(member: griffe.Object | griffe.Alias) -> griffe.Object | None:
    if not member.is_alias:
        return member  # type: ignore[return-value]
    try:
        return member.final_target  # type: ignore[union-attr]
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None


def _has_docstring(obj: griffe.Object) -> bool:
    return bool(obj.docstring and obj.docstring.value.strip())


def _functions(cls: griffe.Class) -> set[str]:
    return {n for n, m in cls.all_members.items() if m.kind is griffe.Kind.FUNCTION}


def _protocols(obj: griffe.Object) -> list[griffe.Class]:
    """The ``Protocol`` classes of the package ``obj`` belongs to."""
    found: list[griffe.Class] = []

    def walk(node: griffe.Object) -> None:
        for member in node.members.values():
            if member.is_alias:
                continue
            if isinstance(member, griffe.Class):
                if any(str(base).rsplit(".", 1)[-1] == "Protocol" for base in member.bases):
                    found.append(member)
            elif isinstance(member, griffe.Module):
                walk(member)

    walk(obj.package)
    return found


def _is_external(base: griffe.Class | griffe.Expr | str, package: str) -> bool:
    return not str(getattr(base, "canonical_path", base)).startswith(f"{package}.")


def documented(obj: griffe.Object) -> bool:
    """Whether ``obj`` says what it is: its docstring; for a method also its class's
    docstring naming it in code (a protocol's stubs), the method it overrides or the
    protocol method it implements (whose documentation stands for it), or, in a class
    built on another package's class, that package's documentation of its hook."""
    if _has_docstring(obj):
        return True
    owner = obj.parent
    if obj.kind is not griffe.Kind.FUNCTION or not isinstance(owner, griffe.Class):
        return False
    if owner.docstring and f"``{obj.name}" in owner.docstring.value:
        return True
    package = obj.package.name
    if any(_is_external(base, package) and str(base) != "Protocol" for base in owner.bases):
        return True
    try:
        bases = owner.mro()
    except (ValueError, griffe.AliasResolutionError):
        bases = []
    implemented = [
        p for p in _protocols(obj) if p is not owner and _functions(p) <= _functions(owner)
    ]
    for base in [*bases, *implemented]:
        inherited = base.members.get(obj.name)
        target = _target(inherited) if inherited is not None else None
        if target is not None and target is not obj and documented(target):
            return True
    return False


def undocumented(root: griffe.Object) -> list[str]:
    """The public modules, classes and functions under ``root`` with no docstring."""
    missing: list[str] = []
    seen: set[str] = set()

    def visit(obj: griffe.Object, depth: int) -> None:
        if obj.path in seen:
            return
        seen.add(obj.path)
        if obj.kind in CHECKED and not documented(obj):
            missing.append(f"{obj.path} ({obj.relative_filepath}:{obj.lineno})")
        if obj.kind in (griffe.Kind.MODULE, griffe.Kind.CLASS) and depth < 2:
            for member in _public_members(obj):
                target = _target(member)
                # Submodules are not rendered with their package (show_submodules: false).
                if target is not None and target.kind in CHECKED and not target.is_module:
                    visit(target, depth + (obj.kind is griffe.Kind.CLASS))

    visit(root, 0)
    return missing


class RequireDocstrings(griffe.Extension):
    """Warn for each undocumented public object the API pages render; show roles as code.

    ``pages``: the folder of the API pages (default ``docs/api``).
    """

    def __init__(self, pages: str | Path = API_PAGES) -> None:
        super().__init__()
        self.pages = Path(pages)

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(_short, obj.docstring.value)

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        said: set[str] = set()
        for path in rendered_paths(self.pages):
            head, _, rest = path.partition(".")
            if head != pkg.name:
                continue
            try:
                root = pkg[rest] if rest else pkg
            except KeyError:
                continue  # mkdocstrings itself says the page names nothing
            for where in undocumented(root):
                if where not in said:
                    said.add(where)
                    griffe.logger.warning(f"no docstring: {where}")
