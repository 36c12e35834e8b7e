"""The frontend code travels once per kernel session, in the shared ``Frontend`` widget."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import comm
import pytest
from comm.base_comm import BaseComm

import mead_notebook
from mead_notebook import NotebookInteraction
from mead_notebook.notebook import frontend
from mead_notebook.notebook.frontend import Frontend, LoadsFrontend, shared_frontend
from mead_notebook.notebook.waiting.views import REOPENS


class OpenedComm(BaseComm):
    """A comm that keeps what it was opened with."""

    def __init__(self, **kwargs: Any) -> None:
        self.opened: dict[str, Any] = {}
        super().__init__(**kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, **keys: Any) -> None:
        if msg_type == "comm_open":
            self.opened = data or {}


@pytest.fixture
def comms(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[OpenedComm]]:
    """Every comm opened during the test, in order; a fresh shared frontend for each test."""
    created: list[OpenedComm] = []

    def create(*args: Any, **kwargs: Any) -> OpenedComm:
        c = OpenedComm(**kwargs)
        created.append(c)
        return c

    monkeypatch.setattr(comm, "create_comm", create)
    monkeypatch.setattr(frontend, "_shared", None)
    yield created
    shared = frontend._shared
    if shared is not None:
        shared.close()


def opened_state(c: OpenedComm) -> dict[str, Any]:
    state: dict[str, Any] = c.opened["state"]
    return state


def built(name: str) -> str:
    path = frontend.STATIC / name
    if not path.is_file():
        pytest.fail(f"{path} is missing: run `npm run build` in js/ first")
    return path.read_text(encoding="utf-8")


def test_the_code_is_opened_once_for_many_widgets(comms: list[OpenedComm]) -> None:
    widgets = [NotebookInteraction(display=False) for _ in range(3)]
    shared = [c for c in comms if "code" in opened_state(c)]
    assert len(shared) == 1
    state = opened_state(shared[0])
    assert state["_model_name"] == "WidgetModel"
    assert state["_model_module"] == "@jupyter-widgets/base"
    assert state["code"] == built("widget.js")
    assert state["css"] == built("widget.css")
    digest = hashlib.sha256(f"{state['code']}\0{state['css']}".encode()).hexdigest()
    assert state["digest"] == digest
    assert state["version"] == mead_notebook.__version__
    # The shared widget is opened before the widgets that refer to it.
    assert comms.index(shared[0]) < min(comms.index(w.comm) for w in widgets)
    for w in widgets:
        sent = opened_state(w.comm)
        assert sent["_frontend"] == f"IPY_MODEL_{shared_frontend().model_id}"
        assert sent["_esm"] == built("loader.js")
        assert "_css" not in sent
        assert len(json.dumps(sent)) < 6_000, "a widget's own state should not carry the code"


def test_a_closed_shared_frontend_is_replaced(comms: list[OpenedComm]) -> None:
    first = NotebookInteraction(display=False)
    old = first._frontend
    assert shared_frontend() is old
    old.close()
    second = NotebookInteraction(display=False)
    assert second._frontend is not old
    assert second._frontend.comm is not None
    assert opened_state(second.comm)["_frontend"] == f"IPY_MODEL_{second._frontend.model_id}"


def test_a_widget_names_its_own_model_id_from_its_first_comm_open(
    comms: list[OpenedComm],
) -> None:
    widget = NotebookInteraction(display=False)
    assert opened_state(widget.comm)["_widget_id"] == widget.model_id
    chosen = LoadsFrontend(model_id="chosen")
    assert chosen.model_id == opened_state(chosen.comm)["_widget_id"] == "chosen"
    # Announced again (a new comm_open under the same id), it names the same id.
    assert REOPENS.reopen(widget)
    assert widget.model_id == opened_state(widget.comm)["_widget_id"] == widget._widget_id


def test_a_widget_opens_one_comm_and_names_no_model_but_the_shared_frontend(
    comms: list[OpenedComm],
) -> None:
    """A page can get the widget's comm_open without any message before it (its IOPub
    started just then): the only model its state names is the one the loader waits for."""
    NotebookInteraction(display=False)
    before = len(comms)
    widget = NotebookInteraction(display=False)
    assert comms[before:] == [widget.comm]
    sent = opened_state(widget.comm)
    named = {k: v for k, v in sent.items() if isinstance(v, str) and v.startswith("IPY_MODEL_")}
    assert named == {"_frontend": f"IPY_MODEL_{shared_frontend().model_id}"}
    assert sent["layout"] is None
    assert REOPENS.reopen(widget)
    assert comms[before + 1 :] == [widget.comm]


def test_any_loads_frontend_widget_shares_it(comms: list[OpenedComm]) -> None:
    class Other(LoadsFrontend):
        pass

    assert Other()._frontend is NotebookInteraction(display=False)._frontend
    assert isinstance(shared_frontend(), Frontend)


def test_missing_bundles_give_a_visible_notice(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(frontend, "STATIC", tmp_path)
    frontend.bundle.cache_clear()
    frontend.loader.cache_clear()
    try:
        code, css = frontend.bundle()
        assert frontend.loader() == code == frontend.UNBUILT_ESM
        assert css == ""
        assert "not built" in code
        assert 'setAttribute("role", "alert")' in code
        assert "widget.js cannot be read" in caplog.text
    finally:
        frontend.bundle.cache_clear()
        frontend.loader.cache_clear()
