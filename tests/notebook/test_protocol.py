"""The frontend's copy of the protocol is generated from ``notebook/protocol.py`` and is current.

``scripts/gen_protocol.py`` writes ``js/src/protocol.gen.d.ts`` (types) and
``js/src/constants.gen.js`` (version, limits, words) from the Python types; these
tests run it again and compare, check its spelling of each type, and check that
every word table covers its type's values.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, get_args, get_type_hints

import pytest

from mead_notebook import interaction
from mead_notebook.notebook import labels, protocol
from mead_notebook.notebook.protocol import PROTOCOL_VERSION, parse

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gen_protocol.py"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_protocol", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = load_generator()


def test_the_committed_files_are_what_the_generator_writes() -> None:
    assert gen.TYPES_FILE.read_text("utf-8") == gen.types_file()
    assert gen.CONSTANTS_FILE.read_text("utf-8") == gen.constants_file()
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_check_fails_on_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "protocol.gen.d.ts"
    stale.write_text(gen.types_file().replace("editable: boolean;", ""), "utf-8")
    monkeypatch.setattr(gen, "TYPES_FILE", stale)
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    assert gen.main(["--check"]) == 1
    assert gen.main([]) == 0
    assert stale.read_text("utf-8") == gen.types_file()


@pytest.mark.parametrize(
    ("python", "typescript"),
    [
        (str, "string"),
        (int | None, "number | null"),
        (list[str] | None, "string[] | null"),
        (dict[str, Any], "Record<string, unknown>"),
        (list[interaction.ContentBlock], "ContentBlock[]"),
        (interaction.ToolKind | None, "ToolKind | null"),
        (Literal["a", "b"], '"a" | "b"'),
        (list[Literal["a", "b"]], '("a" | "b")[]'),
    ],
)
def test_each_python_type_has_its_typescript_spelling(python: Any, typescript: str) -> None:
    assert gen.ts(python) == typescript


def test_a_type_it_cannot_spell_stops_the_build() -> None:
    with pytest.raises(TypeError):
        gen.ts(dict[int, str])
    with pytest.raises(TypeError):
        gen.ts(set[str])


def interface(name: str) -> list[str]:
    """The field lines of one generated interface."""
    text = gen.types_file()
    body = text.split(f"export interface {name} {{\n", 1)[1].split("}\n", 1)[0]
    return [line.strip() for line in body.splitlines()]


def test_the_card_interface_has_every_field_with_its_type() -> None:
    fields = interface("Card")
    assert "class: ToolClass | null;" in fields
    assert "content: CardBlock[];" in fields
    assert "incomplete: boolean;" in fields
    assert "invisible: boolean;" in fields
    assert "locations: Location[];" in fields
    assert "decided_by: DecidedBy | null;" in fields
    assert "kind: ToolKind | null;" in fields
    assert len(fields) == len(protocol.Card.__annotations__)


def test_optional_fields_are_optional_and_what_a_view_sends_may_be_left_out() -> None:
    assert "cwd?: string | null;" in interface("TerminalBlock")
    assert "command: string;" in interface("TerminalBlock")
    answer = interface("AnswerMessage")
    assert 'type: "answer";' in answer
    assert "question_id: string;" in answer
    assert "note?: string;" in answer
    # ... because parse reads them as missing.
    message = parse({"type": "answer", "question_id": "q1", "decision": "deny"})
    assert not isinstance(message, str)
    assert message["note"] == ""


def test_the_model_interface_is_every_synced_trait() -> None:
    assert interface("Model") == [f"{name}: {ts};" for name, ts in gen.TRAITS.items()]
    assert f"export const PROTOCOL_VERSION = {PROTOCOL_VERSION};" in gen.constants_file()


def test_constants_are_the_kernels() -> None:
    text = gen.constants_file()
    assert f"export const MAX_TEXT = {protocol.MAX_TEXT};" in text
    assert '"execute"' in text.split("DESTRUCTIVE_KINDS")[1].split(";")[0]
    assert '"agent": "by the agent"' in text


@pytest.mark.parametrize(
    ("table", "values"),
    [
        (labels.OUTCOME_LABEL, interaction.Outcome),
        (labels.STATUS_LABEL, interaction.Status),
        (labels.BY, interaction.DecidedBy),
        (labels.DECISION, protocol.Verdict),
        (labels.KIND_HINT, interaction.ToolKind),
        (labels.CLASS_HINT, interaction.ToolClass),
        (labels.TURN_STATUS, protocol.TurnStatus),
        (labels.OUTPUT_LABEL, interaction.OutputName),
        (labels.TYPED_LABEL, interaction.TypedAnswer),
    ],
)
def test_every_value_has_its_words(table: dict[str, str], values: Any) -> None:
    assert set(table) == set(get_args(values))
    assert all(table.values())


def test_plan_glyphs_cover_every_status() -> None:
    statuses = get_args(get_type_hints(interaction.PlanEntry)["status"])
    assert set(labels.PLAN_GLYPH) == set(statuses)
