"""Remembered decisions: "Allow always" and "Deny always", each exactly as wide as its label.

A rule is keyed by the call's server and, but for ``server`` and ``class``
rules, its tool; what else it covers is its scope:

=========  ==========================================================  ==========================
scope      covers                                                      offered for
=========  ==========================================================  ==========================
tool       every call of this tool on this server                      a call named by its tool
server     every tool on this server                                   a server of tools, never a
                                                                       coding agent (it would be
                                                                       everything the agent does)
class      every ``read`` call on this server                          a ``read`` call
command    this exact command in this folder                           a call with one command
prefix     commands of this tool starting with the program and its     a call with one simple
           subcommand (``git status``), and nothing chained to them    command
folder     edits of this tool whose every file is inside the folder    an ``edit`` with its files
=========  ==========================================================  ==========================

A call an agent names only by its kind (``execute``, ``edit``) offers no tool
or server scope: those would cover every command or edit of the agent. A deny
rule matches at least as much as the same allow rule would (a denied prefix
anywhere in a chain of commands, any file of an edit inside a denied folder),
and deny beats allow.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..interaction import Request
from .protocol import Scope, ScopeOffer

__all__ = ["Effect", "Rule", "first_match", "offers_for", "rule_for"]

Effect = Literal["allow", "deny"]

_UNSAFE: Final = re.compile(r"[;&|<>()`$\\{}\[\]*?!#~\n\r\t\x00]")
"""What makes a command more than one simple command: chaining, pipes, redirection,
substitution, expansion, globbing, comments, escapes, line breaks."""
_OPERATORS: Final = re.compile(r"\|\||&&|[;&|\n\r]")
"""What separates the commands of a chain, for deny rules."""
_WORD: Final = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
"""A subcommand (``status`` of ``git status``): a plain word."""


@dataclass(frozen=True)
class Rule:
    """Allow (or deny) every request of ``server`` (and ``tool``) that ``scope`` covers.

    ``value`` is what the scope remembers: the command, the prefix, the folder
    (``read`` for a class rule, None for tool and server rules); ``cwd`` is where a
    ``command`` rule's command runs.
    """

    scope: Scope
    server: str
    tool: str | None = None
    value: str | None = None
    cwd: str | None = None
    effect: Effect = "allow"
    kind: str | None = None
    """The kind of the call the rule was made on (for its label only)."""

    def __str__(self) -> str:
        return f"{self.effect} {self.label}"

    @property
    def label(self) -> str:
        """What the rule covers, in the words the card offered it with."""
        return _label(self)

    def matches(self, request: Request) -> bool:
        """Whether this rule answers ``request``."""
        if str(request.get("server", "")) != self.server:
            return False
        if self.tool is not None and str(request.get("tool", "")) != self.tool:
            return False
        deny = self.effect == "deny"
        if self.scope == "tool":
            return _named(request)
        if self.scope == "server":
            return deny or not request.get("server_is_agent", False)
        if self.scope == "class":
            return request.get("class") == "read"
        if self.scope in ("command", "prefix"):
            found = _command(request)
            if found is None:
                return False
            command, cwd = found
            if self.scope == "command":
                return command == self.value and cwd == self.cwd
            return _starts(command, self.value or "", chained=deny)
        if self.scope == "folder":
            paths = _paths(request)
            inside = [_inside(p, self.value or "") for p in paths]
            return bool(paths) and (any(inside) if deny else all(inside))
        return False


def offers_for(request: Request) -> list[ScopeOffer]:
    """The scopes "Allow always" and "Deny always" may take for ``request``, with their labels."""
    offers: list[ScopeOffer] = []
    for scope in _SCOPES:
        rule = rule_for(request, scope)
        if rule is not None:
            offers.append(ScopeOffer(scope=scope, label=rule.label))
    return offers


def rule_for(request: Request, scope: Scope, effect: Effect = "allow") -> Rule | None:
    """The rule of ``scope`` made from ``request``, or None if that scope is not offered."""
    server, tool = str(request.get("server", "")), str(request.get("tool", ""))
    if not server:
        return None
    named = _named(request)
    if scope == "tool":
        kind = request.get("kind")
        return Rule("tool", server, tool, effect=effect, kind=kind) if named and tool else None
    if scope == "server":
        agent = request.get("server_is_agent", False)
        return None if agent or not named else Rule("server", server, effect=effect)
    if scope == "class":
        return Rule("class", server, None, "read", effect=effect) if _reads(request) else None
    if scope in ("command", "prefix"):
        found = _command(request)
        if found is None:
            return None
        command, cwd = found
        if scope == "command":
            return Rule("command", server, tool, command, cwd, effect=effect)
        prefix = _prefix(command)
        return None if prefix is None else Rule("prefix", server, tool, prefix, effect=effect)
    if scope == "folder":
        folder = _folder(request)
        return None if folder is None else Rule("folder", server, tool, folder, effect=effect)
    return None


def first_match(rules: list[Rule], request: Request) -> Rule | None:
    """The rule that settles ``request``: a deny rule before any allow rule, else None."""
    matching = [r for r in rules if r.matches(request)]
    return next((r for r in matching if r.effect == "deny"), None) or next(iter(matching), None)


_SCOPES: Final[tuple[Scope, ...]] = ("command", "prefix", "folder", "tool", "class", "server")
"""The order a card offers them in: the narrowest first."""


def _named(request: Request) -> bool:
    return request.get("tool_named", True) is not False


def _reads(request: Request) -> bool:
    return request.get("class") == "read"


def _command(request: Request) -> tuple[str, str | None] | None:
    """The one command ``request`` will run, and its folder; None for none or several."""
    terminals = [b for b in request.get("content") or () if b.get("type") == "terminal"]
    if len(terminals) != 1:
        return None
    block: Any = terminals[0]
    command = block.get("command")
    if not isinstance(command, str) or not command.strip():
        return None
    cwd = block.get("cwd")
    return command, cwd if isinstance(cwd, str) else None


def _words(command: str) -> list[str] | None:
    """The words of one simple command, or None when it is more (or not shell at all)."""
    if _UNSAFE.search(command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words or None


def _prefix(command: str) -> str | None:
    """The program and its subcommand (``git status``), for a simple command only."""
    words = _words(command)
    if words is None or "=" in words[0]:
        return None
    if len(words) > 1 and _WORD.fullmatch(words[1]):
        return f"{words[0]} {words[1]}"
    return words[0]


def _starts(command: str, prefix: str, *, chained: bool) -> bool:
    """Whether ``command`` starts with ``prefix`` (word by word).

    An allow rule (``chained`` False) matches one simple command only; a deny
    rule matches any command of a chain, however it is written.
    """
    wanted = prefix.split(" ")
    pieces = _OPERATORS.split(command) if chained else [command]
    for piece in pieces:
        words = _words(piece) if not chained else _loose_words(piece)
        if words is not None and words[: len(wanted)] == wanted:
            return True
    return False


def _loose_words(piece: str) -> list[str]:
    """The words of any piece of shell, as near as they can be told (for deny rules)."""
    try:
        words = shlex.split(piece)
    except ValueError:
        words = piece.split()
    return [w.strip("({") for w in words if w.strip("({")]


def _paths(request: Request) -> list[str]:
    """Every file ``request`` names: its diffs' paths and its locations."""
    paths = [
        str(b.get("path"))
        for b in request.get("content") or ()
        if b.get("type") == "diff" and isinstance(b.get("path"), str)
    ]
    paths += [str(loc.get("path")) for loc in request.get("locations") or () if loc.get("path")]
    return [p for p in paths if p]


def _resolved(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _inside(path: str, folder: str) -> bool:
    resolved = _resolved(path)
    return resolved == folder or resolved.startswith(folder.rstrip(os.sep) + os.sep)


def _folder(request: Request) -> str | None:
    """The folder holding every file of an edit (resolved), or None when it is not an edit."""
    if request.get("kind") != "edit":
        return None
    paths = _paths(request)
    if not paths:
        return None
    try:
        folder = os.path.commonpath([os.path.dirname(_resolved(p)) for p in paths])
    except ValueError:
        return None
    return folder if folder != os.sep else None


_KIND_CALLS: Final[dict[str, str]] = {"execute": "every command", "edit": "every edit"}


def _label(rule: Rule) -> str:
    own = f"{rule.tool} on {rule.server}"
    if rule.scope == "tool":
        return f"{_KIND_CALLS.get(rule.kind or '', 'every call')} of {own}"
    if rule.scope == "server":
        return f"every tool on {rule.server}"
    if rule.scope == "class":
        return f"every read call on {rule.server}"
    if rule.scope == "command":
        where = f" in {rule.cwd}" if rule.cwd else ""
        return f"the command `{rule.value}`{where} ({own})"
    if rule.scope == "prefix":
        return f"commands starting `{rule.value}`, nothing chained ({own})"
    if rule.scope == "folder":
        return f"edits inside {rule.value}/ ({own})"
    return f"{rule.scope} {rule.value} ({own})"
