"""Python code as highlighted HTML for the static transcript, in the theme's own colours.

Pygments splits the code into tokens; each becomes a ``<span>`` whose class names
one of JupyterLab's editor colours (``mead-tok-keyword`` is drawn with
``--jp-mirror-editor-keyword-color``: ``transcript.css``), the classes the live
view's highlighter (``js/src/highlight.js``) gives the same tokens. Every token's
text is escaped with its invisible characters shown (:func:`.reveal.reveal_html`).
Code the tokens would not give back exactly (Pygments turns a lone CR into a line
break) is shown plain, never altered.
"""

from __future__ import annotations

from typing import Final

from .reveal import reveal_html

__all__ = ["TOKEN_CLASS", "code_html"]

TOKEN_CLASS: Final[tuple[tuple[str, str], ...]] = (
    ("Keyword", "keyword"),
    ("Operator.Word", "keyword"),
    ("Name.Builtin.Pseudo", "variable-2"),
    ("Name.Builtin", "builtin"),
    ("Name.Function", "def"),
    ("Name.Class", "def"),
    ("Name.Decorator", "meta"),
    ("Literal.String.Interpol", "string-2"),
    ("Literal.String.Escape", "string-2"),
    ("Literal.String", "string"),
    ("Literal.Number", "number"),
    ("Operator", "operator"),
    ("Punctuation", "punctuation"),
    ("Comment", "comment"),
)
"""Pygments token types (a type and its subtypes, first match wins) and the editor
colour each is drawn in."""


def _class_of(token: object) -> str | None:
    name = str(token).removeprefix("Token.")
    for prefix, css in TOKEN_CLASS:
        if name == prefix or name.startswith(prefix + "."):
            return css
    return None


def code_html(code: str, language: str) -> str:
    """``code`` as HTML: Python highlighted, any other language plain; always escaped."""
    tokens = _tokens(code) if language == "python" else None
    if tokens is None:
        return reveal_html(code)
    parts = []
    for token, text in tokens:
        css = _class_of(token)
        shown = reveal_html(text)
        parts.append(f'<span class="mead-tok-{css}">{shown}</span>' if css else shown)
    return "".join(parts)


def _tokens(code: str) -> list[tuple[object, str]] | None:
    """Pygments' tokens of ``code``, or None when they would not give ``code`` back."""
    try:
        from pygments import lex
        from pygments.lexers.python import PythonLexer
    except ImportError:
        return None
    tokens = list(lex(code, PythonLexer(stripnl=False, ensurenl=False)))
    if "".join(text for _, text in tokens) != code:
        return None
    return tokens
