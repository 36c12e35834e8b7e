"""A diff block as a card shows it: the whole texts compared, the rows bounded.

The kernel compares the whole old and new texts, whatever their size, and
sends views the unified diff's first :data:`.protocol.MAX_DIFF_ROWS` rows, each
line cut at :data:`.protocol.MAX_ROW_TEXT` characters, with the totals: lines
added and removed, and how many changed lines are not among the rows. A view
renders these rows; it never diffs a text of its own, so every view shows the
same diff and says the same of what it leaves out.

Lines compare with their endings (a file that gains a final newline changes).
Lines shared at the start and the end are matched at once; difflib matches the
rest when it is small enough to do so quickly (:data:`MAX_DIFF_WORK`), and a
larger rest shows as its old lines removed and its new lines added: a true
diff, only not the smallest one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from typing import Final, Literal

from .labels import NO_NEWLINE
from .protocol import MAX_DIFF_ROWS, MAX_ROW_TEXT, CardDiff, DiffRow, DiffSign

__all__ = ["MAX_DIFF_WORK", "Opcode", "diff_view", "lines_of", "opcodes"]

MAX_DIFF_WORK: Final = 1_000_000
"""Largest product of the old and new line counts difflib matches (about 0.2 s at worst);
above it, the lines between the shared start and end show as replaced."""
CONTEXT: Final = 3
"""Unchanged lines shown around each change."""
_LINE: Final = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")

Opcode = tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]
"""As difflib's: (tag, old start, old end, new start, new end)."""


def lines_of(text: str) -> list[str]:
    """``text``'s lines, each with its ending (LF, CRLF or CR; the last may have none)."""
    return _LINE.findall(text)


def opcodes(old: Sequence[str], new: Sequence[str]) -> list[Opcode]:
    """How ``old`` becomes ``new``, as difflib's opcodes, found in bounded time."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    a, b = old[start : len(old) - end], new[start : len(new) - end]
    ops: list[Opcode] = []
    if start:
        ops.append(("equal", 0, start, 0, start))
    if a or b:
        if len(a) * len(b) <= MAX_DIFF_WORK:
            matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
            ops += [
                (tag, i1 + start, i2 + start, j1 + start, j2 + start)
                for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            ]
        else:
            tag: Literal["replace", "delete", "insert"] = (
                "replace" if a and b else "delete" if a else "insert"
            )
            ops.append((tag, start, start + len(a), start, start + len(b)))
    if end:
        ops.append(("equal", len(old) - end, len(old), len(new) - end, len(new)))
    return ops


class _Known(difflib.SequenceMatcher[str]):
    """A matcher whose opcodes are already known: difflib groups them into hunks."""

    def __init__(self, ops: list[Opcode]) -> None:
        super().__init__(None, [], [])
        self._ops = ops

    def get_opcodes(self) -> list[Opcode]:
        return self._ops


def diff_view(path: str, old_text: str | None, new_text: str, *, path_cut: int = 0) -> CardDiff:
    """The card's diff of ``old_text`` (None: a new file) to ``new_text``, bounded."""
    old, new = lines_of(old_text or ""), lines_of(new_text)
    ops = opcodes(old, new)
    removed = sum(i2 - i1 for tag, i1, i2, _j1, _j2 in ops if tag in ("replace", "delete"))
    added = sum(j2 - j1 for tag, _i1, _i2, j1, j2 in ops if tag in ("replace", "insert"))
    rows: list[DiffRow] = []
    hidden = 0
    for group in _Known(list(ops)).get_grouped_opcodes(CONTEXT) if ops else []:
        if len(rows) >= MAX_DIFF_ROWS:
            hidden += _changed(group)
            continue
        for row in _hunk(group, old, new):
            if len(rows) < MAX_DIFF_ROWS:
                rows.append(row)
            elif row["sign"] in ("-", "+"):
                hidden += 1
    cut = path_cut + sum(r["cut"] for r in rows)
    return CardDiff(
        type="diff",
        path=path,
        new_file=old_text is None,
        rows=rows,
        added=added,
        removed=removed,
        hidden=hidden,
        cut=cut,
    )


def _changed(group: list[tuple[str, int, int, int, int]]) -> int:
    return sum((i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in group if tag != "equal")


def _hunk(
    group: list[tuple[str, int, int, int, int]], old: list[str], new: list[str]
) -> Iterator[DiffRow]:
    first, last = group[0], group[-1]
    header = f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@"
    yield _row("@", None, None, header)
    for tag, i1, i2, j1, j2 in group:
        if tag == "equal":
            for i in range(i1, i2):
                yield _row(" ", i + 1, j1 + i - i1 + 1, old[i])
                if _unended(old, i):
                    yield _row("\\", None, None, NO_NEWLINE)
            continue
        for i in range(i1, i2):
            yield _row("-", i + 1, None, old[i])
            if _unended(old, i):
                yield _row("\\", None, None, NO_NEWLINE)
        for j in range(j1, j2):
            yield _row("+", None, j + 1, new[j])
            if _unended(new, j):
                yield _row("\\", None, None, NO_NEWLINE)


def _unended(lines: list[str], i: int) -> bool:
    """Whether line ``i`` is the last and has no line ending."""
    return i == len(lines) - 1 and not lines[i].endswith(("\n", "\r"))


def _row(sign: DiffSign, old: int | None, new: int | None, line: str) -> DiffRow:
    text = line.rstrip("\r\n")
    cut = max(0, len(text) - MAX_ROW_TEXT)
    return DiffRow(sign=sign, old=old, new=new, text=text[:MAX_ROW_TEXT], cut=cut)


def _range(start: int, end: int) -> str:
    """A hunk's range as unified diffs write it: 1-based start, length (start 0 when empty)."""
    length = end - start
    return f"{start if length == 0 else start + 1},{length}"
