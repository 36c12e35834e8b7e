"""The one HTML sanitiser of the kernel side: nh3 (ammonia), with the tags a transcript needs.

The static transcript's Markdown and a rich output's HTML (a DataFrame's table)
pass through :data:`CLEANER`: text, emphasis, code, lists, links and tables
survive, without attributes but a link's ``href`` and ``title`` and a list's
``start``; scripts, styles (with their content), event handlers, images, forms
and embeds do not. Every view sanitises what it receives again before showing it.
"""

from __future__ import annotations

from typing import Final

import nh3

__all__ = ["CLEANER", "clean_html"]

CLEANER: Final = nh3.Cleaner(
    tags={
        *("p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "s", "del"),
        *("code", "pre", "blockquote", "ul", "ol", "li", "a"),
        *("table", "thead", "tbody", "tr", "th", "td"),
    },
    attributes={"a": {"href", "title"}, "ol": {"start"}},
    url_schemes={"http", "https", "mailto"},
    link_rel="noopener noreferrer nofollow",
    set_tag_attribute_values={"a": {"target": "_blank"}},
)
"""The sanitiser of the static transcript and of rich outputs."""


def clean_html(html: str) -> str:
    """``html`` with everything but :data:`CLEANER`'s tags and attributes removed."""
    return str(CLEANER.clean(html))
