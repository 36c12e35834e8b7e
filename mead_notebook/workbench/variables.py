"""The person's variables as the model reads them: a listing, and one variable described.

Only the user namespace's own names are listed: IPython's (``In``, ``Out``,
``get_ipython``...), names starting with ``_``, modules, and the functions and
classes imported from them are left out (the notebook's own stay). Every
description is bounded; reading a value may run its own code (a property, a
``__repr__``), so each is guarded and a failure is said, never raised.
pandas, polars and NumPy are recognised by their types' modules, never imported.
"""

from __future__ import annotations

import inspect
import re
import reprlib
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any, Final

from .report import cut

__all__ = [
    "MAX_DESCRIPTION",
    "MAX_LISTED",
    "bounded_repr",
    "describe",
    "listing",
    "summary",
    "type_name",
    "user_variables",
]

MAX_LISTED: Final = 200
"""Most variables listed; the rest are counted."""
MAX_DESCRIPTION: Final = 6000
"""Longest description of one variable, in characters."""
MAX_SUMMARY: Final = 80
"""Longest one-line summary in the listing."""
_IPYTHON_NAMES: Final = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})
_DEFAULT_REPR: Final = re.compile(r"<[\w.]+ (object|instance) at 0x[0-9a-fA-F]+>")
"""``object.__repr__``'s text: it says the type (listed already) and an address."""

_repr = reprlib.Repr()
_repr.maxstring = 400
_repr.maxother = 2000
_repr.maxlist = _repr.maxtuple = _repr.maxset = _repr.maxdict = 20
_repr.maxlevel = 3

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = MAX_SUMMARY
_short.maxlist = _short.maxtuple = _short.maxset = _short.maxdict = 4
_short.maxlevel = 1


def bounded_repr(value: Any) -> str:
    """``value``'s repr, its containers and strings shortened (:mod:`reprlib`)."""
    return _repr.repr(value)


def user_variables(shell: Any) -> Iterator[tuple[str, Any]]:
    """The user namespace's own names and values, sorted by name."""
    namespace = dict(shell.user_ns)
    hidden = set(getattr(shell, "user_ns_hidden", ()) or ())
    for name in sorted(namespace):
        if name.startswith("_") or name in hidden or name in _IPYTHON_NAMES:
            continue
        value = namespace[name]
        if isinstance(value, ModuleType) or _imported(value):
            continue
        yield name, value


def _imported(value: Any) -> bool:
    """Whether ``value`` is a function or class imported from a module (not the notebook's)."""
    if not (inspect.isclass(value) or inspect.isroutine(value)):
        return False
    return getattr(value, "__module__", None) not in (None, "__main__")


def type_name(value: Any) -> str:
    """The type's name as the person writes it: ``int``, ``pandas.DataFrame``, ``numpy.ndarray``."""
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    qualname = getattr(kind, "__qualname__", kind.__name__)
    if module == "builtins":
        return str(qualname)
    root = module.split(".")[0]
    if getattr(sys.modules.get(root), kind.__name__, None) is kind:
        return f"{root}.{qualname}"
    return f"{module}.{qualname}"


def _is(value: Any, module: str, name: str) -> bool:
    """Whether ``value`` is an instance of the class ``name`` of a module under ``module``."""
    return any(
        cls.__name__ == name and (cls.__module__ or "").split(".")[0] == module
        for cls in type(value).__mro__
    )


def _shape(value: Any) -> tuple[int, ...] | None:
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return shape
    return None


def summary(value: Any) -> str:
    """One line: a shape, a length, a short value or a signature (bounded)."""
    try:
        shape = _shape(value)
        if shape:
            return f"shape {shape}"
        if isinstance(value, (str, bytes, int, float, complex, bool)) or value is None:
            return _short.repr(value)
        if isinstance(value, (list, tuple, dict, set, frozenset)):
            return f"{len(value)} items"
        if inspect.isclass(value):
            return "class"
        if callable(value):
            return f"{getattr(value, '__name__', 'callable')}{_signature(value)}"[:MAX_SUMMARY]
        shown = _short.repr(value)
        return "" if _DEFAULT_REPR.fullmatch(shown) else shown
    except Exception as exc:
        return f"(no summary: {type(exc).__name__})"


def _signature(value: Any) -> str:
    try:
        return str(inspect.signature(value))
    except (TypeError, ValueError):
        return "(...)"


def listing(shell: Any) -> tuple[str, int]:
    """The variables as a table (name, type, summary), and how many there are."""
    rows = [(name, type_name(value), summary(value)) for name, value in user_variables(shell)]
    if not rows:
        return "No variables are defined in the kernel's namespace.", 0
    shown = rows[:MAX_LISTED]
    widths = [max(len(row[i]) for row in shown) for i in (0, 1)]
    lines = [f"{n:<{widths[0]}}  {t:<{widths[1]}}  {s}".rstrip() for n, t, s in shown]
    if len(rows) > len(shown):
        lines.append(f"[{len(rows) - len(shown)} more variables not listed]")
    return "\n".join(lines), len(rows)


def describe(name: str, value: Any) -> str:
    """A bounded description of ``value``: a DataFrame's shape, dtypes and head, an
    array's shape, dtype and a few values, else its type, length and a bounded repr."""
    try:
        if _is(value, "pandas", "DataFrame") or _is(value, "pandas", "Series"):
            text = _pandas(value)
        elif _is(value, "polars", "DataFrame") or _is(value, "polars", "Series"):
            text = _polars(value)
        elif _is(value, "numpy", "ndarray"):
            text = _numpy(value)
        else:
            text = _other(value)
    except Exception as exc:
        text = f"(it could not be described: {type(exc).__name__}: {exc})"
    return cut(f"{name}: {type_name(value)}\n{text}", MAX_DESCRIPTION)


def _pandas(value: Any) -> str:
    lines = [f"shape {value.shape}"]
    if hasattr(value, "dtypes") and hasattr(value, "columns"):
        dtypes = value.dtypes
        lines.append("columns and dtypes:")
        lines.extend(f"  {col}: {dtype}" for col, dtype in list(dtypes.items())[:50])
        if len(dtypes) > 50:
            lines.append(f"  [{len(dtypes) - 50} more columns]")
        head = value.head(5).to_string(max_cols=20, max_colwidth=40)
    else:
        lines.append(f"dtype {value.dtype}")
        head = value.head(5).to_string(max_rows=5)
    lines.append("head(5):")
    lines.append(head)
    return "\n".join(lines)


def _polars(value: Any) -> str:
    lines = [f"shape {value.shape}"]
    schema = getattr(value, "schema", None)
    if schema is not None:
        lines.append("columns and dtypes:")
        lines.extend(f"  {col}: {dtype}" for col, dtype in list(schema.items())[:50])
    else:
        lines.append(f"dtype {value.dtype}")
    lines.append("head(5):")
    lines.append(str(value.head(5)))
    return "\n".join(lines)


def _numpy(value: Any) -> str:
    numpy = sys.modules["numpy"]
    values = numpy.array2string(value, threshold=50, edgeitems=3, max_line_width=100)
    return f"shape {value.shape}, dtype {value.dtype}\n{values}"


def _other(value: Any) -> str:
    lines = []
    if isinstance(value, (list, tuple, dict, set, frozenset, str, bytes)):
        lines.append(f"length {len(value)}")
    if callable(value) and not inspect.isclass(value):
        lines.append(f"signature {_signature(value)}")
    doc = inspect.getdoc(value) if callable(value) else None
    if doc:
        lines.append(f"doc: {doc.splitlines()[0]}")
    lines.append(_repr.repr(value))
    return "\n".join(lines)
