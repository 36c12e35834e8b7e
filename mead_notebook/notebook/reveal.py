"""Invisible and bidirectional characters: found, and shown as visible escapes.

A bidi control (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C) can make a
line read in another order than it runs (Trojan Source), and a zero-width or
other format character can make two different names look the same. Every
character of Unicode category Cf, the line and paragraph separators (Zl, Zp),
control characters other than tab, line feed and the CR of a CRLF, and a few
fillers of other categories that draw nothing are *invisible* here. The kernel
flags a card that shows one (``Card.invisible``) and every view shows each as
``⟨U+XXXX⟩``; ``js/src/reveal.js`` does the same in the page.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterator
from typing import Any, Final

__all__ = [
    "FILLERS",
    "NEWLINE",
    "escape_of",
    "has_invisible",
    "invisible_in",
    "reveal",
    "reveal_html",
]

_CATEGORIES: Final = frozenset({"Cf", "Cc", "Zl", "Zp"})
_ALLOWED: Final = frozenset({"\t", "\n", "\r"})
"""Controls that lay text out visibly (a CR only when a line feed follows it: see below)."""
FILLERS: Final = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180D),
    (0x180F, 0x180F),
    (0x3164, 0x3164),
    (0xFFA0, 0xFFA0),
    (0xE0100, 0xE01EF),
)
"""Ranges of characters of other categories that draw nothing: the combining grapheme
joiner, Hangul fillers, Khmer inherent vowels, Mongolian variation selectors and the
supplementary variation selectors (U+FE00-U+FE0F stay: emoji use them)."""
_FILLERS: Final = frozenset(c for first, last in FILLERS for c in range(first, last + 1))
_LONE_CR: Final = re.compile(r"\r(?!\n)")
NEWLINE: Final = "⏎"
"""How a line break shows in a field of one line (a title, a name, a path)."""


def _is_invisible(char: str) -> bool:
    if char in _ALLOWED:
        return False
    return ord(char) in _FILLERS or unicodedata.category(char) in _CATEGORIES


def _found(text: str) -> list[str]:
    """The distinct invisible characters of ``text`` (a lone CR among them)."""
    if text.isascii() and text.isprintable():
        return []
    found = [c for c in set(text) if _is_invisible(c)]
    if "\r" in text and _LONE_CR.search(text):
        found.append("\r")
    return found


def has_invisible(text: str) -> bool:
    """Whether ``text`` has an invisible or bidirectional character."""
    return bool(_found(text))


def invisible_in(value: Any) -> bool:
    """Whether any string in ``value`` (keys of dicts included) has an invisible character."""
    return any(has_invisible(text) for text in _strings(value))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def escape_of(char: str) -> str:
    """The visible escape of one character: ``⟨U+2067⟩``."""
    return f"⟨U+{ord(char):04X}⟩"


def _pattern(text: str, one_line: bool) -> re.Pattern[str] | None:
    found = _found(text)
    parts = [re.escape(c) for c in found if c != "\r"]
    if one_line:
        parts += [r"\r\n", r"\n"]
    if "\r" in found or (one_line and "\r" in text):
        parts.append(r"\r(?!\n)")
    return re.compile("|".join(parts)) if parts else None


def reveal(text: str, *, one_line: bool = False) -> str:
    """``text`` with each invisible character as ``⟨U+XXXX⟩``; ``one_line``: line breaks as ⏎."""
    pattern = _pattern(text, one_line)
    if pattern is None:
        return text
    return pattern.sub(lambda m: NEWLINE if m[0] in ("\n", "\r\n") else escape_of(m[0]), text)


def reveal_html(text: str, *, one_line: bool = False) -> str:
    """``text`` escaped for HTML, each invisible character a marked ``⟨U+XXXX⟩``."""
    pattern = _pattern(text, one_line)
    if pattern is None:
        return html.escape(text, quote=True)
    out: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        out.append(html.escape(text[position : match.start()], quote=True))
        shown = NEWLINE if match[0] in ("\n", "\r\n") else escape_of(match[0])
        out.append(f'<span class="mead-invisible">{shown}</span>')
        position = match.end()
    out.append(html.escape(text[position:], quote=True))
    return "".join(out)
