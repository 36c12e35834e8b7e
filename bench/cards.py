"""Bytes sent to the frontend per tool-call update, with 10 and with 1,000 calls in a turn.

A real router runs a scripted turn of N tool calls through ``NotebookInteraction``
(an ``AllowAll`` policy answers, so nothing waits). Every message the widget's comm
publishes is packed as the kernel would pack it (``jupyter_client`` JSON) and
counted. Side by side: a widget that keeps the cards in a synced ``Dict`` trait
and so resends every card on each update.

Run: .venv/bin/python bench/cards.py [--calls 10 1000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import anywidget
import comm
import traitlets
from comm.base_comm import BaseComm
from jupyter_client.session import json_packer

from mead_notebook import NotebookInteraction, Router, ScriptedModel, ToolCall, tool
from mead_notebook.interaction import Allow, Choice, Picked, Request, Unanswered, Update
from mead_notebook.policies import AllowAll


class CountingComm(BaseComm):
    """Keeps the packed size and kind of every message published on it."""

    def __init__(self, **kwargs: Any) -> None:
        self.sizes: list[tuple[str, int, str]] = []
        super().__init__(**kwargs)

    def publish_msg(
        self,
        msg_type: str,
        data: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        buffers: list[bytes] | None = None,
        **keys: Any,
    ) -> None:
        data = data or {}
        kind, card = msg_type, ""
        if data.get("method") == "custom":
            kind = f"custom {data['content'].get('type')}"
            card = str(data["content"].get("card", {}).get("tool_call_id", ""))
        elif data.get("method") == "update":
            kind = "update " + ",".join(sorted(data.get("state", {})))
        size = len(json_packer({"comm_id": self.comm_id, "data": data}))
        self.sizes.append((kind, size, card))


class CardsTrait(anywidget.AnyWidget):
    """The plain way: every card in one synced dict, resent whole on each change."""

    _esm = "export default { render() {} };"
    calls = traitlets.Dict().tag(sync=True)


class SyncedDict:
    """An interaction that shows cards through ``CardsTrait``."""

    def __init__(self) -> None:
        self.widget = CardsTrait()

    def tool_updated(self, context: Any, update: Update) -> None:
        self.widget.calls = {**self.widget.calls, update["tool_call_id"]: dict(update)}

    def request_permission(self, context: Any, request: Request) -> Allow:
        return Allow()

    def register_call(self, context: Any, tool_call_id: str, call: Any) -> None:
        return None

    def ask_choice(self, context: Any, choice: Choice) -> Picked | Unanswered:
        return Unanswered("no_answer")

    def text_delta(self, context: Any, text: str) -> None:
        return None


@tool
def write_file(path: str, content: str) -> str:
    """Pretend to write a file."""
    return f"wrote {len(content)} characters to {path}"


def run_turn(calls: int, interaction: Any) -> float:
    model = ScriptedModel(
        [
            [
                ToolCall("write_file", {"path": f"f{i}.txt", "content": "x" * 40})
                for i in range(calls)
            ],
            ["done"],
        ]
    )
    started = time.perf_counter()
    result = Router(model, [write_file]).run("write them", interaction=interaction)
    elapsed = time.perf_counter() - started
    assert len(result.calls) == calls
    assert all(c.status == "completed" for c in result.calls)
    return elapsed


def measure(calls: int, plain: bool) -> dict[str, float]:
    created: list[CountingComm] = []
    original = comm.create_comm

    def create(*args: Any, **kwargs: Any) -> CountingComm:
        c = CountingComm(**kwargs)
        created.append(c)
        return c

    comm.create_comm = create
    try:
        if plain:
            interaction: Any = SyncedDict()
        else:
            interaction = NotebookInteraction(policy=AllowAll(), display=False)
            interaction.turn_started(None, "warm up")
        sent = created[-1]
        start = len(sent.sizes)
        elapsed = run_turn(calls, interaction)
    finally:
        comm.create_comm = original
    sizes = sent.sizes[start:]
    if plain:
        updates = [size for kind, size, _card in sizes if kind == "update calls"]
        per_call = len(updates) // calls
        indexed = [(i // per_call, size) for i, size in enumerate(updates)]
        final = 0
    else:
        indexed = [
            (int(card.rsplit("_", 1)[1]) - 1, size)
            for kind, size, card in sizes
            if kind == "custom call"
        ]
        final = max(
            (size for kind, size, _card in sizes if "calls" in kind and "order" in kind), default=0
        )
    first = [size for i, size in indexed if i < 10]
    last = [size for i, size in indexed if i >= calls - 10]
    return {
        "updates": len(indexed),
        "first": statistics.mean(first),
        "last": statistics.mean(last),
        "total": sum(size for _kind, size, _card in sizes),
        "final": final,
        "us_per_call": elapsed / calls * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, nargs="+", default=[10, 1000])
    args = parser.parse_args()
    print(
        "bytes per card update, packed as the kernel packs a comm message's content (JSON); "
        "one turn of N write_file calls; mean over the first 10 and over the last 10 calls"
    )
    header = (
        f"{'way':<22}{'calls':>7}{'updates':>9}{'first 10':>11}{'last 10':>10}"
        f"{'last/first':>12}{'final sync':>12}{'total':>13}{'us/call':>9}"
    )
    print(header)
    print("-" * len(header))
    for plain in (False, True):
        name = "synced Dict trait" if plain else "NotebookInteraction"
        for calls in args.calls:
            m = measure(calls, plain)
            print(
                f"{name:<22}{calls:>7}{m['updates']:>9.0f}{m['first']:>11.0f}{m['last']:>10.0f}"
                f"{m['last'] / m['first']:>12.2f}{m['final']:>12,.0f}{m['total']:>13,.0f}"
                f"{m['us_per_call']:>9.0f}"
            )


if __name__ == "__main__":
    main()
