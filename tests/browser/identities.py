"""Two people on one Jupyter server: each browser context says who it is by a cookie.

The server still asks for its token; this provider then names the user after the
``mead_user`` cookie (one of :data:`PEOPLE`), so that each context's ``/api/me``
and collaboration awareness carry a user of its own.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.identity import IdentityProvider, User

PEOPLE = {"alice": "Alice Liddell", "bob": "Bob Cratchit"}
COOKIE = "mead_user"


class NamedUsers(IdentityProvider):  # type: ignore[misc]
    """Token login as usual; the user is the one the ``mead_user`` cookie names."""

    async def get_user(self, handler: Any) -> User | None:
        user = await super().get_user(handler)
        name = handler.get_cookie(COOKIE)
        if user is None or name not in PEOPLE:
            return user
        return User(username=name, name=PEOPLE[name], display_name=PEOPLE[name])
