"""What one thread prints and displays, kept for that thread's call alone.

A cell's output goes to ``sys.stdout``, ``sys.stderr`` and the shell's display
publisher, all shared by every thread of the kernel. Redirecting them would take
the output of every other thread too (the person's own cell, the widget), so
instead each of the three is hooked once: a thread that is :func:`capturing`
writes into its own :class:`Capture`, every other thread goes through untouched.

``sys.stdout`` stays the kernel's own stream: its class's ``write`` is hooked
(IPython itself wraps and restores the instance's ``write`` around every cell),
or for a stream of a built-in class its instance's, checked again at each
capture; one whose ``write`` cannot be replaced is wrapped instead. The display
publisher's ``publish`` and ``clear_output`` are hooked on the instance in place
when a capture starts.

Not captured: what a thread the code starts prints (it goes where output of such
threads always goes), and what reaches the process's file descriptors directly
(a subprocess, C code writing to fd 1).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Capture", "Rich", "Stream", "capturing", "install"]

_HOOKED = "_mead_capture_hooked"
_INNER = "_mead_capture_inner"


@dataclass
class Stream:
    """Text written to ``stdout`` or ``stderr``, consecutive writes joined."""

    name: Literal["stdout", "stderr"]
    text: str


@dataclass
class Rich:
    """A displayed output: its data by MIME type (as IPython formats it), its metadata,
    whether it is the code's ``result`` (its last expression) and its display id."""

    data: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    result: bool = False
    display_id: str | None = None


Output = Stream | Rich


class Capture:
    """The outputs of one thread's run, in order; bounded by ``limit`` characters of text."""

    def __init__(self, limit: int) -> None:
        self.outputs: list[Output] = []
        self.limit = limit
        self.dropped = 0
        """Characters of stream text past ``limit``, not kept."""
        self._text = 0

    def write(self, name: Literal["stdout", "stderr"], text: str) -> None:
        room = self.limit - self._text
        if len(text) > room:
            self.dropped += len(text) - max(room, 0)
            text = text[: max(room, 0)]
        if not text:
            return
        self._text += len(text)
        last = self.outputs[-1] if self.outputs else None
        if isinstance(last, Stream) and last.name == name:
            last.text += text
        else:
            self.outputs.append(Stream(name, text))

    def display(
        self,
        data: Mapping[str, Any],
        metadata: Mapping[str, Any] | None,
        display_id: str | None,
        update: bool,
    ) -> None:
        rich = Rich(dict(data), dict(metadata or {}), display_id=display_id)
        if update:
            for n, old in enumerate(self.outputs):
                if (
                    isinstance(old, Rich)
                    and display_id is not None
                    and old.display_id == display_id
                ):
                    self.outputs[n] = rich
            return
        self.outputs.append(rich)

    def clear(self) -> None:
        self.outputs.clear()


_lock = threading.Lock()
_captures: dict[int, Capture] = {}


def _current() -> Capture | None:
    return _captures.get(threading.get_ident())


class _ThreadStream:
    """A stream that sends what capturing threads write to their capture (for streams whose
    ``write`` cannot be replaced in place)."""

    def __init__(self, inner: Any, name: Literal["stdout", "stderr"]) -> None:
        self._inner = inner
        self._name: Literal["stdout", "stderr"] = name

    def write(self, text: str) -> int:
        capture = _current()
        if capture is None:
            return int(self._inner.write(text) or 0)
        capture.write(self._name, str(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _hooked(function: object) -> bool:
    return bool(getattr(function, _HOOKED, False))


def _stream_name(stream: object) -> Literal["stdout", "stderr"]:
    return (
        "stderr" if getattr(stream, "name", None) == "stderr" or stream is sys.stderr else "stdout"
    )


def _hook_stream(name: Literal["stdout", "stderr"]) -> None:
    """Hook the stream's ``write``: on its class when that is a Python class (ipykernel's
    ``OutStream``), else on the instance (again if something put its old ``write`` back)."""
    stream = getattr(sys, name)
    if stream is None or isinstance(stream, _ThreadStream):
        return
    kind = type(stream)
    found = kind.__dict__.get("write")
    if isinstance(found, types.FunctionType):
        kind.write = _Write(found)
        found = kind.__dict__["write"]
    if isinstance(found, _Write):
        own = getattr(stream, "__dict__", {})
        if "write" in own:  # the instance's own write (IPython's, for this cell) goes behind
            own[_INNER] = own.pop("write")
        return
    if _hooked(stream.write):
        return
    original: Callable[[str], Any] = stream.write

    def write(text: str) -> int:
        capture = _current()
        if capture is None:
            return int(original(text) or 0)
        capture.write(name, str(text))
        return len(text)

    setattr(write, _HOOKED, True)
    try:
        stream.write = write
    except (AttributeError, TypeError):
        setattr(sys, name, _ThreadStream(stream, name))


class _Write:
    """A stream class's ``write`` that sends a capturing thread's text to its capture.

    A data descriptor, so it wins over an instance's own ``write``: IPython wraps the
    instance's ``write`` around every cell (to keep outputs in its history) and puts
    the old one back after; what it assigns is kept and called behind the hook.
    """

    def __init__(self, original: Callable[..., Any]) -> None:
        self.original = original

    def __get__(self, stream: Any, kind: Any = None) -> Any:
        if stream is None:
            return self
        inner = stream.__dict__.get(_INNER)
        if inner is None:
            inner = self.original.__get__(stream, kind)

        def write(text: str, *args: Any, **kwargs: Any) -> Any:
            capture = _current()
            if capture is None:
                return inner(text, *args, **kwargs)
            capture.write(_stream_name(stream), str(text))
            return len(text)

        setattr(write, _HOOKED, True)
        setattr(write, _INNER, inner)
        return write

    def __set__(self, stream: Any, value: Any) -> None:
        stream.__dict__[_INNER] = getattr(value, _INNER, value)

    def __delete__(self, stream: Any) -> None:
        stream.__dict__.pop(_INNER, None)


def _hook_display(publisher: Any) -> None:
    if publisher is None or _hooked(getattr(publisher, "publish", None)):
        return
    publish: Callable[..., Any] = publisher.publish
    clear_output: Callable[..., Any] = publisher.clear_output

    def hooked_publish(data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
        capture = _current()
        if capture is None:
            return publish(data, metadata, *args, **kwargs)
        transient = kwargs.get("transient") or {}
        display_id = transient.get("display_id") if isinstance(transient, dict) else None
        capture.display(data or {}, metadata, display_id, bool(kwargs.get("update")))
        return None

    def hooked_clear(*args: Any, **kwargs: Any) -> Any:
        capture = _current()
        if capture is None:
            return clear_output(*args, **kwargs)
        capture.clear()
        return None

    setattr(hooked_publish, _HOOKED, True)
    publisher.publish = hooked_publish
    publisher.clear_output = hooked_clear


def install(shell: Any) -> None:
    """Hook ``sys.stdout``, ``sys.stderr`` and ``shell``'s display publisher (once each)."""
    with _lock:
        _hook_stream("stdout")
        _hook_stream("stderr")
        _hook_display(getattr(shell, "display_pub", None))


@contextlib.contextmanager
def capturing(shell: Any, limit: int) -> Iterator[Capture]:
    """Capture what this thread prints and displays while the block runs."""
    install(shell)
    capture = Capture(limit)
    me = threading.get_ident()
    with _lock:
        if me in _captures:
            raise RuntimeError("this thread is capturing already")
        _captures[me] = capture
    try:
        yield capture
    finally:
        with _lock:
            _captures.pop(me, None)
