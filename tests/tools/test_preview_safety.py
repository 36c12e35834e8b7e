"""``preview.file_diff`` reads only regular files inside the working folder, bounded."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from mead_notebook.tools import preview

SECRET = "aws_secret_access_key = hunter2"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder (the cwd) and, beside it, a secret outside it."""
    folder = tmp_path / "work"
    folder.mkdir()
    (tmp_path / "credentials").write_text(SECRET)
    monkeypatch.chdir(folder)
    return folder


def outside(path: Path) -> str:
    return preview.OUTSIDE_WORKING_FOLDER.format(path=os.path.realpath(path))


def test_a_symlink_to_a_secret_outside_is_not_read_and_is_shown_resolved(work: Path) -> None:
    (work / "notes.txt").symlink_to(work.parent / "credentials")
    shown = preview.file_diff("notes.txt", "new\n")
    assert SECRET not in repr(shown)
    assert shown.content == [{"type": "text", "text": outside(work.parent / "credentials")}]
    assert shown.locations == [
        {"path": os.path.realpath(work.parent / "credentials"), "line": None}
    ]


def test_a_path_outside_the_working_folder_is_not_read(work: Path) -> None:
    for path in (work.parent / "credentials", "../credentials", work / ".." / "credentials"):
        shown = preview.file_diff(path, "new\n")
        assert SECRET not in repr(shown)
        assert shown.content == [{"type": "text", "text": outside(work.parent / "credentials")}]


def test_a_file_inside_is_diffed_under_its_resolved_path(work: Path) -> None:
    (work / "a.txt").write_text("one\n")
    shown = preview.file_diff("a.txt", "two\n")
    resolved = os.path.realpath(work / "a.txt")
    assert shown.content == [
        {"type": "diff", "path": resolved, "old_text": "one\n", "new_text": "two\n"}
    ]
    assert shown.locations == [{"path": resolved, "line": None}]
    assert preview.file_diff("new.txt", "x").content[0]["type"] == "diff"


def promptly(path: str | Path) -> preview.Preview:
    box: list[preview.Preview] = []
    worker = threading.Thread(target=lambda: box.append(preview.file_diff(path, "x")), daemon=True)
    worker.start()
    worker.join(5)
    assert box, "the preview blocked"
    return box[0]


def test_a_fifo_is_not_read(work: Path) -> None:
    os.mkfifo(work / "pipe")
    block = promptly("pipe").content[0]
    assert block == {
        "type": "text",
        "text": f"{os.path.realpath(work / 'pipe')} is not a regular file: "
        "its content was not read.",
    }


def test_dev_zero_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/dev")
    block = promptly("/dev/zero").content[0]
    assert block["type"] == "text"
    assert "not a regular file" in str(block)


def test_a_huge_file_is_read_only_to_the_bound_plus_one(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = work / "big.txt"
    with big.open("wb") as f:  # sparse: 50 MB that take no room
        f.truncate(50 * preview.MAX_FILE)
    monkeypatch.setattr(os, "stat", lambda *a, **k: os.stat_result((0o100644,) + (0,) * 9))
    read: list[int] = []
    real_read = os.read

    def counting(fd: int, n: int) -> bytes:
        chunk = real_read(fd, n)
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(os, "read", counting)
    block = preview.file_diff("big.txt", "x").content[0]
    assert block["type"] == "text"
    assert "too large" in str(block)
    assert sum(read) == preview.MAX_FILE + 1
