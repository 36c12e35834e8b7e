"""The widget's frontend code, sent once per kernel session instead of once per widget.

One :class:`Frontend` widget per kernel session holds the code and stylesheet built
from ``js/src`` as synced traits. Every widget built on :class:`LoadsFrontend` carries
only a small loader as its ``_esm`` and a ``_frontend`` reference to that widget; in
the page the loader imports the code once per page and content digest and hands it
anywidget's ``initialize`` and ``render``. Saved widget state holds the code once.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import uuid
from functools import cache
from pathlib import Path
from typing import Any, Final

import anywidget
import ipywidgets
import traitlets

from .. import __version__
from .waiting.cell_events import not_a_cell

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())

__all__ = ["Frontend", "LoadsFrontend", "shared_frontend"]

STATIC: Final = Path(__file__).resolve().parents[1] / "static"
"""Where ``npm run build`` (in ``js/``) writes the bundles."""

UNBUILT_ESM: Final = """\
export default {
  render({ model, el }) {
    const show = () => {
      const calls = Object.keys(model.get("calls") || {}).length;
      el.setAttribute("role", "alert");
      el.textContent = `mead_notebook: ${model.get("status")}, ${calls} tool calls ` +
        "(the widget's frontend is not built: run npm run build in js/)";
    };
    show();
    model.on("change", show);
  },
};
"""
"""What a widget runs when the bundles are missing: the turn's status, and why."""


class Frontend(ipywidgets.Widget):  # type: ignore[misc]
    """Holds the frontend's code and stylesheet; one per kernel session (``shared_frontend``).

    A plain ``WidgetModel`` in the page: it has no view, and only the loader of each
    turn's widget reads it.
    """

    code = traitlets.Unicode("").tag(sync=True)
    """The ES module built from ``js/src/index.js`` (``static/widget.js``)."""
    css = traitlets.Unicode("").tag(sync=True)
    """The stylesheet built from ``js/src/styles.css`` (``static/widget.css``)."""
    digest = traitlets.Unicode("").tag(sync=True)
    """SHA-256 of ``code`` and ``css``, hex: the page imports each digest's code once."""
    version = traitlets.Unicode("").tag(sync=True)
    """The mead_notebook version that sent the code."""


@cache
def bundle() -> tuple[str, str]:
    """The built code and stylesheet, read once per process; a notice when not built."""
    return _read("widget.js", UNBUILT_ESM), _read("widget.css", "")


@cache
def loader() -> str:
    """The ``_esm`` of each widget: the built loader, or the notice when not built."""
    return _read("loader.js", UNBUILT_ESM)


def _read(name: str, fallback: str) -> str:
    try:
        return (STATIC / name).read_text(encoding="utf-8")
    except OSError as exc:
        log.warning("the widget's %s cannot be read (%s); using a minimal one", name, exc)
        return fallback


def digest(code: str, css: str) -> str:
    """The content digest of a frontend: SHA-256 over its code and stylesheet."""
    h = hashlib.sha256(code.encode())
    h.update(b"\0")
    h.update(css.encode())
    return h.hexdigest()


_lock = threading.Lock()
_shared: Frontend | None = None


def shared_frontend() -> Frontend:
    """The kernel session's ``Frontend``, created on first use and again once closed."""
    global _shared
    with _lock:
        if _shared is None or _shared.comm is None:
            code, css = bundle()
            _shared = Frontend(code=code, css=css, digest=digest(code, css), version=__version__)
        return _shared


class LoadsFrontend(anywidget.AnyWidget):
    """An anywidget whose frontend code comes from the shared ``Frontend``.

    Its ``_esm`` is the loader (a few KB); ``_frontend`` refers to the kernel
    session's ``Frontend`` widget (``"IPY_MODEL_<id>"`` on the wire).
    """

    _esm = loader()
    _frontend = traitlets.Instance(Frontend).tag(sync=True, **ipywidgets.widget_serialization)
    """The kernel session's shared ``Frontend``, which holds the code."""

    layout = traitlets.Instance(ipywidgets.Layout, allow_none=True, default_value=None).tag(
        sync=True, **ipywidgets.widget_serialization
    )
    """None: no ``Layout`` model of its own. Its state then names no model the page must
    already have (the loader finds ``_frontend`` itself, waiting for it), so a page whose
    IOPub starts between two messages of the kernel still builds it from its
    ``comm_open`` alone, where ipywidgets would make an error widget in its place."""

    _widget_id = traitlets.Unicode("").tag(sync=True)
    """This widget's own model id. A page may draw a view from a model of it that has no
    comm (the notebook's saved widget state) or that the kernel has since replaced (a
    new ``comm_open`` under the same id); by this id the view finds the live one."""

    def __init__(self, **kwargs: Any) -> None:
        # The id is chosen here so that the comm opens with the trait already set.
        model_id = kwargs.pop("model_id", None) or uuid.uuid4().hex
        super().__init__(model_id=model_id, _widget_id=model_id, **kwargs)

    @traitlets.default("_frontend")
    def _default_frontend(self) -> Frontend:
        return shared_frontend()

    @traitlets.observe("comm")
    def _comm_is_not_a_cell(self, change: dict[str, Any]) -> None:
        not_a_cell(change["new"])
