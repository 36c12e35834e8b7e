"""The frontend's types (js/src/model.d.ts) and the kernel's protocol agree, field by field."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args, get_type_hints

import anywidget
import pytest

from mead_notebook import NotebookInteraction
from mead_notebook.interaction import Outcome, Status, ToolClass
from mead_notebook.notebook import protocol

MODEL_D_TS = Path(__file__).resolve().parents[1] / "js" / "src" / "model.d.ts"


def declarations() -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """The interfaces (field -> type) and type aliases (name -> type) of model.d.ts."""
    source = re.sub(r"/\*\*.*?\*/|//[^\n]*", "", MODEL_D_TS.read_text(), flags=re.S)
    interfaces = {
        name: {
            field.rstrip("?"): kind.strip()
            for field, kind in re.findall(r"(\w+\??)\s*:\s*([^;]+);", body)
        }
        for name, body in re.findall(r"export interface (\w+)\s*\{(.*?)\}", source, flags=re.S)
    }
    aliases = {
        name: " ".join(kind.split())
        for name, kind in re.findall(r"export type (\w+)\s*=\s*([^;]+);", source)
    }
    return interfaces, aliases


def literals(ts_type: str) -> set[str | None]:
    """The string literals (and null) of a TypeScript union."""
    parts = [p.strip() for p in ts_type.split("|") if p.strip()]
    values: set[str | None] = set()
    for part in parts:
        if part == "null":
            values.add(None)
        else:
            match = re.fullmatch(r'"([^"]*)"', part)
            assert match, f"{part!r} is not a string literal"
            values.add(match.group(1))
    return values


def python_literals(tp: Any) -> set[str | None]:
    return {None if v is type(None) else v for v in get_args(tp)}


INTERFACES, ALIASES = declarations()


@pytest.mark.parametrize(
    ("ts_name", "python"),
    [
        ("Outcome", Outcome),
        ("CallStatus", Status),
        ("ToolClass", ToolClass),
        ("TurnStatus", protocol.TurnStatus),
        ("Decision", protocol.Decision),
        ("DecidedBy", protocol.DecidedBy),
        ("Scope", protocol.Scope),
    ],
)
def test_each_union_has_the_same_values(ts_name: str, python: Any) -> None:
    assert literals(ALIASES[ts_name]) == python_literals(python)


@pytest.mark.parametrize(
    ("ts_name", "python"),
    [
        ("Answer", protocol.Answer),
        ("Option", protocol.Option),
        ("Question", protocol.Question),
        ("Card", protocol.Card),
        ("TextMessage", protocol.TextMessage),
        ("CallMessage", protocol.CallMessage),
        ("RenderedMessage", protocol.RenderedMessage),
        ("AnswerMessage", protocol.AnswerMessage),
        ("CancelMessage", protocol.CancelMessage),
        ("PingMessage", protocol.PingMessage),
        ("PongMessage", protocol.PongMessage),
        ("GoneMessage", protocol.GoneMessage),
        ("NeedFrontendMessage", protocol.NeedFrontendMessage),
    ],
)
def test_each_shape_has_the_same_fields(ts_name: str, python: Any) -> None:
    assert set(INTERFACES[ts_name]) == set(get_type_hints(python))


def test_message_kinds_agree() -> None:
    for ts_name, python in [
        ("TextMessage", protocol.TextMessage),
        ("CallMessage", protocol.CallMessage),
        ("RenderedMessage", protocol.RenderedMessage),
        ("AnswerMessage", protocol.AnswerMessage),
        ("CancelMessage", protocol.CancelMessage),
        ("PingMessage", protocol.PingMessage),
        ("PongMessage", protocol.PongMessage),
        ("GoneMessage", protocol.GoneMessage),
        ("NeedFrontendMessage", protocol.NeedFrontendMessage),
    ]:
        assert literals(INTERFACES[ts_name]["type"]) == python_literals(
            get_type_hints(python)["type"]
        )
    assert literals(INTERFACES["AnswerMessage"]["decision"]) == {"allow", "deny", None}


def test_the_model_interface_lists_the_synced_traits() -> None:
    base = set(anywidget.AnyWidget.class_traits(sync=True)) | {"_esm", "_css", "_anywidget_id"}
    synced = set(NotebookInteraction.class_traits(sync=True)) - base
    assert set(INTERFACES["Model"]) == synced


def test_the_check_itself_notices_a_missing_field() -> None:
    interfaces, _ = declarations()
    card = dict(interfaces["Card"])
    del card["outcome"]
    assert set(card) != set(get_type_hints(protocol.Card))
