"""One trust rule for an MCP server's annotations: the router's and every adapter's."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest

from mead_notebook.tools.trust import kind_from_hints, trusted_servers

READ_ONLY: list[Any] = [
    mcp_types.ToolAnnotations(readOnlyHint=True),
    {"readOnlyHint": True},
    {"read_only_hint": True},
]


@pytest.mark.parametrize("hints", READ_ONLY, ids=["mcp", "camel", "snake"])
def test_a_read_only_hint_is_believed_from_a_trusted_server_only(hints: Any) -> None:
    assert kind_from_hints(hints, trusted=True) == "read"
    assert kind_from_hints(hints, trusted=False) == "other"


def test_a_destructive_hint_counts_on_any_server_and_wins_over_read_only() -> None:
    both = mcp_types.ToolAnnotations(readOnlyHint=True, destructiveHint=True)
    for trusted in (True, False):
        assert kind_from_hints({"destructiveHint": True}, trusted=trusted) == "delete"
        assert kind_from_hints(both, trusted=trusted) == "delete"


@pytest.mark.parametrize("hints", [None, {}, {"readOnlyHint": "yes"}, object()])
def test_anything_else_is_other(hints: Any) -> None:
    assert kind_from_hints(hints, trusted=True) == "other"


def test_trusted_names_servers() -> None:
    assert trusted_servers(None) == frozenset()
    assert trusted_servers(["files", "files", "git"]) == {"files", "git"}
    with pytest.raises(TypeError, match="server names"):
        trusted_servers("files")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="strings"):
        trusted_servers([1])  # type: ignore[list-item]
