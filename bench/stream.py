"""Streaming a long answer into a notebook: what the frontend receives, side by side.

A real kernel (started with ``jupyter_client``) runs one turn of a scripted model
that streams N fragments of about four characters, once per way of showing it:
no interaction at all, a no-op interaction, an empty widget (the least any
widget-based interaction can cost), ``NotebookInteraction``, and the three ways
notebooks do it today (a display handle updated per fragment, ``print`` into an
``ipywidgets.Output``, a synced string trait appended per fragment). The client
reads the raw IOPub frames the kernel sends for the cell and counts them.

Then the bytes each turn's widget costs, over the wire (its ``comm_open``) and in
saved widget state, for ``--turns`` turns in one kernel: ``NotebookInteraction``,
whose code travels once per kernel in the shared frontend widget, beside the same
widget carrying the whole bundle as its own ``_esm``/``_css`` (as every widget did
before the code was shared).

Run: .venv/bin/python bench/stream.py [--fragments 20000] [--repeats 9] [--paced | --rate N]
                                      [--turns 50]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from jupyter_client.manager import KernelManager

DELIMITER = b"<IDS|MSG>"
STATE_UPDATE = re.compile(rb'"method":\s*"update",\s*"state":\s*\{\s*"([^"]*)"')
COMM_ID = re.compile(rb'"comm_id":\s*"([^"]+)"')
DISPLAY_ID = re.compile(rb'"display_id":\s*"([^"]+)"')

FRAGMENTS_SOURCE = """
def make_fragments(n):
    words = ["The ", "quic", "k br", "own ", "fox ", "jump", "s ov", "er é", "😀 ok", "\\n\\n- "]
    return [words[i % len(words)] for i in range(n)]
"""

SETUP = (
    FRAGMENTS_SOURCE
    + """
import time
import anywidget
import ipywidgets
import traitlets
from IPython.display import Markdown, display
from mead_notebook import Allow, NotebookInteraction, Router, ScriptedModel, Unanswered
from mead_notebook.notebook.frontend import STATIC

FRAGMENTS = make_fragments({n})
RATE = {rate}


class Base:
    def tool_updated(self, context, update):
        pass

    def request_permission(self, context, request):
        return Allow()

    def register_call(self, context, tool_call_id, call):
        pass

    def ask_choice(self, context, choice):
        return Unanswered("no_answer")

    def text_delta(self, context, text):
        pass


class BundleInEveryWidget(NotebookInteraction):
    # Every widget carrying the whole frontend, as before the code was shared.
    _esm = (STATIC / "widget.js").read_text()
    _css = (STATIC / "widget.css").read_text()
    _frontend = traitlets.Any(None)


class Empty(anywidget.AnyWidget):
    _esm = "export default {{ render() {{}} }}"


class EmptyWidget(Base):
    # The least any widget-based interaction pays: an empty widget, shown when the
    # turn starts as NotebookInteraction is, and a no-op call per fragment.

    def __init__(self):
        self.widget = Empty()

    def turn_started(self, context, prompt):
        display(self.widget)


class Handle(Base):
    def __init__(self):
        self.parts = []
        self.handle = display(Markdown(""), display_id=True)

    def text_delta(self, context, text):
        self.parts.append(text)
        self.handle.update(Markdown("".join(self.parts)))


class Printed(Base):
    def __init__(self):
        self.out = ipywidgets.Output()
        display(self.out)

    def text_delta(self, context, text):
        with self.out:
            print(text, end="")


class TextWidget(anywidget.AnyWidget):
    _esm = "export default {{ render({{ model, el }}) {{ el.textContent = model.get('text'); }} }}"
    text = traitlets.Unicode("").tag(sync=True)


class Trait(Base):
    def __init__(self):
        self.widget = TextWidget()
        display(self.widget)

    def text_delta(self, context, text):
        self.widget.text += text


class Paced:
    # Streams FRAGMENTS at about RATE a second, in bursts every 10 ms, as a network would.

    name = "paced"
    streaming = True

    def reply(self, messages, tools):
        burst = max(1, round(RATE / 100))
        pause = burst / RATE
        for i, fragment in enumerate(FRAGMENTS):
            if i % burst == burst - 1:
                time.sleep(pause)
            yield fragment


def turn(interaction, fragments=None):
    fragments = FRAGMENTS if fragments is None else fragments
    model = Paced() if RATE else ScriptedModel([fragments])
    router = Router(model)
    started = time.perf_counter()
    result = router.run("Write a long answer", interaction=interaction)
    elapsed = time.perf_counter() - started
    assert result.text == "".join(fragments)
    return elapsed


def saved_state():
    # The widget state a notebook saved now would hold, by kind of widget.
    import json

    sizes = {{}}
    for entry in ipywidgets.Widget.get_manager_state()["state"].values():
        state = entry["state"]
        kind = "shared" if "code" in state else "turn" if "_esm" in state else "other"
        sizes.setdefault(kind, []).append(len(json.dumps(entry)))
    print(json.dumps(sizes))
"""
)

WIDGET_VARIANTS: dict[str, str] = {
    "bundle in every widget (before)": "BundleInEveryWidget",
    "shared frontend (now)": "NotebookInteraction",
}
"""How the turn's widget gets its code, and the class that does it that way."""

VARIANTS: dict[str, str] = {
    "no interaction": "turn(None)",
    "no-op interaction": "turn(Base())",
    "empty widget": "turn(EmptyWidget())",
    "NotebookInteraction": "turn(NotebookInteraction())",
    "display handle": "turn(Handle())",
    "Output + print": "turn(Printed())",
    "synced str trait": "turn(Trait())",
}


FAST = ("no interaction", "no-op interaction", "empty widget", "NotebookInteraction")
"""Run interleaved in one kernel, so that they share the machine's load alike."""


@dataclass
class Frame:
    """One IOPub message as received: its size on the wire and its decoded parts."""

    size: int
    header: dict[str, Any]
    parent: dict[str, Any]
    content: bytes


@dataclass
class Run:
    """What the client received for one cell."""

    seconds: float
    turn_seconds: float
    frames: list[Frame] = field(default_factory=list)

    @property
    def messages(self) -> int:
        return len(self.frames)

    @property
    def bytes(self) -> int:
        return sum(f.size for f in self.frames)


def execute(km: KernelManager, kc: Any, code: str, timeout: float = 600.0) -> Run:
    """Run ``code`` and collect every IOPub frame until the kernel is idle again."""
    socket = kc.iopub_channel.socket
    while socket.poll(0):
        socket.recv_multipart()
    started = time.perf_counter()
    msg_id = kc.execute(code, store_history=False)
    frames: list[Frame] = []
    last_whole: dict[tuple[bytes, ...], Frame] = {}
    deadline = time.monotonic() + timeout
    idle = False
    while not idle:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the cell did not finish within {timeout} s")
        if not socket.poll(1000):
            continue
        raw = socket.recv_multipart()
        i = raw.index(DELIMITER)
        header = json.loads(raw[i + 2])
        parent = json.loads(raw[i + 3])
        frame = Frame(sum(len(p) for p in raw), header, parent, raw[i + 5])
        slot = _replaces(frame)
        if slot is not None:
            # Only the last of the messages that replace the same thing matters;
            # dropping the earlier ones' content keeps the client's memory bounded
            # (the old ways send O(n^2) bytes).
            if slot in last_whole:
                last_whole[slot].content = b""
            last_whole[slot] = frame
        frames.append(frame)
        if header["msg_type"] == "status" and parent.get("msg_id") == msg_id:
            idle = json.loads(raw[i + 5])["execution_state"] == "idle"
    seconds = time.perf_counter() - started
    reply = kc.get_shell_msg(timeout=timeout)
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"the cell failed: {reply['content']}")
    result = [f for f in frames if f.header["msg_type"] == "execute_result"]
    turn_seconds = float(json.loads(result[-1].content)["data"]["text/plain"]) if result else 0.0
    return Run(seconds, turn_seconds, frames)


def _replaces(frame: Frame) -> tuple[bytes, ...] | None:
    """What a later message of this slot replaces wholly: a display (by its id), or a
    comm's state update that starts with the same trait (by comm and trait)."""
    kind = frame.header["msg_type"]
    tail = frame.content[-300:]
    if kind == "update_display_data":
        found = DISPLAY_ID.search(tail)
        return (b"display", found.group(1)) if found else None
    if kind != "comm_msg":
        return None
    update = STATE_UPDATE.search(frame.content[:200])
    comm = COMM_ID.search(tail)
    if update is None or comm is None:
        return None
    return (b"comm", comm.group(1), update.group(1))


def comm_payloads(run: Run) -> list[tuple[datetime, dict[str, Any]]]:
    out = []
    for f in run.frames:
        if f.header["msg_type"] == "comm_msg" and f.content:
            stamp = datetime.fromisoformat(f.header["date"].replace("Z", "+00:00"))
            out.append((stamp, json.loads(f.content)["data"]))
    return out


def replay_text(run: Run) -> str:
    """The text a frontend ends with: the text messages applied, then the final sync."""
    text = b""
    for _stamp, data in comm_payloads(run):
        if data.get("method") == "custom" and data["content"].get("type") == "text":
            start = data["content"]["start"] * 2
            if start <= len(text):
                text = text[:start] + data["content"]["delta"].encode("utf-16-le")
    streamed = text.decode("utf-16-le")
    final = [d["state"]["text"] for _s, d in comm_payloads(run) if "text" in d.get("state", {})]
    if not final or not final[-1].startswith(streamed):
        raise AssertionError("the final sync does not continue the streamed text")
    return str(final[-1])


def max_per_window(run: Run, window: float) -> int:
    stamps = sorted(
        s
        for s, d in comm_payloads(run)
        if d.get("method") == "custom" and d["content"].get("type") == "text"
    )
    best, lo = 0, 0
    for hi in range(len(stamps)):
        while (stamps[hi] - stamps[lo]).total_seconds() >= window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def breakdown(run: Run) -> dict[str, int]:
    """Bytes on the wire by kind of message."""
    sizes: dict[str, int] = {}
    for f in run.frames:
        kind = f.header["msg_type"]
        if kind == "comm_msg" and f.content:
            data = json.loads(f.content)["data"]
            if data.get("method") == "custom":
                kind = f"custom {data['content'].get('type')}"
            else:
                kind = f"comm {data.get('method')} " + ",".join(sorted(data.get("state", {})))
        sizes[kind] = sizes.get(kind, 0) + f.size
    return sizes


def final_text(name: str, run: Run) -> str | None:
    """The text the frontend shows at the end, for the variants that carry it whole."""
    if name == "NotebookInteraction":
        return replay_text(run)
    if name == "display handle":
        shown = [
            json.loads(f.content)["data"]["text/markdown"]
            for f in run.frames
            if f.header["msg_type"] == "update_display_data" and f.content
        ]
        return shown[-1] if shown else None
    if name == "Output + print":
        streamed = [
            json.loads(f.content)["text"] for f in run.frames if f.header["msg_type"] == "stream"
        ]
        return "".join(streamed)
    if name == "synced str trait":
        states = [
            d["state"]["text"] for _s, d in comm_payloads(run) if "text" in d.get("state", {})
        ]
        return states[-1] if states else None
    return None


@dataclass
class WidgetBytes:
    """What ``turns`` turns' widgets cost in one kernel, in bytes, by kind of widget."""

    turns: int
    opens: dict[str, list[int]]
    saved: dict[str, list[int]]

    def per_turn(self, sizes: dict[str, list[int]]) -> float:
        return sum(sizes.get("turn", [])) / self.turns

    @staticmethod
    def once(sizes: dict[str, list[int]]) -> int:
        return sum(sizes.get("shared", []))

    @staticmethod
    def total(sizes: dict[str, list[int]]) -> int:
        return sum(sum(v) for kind, v in sizes.items() if kind != "other")


def widget_bytes(cls: str, turns: int) -> WidgetBytes:
    """Run ``turns`` short turns with widgets of class ``cls`` in a fresh kernel."""
    km = KernelManager(kernel_name="python3")
    km.start_kernel()
    kc = km.blocking_client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        execute(km, kc, SETUP.format(n=200, rate=0.0))
        run = execute(km, kc, f"for _ in range({turns}):\n    turn({cls}(display=False))")
        saved = execute(km, kc, "saved_state()")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    opens: dict[str, list[int]] = {}
    for f in run.frames:
        if f.header["msg_type"] == "comm_open":
            state = json.loads(f.content)["data"]["state"]
            kind = "shared" if "code" in state else "turn" if "_esm" in state else "other"
            opens.setdefault(kind, []).append(f.size)
    printed = "".join(
        json.loads(f.content)["text"] for f in saved.frames if f.header["msg_type"] == "stream"
    )
    return WidgetBytes(turns, opens, json.loads(printed))


def report_widget_bytes(turns: int) -> None:
    """Print the bytes per turn's widget, before and now, side by side."""
    found = {name: widget_bytes(cls, turns) for name, cls in WIDGET_VARIANTS.items()}
    print()
    print(
        f"Bytes per turn's widget, {turns} turns in one kernel (comm_open: its frame on the "
        "wire; saved: its entry in the notebook's widget state)"
    )
    header = (
        f"{'variant':<33}{'comm_open':>10}{'saved':>9}{'shared once':>13}"
        f"{f'{turns} turns, open':>17}{f'{turns} turns, saved':>18}"
    )
    print(header)
    print("-" * len(header))
    for name, b in found.items():
        print(
            f"{name:<33}{b.per_turn(b.opens):>10,.0f}{b.per_turn(b.saved):>9,.0f}"
            f"{b.once(b.opens):>13,}{b.total(b.opens):>17,}{b.total(b.saved):>18,}"
        )
    before, now = (found[name] for name in WIDGET_VARIANTS)
    print(
        f"  before / now, {turns} turns: comm_open "
        f"{before.total(before.opens) / max(1, now.total(now.opens)):.1f}x, saved state "
        f"{before.total(before.saved) / max(1, now.total(now.saved)):.1f}x"
    )
    layout = statistics.median(now.opens.get("other", [0]))
    print(f"  (not counted: each widget's ipywidgets Layout, {layout:,.0f} bytes, alike both ways)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fragments", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=9, help="cells per fast variant")
    parser.add_argument("--slow-repeats", type=int, default=1, help="cells per old way")
    parser.add_argument(
        "--paced", action="store_true", help="stream at about 10,000 fragments a second"
    )
    parser.add_argument(
        "--rate", type=float, default=0.0, help="stream at about this many fragments a second"
    )
    parser.add_argument("--only", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument(
        "--turns", type=int, default=50, help="turns for the bytes per widget (0: skip)"
    )
    args = parser.parse_args()
    rate = args.rate or (10_000.0 if args.paced else 0.0)

    namespace: dict[str, Any] = {}
    exec(FRAGMENTS_SOURCE, namespace)
    expected = "".join(namespace["make_fragments"](args.fragments))
    text_bytes = len(expected.encode("utf-8"))

    results: dict[str, list[Run]] = {}
    fast = [n for n in args.only if n in FAST]
    groups = [(fast, args.repeats)] if fast else []
    groups += [([n], args.slow_repeats) for n in args.only if n not in FAST]
    for names, repeats in groups:
        km = KernelManager(kernel_name="python3")
        km.start_kernel()
        kc = km.blocking_client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=60)
            execute(km, kc, SETUP.format(n=args.fragments, rate=rate))
            for name in names:
                execute(km, kc, VARIANTS[name])
            for _ in range(repeats):
                for name in names:
                    results.setdefault(name, []).append(execute(km, kc, VARIANTS[name]))
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
        print(f"  measured {', '.join(names)}", file=sys.stderr)

    none = results.get("no interaction", [])
    base = statistics.median(r.seconds for r in none) if none else None
    base_turn = statistics.median(r.turn_seconds for r in none) if none else None
    pace = f"paced at about {rate:,.0f} a second" if rate else "as fast as the model yields them"
    print(
        f"{args.fragments} fragments {pace}, {len(expected)} characters "
        f"({text_bytes} bytes UTF-8); "
        f"median of {args.repeats} cells ({args.slow_repeats} for the old ways) in a real kernel; "
        "all IOPub frames the client received for the cell"
    )
    header = (
        f"{'variant':<22}{'cell s':>9}{'turn s':>9}{'x none':>8}{'messages':>10}"
        f"{'bytes':>14}{'bytes/text':>12}{'text ok':>9}"
    )
    print(header)
    print("-" * len(header))
    for name, runs in results.items():
        run = sorted(runs, key=lambda r: r.seconds)[len(runs) // 2]
        seconds = statistics.median(r.seconds for r in runs)
        turn = statistics.median(r.turn_seconds for r in runs)
        ratio = f"{seconds / base:.2f}" if base else "-"
        shown = final_text(name, run)
        ok = "-" if shown is None and name in FAST[:3] else str(shown == expected)
        print(
            f"{name:<22}{seconds:>9.3f}{turn:>9.3f}{ratio:>8}{run.messages:>10}"
            f"{run.bytes:>14,}{run.bytes / text_bytes:>12.2f}{ok:>9}"
        )
    if "NotebookInteraction" in results:
        runs = results["NotebookInteraction"]
        run = sorted(runs, key=lambda r: r.seconds)[len(runs) // 2]
        ours = statistics.median(r.seconds for r in runs)
        ours_turn = statistics.median(r.turn_seconds for r in runs)
        worst = max(max_per_window(r, 0.030) for r in runs)
        texts = [
            sum(
                1
                for _s, d in comm_payloads(r)
                if d.get("method") == "custom" and d["content"].get("type") == "text"
            )
            for r in runs
        ]
        print()
        print("NotebookInteraction against the targets:")
        if base and base_turn:
            print(f"  cell time / no interaction : {ours / base:.2f}  (target <= 1.2)")
            print(f"  turn time / no interaction : {ours_turn / base_turn:.2f}")
        for floor in ("no-op interaction", "empty widget"):
            if floor in results and base and base_turn:
                cell = statistics.median(r.seconds for r in results[floor])
                turn = statistics.median(r.turn_seconds for r in results[floor])
                print(
                    f"  {floor} / no interaction: "
                    f"cell {cell / base:.2f}, turn {turn / base_turn:.2f}"
                )
                print(
                    f"  NotebookInteraction / {floor}: "
                    f"cell {ours / cell:.2f}, turn {ours_turn / turn:.2f}"
                )
        opened = statistics.median(
            sum(f.size for f in r.frames if f.header["msg_type"] == "comm_open") for r in runs
        )
        total = statistics.median(r.bytes for r in runs)
        print(f"  bytes / text size          : {total / text_bytes:.2f}  (target <= 3)")
        print(
            f"    without the widget's comm_open ({opened:,.0f} bytes: its loader and traits, "
            f"the code travels once per kernel): {(total - opened) / text_bytes:.2f}"
        )
        parts = breakdown(run)
        for_text = parts.get("custom text", 0) + sum(
            size for kind, size in parts.items() if kind.startswith("comm update")
        )
        print(
            f"  bytes sent for the text (text messages + the final sync) / text size: "
            f"{for_text / text_bytes:.2f}  (target <= 3)"
        )
        for kind, size in parts.items():
            print(f"    {kind:<26}: {size:>10,} bytes")
        print(f"  text messages per turn     : {texts}")
        print(f"  max text messages in 30 ms : {worst}  (target <= 1)")
    if args.turns > 0:
        report_widget_bytes(args.turns)


if __name__ == "__main__":
    main()
