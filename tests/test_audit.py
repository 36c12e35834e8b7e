"""The audit file: private to its owner, and a call's decision is the first one written."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path

import pytest

from mead_notebook import audit


def test_the_audit_file_is_created_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    audit.AuditLog(path).write("decided", {"tool_call_id": "c1", "arguments": {"k": "secret"}})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_later_line_never_overrides_a_decision(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "audit.jsonl"
    log = audit.AuditLog(path)
    call = {"interaction": "w", "turn": 1, "tool_call_id": "c1", "tool": "delete_file"}
    log.write("decided", {**call, "decided_by": "person", "decision": "deny"})
    with path.open("a", encoding="utf-8") as f:  # written by someone else, later
        f.write(
            json.dumps({**call, "event": "decided", "decided_by": "person", "decision": "allow"})
        )
        f.write("\n")
    log.write("ended", {**call, "status": "failed", "outcome": "denied"})
    with caplog.at_level(logging.WARNING, logger="mead_notebook.audit"):
        (record,) = audit.read(path)
    assert (record["decision"], record["outcome"]) == ("deny", "denied")
    assert "decides call c1 again" in caplog.text
