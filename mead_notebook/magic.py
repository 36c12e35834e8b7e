"""The IPython extension: ``%%mead`` cells talk to the router chosen with :func:`use`.

``%load_ext mead_notebook`` registers one magic, usable two ways:

- ``%%mead [--timeout SECONDS] [--new]``: the cell body is the prompt. The turn
  runs with a :class:`~mead_notebook.widget.NotebookInteraction` and carries the
  conversation over from the previous ``%%mead`` cell;
- ``%mead`` shows what is configured, ``%mead reset`` starts a new conversation.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from IPython.core.magic import Magics, line_cell_magic, magics_class

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .model import Message

__all__ = [
    "MeadMagics",
    "current_router",
    "history",
    "last_result",
    "load_ipython_extension",
    "use",
]

NO_ROUTER = (
    "mead: no router chosen yet. Choose one first, for example:\n"
    "    import mead_notebook\n"
    "    mead_notebook.use(mead_notebook.Router(model, tools=[...]))"
)
LINE_USAGE = "usage: %mead (show the configuration) or %mead reset (start a new conversation)"


@dataclass
class _Conversation:
    router: Any = None
    messages: list[Message] = field(default_factory=list)
    last: Any = None


_lock = threading.Lock()
_current = _Conversation()


def use(router: Any) -> Any:
    """Choose the router that ``%%mead`` cells talk to, and start a new conversation.

    Returns the router, so ``router = use(Router(...))`` works.
    """
    if not callable(getattr(router, "run", None)):
        raise TypeError(f"use() needs a Router (an object with a run() method), not {router!r}")
    global _current
    with _lock:
        _current = _Conversation(router=router)
    return router


def current_router() -> Any:
    """The router chosen with :func:`use`, or ``None``."""
    with _lock:
        return _current.router


def history() -> list[Message]:
    """A copy of the messages of the current ``%%mead`` conversation."""
    with _lock:
        return list(_current.messages)


def last_result() -> Any:
    """The ``TurnResult`` of the last ``%%mead`` cell of this conversation, or ``None``."""
    with _lock:
        return _current.last


def reset() -> None:
    """Forget the conversation; the chosen router stays."""
    with _lock:
        _current.messages = []
        _current.last = None


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{self.format_usage().strip()}\n%%mead: {message}")


def _cell_parser() -> _Parser:
    parser = _Parser(prog="%%mead", add_help=False)
    parser.add_argument(
        "--timeout",
        type=_positive_seconds,
        default=None,
        help="seconds to wait for each answer before the question expires",
    )
    parser.add_argument(
        "--new", action="store_true", help="start a new conversation with this cell"
    )
    return parser


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"the timeout must be a positive number, not {text}")
    return value


def describe() -> str:
    """What ``%mead`` prints: the router's model, tools and the conversation's length."""
    with _lock:
        router, count = _current.router, len(_current.messages)
    if router is None:
        return NO_ROUTER
    model = getattr(router, "model", None)
    model_name = getattr(model, "name", None) or type(model).__name__
    lines = [f"model: {model_name}", f"tools: {_tool_names(router)}", f"messages: {count}"]
    return "\n".join(lines)


def _tool_names(router: Any) -> str:
    try:
        tools = getattr(router, "tools", None) or {}
    except Exception as exc:
        return f"(could not be opened: {exc})"
    names = [str(name) for name in tools] if isinstance(tools, dict) else []
    if not isinstance(tools, dict):
        for item in tools:
            names.append(str(getattr(item, "name", None) or getattr(item, "__name__", item)))
    return ", ".join(names) if names else "(none)"


def run_cell(options: str, prompt: str) -> Any:
    """Run one ``%%mead`` cell; return the turn's result, or ``None`` when nothing ran."""
    try:
        args = _cell_parser().parse_args(shlex.split(options))
    except (_UsageError, ValueError) as exc:
        _complain(str(exc))
        return None
    prompt = prompt.strip()
    if not prompt:
        _complain("%%mead: the cell is empty; write the prompt in the cell body")
        return None
    with _lock:
        if args.new:
            _current.messages, _current.last = [], None
        router, messages = _current.router, list(_current.messages)
    if router is None:
        _complain(NO_ROUTER)
        return None

    from .errors import TurnError
    from .notebook.widget import NotebookInteraction

    interaction = (
        NotebookInteraction() if args.timeout is None else NotebookInteraction(timeout=args.timeout)
    )
    try:
        result = router.run(prompt, interaction=interaction, history=messages or None)
    except TurnError as exc:
        _complain(f"mead: the turn failed, the conversation is unchanged: {exc}")
        return None
    with _lock:
        if _current.router is router:
            _current.messages = list(result.messages)
            _current.last = result
    return result


def _complain(message: str) -> None:
    print(message, file=sys.stderr)


@magics_class
class MeadMagics(Magics):
    """``%mead`` and ``%%mead``."""

    @line_cell_magic
    def mead(self, line: str, cell: str | None = None) -> None:
        """``%%mead``: the cell is the prompt. ``%mead``: show the setup; ``%mead reset``."""
        if cell is not None:
            run_cell(line, cell)
            return
        words: Sequence[str] = line.split()
        if not words:
            print(describe())
        elif list(words) == ["reset"]:
            reset()
            print("mead: new conversation" if current_router() is not None else NO_ROUTER)
        else:
            _complain(LINE_USAGE)


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """Register ``%mead`` and ``%%mead`` (``%load_ext mead_notebook``)."""
    ipython.register_magics(MeadMagics)
